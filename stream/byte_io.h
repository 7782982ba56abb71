// Chunked byte sources and sinks: the edges of every stream in the engine.
//
// A ByteSource hands out the bytes of one stream in pieces of whatever size the producer has;
// consumers must not depend on the piece boundaries (see tests/stream/chunking_test.cc).
// A ByteSink accepts pieces in order. Neither is thread-safe; one stream, one thread.
//
// The fd and istream adapters are the only places that touch Boost.Iostreams; everything
// inside the engine works on these two interfaces.
#ifndef CAVEMAN_STREAM_BYTE_IO_H_
#define CAVEMAN_STREAM_BYTE_IO_H_

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

#include "caveman/stream/export.h"
#include "caveman/stream/status.h"

namespace caveman {

// Default read size of the engine: large enough to amortise syscalls, small enough that a
// handful of buffers stay far below the memory bounds of §1.4.
inline constexpr size_t kDefaultChunkSize = 256 * 1024;

class CAVEMAN_EXPORT ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `cap` bytes into `buf`. Returns the number read; 0 means end of stream.
  // Errors: kIoError (the stream is then unusable).
  virtual Result<size_t> Read(char* buf, size_t cap) = 0;
};

class CAVEMAN_EXPORT ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Appends `data`. Errors: kIoError, kResourceExhausted.
  virtual Status Write(std::string_view data) = 0;
  virtual Status Flush() { return Status::OK(); }
};

// Sink that appends to a std::string it owns.
class CAVEMAN_EXPORT StringSink final : public ByteSink {
 public:
  Status Write(std::string_view data) override {
    data_.append(data);
    return Status::OK();
  }
  std::string& data() { return data_; }
  const std::string& data() const { return data_; }

 private:
  std::string data_;
};

// Sink that discards everything but counts bytes.
class CAVEMAN_EXPORT CountingSink final : public ByteSink {
 public:
  Status Write(std::string_view data) override {
    bytes_ += data.size();
    return Status::OK();
  }
  uint64_t bytes() const { return bytes_; }

 private:
  uint64_t bytes_ = 0;
};

// Reads a caller-owned buffer; `data` must outlive the source.
CAVEMAN_EXPORT std::unique_ptr<ByteSource> NewStringSource(std::string_view data);
std::unique_ptr<ByteSource> NewStringSource(std::string&&) = delete;  // would dangle

// Reads a caller-owned buffer in pseudo-random piece sizes in [1, max_piece], deterministic
// for a given seed. For chunk-invariance tests.
CAVEMAN_EXPORT std::unique_ptr<ByteSource> NewChunkedSource(std::string_view data, uint64_t seed, size_t max_piece);

// Reads a file descriptor (not owned, not closed) through Boost.Iostreams.
CAVEMAN_EXPORT std::unique_ptr<ByteSource> NewFdSource(int fd);
// Opens and owns a file for reading. Errors: kIoError / kNotFound.
CAVEMAN_EXPORT Result<std::unique_ptr<ByteSource>> NewFileSource(const std::string& path);
// Reads a std::istream (Boost.Iostreams-compatible streams included); I/O failures become
// kIoError.
CAVEMAN_EXPORT std::unique_ptr<ByteSource> NewIstreamSource(std::istream& in);

// Writes to a file descriptor (not owned) through Boost.Iostreams; EPIPE etc. → kIoError.
CAVEMAN_EXPORT std::unique_ptr<ByteSink> NewFdSink(int fd);
// Writes to a std::ostream (not owned); a failed or bad stream becomes kIoError. Flush()
// flushes the stream.
CAVEMAN_EXPORT std::unique_ptr<ByteSink> NewOstreamSink(std::ostream& out);

// Copies everything from `src` to `dst` in kDefaultChunkSize pieces.
CAVEMAN_EXPORT Status CopyStream(ByteSource& src, ByteSink& dst);
// Reads everything into `out`. If more than `limit` bytes arrive → kResourceExhausted (the
// bytes read so far stay in `out`).
CAVEMAN_EXPORT Status ReadAll(ByteSource& src, std::string* out, uint64_t limit = UINT64_MAX);

}  // namespace caveman

#endif  // CAVEMAN_STREAM_BYTE_IO_H_
