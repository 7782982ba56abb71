// repetition (§5.15): collapses runs of ≥ 3 byte-identical lines into the first line plus one
// marker line `… caveman: <run−1> identical lines elided …`.
//
// Forced only (detection never returns it), no query. Lossy (S4): the count of removed lines
// is kept, their bytes are identical to the line shown, so only the recovery store is needed
// to restore the exact layout.
//
// Streaming: one pass over the body in chunks; memory holds the current run's line only up
// to kRepetitionMaxInlineLine bytes — a longer line is kept in a Spool (spilled to a temp
// file beyond 1 MiB) and compared by length + SHA-256, so memory is bounded independently of
// both the number of lines and the line length. Output does not depend on chunking.
#ifndef CAVEMAN_COMPRESSORS_REPETITION_H_
#define CAVEMAN_COMPRESSORS_REPETITION_H_

#include <memory>

#include "compressors/compressor.h"

namespace caveman {

inline constexpr size_t kRepetitionMinBytes = 200;  // shorter inputs decline
inline constexpr size_t kRepetitionMinRun = 3;      // runs shorter than this stay verbatim
inline constexpr size_t kRepetitionMaxInlineLine = 64 * 1024;

std::unique_ptr<Compressor> NewRepetitionCompressor();

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_REPETITION_H_
