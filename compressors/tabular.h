// tabular compressor (§5.9): CSV, TSV and Markdown tables. Query-aware, redundancy guard,
// invariant summaries on elided row runs, contract note.
//
// Lossy (S4): elided rows are replaced by one marker row; kept rows are re-encoded, so cell
// padding of Markdown tables and CSV quoting are normalised (§5.9 "Re-encode").
// Memory: the parsed table is held in memory (tabular is not one of the bounded-memory
// compressors of §1.4).
#ifndef CAVEMAN_COMPRESSORS_TABULAR_H_
#define CAVEMAN_COMPRESSORS_TABULAR_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>

#include "compressors/compressor.h"

namespace caveman {

struct TabularOptions {
  // Template grouping (project extension beyond the spec, docs/DECISIONS.md): a row the
  // redundancy guard would keep stays dropped when a kept one has the same cell shapes.
  // Default: true. false = exactly the spec.
  bool template_grouping = true;
};

std::unique_ptr<Compressor> NewTabularCompressor(TabularOptions options = {});

// The table parser of §5.9 (used by detection rule 7): the number of rows, header rows
// included (Markdown: header and separator row; CSV/TSV: the header record), when the parser
// accepts `body`; nullopt otherwise. Does not apply the compressor's own thresholds.
std::optional<size_t> TableRowCount(std::string_view body);

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_TABULAR_H_
