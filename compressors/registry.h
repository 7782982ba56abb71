// The compressor registry (§2.7): one explicit table in registry.cc, looked up by content
// type. No static self-registration.
#ifndef CAVEMAN_COMPRESSORS_REGISTRY_H_
#define CAVEMAN_COMPRESSORS_REGISTRY_H_

#include <array>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "compressors/compressor.h"

namespace caveman {

struct RegistryOptions {
  // The json slot holds the best-of selector (§5.1.7). Default: false (EngineOptions::
  // json_best_of; the CLI sets it from CAVE_ENGINE_TOON).
  bool toon_best_of = false;
};

// Each compressor is constructed on its first Find (a process that compresses one input
// builds one or two of the sixteen; issue 19, small inputs). Thread-safe: Find may be called
// from several threads at once.
class Registry {
 public:
  static constexpr size_t kEntryCount = 16;

  explicit Registry(RegistryOptions options = {});
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // nullptr when no compressor is registered for `content_type`.
  const Compressor* Find(std::string_view content_type) const;
  // Registered content types in table order.
  std::vector<std::string_view> content_types() const;

 private:
  RegistryOptions options_;
  mutable std::array<std::once_flag, kEntryCount> built_;
  mutable std::array<std::unique_ptr<Compressor>, kEntryCount> compressors_;
};

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_REGISTRY_H_
