// The code compressor (§5.4): elides function bodies of source code, keeping imports,
// signatures and type declarations.
//
// Accepted content type: `code`. Lossy (S4): every outermost function, method, constructor,
// closure and lambda body with a block body is replaced by `{ /* caveman: body elided */ }`
// (brace languages) or `...` (Python). The language is sniffed by substring (§5.4 table) and
// the body parsed with the tree-sitter grammar of that language (Go, Python, Rust, Java, C++,
// C, TypeScript with a TSX retry). It declines when no language matches, the parse has any
// error node, nothing was elided, or the result does not re-parse cleanly. Running it on its
// own output declines (all bodies are already elided), so it is idempotent.
//
// Works on the whole body in memory (§1.4 allows it for code). No query.
// Thread-safety: immutable; Transform may run concurrently (one tree-sitter parser per call).
#ifndef CAVEMAN_COMPRESSORS_CODE_H_
#define CAVEMAN_COMPRESSORS_CODE_H_

#include <memory>

#include "compressors/compressor.h"

namespace caveman {

std::unique_ptr<Compressor> NewCodeCompressor();

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_CODE_H_
