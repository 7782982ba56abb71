// Growing the pipe a stream is read from (issue 19).
#ifndef CAVEMAN_STREAM_PIPE_BUFFER_H_
#define CAVEMAN_STREAM_PIPE_BUFFER_H_

#include <fcntl.h>
#include <sys/stat.h>

#include <cstddef>

namespace caveman {

// A pipe holds 64 KiB by default, so a fast writer is stopped every 64 KiB and each read
// returns at most that much: a wake-up of each side and a read per 64 KiB. If `fd` is a pipe
// smaller than `bytes`, asks the kernel to make it `bytes` (best effort: the user's pipe
// quota may refuse, and then nothing changes). Only the buffering changes: a read still
// returns whatever has arrived.
inline void GrowPipeBuffer(int fd, size_t bytes) {
#if defined(F_GETPIPE_SZ) && defined(F_SETPIPE_SZ)  // Linux
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return;
  const int size = ::fcntl(fd, F_GETPIPE_SZ);
  if (size >= 0 && static_cast<size_t>(size) < bytes) (void)::fcntl(fd, F_SETPIPE_SZ, static_cast<int>(bytes));
#else
  (void)fd;
  (void)bytes;
#endif
}

}  // namespace caveman

#endif  // CAVEMAN_STREAM_PIPE_BUFFER_H_
