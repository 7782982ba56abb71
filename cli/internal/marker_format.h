// `retrieve HANDLE --map` and `retrieve HANDLE --marker K` (issue 14): the marker map of a
// record as JSON or a table, and the original bytes one marker replaced.
#ifndef CAVEMAN_CLI_INTERNAL_MARKER_FORMAT_H_
#define CAVEMAN_CLI_INTERNAL_MARKER_FORMAT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/internal/report_format.h"
#include "caveman/engine/engine.h"
#include "caveman/stream/byte_io.h"

namespace caveman::internal {

// Exit status of `retrieve` when the record has no marker map (stored before schema 3, or its
// view could not be aligned with the original).
inline constexpr int kExitNoMarkerMap = 3;

// One line of compact JSON + LF: {"handle":H,"markers":[{"marker":K,"kind":…,"view_line":…,
// "count":…,"first_line":…,"last_line":…,"byte_begin":…,"byte_end":…[,"pointer":…,
// "first_index":…,"last_index":…]},…]} (the JSON members only for JSON arrays).
std::string MarkerMapJson(std::string_view handle, const std::vector<MarkerEntry>& markers);
// Aligned columns: marker, kind, view line, count, original lines, bytes [begin, end), array.
std::string MarkerMapTable(const std::vector<MarkerEntry>& markers);

struct MarkerCommandOutcome {
  int exit_code = 0;
  std::string error;          // message for stderr (without the "retrieve: " prefix), when failed
  bool write_failed = false;  // the failure was writing `out`
};
// `marker`: write that marker's original bytes; else (`map`) the map in `format`.
MarkerCommandOutcome RunMarkerCommand(Engine& engine, std::string_view handle, std::optional<uint64_t> marker,
                                      ReportFormat format, ByteSink& out);

}  // namespace caveman::internal

#endif  // CAVEMAN_CLI_INTERNAL_MARKER_FORMAT_H_
