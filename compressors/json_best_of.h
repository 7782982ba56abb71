// The best-of selector of §5.1.7 (CAVE_ENGINE_TOON=best-of): content type `json`; runs the
// TOON encoder and the JSON elider and keeps the one with fewer tokens (TOON on ties), as
// method `toon` (lossless_to_model true) or `elision`.
//
// Thread-safety: stateless; the compressor may be used from any thread.
#ifndef CAVEMAN_COMPRESSORS_JSON_BEST_OF_H_
#define CAVEMAN_COMPRESSORS_JSON_BEST_OF_H_

#include <memory>

#include "compressors/compressor.h"

namespace caveman {

class TokenCounter;

// Counts tokens with DefaultTokenCounter().
std::unique_ptr<Compressor> NewJsonBestOfCompressor();
// Counts tokens with `counter`, which must outlive the compressor (tests).
std::unique_ptr<Compressor> NewJsonBestOfCompressor(const TokenCounter& counter);

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_JSON_BEST_OF_H_
