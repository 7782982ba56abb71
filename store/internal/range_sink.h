// A ByteSink that passes on only bytes [begin, end) of the stream written to it: GetRange's
// slice of an original, in the default RecoveryStore implementation and in SqliteStore.
#ifndef CAVEMAN_STORE_INTERNAL_RANGE_SINK_H_
#define CAVEMAN_STORE_INTERNAL_RANGE_SINK_H_

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "caveman/stream/byte_io.h"

namespace caveman::internal {

class RangeSink final : public ByteSink {
 public:
  RangeSink(ByteSink& out, uint64_t begin, uint64_t end) : out_(out), begin_(begin), end_(end) {}
  Status Write(std::string_view data) override {
    const uint64_t at = pos_;
    pos_ += data.size();
    if (pos_ <= begin_ || at >= end_) return Status::OK();
    const uint64_t from = begin_ > at ? begin_ - at : 0;
    const uint64_t to = std::min<uint64_t>(data.size(), end_ - at);
    return out_.Write(data.substr(from, to - from));
  }
  // Bytes written so far (the whole original once the Get is done).
  uint64_t seen() const { return pos_; }

 private:
  ByteSink& out_;
  uint64_t begin_, end_, pos_ = 0;
};

}  // namespace caveman::internal

#endif  // CAVEMAN_STORE_INTERNAL_RANGE_SINK_H_
