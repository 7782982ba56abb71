// InputWorker: see input_worker.h.
#include "engine/internal/input_worker.h"

#include <algorithm>
#include <new>

#include "compressors/detect.h"
#include "caveman/stream/byte_io.h"

namespace caveman::internal {
namespace {

// Calls fn(piece) for [begin, end) of `spool` in chunks read into `buf` (reused by the
// caller: fresh 256 KiB buffers per segment fragment the heap and show up as RSS).
// Errors: spool reads.
template <class Fn>
Status ForEachPiece(const Spool& spool, uint64_t begin, uint64_t end, std::string* buf, Fn&& fn) {
  for (uint64_t off = begin; off < end;) {
    buf->clear();
    CAVEMAN_RETURN_IF_ERROR(spool.ReadRange(off, std::min<uint64_t>(kDefaultChunkSize, end - off), buf));
    if (buf->empty()) return Status::IoError("short spool read");
    fn(std::string_view(*buf));
    off += buf->size();
  }
  return Status::OK();
}

}  // namespace

InputWorker::InputWorker(const TokenCounter& counter, RecordWriter* writer, bool warm_detection)
    : counter_(counter), tokens_(counter), writer_(writer), warm_detection_(warm_detection), thread_([this] {
        Run();
      }) {}

void InputWorker::Offer(std::string_view chunk) {
  if (lagging_) return;
  std::unique_lock<std::mutex> lock(mu_);
  if (queue_.size() >= kMaxQueued) {
    lagging_ = true;  // the rest comes from the spool after end of input
    return;
  }
  std::string buf;
  if (!free_.empty()) {
    buf = std::move(free_.back());
    free_.pop_back();
  }
  lock.unlock();
  buf.assign(chunk);  // copied outside the lock; a recycled buffer needs no allocation
  lock.lock();
  queue_.push_back(std::move(buf));
  queued_bytes_ += chunk.size();
  lock.unlock();
  cv_.notify_all();
}

void InputWorker::InputComplete(const Spool* original, std::string_view whole) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    original_ = original;
    whole_ = whole;
    complete_ = true;
  }
  cv_.notify_all();
}

bool InputWorker::LooksLikeJson(std::string_view first_bytes) {
  for (char c : first_bytes) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{' || c == '[';
  }
  return false;
}

void InputWorker::Help() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    CAVEMAN_DCHECK(complete_ || cancel_);
    cv_.wait(lock, [this] { return split_ != Split::kUndecided || cancel_; });
    if (split_ != Split::kSegmented) return;
  }
  for (;;) {
    size_t k;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (back_ <= front_) return;
      k = --back_;
    }
    try {
      StreamingTokenCount tc(counter_);
      Status s = ForEachPiece(*original_, segments_[k], segments_[k + 1], &help_buf_,
                              [&](std::string_view piece) { tc.Feed(piece); });
      if (!s.ok()) {
        helper_status_ = s;  // the worker's frame read fails the record the same way
        return;
      }
      helped_tokens_ += tc.Finish();
    } catch (const std::bad_alloc&) {
      helper_oom_ = true;  // segment k goes uncounted: the caller passes the original through
      helper_status_ = Status::ResourceExhausted("out of memory while counting the input");
      return;
    }
  }
}

void InputWorker::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancel_ = true;
  }
  cv_.notify_all();
  Join();
}

void InputWorker::Process(std::string_view chunk) {
  tokens_.Feed(chunk);
  if (writer_ != nullptr && writer_status_.ok()) writer_status_ = writer_->Append(chunk);
}

void InputWorker::Run() {
  try {
    if (RunSegments() && writer_ != nullptr && writer_status_.ok()) {
      // Every byte is in the frame: end it here, beside the reading thread's detection and
      // transform, instead of in the commit that the view waits for (issue 19).
      writer_status_ = writer_->EndOfInput();
    }
  } catch (const std::bad_alloc&) {
    worker_oom_ = true;
    writer_status_ = Status::ResourceExhausted("out of memory while storing the original");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (split_ == Split::kUndecided) split_ = Split::kNone;  // Help() has nothing to take
  }
  cv_.notify_all();
}

// The warm-up readies detection while the reading thread is still busy, and comes after the
// first chunk's count: when the input has been read to its end by then (one chunk, or a small
// input), that thread is detecting and loads the patterns itself, and warming up would only
// delay the count it waits for (issue 19).
void InputWorker::WarmUpWhileStillReading() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (complete_) return;
  }
  warmed_up_ = true;
  try {
    (void)DetectBody("caveman: warm up the detection patterns\n");
  } catch (const std::bad_alloc&) {  // only a warm-up: detection compiles on demand
  }
}

