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
#include "stream/status.h"

namespace caveman {

// TOON text of a JSON document (no trailing LF). Errors (kInvalidArgument): not JSON (§0.3),
// duplicate keys, or a shape TOON cannot express (§5.13).
Result<std::string> EncodeToon(std::string_view json);

// The JSON value of a TOON document as CJ (§0.3), without a trailing newline.
// Errors (kInvalidArgument): anything the strict decoder of §5.13 rejects.
Result<std::string> DecodeToon(std::string_view toon);

std::unique_ptr<Compressor> NewToonCompressor();

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_TOON_H_
