// search-result compressor (§5.6): grep/ripgrep-style `path:line:` listings and URL lists.
// Query-aware, redundancy guard, no invariants.
//
// Lossy (S4): keeps the first 8 and last 4 lines, alarm-word lines, query-relevant lines and
// every line that does not resemble a kept one; each dropped run becomes
// `… N search result lines elided (caveman) …`. Kept lines are byte-identical.
#ifndef CAVEMAN_COMPRESSORS_SEARCH_RESULT_H_
#define CAVEMAN_COMPRESSORS_SEARCH_RESULT_H_

#include <memory>

#include "compressors/compressor.h"

namespace caveman {

std::unique_ptr<Compressor> NewSearchResultCompressor();

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_SEARCH_RESULT_H_
