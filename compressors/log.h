// log compressor (§5.2): application, build and CI logs. Query-aware, redundancy guard,
// invariant summaries of elided runs (logfmt and NDJSON fields), contract note.
//
// Lossy (S4): collapses runs of ≥ 3 identical lines to the first line plus a §5.15 marker
// (project decision), then keeps the first 2 lines, every error/warning/stack-trace line (Hyperscan), the
// last 2 lines, query-relevant lines and every line unlike a kept one; each other run of
// ≥ 3 lines (or shorter, when its summary pays for itself) becomes one marker line
// `… N lines elided (caveman)[: SUMMARY] …`. Kept lines are byte-identical.
//
// Memory (§1.4, bounded independently of input size): the body is never viewed whole. It is
// read through Body::NewReader() in chunks of `read_size` bytes: two passes, and one or two
// more with a query (§5.2 plan; the guard's ≤ 64 seed lines are read at offsets pass 1 logged
// into a spool that spills to a file, unless a query added kept lines). Memory holds the
// unfinished line, ≤ 2 buffered lines of the current dropped run, ≤ 192 redundancy classes,
// ≤ 16 query candidates and the bounded invariant accumulator. It grows with the longest
// line, never with the number of lines.
// Output is identical for every chunking of the body and every read_size.
#ifndef CAVEMAN_COMPRESSORS_LOG_H_
#define CAVEMAN_COMPRESSORS_LOG_H_

#include <cstddef>
#include <memory>

#include "compressors/compressor.h"

namespace caveman {

struct LogCompressorOptions {
  // Bytes requested per read from the body. Default: 256 KiB. Tests use tiny values to check
  // that output does not depend on it. Must be > 0.
  size_t read_size = 256 * 1024;
  // Template grouping (project extension beyond §5.2, docs/DECISIONS.md): a line the guard
  // would promote stays dropped when a kept line shares its mined template (Drain-style,
  // ≤ 512 templates), and lines without logfmt/JSON fields contribute their variable tokens
  // (`$k` = k-th token) to the marker's invariants. Default: true. false = exactly §5.2.
  bool template_grouping = true;
  // Identical-run collapsing (project decision beyond §5.2, docs/DECISIONS.md): a run of ≥ 3
  // byte-identical consecutive lines (TRIM non-empty, not starting with `… caveman: `) is
  // treated as one line by the §5.2 rules; if kept it is followed by the §5.15 marker
  // `… caveman: <run−1> identical lines elided …`, if dropped its lines count in the elided
  // run. Lines starting with `… caveman: ` are kept like markers. Default: true.
  // template_grouping = false and collapse_identical_runs = false give exactly §5.2.
  bool collapse_identical_runs = true;
  // Pass 3 reads the ≤ 64 seed lines of the redundancy guard at the offsets pass 1 logged
  // (forced lines: bounded memory, the rest spills) instead of reading the body once more.
  // false: by a scan, as with a query. Output is the same either way (tests compare them).
  bool seed_from_offsets = true;
};

std::unique_ptr<Compressor> NewLogCompressor(LogCompressorOptions options = {});

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_LOG_H_
