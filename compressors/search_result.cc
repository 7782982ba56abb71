#include "compressors/search_result.h"

#include <re2/re2.h>

#include <string>
#include <vector>

#include "compressors/internal/bm25.h"
#include "compressors/elision.h"
#include "compressors/internal/line_skeleton.h"
#include "compressors/lines.h"
#include "compressors/internal/redundancy.h"
#include "compressors/text_util.h"

namespace caveman {
namespace {

constexpr size_t kHead = 8;
constexpr size_t kTail = 4;
constexpr size_t kMinLines = 18;
constexpr int64_t kQueryLimit = 24;
constexpr double kQueryThreshold = 0.30;

const RE2& AlarmPattern() {
  static const RE2* re =
      new RE2(R"((?i)\b(ERROR|FAIL|FAILED|PANIC|ACTION|FOLLOWUP|SECURITY|SECRET|TOKEN|PASSWORD|KEY)\b)");
  return *re;
}

constexpr std::string_view kMarkerText = "search result lines elided (caveman)";

class SearchResultCompressor final : public InMemoryCompressor {
 public:
  std::string_view content_type() const override { return "search-result"; }
  // Working set (issue 15 ceiling; scripts/memory_table.py --shapes): per-line match records.
  MemoryModel memory_model() const override { return {.per_byte = 0.5, .per_line = 100}; }
  bool query_aware() const override { return true; }

 protected:
  std::optional<std::string> TransformText(std::string_view body, std::string_view query,
                                           TransformMeta*) const override {
    if (!internal::IsValidUtf8(body)) return std::nullopt;
    internal::SplitResult split = internal::SplitLines(body);
    if (split.lines.size() < kMinLines) return std::nullopt;
    internal::LinePolicy policy;
    policy.head = kHead;
    policy.tail = kTail;
    policy.alarm = [](std::string_view line) { return RE2::PartialMatch(line, AlarmPattern()); };
    policy.marker_text = kMarkerText;
    policy.query_fill = true;
    policy.query_limit = kQueryLimit;
    policy.query_threshold = kQueryThreshold;
    policy.guard = internal::LineGuard::kProfiles;
    return internal::ElideLines(split.lines, split.trailing, internal::IsMajorityCrlf(body), query, policy);
  }
};

}  // namespace

std::unique_ptr<Compressor> NewSearchResultCompressor() { return std::make_unique<SearchResultCompressor>(); }

}  // namespace caveman
