// ChunkBuffer: the read buffer of a streaming loop, left uninitialised.
//
// Why not std::vector<char>(kDefaultChunkSize): the vector zero-fills its 256 KiB, which
// touches (and page-faults) 64 pages on every use even when the stream is 4 KiB long; a
// `compress` of a small input paid that in half a dozen places (issue 19, docs/PERFORMANCE.md
// "Small inputs"). `new char[n]` leaves the memory untouched, so only the pages a Read()
// actually fills are ever mapped. Not installed; usable by every folder.
//
// HowTo:
//   ChunkBuffer buf;   // kDefaultChunkSize bytes
//   CAVEMAN_ASSIGN_OR_RETURN(size_t n, src.Read(buf.data(), buf.size()));
// Thread-safety: a plain value owned by one loop.
#ifndef CAVEMAN_STREAM_CHUNK_BUFFER_H_
#define CAVEMAN_STREAM_CHUNK_BUFFER_H_

#include <cstddef>
#include <memory>

#include "caveman/stream/byte_io.h"

namespace caveman {

class ChunkBuffer {
 public:
  explicit ChunkBuffer(size_t size = kDefaultChunkSize) : data_(new char[size]), size_(size) {}
  char* data() { return data_.get(); }
  size_t size() const { return size_; }

 private:
  std::unique_ptr<char[]> data_;  // default-initialised: indeterminate until read into
  size_t size_;
};

}  // namespace caveman

#endif  // CAVEMAN_STREAM_CHUNK_BUFFER_H_
