// What a first touch of a page costs on this VM (issue 19, docs/PERFORMANCE.md): maps LEN
// bytes of FILE from OFFSET (read-only, private; the page cache is warm after the first run),
// then reads one byte at each of TOUCHES pseudo-random positions, and prints the milliseconds
// of the setup and of the touches. MODE 0: plain mapping; 1: madvise(MADV_POPULATE_READ)
// first (page tables filled in one call); 2: madvise(MADV_WILLNEED) first. The sum printed
// must be the same for every mode (the bytes were really read).
//   cc -O2 -o /tmp/touch_pages scripts/touch_pages.c
//   B=build/cli/caveman-engine; T=$(nm $B | awk '/caveman_o200k_tables_begin/{print "0x"$1}')
//   for m in 0 1 2; do /tmp/touch_pages $B $T 8000000 $m 41; done
// (the token counter's tables: a 4 KiB `compress` touches about 41 pages of them).
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

static double NowMs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: touch_pages FILE OFFSET LEN MODE TOUCHES\n");
    return 2;
  }
  const int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    perror(argv[1]);
    return 1;
  }
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  const size_t offset = strtoull(argv[2], NULL, 0), len = strtoull(argv[3], NULL, 0);
  const int mode = atoi(argv[4]), touches = atoi(argv[5]);
  const size_t aligned = offset & ~(page - 1);
  const double t0 = NowMs();
  const char* p = mmap(NULL, len + (offset - aligned), PROT_READ, MAP_PRIVATE, fd, (off_t)aligned);
  if (p == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  if (mode == 1) madvise((void*)p, len, MADV_POPULATE_READ);
  if (mode == 2) madvise((void*)p, len, MADV_WILLNEED);
  const double t1 = NowMs();
  unsigned sum = 0;
  unsigned long long x = 88172645463325252ULL;
  for (int i = 0; i < touches; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    sum += (unsigned char)p[x % len];
  }
  const double t2 = NowMs();
  printf("mode %d: setup %.3f ms, %d touches %.3f ms (sum %u)\n", mode, t1 - t0, touches, t2 - t1, sum);
  return 0;
}
