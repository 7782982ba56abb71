// Follow mode (compress --follow, run). INTERIM: until the online path lands this runs the
// batch pipeline over the descriptor, so `run` and `--follow` work end to end but print
// nothing before end of input.
#include "engine/engine.h"

namespace caveman {

Result<CompressResult> Engine::CompressFollowFd(int in_fd, const CompressOptions& o, ByteSink& out) {
  auto src = NewFdSource(in_fd);
  return Compress(*src, o, out);
}

}  // namespace caveman
