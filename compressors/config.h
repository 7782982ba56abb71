// config compressor (§5.10): YAML, TOML and INI. Query-aware, redundancy guard, parent and
// section context around every kept line.
//
// Lossy (S4): dropped line runs become `# … N config lines elided (caveman) …`; kept lines
// are byte-identical. YAML output is re-parsed and the transform declines if it is not valid.
#ifndef CAVEMAN_COMPRESSORS_CONFIG_H_
#define CAVEMAN_COMPRESSORS_CONFIG_H_

#include <memory>
#include <string_view>

#include "compressors/compressor.h"

namespace caveman {

std::unique_ptr<Compressor> NewConfigCompressor();

// True iff the config parser of §5.10 accepts `body` as TOML/INI or as YAML (the latter
// including a full YAML parse: every document parses, at least one document, no duplicate
// mapping keys). Used by detection rule 11, which adds its own line-count floor.
bool IsConfig(std::string_view body);

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_CONFIG_H_
