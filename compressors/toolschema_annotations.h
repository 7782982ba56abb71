// toolschema-annotations compressor (§5.12, forced only, not in the manifest): deletes
// annotation-only members ($schema, title, examples, deprecated) from the schemas of a tool
// catalog by byte-span deletion, so every other byte of the input is kept exactly.
//
// Thread-safety: stateless; the compressor may be used from any thread.
#ifndef CAVEMAN_COMPRESSORS_TOOLSCHEMA_ANNOTATIONS_H_
#define CAVEMAN_COMPRESSORS_TOOLSCHEMA_ANNOTATIONS_H_

#include <memory>

#include "compressors/compressor.h"

namespace caveman {

std::unique_ptr<Compressor> NewToolschemaAnnotationsCompressor();

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_TOOLSCHEMA_ANNOTATIONS_H_
