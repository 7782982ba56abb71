// Sinks of the read path shared by the SQLite and PostgreSQL backends: VerifyingSink counts,
// hashes and passes on a decompressed original and refuses bytes past its recorded length;
// StopSink interrupts a sliced read once the caller has enough.
#ifndef CAVEMAN_STORE_INTERNAL_READ_SINKS_H_
#define CAVEMAN_STORE_INTERNAL_READ_SINKS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "store/internal/sqlite_util.h"  // the user-facing messages (kCorruptMessage, ...)
#include "caveman/stream/byte_io.h"
#include "stream/sha256.h"
#include "caveman/stream/status.h"

namespace caveman::internal {

// Receives the decompressed original: counts, hashes and spools it, and stops as soon as it
// grows past the recorded length (so a corrupt record cannot fill the disk).
class VerifyingSink final : public ByteSink {
 public:
  VerifyingSink(ByteSink& spool, uint64_t limit) : spool_(spool), limit_(limit) {}
  Status Write(std::string_view data) override {
    if (data.size() > limit_ - bytes_) return Status::Corruption(kCorruptMessage);
    bytes_ += data.size();
    sha_.Update(data);
    return spool_.Write(data);
  }
  uint64_t bytes() const { return bytes_; }
  std::string Handle() { return HandleFromDigest(sha_.Final()); }
  std::string HexDigest() { return Sha256::Hex(sha_.Final()); }

 private:
  ByteSink& spool_;
  uint64_t limit_;
  uint64_t bytes_ = 0;
  Sha256 sha_;
};

// Passes decoded bytes on until `enough()` says stop, then fails the decoder's Write so that
// it returns at once (the failure is recognised by stopped(), not passed to the caller).
class StopSink final : public ByteSink {
 public:
  StopSink(ByteSink& out, const std::function<bool()>& enough) : out_(out), enough_(enough) {}
  Status Write(std::string_view data) override {
    if (stopped_) return Status::Internal("stopped");
    CAVEMAN_RETURN_IF_ERROR(out_.Write(data));
    if (enough_()) {
      stopped_ = true;
      return Status::Internal("stopped");
    }
    return Status::OK();
  }
  bool stopped() const { return stopped_; }

 private:
  ByteSink& out_;
  const std::function<bool()>& enough_;
  bool stopped_ = false;
};

}  // namespace caveman::internal

#endif  // CAVEMAN_STORE_INTERNAL_READ_SINKS_H_
