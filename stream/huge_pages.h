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

// Blocks from the heap (AdviseHugePages) smaller than this are not advised: only the whole
// 2 MiB pages inside a block can be, so one huge page is the least worth asking for. Filling
// 2 MiB of fresh 4 KiB pages costs 5–6 ms on this VM, one huge page ≈ 0.2 ms
// (scripts/page_sources.c, modes 0 and 3; docs/PERFORMANCE.md, "Pattern databases used in
// place"). It was 4 MiB until 2026-12-07. Spools map their own blocks in huge pages from
// SpoolMemory::kMapBytes on (stream/spool.cc).
inline constexpr size_t kHugePageAdviceMin = 2u << 20;

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// madvise(advice) of the whole `page`-aligned pages inside [p, p + n) (`page` a power of two),
// if there is one. Best effort: the result is ignored.
inline void AdviseWholePages(const void* p, size_t n, uintptr_t page, int advice) {
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) & ~(page - 1);
  if (end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, advice);
}

// Advises the whole 2 MiB-aligned pages inside [p, p + n) (memory this process owns, e.g. a
// large malloc'd block). Best effort: an unsupported kernel or setting leaves the buffer as it
// was. Advising part of a mapping splits it, and mremap cannot grow a split range: a buffer
// that grows by mremap (the spools) advises its whole mapping instead.
inline void AdviseHugePages(const void* p, size_t n) {
  if (n < kHugePageAdviceMin) return;
  AdviseWholePages(p, n, kHugePageBytes, MADV_HUGEPAGE);
}

// An anonymous read-write mapping of `bytes` (a multiple of kHugePageBytes) that starts on a
// 2 MiB boundary, or MAP_FAILED: 2 MiB more is mapped and the parts around the aligned range
// are unmapped again. Not advised: the caller decides.
inline void* MapHugeAligned(size_t bytes) {
  void* p = ::mmap(nullptr, bytes + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return p;
  const auto start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (start + kHugePageBytes - 1) & ~(uintptr_t{kHugePageBytes} - 1);
  if (aligned > start) ::munmap(p, aligned - start);
  const uintptr_t end = start + bytes + kHugePageBytes;
  if (end > aligned + bytes) ::munmap(reinterpret_cast<void*>(aligned + bytes), end - aligned - bytes);
  return reinterpret_cast<void*>(aligned);
}

// `n` rounded up to whole huge pages.
inline size_t RoundUpToHugePages(size_t n) { return (n + kHugePageBytes - 1) & ~(kHugePageBytes - 1); }

// MapHugeAligned of `bytes` (a multiple of kHugePageBytes) advised for transparent huge pages
// before anything touches it, so each 2 MiB stretch can be one huge page; or MAP_FAILED.
inline void* MapHugePages(size_t bytes) {
  void* p = MapHugeAligned(bytes);
  if (p != MAP_FAILED) (void)::madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

}  // namespace caveman

#endif  // CAVEMAN_STREAM_HUGE_PAGES_H_
