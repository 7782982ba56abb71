// toolschema compressor (§5.11, forced only): shrinks LLM tool catalogs (MCP / OpenAI tool
// envelopes with JSON Schemas) by dropping documentation-only schema members and cutting long
// descriptions down to their constraint-bearing sentences. Output is CJ.
//
// Thread-safety: stateless; the compressor may be used from any thread.
#ifndef CAVEMAN_COMPRESSORS_TOOLSCHEMA_H_
#define CAVEMAN_COMPRESSORS_TOOLSCHEMA_H_

#include <memory>
#include <string>
#include <string_view>

#include "compressors/compressor.h"

namespace caveman {

std::unique_ptr<Compressor> NewToolschemaCompressor();

// compressDescription(s) of §5.11 (exposed for tests).
std::string CompressToolDescription(std::string_view s);

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_TOOLSCHEMA_H_
