#include "compressors/internal/line_skeleton.h"

#include <algorithm>

#include "compressors/internal/bm25.h"
#include "compressors/elision.h"
#include "compressors/lines.h"
#include "compressors/internal/redundancy.h"
#include "compressors/internal/templates.h"
#include "compressors/text_util.h"

namespace caveman::internal {
namespace {

std::string Marker(const LinePolicy& policy, size_t count, std::string_view summary) {
  std::string m(policy.marker_prefix);
  m += ElisionMarker(count, policy.marker_text, summary);
  return m;
}

}  // namespace

std::optional<std::string> ElideLines(const std::vector<std::string_view>& lines, bool trailing, bool crlf,
                                      std::string_view query, const LinePolicy& policy, const LinePasses& passes) {
  const size_t n = lines.size();
  std::vector<bool> keep(n, false);
  for (size_t i = 0; i < n; ++i) {
    keep[i] = i < policy.head || i + policy.tail >= n || (policy.alarm && policy.alarm(lines[i])) ||
              (!policy.marker_text.empty() && Contains(lines[i], policy.marker_text));
  }
  if (passes.before_query) passes.before_query(lines, &keep);
  if (policy.query_fill) KeepQueryRelevant(&keep, lines, query, policy.query_limit, policy.query_threshold);
  std::optional<TemplateGrouping> grouping;
  switch (policy.guard) {
    case LineGuard::kNone: break;
    case LineGuard::kProfiles: KeepNonRedundant(lines, &keep); break;
    case LineGuard::kTemplates: grouping.emplace(lines, &keep); break;
  }
  if (passes.after_guard) passes.after_guard(lines, &keep);
  if (policy.keep_runs_shorter_than_marker) {
    for (size_t i = 0; i < n;) {
      if (keep[i]) {
        ++i;
        continue;
      }
      size_t j = i, bytes = 0;
      for (; j < n && !keep[j]; ++j) bytes += lines[j].size() + 1;
      if (bytes <= Marker(policy, j - i, "").size()) {
        std::fill(keep.begin() + static_cast<std::ptrdiff_t>(i), keep.begin() + static_cast<std::ptrdiff_t>(j), true);
      }
      i = j;
    }
  }
  const std::vector<std::string> out = ReplaceDroppedRuns(lines, keep, crlf, [&](size_t from, size_t to) {
    return Marker(policy, to - from, grouping ? grouping->RunSummary(from, to) : "");
  });
  if (out.size() == n) return std::nullopt;
  return JoinLines(out, trailing);
}

}  // namespace caveman::internal
