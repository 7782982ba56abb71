#include "compressors/internal/ts_budget.h"

#include <tree_sitter/api.h>

#include <cstdlib>
#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace caveman::internal {
namespace {

struct Meter {
  bool active = false;
  int64_t live = 0;
  int64_t peak = 0;
  int64_t limit = 0;
  size_t* flag = nullptr;
};
thread_local Meter t_meter;

size_t UsableSize(void* p, size_t requested) {
#if defined(__GLIBC__)
  return p == nullptr ? 0 : malloc_usable_size(p);
#else
  return p == nullptr ? 0 : requested;
#endif
}

void Charge(int64_t delta) {
  Meter& m = t_meter;
  if (!m.active) return;
  m.live += delta;
  if (m.live > m.peak) m.peak = m.live;
  if (m.live > m.limit && m.flag != nullptr) *m.flag = 1;
}

void* MeteredMalloc(size_t n) {
  void* p = std::malloc(n);
  Charge(static_cast<int64_t>(UsableSize(p, n)));
  return p;
}

void* MeteredCalloc(size_t count, size_t size) {
  void* p = std::calloc(count, size);
  Charge(static_cast<int64_t>(UsableSize(p, count * size)));
  return p;
}

void* MeteredRealloc(void* old, size_t n) {
  const auto before = static_cast<int64_t>(UsableSize(old, 0));
  void* p = std::realloc(old, n);
  if (p != nullptr || n == 0) Charge(static_cast<int64_t>(UsableSize(p, n)) - before);
  return p;
}

void MeteredFree(void* p) {
  Charge(-static_cast<int64_t>(UsableSize(p, 0)));
  std::free(p);
}

void InstallOnce() {
  static std::once_flag once;
  std::call_once(once, [] { ts_set_allocator(MeteredMalloc, MeteredCalloc, MeteredRealloc, MeteredFree); });
}

}  // namespace

TreeSitterBudget::TreeSitterBudget(uint64_t bytes) {
  InstallOnce();
  t_meter = Meter{.active = true, .live = 0, .peak = 0, .limit = static_cast<int64_t>(bytes), .flag = &flag_};
}

TreeSitterBudget::~TreeSitterBudget() { t_meter = Meter{}; }

uint64_t TreeSitterBudget::peak_bytes() const { return static_cast<uint64_t>(t_meter.peak); }

}  // namespace caveman::internal
