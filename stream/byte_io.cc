#include "caveman/stream/byte_io.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <istream>
#include <ostream>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <boost/iostreams/device/file_descriptor.hpp>
#include "stream/chunk_buffer.h"

namespace caveman {
namespace {

class StringSource final : public ByteSource {
 public:
  explicit StringSource(std::string_view d) : data_(d) {}
  Result<size_t> Read(char* buf, size_t cap) override {
    size_t n = std::min(cap, data_.size() - pos_);
    std::memcpy(buf, data_.data() + pos_, n);
    pos_ += n;
    return n;
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

class ChunkedSource final : public ByteSource {
 public:
  ChunkedSource(std::string_view d, uint64_t seed, size_t max_piece)
      : data_(d),
        state_(seed * 6364136223846793005ULL + 1442695040888963407ULL),
        max_piece_(max_piece == 0 ? 1 : max_piece) {}
  Result<size_t> Read(char* buf, size_t cap) override {
    // xorshift64*: deterministic piece sizes, no <random> distribution differences.
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    uint64_t r = state_ * 2685821657736338717ULL;
    size_t want = 1 + static_cast<size_t>(r % max_piece_);
    size_t n = std::min({cap, want, data_.size() - pos_});
    std::memcpy(buf, data_.data() + pos_, n);
    pos_ += n;
    return n;
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
  uint64_t state_;
  size_t max_piece_;
};

namespace bio = boost::iostreams;

class FdSource final : public ByteSource {
 public:
  FdSource(int fd, bool owned) : dev_(fd, owned ? bio::close_handle : bio::never_close_handle) {}
  Result<size_t> Read(char* buf, size_t cap) override {
    try {
      std::streamsize n = dev_.read(buf, static_cast<std::streamsize>(cap));
      return n < 0 ? size_t{0} : static_cast<size_t>(n);
    } catch (const std::ios_base::failure& e) {
      return Status::IoError(errno != 0 ? std::strerror(errno) : e.what());
    }
  }

 private:
  bio::file_descriptor_source dev_;
};

class IstreamSource final : public ByteSource {
 public:
  explicit IstreamSource(std::istream& in) : in_(in) {}
  Result<size_t> Read(char* buf, size_t cap) override {
    try {
      in_.read(buf, static_cast<std::streamsize>(cap));
      std::streamsize n = in_.gcount();
      if (in_.bad()) return Status::IoError("istream read failed");
      return static_cast<size_t>(n);
    } catch (const std::ios_base::failure& e) {
      return Status::IoError(e.what());
    }
  }

 private:
  std::istream& in_;
};

class OstreamSink final : public ByteSink {
 public:
  explicit OstreamSink(std::ostream& out) : out_(out) {}
  Status Write(std::string_view data) override {
    try {
      out_.write(data.data(), static_cast<std::streamsize>(data.size()));
      if (!out_) return Status::IoError("ostream write failed");
      return Status::OK();
    } catch (const std::ios_base::failure& e) {
      return Status::IoError(e.what());
    }
  }
  Status Flush() override {
    try {
      out_.flush();
      return out_ ? Status::OK() : Status::IoError("ostream flush failed");
    } catch (const std::ios_base::failure& e) {
      return Status::IoError(e.what());
    }
  }

 private:
  std::ostream& out_;
};

class FdSink final : public ByteSink {
 public:
  explicit FdSink(int fd) : fd_(fd), dev_(fd, bio::never_close_handle) {}
  Status Write(std::string_view data) override {
    try {
      while (!data.empty()) {
        errno = 0;
        std::streamsize n = dev_.write(data.data(), static_cast<std::streamsize>(data.size()));
        if (n <= 0) return Status::IoError("short write");
        data.remove_prefix(static_cast<size_t>(n));
      }
      return Status::OK();
    } catch (const std::ios_base::failure& e) {
      int err = errno;
      if (err != 0) return Status::IoError(std::strerror(err));
      // Boost treats a partial write as a failure without a system error: that is what a
      // pipe whose reader went away (`| head`) returns before EPIPE. Say so when it is.
      struct pollfd p = {fd_, POLLOUT, 0};
      if (::poll(&p, 1, 0) == 1 && (p.revents & POLLERR) != 0) return Status::IoError(std::strerror(EPIPE));
      return Status::IoError("short write");
    }
  }

 private:
  int fd_;
  bio::file_descriptor_sink dev_;
};

}  // namespace

std::unique_ptr<ByteSource> NewStringSource(std::string_view data) { return std::make_unique<StringSource>(data); }
std::unique_ptr<ByteSource> NewChunkedSource(std::string_view data, uint64_t seed, size_t max_piece) {
  return std::make_unique<ChunkedSource>(data, seed, max_piece);
}
std::unique_ptr<ByteSource> NewFdSource(int fd) { return std::make_unique<FdSource>(fd, false); }
Result<std::unique_ptr<ByteSource>> NewFileSource(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string msg = path + ": " + std::strerror(err);
    return err == ENOENT ? Status::NotFound(msg) : Status::IoError(msg);
  }
  return std::unique_ptr<ByteSource>(std::make_unique<FdSource>(fd, true));
}
std::unique_ptr<ByteSource> NewIstreamSource(std::istream& in) { return std::make_unique<IstreamSource>(in); }
std::unique_ptr<ByteSink> NewFdSink(int fd) { return std::make_unique<FdSink>(fd); }
std::unique_ptr<ByteSink> NewOstreamSink(std::ostream& out) { return std::make_unique<OstreamSink>(out); }

Status CopyStream(ByteSource& src, ByteSink& dst) {
  ChunkBuffer buf;
  for (;;) {
    CAVEMAN_ASSIGN_OR_RETURN(size_t n, src.Read(buf.data(), buf.size()));
    if (n == 0) return Status::OK();
    CAVEMAN_RETURN_IF_ERROR(dst.Write(std::string_view(buf.data(), n)));
  }
}

Status ReadAll(ByteSource& src, std::string* out, uint64_t limit) {
  ChunkBuffer buf;
  for (;;) {
    CAVEMAN_ASSIGN_OR_RETURN(size_t n, src.Read(buf.data(), buf.size()));
    if (n == 0) return Status::OK();
    if (out->size() + n > limit) {
      out->append(buf.data(), static_cast<size_t>(limit - out->size()));
      return Status::ResourceExhausted("input exceeds limit");
    }
    out->append(buf.data(), n);
  }
}

}  // namespace caveman
