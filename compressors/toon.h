// toon compressor (§5.13): a lossless re-encoding of JSON as TOON (indented keys, tabular
// arrays), method `toon`, lossless_to_model true; and the strict decoder used by the CLI's
// `toon decode`.
//
// Thread-safety: stateless; all functions may be called from any thread.
#ifndef CAVEMAN_COMPRESSORS_TOON_H_
#define CAVEMAN_COMPRESSORS_TOON_H_

#include <memory>
#include <string>
#include <string_view>

#include "compressors/compressor.h"
#include "caveman/stream/status.h"

namespace caveman {

// TOON text of a JSON document (no trailing LF). Errors (kInvalidArgument): not JSON (§0.3),
// duplicate keys, or a shape TOON cannot express (§5.13).
Result<std::string> EncodeToon(std::string_view json);
// EncodeToon that gives up with kResourceExhausted as soon as the TOON text grows past
// `max_bytes`. Indentation makes TOON of deeply nested objects quadratic in the depth (a
// 300 KB document of 10,000-deep objects encodes to 500 MB), so the compressors bound it.
Result<std::string> EncodeToon(std::string_view json, size_t max_bytes);

// No o200k_base token is longer than this many bytes, so a text of more than
// kMaxTokenBytes × N bytes has more than N tokens, i.e. more tokens than any N-byte input:
// the size gate (and the best-of selector) would reject it anyway.
inline constexpr size_t kMaxTokenBytes = 128;

// The JSON value of a TOON document as CJ (§0.3), without a trailing newline.
// Errors (kInvalidArgument): anything the strict decoder of §5.13 rejects.
Result<std::string> DecodeToon(std::string_view toon);

std::unique_ptr<Compressor> NewToonCompressor();

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_TOON_H_