bool InputWorker::RunSegments() {
  const Spool* original = nullptr;
  std::string_view whole;
  uint64_t from = 0;
  bool first = true;
  for (;;) {
    std::string chunk;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return cancel_ || complete_ || !queue_.empty(); });
      if (cancel_) return false;
      if (queue_.empty()) {
        original = original_;
        whole = whole_;
        from = queued_bytes_;
        break;
      }
      chunk = std::move(queue_.front());
      queue_.pop_front();
    }
    Process(chunk);
    if (first && warm_detection_ && !LooksLikeJson(chunk)) WarmUpWhileStillReading();
    first = false;
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(chunk));
  }
  if (!whole.empty()) {
    // The frame gets the rest in order. The count goes on from the last cut the stream
    // passed: what precedes it is counted, the carried text after it starts the rest
    // (additive there for o200k_base; approx-chars/4 restarts on the whole text). Indented
    // JSON has a cut at nearly every line, so little is carried; minified JSON has none, and
    // its carry (the whole text read so far) is freed before the whole text is counted.
    // When nothing came through the queue (the reading thread offers nothing of an input it
    // loads whole), the frame gets the whole input in one AppendLast, which zstd compresses
    // where it lies instead of through its window; otherwise the rest, in pieces.
    auto cancelled = [this] {
      std::lock_guard<std::mutex> lock(mu_);
      return cancel_;
    };
    if (writer_ != nullptr && from == 0) {
      if (cancelled()) return false;
      writer_status_ = writer_->AppendLast(whole);
    }
    for (uint64_t off = from; from > 0 && off < whole.size() && writer_ != nullptr && writer_status_.ok();
         off += kDefaultChunkSize) {
      if (cancelled()) return false;
      writer_status_ = writer_->Append(whole.substr(off, kDefaultChunkSize));
    }
    if (counter_.name() == "o200k_base" && tokens_.carried_bytes() <= from) {
      const uint64_t counted = tokens_.counted_tokens();
      const uint64_t rest = from - tokens_.carried_bytes();
      tokens_.Reset();
      token_total_ = counted + counter_.Count(whole.substr(rest));
    } else {
      tokens_.Reset();
      token_total_ = counter_.Count(whole);
    }
    return true;
  }
  // Catch up from the spool (only what never went through the queue), in segments that
  // start at count cuts (§7.4's safe cuts and indented line starts, LastCountCut), so that the main thread can count segments from the back once
  // it has nothing else to do (Help); the frame still gets every byte in order from here.
  if (original == nullptr) return true;
  std::vector<uint64_t> starts = SegmentStarts(*original, from);
  {
    std::lock_guard<std::mutex> lock(mu_);
    segments_ = starts;
    front_ = 1;
    back_ = starts.size() - 1;
    split_ = Split::kSegmented;
  }
  cv_.notify_all();
  for (size_t k = 0; k + 1 < starts.size(); ++k) {
    bool count = k == 0;
    if (k > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      if (cancel_) return false;
      if (k < back_) {
        front_ = k + 1;
        count = true;
      }
    }
    StreamingTokenCount segment(counter_);
    StreamingTokenCount& tc = k == 0 ? tokens_ : segment;
    Status s = ForEachPiece(*original, starts[k], starts[k + 1], &read_buf_, [&](std::string_view piece) {
      if (count) tc.Feed(piece);
      if (writer_ != nullptr && writer_status_.ok()) writer_status_ = writer_->Append(piece);
    });
    if (!s.ok()) {
      // The spool was readable a moment ago; fail the record (the count is then moot).
      if (writer_status_.ok()) writer_status_ = s;
      break;
    }
    if (count) token_total_ += tc.Finish();
  }
  return true;
}

// Counts add up across these cuts only for o200k_base (§7.4);
// approx-chars/4 applies its formula to the whole, so it gets one segment.
std::vector<uint64_t> InputWorker::SegmentStarts(const Spool& spool, uint64_t from) const {
  std::vector<uint64_t> starts = {from};
  if (counter_.name() == "o200k_base") {
    std::string window;
    for (uint64_t p = from + kSegmentBytes; p + kSegmentBytes / 2 < spool.size(); p += kSegmentBytes) {
      window.clear();
      if (!spool.ReadRange(p, kCutWindow, &window).ok()) break;
      const size_t cut = LastCountCut(window);
      if (cut > 0) starts.push_back(p + cut);  // none in the window: segments merge
    }
  }
  starts.push_back(spool.size());
  return starts;
}

}  // namespace caveman::internal
