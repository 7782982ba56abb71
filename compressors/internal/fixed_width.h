// Fixed-width column tables (project extension of §5.9, docs/DECISIONS.md "Fixed-width
// tables"): the aligned output of `ps`, `df`, `ss`, `lsof`, `dpkg -l`, `kubectl get`,
// `docker ps`, `systemctl list-units`.
//
// A table is a header row (≥ 2 space-separated words, mostly upper- or title-case, at least
// one gap of ≥ 2 spaces, no code punctuation) within the first 8 lines, optional separator
// lines under it (`----`, `+++-====`), and the rows after it. Columns are cut at one position
// in each header gap (or under the next word's first letter): the position that is a space
// (or past the end) in the most rows. A
// header word whose one-space gap is not a space in most rows joins the previous column's
// name ("CONTAINER ID", "Local Address:Port", "Mounted on"); every other cut must be a space
// in ≥ 80% of the rows, and ≥ 80% of the rows must reach past the first cut. The last column
// takes the rest of the line (free text: `ps` COMMAND, `lsof` NAME).
//
// Positions are counted in code points (terminal columns; `docker ps` truncates with "…").
// Lines starting with "… " that mention "caveman" (markers and notes of a compressed view)
// are not rows: they count toward the table's size but not toward its alignment.
//
// Thread-safety: pure functions. Lifetime: every view points into the parsed body.
#ifndef CAVEMAN_COMPRESSORS_INTERNAL_FIXED_WIDTH_H_
#define CAVEMAN_COMPRESSORS_INTERNAL_FIXED_WIDTH_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compressors/lines.h"

namespace caveman::internal {

// Header search window, stability threshold (percent of rows) and the row floor detection
// applies (header, separator and marker lines included).
inline constexpr size_t kFixedWidthHeaderWindow = 8;
inline constexpr size_t kFixedWidthStablePercent = 80;
inline constexpr size_t kFixedWidthMinRows = 8;

struct FixedWidthTable {
  SplitResult split;               // §4.1 lines of the body (CR kept)
  size_t header = 0;               // line index of the header row
  size_t data_begin = 0;           // first line after the header and its separator lines
  std::vector<std::string> names;  // column names (merged header words joined by a space)
  std::vector<size_t> cuts;        // column k ≥ 1 starts at cuts[k-1] (a code point column)
  std::vector<bool> synthesized;   // per line: a caveman marker or note line
  size_t rows = 0;                 // header block + lines after it (markers included)
};

// The table in `body`, or nullopt if it is not a fixed-width table (invalid UTF-8, no header,
// unstable columns). Does not apply kFixedWidthMinRows.
std::optional<FixedWidthTable> ParseFixedWidth(std::string_view body);

// Detection's test (§3.3 rule 7, project extension): a fixed-width table of ≥ 8 rows.
bool IsFixedWidthTable(std::string_view body);

// A caveman marker or note line ("… 12 rows elided (caveman) …", the contract note).
bool IsCavemanLine(std::string_view line);

// The cells of `line` (its CR ignored): text between the column cuts, trimmed; the last
// column takes the rest of the line. A word that straddles a cut goes to the side holding
// more of it. Always names.size() cells.
void FixedWidthCells(const FixedWidthTable& table, std::string_view line, std::vector<std::string_view>* cells);

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_INTERNAL_FIXED_WIDTH_H_
