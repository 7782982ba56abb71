// The CSV/TSV reader of §5.9, shared by the tabular compressor and RetrieveQuery narrowing
// (§2.6), which needs each record's byte range. Implemented in compressors/tabular.cc next to
// the table parser so both use one dialect implementation.
//
// Thread-safety: pure function.
#ifndef CAVEMAN_COMPRESSORS_INTERNAL_CSV_H_
#define CAVEMAN_COMPRESSORS_INTERNAL_CSV_H_

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace caveman::internal {

struct DelimitedRecords {
  char delimiter = ',';
  // Offset just past each record's terminator (LF or CRLF), or the end of the body for a last
  // record without one; blank lines before a record belong to that record's range.
  std::vector<size_t> record_ends;
};

// Reads `body` with the §5.9 CSV dialect: delimiter TAB iff the first line of TRIM(body) has
// more TABs than commas, else comma, and that line must contain it; blank lines skipped; every
// record has the first record's field count, which is ≥ 2; ≥ 2 records. Unlike the tabular
// parser there is no upper bound on the field count. Does not check UTF-8. nullopt on failure.
std::optional<DelimitedRecords> ReadDelimitedRecords(std::string_view body);

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_INTERNAL_CSV_H_
