// Capability registry manifest (§11): one line of JSON describing the registered transforms.
#ifndef CAVEMAN_COMPRESSORS_MANIFEST_H_
#define CAVEMAN_COMPRESSORS_MANIFEST_H_

#include <string>

namespace caveman {

// The manifest line without the trailing LF. Deterministic; independent of the best-of
// selector.
std::string CapabilityManifest();

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_MANIFEST_H_
