#include "compressors/diff.h"

#include <algorithm>
#include <string>
#include <vector>

#include "compressors/elision.h"
#include "compressors/internal/line_skeleton.h"
#include "compressors/lines.h"
#include "compressors/log_rules.h"
#include "compressors/text_util.h"

namespace caveman {
namespace {

using internal::StartsWith;

constexpr size_t kContext = 2;
constexpr size_t kMinLines = 12;

bool IsStructural(std::string_view line) {
  if (line.empty()) return false;
  if (line[0] == '+' || line[0] == '-') return true;
  return StartsWith(line, "diff --git ") || StartsWith(line, "index ") || StartsWith(line, "@@ ");
}

constexpr std::string_view kMarkerText = "context lines elided (caveman)";

bool IsMarker(std::string_view line) { return internal::Contains(line, kMarkerText); }

class DiffCompressor final : public InMemoryCompressor {
 public:
  std::string_view content_type() const override { return "diff"; }
  // Working set (issue 15 ceiling; scripts/memory_table.py --shapes): line views, the view
  // (about the input's size) and the guard's re-run over it: 4.5 bytes per byte of
  // fixtures/diff/no_newline_at_eof.in scaled to 16 MiB, so diffs above ~8 MiB decline.
  MemoryModel memory_model() const override { return {.per_byte = 5, .per_line = 16}; }

 protected:
  std::optional<std::string> TransformText(std::string_view body, std::string_view, TransformMeta*) const override {
    if (!internal::IsValidUtf8(body)) return std::nullopt;
    internal::SplitResult split = internal::SplitLines(body);
    if (split.lines.size() < kMinLines) return std::nullopt;
    // Project rule (docs/DECISIONS.md, "A forced diff needs a diff"): without a hunk or file
    // header every line is context, and `--type diff` on a log elided all of it into one
    // marker. Such a body is not a diff: decline.
    bool hunk = false, old_file = false, new_file = false;
    for (std::string_view line : split.lines) {
      hunk = hunk || StartsWith(line, "@@ ") || StartsWith(line, "diff --git ");
      old_file = old_file || StartsWith(line, "--- ");
      new_file = new_file || StartsWith(line, "+++ ");
    }
    if (!hunk && !(old_file && new_file)) return std::nullopt;
    internal::LinePolicy policy;
    policy.marker_text = kMarkerText;
    internal::LinePasses passes;
    passes.before_query = [](const std::vector<std::string_view>& lines, std::vector<bool>* keep) {
      const size_t n = lines.size();
      // git log -p / git show: commit headers, subjects and file stats are never context
      // (project rule, issue 16).
      internal::GitHistoryTracker git;
      for (size_t i = 0; i < n; ++i) {
        if (git.Feed(lines[i])) (*keep)[i] = true;
        if (!IsStructural(lines[i]) && !IsMarker(lines[i])) continue;
        size_t lo = i >= kContext ? i - kContext : 0;
        size_t hi = std::min(n - 1, i + kContext);
        for (size_t j = lo; j <= hi; ++j) (*keep)[j] = true;
      }
    };
    return internal::ElideLines(split.lines, split.trailing, internal::IsMajorityCrlf(body), {}, policy, passes);
  }
};

}  // namespace

std::unique_ptr<Compressor> NewDiffCompressor() { return std::make_unique<DiffCompressor>(); }

}  // namespace caveman
