// Global operator new/delete of the caveman-engine program (not of the library: a library
// must not replace its users' allocator). Same contract as the default ones — malloc, the
// new-handler loop, std::bad_alloc — plus one thing: blocks of 2 MiB and more are advised for
// transparent huge pages (stream/huge_pages.h), so a large buffer that is filled once takes
// one page fault per 2 MiB instead of one per 4 KiB. That reaches the allocations we do not
// make ourselves: simdjson's structural index (up to 4 bytes per input byte, its largest
// source of faults on a 64 MiB JSON dump), std::vector and std::string growth of the JSON
// tree and the views. docs/DECISIONS.md, "Huge pages for the program's large allocations".
//
// The sanitizer and fuzzing builds keep the runtime's own operators (they replace new/delete
// to check them).
#include <cstddef>
#include <cstdlib>
#include <new>

#include "stream/huge_pages.h"

#if !defined(CAVEMAN_KEEP_DEFAULT_NEW)

namespace {

void* Allocate(std::size_t n) {
  if (n == 0) n = 1;
  for (;;) {
    if (void* p = std::malloc(n)) {
      caveman::AdviseHugePages(p, n);
      return p;
    }
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* AllocateNoThrow(std::size_t n) noexcept {
  try {
    return Allocate(n);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace

void* operator new(std::size_t n) { return Allocate(n); }
void* operator new[](std::size_t n) { return Allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return AllocateNoThrow(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return AllocateNoThrow(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

#endif  // !CAVEMAN_KEEP_DEFAULT_NEW
