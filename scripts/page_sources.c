// Where a database's pages come from, and what they cost on this VM (issue 19,
// docs/PERFORMANCE.md, "Pattern databases used in place"): gets KIB KiB one of three ways in a
// fresh process and prints the milliseconds it took.
//   MODE 0: fresh anonymous memory, written (what deserialising a Hyperscan database into
//           newly allocated memory costs before the copy);
//   MODE 1: a read-only mapping of FILE's cached pages, one byte read per page (a database
//           used in place from the executable's read-only image);
//   MODE 2: the same mapping copied into fresh memory (the deserialisation);
//   MODE 3: as 0, in memory advised for transparent huge pages (MADV_HUGEPAGE) from a 2 MiB
//           boundary: what a spool or a large allocation of 2 MiB or more gets.
// Prints a sum of the bytes read so the reads cannot be optimised away.
//   cc -O2 -o /tmp/page_sources scripts/page_sources.c
//   for r in 1 2 3 4; do for m in 0 1 2; do /tmp/page_sources $m 212 build/cli/caveman-engine; done; done
//   for r in 1 2 3 4; do for m in 0 3; do /tmp/page_sources $m 2048 build/cli/caveman-engine; done; done
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double NowMs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: page_sources MODE KIB FILE\n");
    return 2;
  }
  const int mode = atoi(argv[1]);
  const size_t n = (size_t)atol(argv[2]) * 1024;
  const int fd = open(argv[3], O_RDONLY);
  if (fd < 0) {
    perror(argv[3]);
    return 1;
  }
  const off_t offset = 1 << 24;  // inside the executable's read-only data
  unsigned sum = 0;
  const double t0 = NowMs();
  if (mode == 0 || mode == 3) {
    const size_t huge = (size_t)2 << 20;
    const size_t len = mode == 3 ? (n + huge - 1) / huge * huge + huge : n;
    char* p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    if (mode == 3) {
      p = (char*)(((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1));
      madvise(p, len - huge, MADV_HUGEPAGE);
    }
    memset(p, 1, n);
    sum = (unsigned char)p[n - 1];
  } else {
    const char* p = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, offset);
    if (p == MAP_FAILED) return 1;
    if (mode == 1) {
      for (size_t i = 0; i < n; i += 4096) sum += (unsigned char)p[i];
    } else {
      char* q = malloc(n);
      if (q == NULL) return 1;
      memcpy(q, p, n);
      sum = (unsigned char)q[n - 1];
    }
  }
  const double t1 = NowMs();
  printf("mode %d: %zu KiB in %.3f ms (sum %u)\n", mode, n / 1024, t1 - t0, sum);
  return 0;
}
