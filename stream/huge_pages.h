// Transparent huge pages for large buffers (issue 19). Where THP is "madvise" (Debian's
// default) a buffer asked for huge pages takes one page fault per 2 MiB instead of one per
// 4 KiB; on a virtual machine each fault costs microseconds, so a 64 MiB buffer filled once
// paid ~0.1 s in faults. Untouched parts stay unbacked as before; RSS rounds up to 2 MiB at
// most per advised buffer.
#ifndef CAVEMAN_STREAM_HUGE_PAGES_H_
#define CAVEMAN_STREAM_HUGE_PAGES_H_

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

namespace caveman {

// Buffers smaller than this are not advised (the rounding would cost more than it saves).
inline constexpr size_t kHugePageAdviceMin = 4u << 20;

// Advises the whole 2 MiB-aligned pages inside [p, p + n) (memory this process owns, e.g. a
// large malloc'd block). Best effort: an unsupported kernel or setting leaves the buffer as it
// was. Advising part of a mapping splits it, and mremap cannot grow a split range: a buffer
// that grows by mremap (the spools) advises its whole mapping instead.
inline void AdviseHugePages(const void* p, size_t n) {
  if (n < kHugePageAdviceMin) return;
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) & ~(kHuge - 1);
  if (end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace caveman

#endif  // CAVEMAN_STREAM_HUGE_PAGES_H_
