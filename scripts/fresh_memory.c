/* What holding an input in memory costs on this machine (issue 19, docs/PERFORMANCE.md,
 * "Small inputs: the store opens beside the run"): FILE read into fresh 4 KiB pages, into
 * fresh 2 MiB pages (MADV_HUGEPAGE, as the input spool does), mapped from the page cache, or
 * written into a memfd and mapped; every page is then touched once (a byte of each page, summed
 * and compared with the file's bytes read again afterwards). Prints wall and CPU ms.
 *
 *   cc -O2 scripts/fresh_memory.c -o /tmp/fresh_memory
 *   for i in 1 2 3; do for m in small huge map memfd; do /tmp/fresh_memory /tmp/js64 $m; done; done
 *
 * Timings only, no thresholds. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static double Cpu(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_utime.tv_usec * 1e-6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s FILE small|huge|map|memfd\n", argv[0]);
    return 2;
  }
  const char* mode = argv[2];
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    perror(argv[1]);
    return 1;
  }
  const size_t n = (size_t)st.st_size;
  const size_t huge = (size_t)2 << 20;
  static char buf[1 << 20];
  const double t0 = Now(), c0 = Cpu();
  const char* p = NULL;
  size_t len = 0;
  if (strcmp(mode, "small") == 0 || strcmp(mode, "huge") == 0) {
    const size_t cap = (n + huge) & ~(huge - 1);
    char* q = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (q == MAP_FAILED) return 1;
    if (mode[0] == 'h') madvise(q, cap, MADV_HUGEPAGE);
    ssize_t k;
    while ((k = read(fd, q + len, 1 << 20)) > 0) len += (size_t)k;
    p = q;
  } else if (strcmp(mode, "map") == 0) {
    p = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    len = n;
  } else if (strcmp(mode, "memfd") == 0) {
    int m = memfd_create("fresh_memory", MFD_CLOEXEC);
    ssize_t k;
    while ((k = read(fd, buf, sizeof buf)) > 0) {
      if (write(m, buf, (size_t)k) != k) return 1;
      len += (size_t)k;
    }
    p = mmap(NULL, len, PROT_READ, MAP_SHARED, m, 0);
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  if (p == MAP_FAILED || len != n) return 1;
  unsigned long sum = 0;
  for (size_t i = 0; i < len; i += 4096) sum += (unsigned char)p[i];
  const double wall = (Now() - t0) * 1e3, cpu = (Cpu() - c0) * 1e3;
  /* The bytes touched must be the file's: the same bytes read again with pread, untimed. */
  unsigned long want = 0;
  for (size_t i = 0; i < len; i += 4096) {
    unsigned char c;
    if (pread(fd, &c, 1, (off_t)i) != 1) return 1;
    want += c;
  }
  if (sum != want) {
    fprintf(stderr, "%s: the %s copy differs from the file\n", argv[0], mode);
    return 1;
  }
  printf("%-6s wall %6.1f ms  cpu %6.1f ms  (bytes checked)\n", mode, wall, cpu);
  return 0;
}
