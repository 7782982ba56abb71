// Follow mode over a file descriptor: poll(2) for input with the session's deadline as the
// timeout, so idle markers and paced syncs happen while the input is quiet. Types without an
// online stage are handed to the batch pipeline with the bytes read so far in front.
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "caveman/engine/engine.h"
#include "engine/internal/engine_impl.h"
#include "engine/internal/follow_session.h"
#include "stream/pipe_buffer.h"

namespace caveman {
namespace {

// `prefix` first, then `rest`.
class PrefixedSource final : public ByteSource {
 public:
  PrefixedSource(std::string prefix, std::unique_ptr<ByteSource> rest)
      : prefix_(std::move(prefix)), rest_(std::move(rest)) {}
  Result<size_t> Read(char* buf, size_t cap) override {
    if (pos_ < prefix_.size()) {
      const size_t n = std::min(cap, prefix_.size() - pos_);
      std::memcpy(buf, prefix_.data() + pos_, n);
      pos_ += n;
      return n;
    }
    if (rest_ == nullptr) return size_t{0};
    return rest_->Read(buf, cap);
  }

 private:
  std::string prefix_;
  size_t pos_ = 0;
  std::unique_ptr<ByteSource> rest_;
};

constexpr size_t kReadSize = 256 * 1024;

int PollTimeoutMs(const std::optional<internal::FollowClock::time_point>& deadline) {
  if (!deadline) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - internal::FollowClock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left.count(), 60000));
}

}  // namespace

Result<CompressResult> Engine::CompressFollowFd(int in_fd, const CompressOptions& o, ByteSink& out) const {
  internal::FollowConfig config;
  config.counter = impl_->counter_;
  config.store = o.external_recovery ? nullptr : impl_->options_.store;
  config.type = o.type;
  config.type_hint = o.type_hint;
  config.query = o.query;
  config.command = o.command;
  config.never_types = o.never_types;
  internal::FollowSession session(config, out);
  auto batch = [&](bool eof) {
    std::unique_ptr<ByteSource> rest = eof ? nullptr : NewFdSource(in_fd);
    PrefixedSource source(session.sample(), std::move(rest));
    return Compress(source, o, out);
  };
  if (session.wants_batch()) return batch(false);
  GrowPipeBuffer(in_fd, kReadSize);  // a read per 256 KiB, not per 64 KiB
  std::vector<char> buf(kReadSize);
  for (;;) {
    pollfd p{in_fd, POLLIN, 0};
    const int rc = ::poll(&p, 1, PollTimeoutMs(session.Deadline()));
    if (rc < 0) {
      if (errno == EINTR) continue;
      return Status::IoError(std::string("read input: ") + std::strerror(errno));
    }
    if (rc == 0) {
      CAVEMAN_RETURN_IF_ERROR(session.Tick(internal::FollowClock::now()));
      if (session.wants_batch()) return batch(false);  // the detection window ended
      continue;
    }
    const ssize_t n = ::read(in_fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Status::IoError(std::string("read input: ") + std::strerror(errno));
    }
    if (n == 0) break;
    const auto now = internal::FollowClock::now();
    CAVEMAN_RETURN_IF_ERROR(session.Push(std::string_view(buf.data(), static_cast<size_t>(n)), now));
    CAVEMAN_RETURN_IF_ERROR(session.Tick(now));
    if (session.wants_batch()) return batch(false);
  }
  CAVEMAN_RETURN_IF_ERROR(session.EndOfInput(internal::FollowClock::now()));
  if (session.wants_batch()) return batch(true);
  return session.Finish();
}

}  // namespace caveman
