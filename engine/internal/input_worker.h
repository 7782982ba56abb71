// The input work of a batch run that need not delay the transform, on the second core: the
// input token count (§7.4 chunked counting), the store's zstd frame (RecordWriter::Append,
// with the store's own SHA-256 check) and compiling the detection pattern database (a fixed
// ~0.1 s per process; skipped when the input starts like JSON, which detection settles
// without it).
//
// While it keeps up, the worker takes chunks from a small queue as they are read. When the
// queue is full the reading thread does not wait: the worker stops taking chunks and, once the
// input is complete, reads the rest from the original spool (complete and read-only from then
// on). So reading a fast input costs the reading thread only hashing and spooling, the
// counting and compressing overlap the transform, and memory stays bounded (≤ kMaxQueued
// chunks). Totals are those of StreamingTokenCount over the whole input.
//
// HowTo (the Read stage, engine/internal/stages.cc):
//   InputWorker w(counter, writer, /*warm_detection=*/true);
//   for each chunk: spool.Write(chunk); w.Offer(chunk);
//   w.InputComplete(&spool);  ... transform ...;  w.Help(); w.Join();  w.tokens()
//
// Thread-safety: Offer/InputComplete/Help/Join/Cancel from the one thread that reads the input.
#ifndef CAVEMAN_ENGINE_INTERNAL_INPUT_WORKER_H_
#define CAVEMAN_ENGINE_INTERNAL_INPUT_WORKER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "caveman/store/store.h"
#include "stream/check.h"
#include "stream/spool.h"
#include "caveman/stream/status.h"
#include "caveman/stream/tokens.h"

namespace caveman::internal {

class InputWorker {
 public:
  // `writer` (nullptr = no record) gets every input byte in order; it must outlive the worker.
  InputWorker(const TokenCounter& counter, RecordWriter* writer, bool warm_detection);
  ~InputWorker() { Cancel(); }
  InputWorker(const InputWorker&) = delete;
  InputWorker& operator=(const InputWorker&) = delete;

  // The next chunk of input, in order.
  void Offer(std::string_view chunk);

  // End of input. `original` holds every byte offered or not and is not written again.
  // `whole`, when not empty, is the complete input already in memory (and alive until Join):
  // the worker then counts the rest of it, from the last cut the stream passed, in one call
  // instead of streaming it, because a streaming count of text without cuts (minified JSON:
  // one line) would copy the whole input into its carry while the transform holds its own
  // copy.
  void InputComplete(const Spool* original, std::string_view whole = {});

  // Whether detection will need its pattern database: a body that starts like JSON is
  // settled by rules 2-3 (test-report, json) before any pattern scan, so compiling would be
  // wasted; anything else (or an invalid JSON look-alike, compiled on demand) needs it.
  static bool LooksLikeJson(std::string_view first_bytes);

  // Called by the reading thread when it has nothing else to do before Join(): counts the
  // tokens of not-yet-started segments from the back while the worker works from the front.
  // REQUIRES: InputComplete() was called.
  void Help();

  // Waits for the worker. REQUIRES: InputComplete() was called. Idempotent.
  void Join() {
    CAVEMAN_DCHECK(complete_ || cancel_);  // the reading thread set them (Cancel() joins too)
    if (thread_.joinable()) thread_.join();
  }
  uint64_t tokens() const {  // REQUIRES: Join()
    CAVEMAN_DCHECK(!thread_.joinable());
    return token_total_ + helped_tokens_;
  }
  // REQUIRES: Join().
  const Status& writer_status() const {
    CAVEMAN_DCHECK(!thread_.joinable());
    return writer_status_.ok() ? helper_status_ : writer_status_;
  }

  // REQUIRES: Join(). Memory ran out on the worker or in Help() (std::bad_alloc, caught: a
  // thread must not end the process): tokens() is then short and the frame is failed
  // (writer_status() says so); the caller passes the original through (issue 15).
  bool out_of_memory() const {
    CAVEMAN_DCHECK(!thread_.joinable());
    return worker_oom_ || helper_oom_;
  }
  // REQUIRES: Join(). Whether the worker warmed up detection: only when the input was still
  // being read after the worker had counted (and handed to the writer) its first chunk.
  bool warmed_up() const {
    CAVEMAN_DCHECK(!thread_.joinable());
    return warmed_up_;
  }
  // Stops early (error paths); the results are then meaningless.
  void Cancel();

 private:
  static constexpr size_t kMaxQueued = 4;
  static constexpr uint64_t kSegmentBytes = 2 << 20;  // catch-up segments for Help()
  static constexpr size_t kCutWindow = 64 * 1024;     // where a segment's safe cut is sought
  enum class Split { kUndecided, kSegmented, kNone };

  void Process(std::string_view chunk);
  void Run();
  // False when cancelled before every byte reached the record writer.
  bool RunSegments();
  // After the first chunk: compiles detection's patterns unless the input is complete.
  void WarmUpWhileStillReading();
  // Segment starts for [from, size): `from`, then the last safe cut in a window after every
  // kSegmentBytes, then size.
  std::vector<uint64_t> SegmentStarts(const Spool& spool, uint64_t from) const;

  const TokenCounter& counter_;
  StreamingTokenCount tokens_;
  RecordWriter* writer_;
  const bool warm_detection_;
  Status writer_status_;
  uint64_t token_total_ = 0;
  bool lagging_ = false;    // reading thread only
  bool warmed_up_ = false;  // worker thread only

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::vector<std::string> free_;
  uint64_t queued_bytes_ = 0;
  const Spool* original_ = nullptr;
  std::string_view whole_;
  bool complete_ = false;
  Split split_ = Split::kUndecided;
  std::vector<uint64_t> segments_;  // starts of the catch-up segments, then the end
  size_t front_ = 0;                // segments [front_, back_) are claimed by nobody yet
  size_t back_ = 0;
  uint64_t helped_tokens_ = 0;  // reading thread (Help) only
  Status helper_status_;        // reading thread (Help) only
  std::string help_buf_;        // reading thread (Help) only
  std::string read_buf_;        // worker only
  bool cancel_ = false;
  bool worker_oom_ = false;  // worker only until Join()
  bool helper_oom_ = false;  // reading thread (Help) only
  std::thread thread_;       // last: starts after the other members exist
};

}  // namespace caveman::internal

#endif  // CAVEMAN_ENGINE_INTERNAL_INPUT_WORKER_H_
