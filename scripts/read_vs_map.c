// Reading a file into fresh memory against mapping it (issue 19, docs/PERFORMANCE.md): CPU
// milliseconds to get every page of FILE in reach, by
//   r   read() in 1 MiB steps into a fresh anonymous mapping advised for huge pages, then one
//       byte per 4 KiB page touched (what `compress` does with a regular-file stdin);
//   m   mmap(MAP_PRIVATE) of the file, one byte per page touched;
//   mp  the same with MAP_POPULATE;
//   ms  the same with madvise(MADV_SEQUENTIAL | MADV_WILLNEED).
// Prints the mode, the CPU time of this process and a sum of the bytes touched (every mode
// must print the same sum, so the pages were really read).
//   cc -O2 -o /tmp/read_vs_map scripts/read_vs_map.c
//   for m in r m mp ms; do /tmp/read_vs_map $m /tmp/js64; done
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static double CpuSeconds(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return (double)r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + (double)r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: read_vs_map r|m|mp|ms FILE\n");
    return 2;
  }
  const char* mode = argv[1];
  int fd = open(argv[2], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
    perror(argv[2]);
    return 1;
  }
  const size_t n = (size_t)st.st_size;
  unsigned long sum = 0;
  const double c0 = CpuSeconds();
  if (strcmp(mode, "r") == 0) {
    const size_t cap = n + (2u << 20);
    char* b = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED) return 1;
    madvise(b, cap, MADV_HUGEPAGE);
    size_t off = 0;
    ssize_t k;
    while (off < n && (k = read(fd, b + off, 1u << 20)) > 0) off += (size_t)k;
    if (off != n) return 1;
    for (size_t i = 0; i < n; i += 4096) sum += (unsigned char)b[i];
  } else {
    int flags = MAP_PRIVATE;
    if (strcmp(mode, "mp") == 0) flags |= MAP_POPULATE;
    const unsigned char* b = mmap(NULL, n, PROT_READ, flags, fd, 0);
    if (b == MAP_FAILED) return 1;
    if (strcmp(mode, "ms") == 0) madvise((void*)b, n, MADV_SEQUENTIAL | MADV_WILLNEED);
    for (size_t i = 0; i < n; i += 4096) sum += b[i];
  }
  printf("%s %.1f ms sum %lu\n", mode, (CpuSeconds() - c0) * 1000, sum);
  return 0;
}
