#include "compressors/search_result.h"

#include <re2/re2.h>

#include <string>
#include <vector>

#include "compressors/internal/bm25.h"
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

bool IsMarker(std::string_view line) {
  return internal::Contains(line, "search result lines elided (caveman)");
}

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
    const bool crlf = internal::IsMajorityCrlf(body);
    std::vector<std::string> out;
    for (size_t i = 0; i < n;) {
      if (keep[i]) {
        out.emplace_back(lines[i]);
        ++i;
        continue;
      }
      size_t j = i;
      while (j < n && !keep[j]) ++j;
      out.push_back(internal::SynthesizedLine("\xE2\x80\xA6 " + std::to_string(j - i) +
                                                  " search result lines elided (caveman) \xE2\x80\xA6",
                                              crlf));
      i = j;
    }
    if (out.size() == n) return std::nullopt;
    return internal::JoinLines(out, split.trailing);
  }
};

}  // namespace

std::unique_ptr<Compressor> NewSearchResultCompressor() {
  return std::make_unique<SearchResultCompressor>();
}

}  // namespace caveman
