// diff compressor (§5.5): unified diffs. No query, no redundancy guard, no invariants.
//
// Lossy (S4): every structural line (file headers, hunk headers, every added or removed line)
// is kept with 2 context lines on each side; other context runs become
// `… N context lines elided (caveman) …`. Kept lines are byte-identical.
#ifndef CAVEMAN_COMPRESSORS_DIFF_H_
#define CAVEMAN_COMPRESSORS_DIFF_H_

#include <memory>

#include "compressors/compressor.h"

namespace caveman {

std::unique_ptr<Compressor> NewDiffCompressor();

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_DIFF_H_
