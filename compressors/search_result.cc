#include "compressors/search_result.h"

#include <re2/re2.h>

#include <string>
#include <vector>

#include "compressors/internal/bm25.h"
#include "compressors/internal/elision.h"
#include "compressors/internal/lines.h"
#include "compressors/internal/redundancy.h"
#include "compressors/internal/text_util.h"

namespace caveman {
namespace {

constexpr size_t kHead = 8;
constexpr size_t kTail = 4;
constexpr size_t kMinLines = 18;
constexpr int64_t kQueryLimit = 24;
constexpr double kQueryThreshold = 0.30;

const RE2& AlarmPattern() {
  static const RE2* re = new RE2(
      R"((?i)\b(ERROR|FAIL|FAILED|PANIC|ACTION|FOLLOWUP|SECURITY|SECRET|TOKEN|PASSWORD|KEY)\b)");
  return *re;
}

constexpr std::string_view kMarkerText = "search result lines elided (caveman)";

bool IsMarker(std::string_view line) { return internal::Contains(line, kMarkerText); }

class SearchResultCompressor final : public InMemoryCompressor {
 public:
  std::string_view content_type() const override { return "search-result"; }
  bool query_aware() const override { return true; }

 protected:
  std::optional<std::string> TransformText(std::string_view body, std::string_view query,
                                           TransformMeta*) const override {
    if (!internal::IsValidUtf8(body)) return std::nullopt;
    internal::SplitResult split = internal::SplitLines(body);
    const std::vector<std::string_view>& lines = split.lines;
    const size_t n = lines.size();
    if (n < kMinLines) return std::nullopt;
    std::vector<bool> keep(n, false);
    for (size_t i = 0; i < n; ++i) {
      keep[i] = i < kHead || i + kTail >= n || IsMarker(lines[i]) ||
                RE2::PartialMatch(lines[i], AlarmPattern());
    }
    internal::KeepQueryRelevant(&keep, lines, query, kQueryLimit, kQueryThreshold);
    internal::KeepNonRedundant(lines, &keep);
    const std::vector<std::string> out = internal::ReplaceDroppedRuns(
        lines, keep, internal::IsMajorityCrlf(body), [](size_t from, size_t to) {
          return internal::ElisionMarker(to - from, kMarkerText);
        });
    if (out.size() == n) return std::nullopt;
    return internal::JoinLines(out, split.trailing);
  }
};

}  // namespace

std::unique_ptr<Compressor> NewSearchResultCompressor() {
  return std::make_unique<SearchResultCompressor>();
}

}  // namespace caveman
