// The one loop of the in-memory line compressors (issue 16): diff, search-result, config
// (YAML/INI and stanzas) and terminal differ only in the policy data below and in up to two
// type-specific keep passes.
//
//   keep head/tail lines, lines matching the alarm, lines holding the type's own marker
//   → before_query pass (type-specific keeps) → query fill → redundancy guard (none, §4.2
//   profiles, or template grouping) → after_guard pass (context expansion) → runs whose
//   marker would be longer than them stay → each dropped run becomes one marker line → join.
//
// Thread-safety: pure functions; the policy is immutable data.
#ifndef CAVEMAN_COMPRESSORS_INTERNAL_LINE_SKELETON_H_
#define CAVEMAN_COMPRESSORS_INTERNAL_LINE_SKELETON_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace caveman::internal {

enum class LineGuard : uint8_t {
  kNone,       // no redundancy guard
  kProfiles,   // §4.2 KeepNonRedundant
  kTemplates,  // template grouping (project extension); markers carry the run's invariants
};

struct LinePolicy {
  size_t head = 0;
  size_t tail = 0;
  // Lines always kept (the type's alarm pattern); null: none.
  std::function<bool(std::string_view line)> alarm;
  // The marker phrase: a dropped run becomes marker_prefix + "… N " + marker_text + " …".
  // Lines that already hold marker_text are kept.
  std::string_view marker_text;
  std::string_view marker_prefix;
  // Query fill (§4.3) with these parameters, when the query is non-empty.
  bool query_fill = false;
  int64_t query_limit = 0;
  double query_threshold = 0;
  LineGuard guard = LineGuard::kNone;
  // A dropped run whose bytes do not exceed its marker's stays (issue 16).
  bool keep_runs_shorter_than_marker = false;
};

using KeepPass = std::function<void(const std::vector<std::string_view>& lines, std::vector<bool>* keep)>;

struct LinePasses {
  KeepPass before_query;  // type-specific keeps (structure, identity fields, YAML roots)
  KeepPass after_guard;   // context expansion around what is kept
};

// Runs the loop over `lines` (SplitLines of a body, or cleaned lines); `trailing` and `crlf`
// are the body's (§4.1). nullopt when no line was dropped.
std::optional<std::string> ElideLines(const std::vector<std::string_view>& lines, bool trailing, bool crlf,
                                      std::string_view query, const LinePolicy& policy, const LinePasses& passes = {});

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_INTERNAL_LINE_SKELETON_H_
