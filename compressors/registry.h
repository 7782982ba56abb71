// The compressor registry (§2.7): one explicit table in registry.cc, looked up by content
// type. No static self-registration.
#ifndef CAVEMAN_COMPRESSORS_REGISTRY_H_
#define CAVEMAN_COMPRESSORS_REGISTRY_H_

#include <memory>
#include <string_view>
#include <vector>

#include "compressors/compressor.h"

namespace caveman {

struct RegistryOptions {
  // The json slot holds the best-of selector (§5.1.7). Default: false (EngineOptions::
  // json_best_of; the CLI sets it from CAVE_ENGINE_TOON).
  bool toon_best_of = false;
};

class Registry {
 public:
  explicit Registry(RegistryOptions options = {});
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // nullptr when no compressor is registered for `content_type`.
  const Compressor* Find(std::string_view content_type) const;
  // Registered content types in table order.
  std::vector<std::string_view> content_types() const;

 private:
  std::vector<std::unique_ptr<Compressor>> compressors_;
};

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_REGISTRY_H_
