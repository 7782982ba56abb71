// The follow-mode driver (`compress --follow`, `run`), independent of file descriptors and of
// the real clock so that tests can feed any arrival pattern with a simulated time.
//
// Flow: Push() bytes as they arrive → DETECT (forced type; else the first 64 KiB or first
// second, earlier with a line-type hint) → for the line types an online stage
// (compressors/online.h) turns complete lines into events → each event is written to the sink
// and flushed at once, except that an event standing for elided input (a marker) waits until
// the store's partial record covers that input: StreamRecordWriter::Sync() at most every
// `sync_interval` (one SQLite transaction), or at once when `max_unsynced` bytes are pending.
// Finish() ends the stream, finalises the record under the content-addressed handle (the same
// handle batch mode gives the same bytes) and returns the report. Any other type: wants_batch()
// becomes true and the caller runs the batch pipeline over sample() + the rest of the input.
//
// Store failure or ceiling at any point: events already covered are written, a marker that
// straddles the last synced byte is split (a plain marker for the covered lines, the rest
// verbatim), and from then on input passes through verbatim; the report carries `error` and,
// if any marker was written, the partial record that holds its original.
//
// Memory: the current line (≤ max_line, longer lines stream through verbatim), the bytes not
// yet synced (≤ max_unsynced + one read), the stage's bounded state: flat in the input size.
//
// Thread-safety: one thread drives a session.
#ifndef CAVEMAN_ENGINE_INTERNAL_FOLLOW_SESSION_H_
#define CAVEMAN_ENGINE_INTERNAL_FOLLOW_SESSION_H_

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "compressors/online.h"
#include "caveman/engine/engine.h"
#include "caveman/store/store.h"
#include "caveman/stream/tokens.h"

namespace caveman::internal {

using FollowClock = std::chrono::steady_clock;

struct FollowConfig {
  const TokenCounter* counter = nullptr;  // REQUIRES: not null
  RecoveryStore* store = nullptr;         // null: nothing can be elided, input passes through
  std::string type;                       // forced type; empty = detect
  std::string type_hint;                  // see CompressOptions::type_hint
  std::string query;
  std::string command;
  std::vector<std::string> never_types;           // CompressOptions::never_types: such types go to batch
  std::chrono::milliseconds detect_window{1000};  // detection waits at most this long...
  size_t detect_bytes = 64 * 1024;                // ...or for this many bytes...
  size_t detect_lines = 256;                      // ...or this many complete lines
  std::chrono::milliseconds idle{1000};           // pending markers are written after this
  std::chrono::milliseconds sync_interval{50};    // at most one store transaction per interval
  size_t max_unsynced = 4 << 20;                  // a sync is forced beyond this many bytes
  size_t max_line = 1 << 20;                      // longer lines stream through verbatim
};

// True for detected types that end detection early when hinted (structural types detection
// recognises with certainty win over a command hint).
bool StructuralType(std::string_view content_type);

class FollowSession {
 public:
  FollowSession(FollowConfig config, ByteSink& out);
  ~FollowSession();
  FollowSession(const FollowSession&) = delete;
  FollowSession& operator=(const FollowSession&) = delete;

  // Bytes that arrived at `now`. Errors: writes to the sink.
  Status Push(std::string_view bytes, FollowClock::time_point now);
  // Time passed without input (call at Deadline() at the latest).
  Status Tick(FollowClock::time_point now);
  // When Tick() is due next; nullopt = nothing is waiting for time.
  std::optional<FollowClock::time_point> Deadline() const;
  // Detection chose a type without an online stage: run the batch path over sample() followed
  // by the rest of the input (nothing has been written).
  bool wants_batch() const { return phase_ == Phase::kBatch; }
  const std::string& sample() const { return sample_; }
  // End of input: decides the type if still detecting (then wants_batch() may become true and
  // nothing else happens), else writes what is pending, finalises the record and reports.
  Status EndOfInput(FollowClock::time_point now);
  // REQUIRES: EndOfInput() returned OK and !wants_batch().
  CompressResult Finish();

 private:
  enum class Phase { kDetecting, kOnline, kRaw, kBatch };
  class Queue;

  void Decide();
  void StartOnline();
  void Feed(std::string_view bytes);
  void ProcessBlock(std::string_view block);
  void StartHugeLine();
  void AppendOriginal(std::string_view bytes);
  void EmitRaw(std::string_view bytes, uint64_t begin);
  Status Drain(FollowClock::time_point now, bool force_sync);
  bool SyncNow(FollowClock::time_point now);
  void StoreFailed(const Status& s);
  void Write(std::string_view bytes);
  void WriteUncovered(const OnlineEvent& e);

  FollowConfig config_;
  ByteSink& out_;
  std::thread warm_;  // compiles detection's pattern database meanwhile
  Phase phase_ = Phase::kDetecting;
  std::string content_type_;

  // Input accounting (every byte, whatever the phase).
  BackgroundTokenCount input_tokens_;
  uint64_t bytes_in_ = 0;
  std::optional<FollowClock::time_point> first_input_;
  std::optional<FollowClock::time_point> last_input_;
  bool idle_ticked_ = false;
  std::string sample_;  // detection phase only
  uint64_t sample_lines_ = 0;
  bool early_checked_ = false;

  // Lines.
  std::unique_ptr<OnlineStage> stage_;
  std::unique_ptr<Queue> queue_;  // the stage's events, not yet written
  std::string carry_;             // the unfinished line
  uint64_t offset_ = 0;           // input offset of carry_[0] (bytes before it are processed)
  bool huge_ = false;             // inside a line longer than max_line (streamed verbatim)
  bool output_open_ = false;      // the last byte written is not an LF (a huge line)

  // Store.
  std::unique_ptr<StreamRecordWriter> writer_;
  bool store_failed_ = false;
  std::string store_error_;
  uint64_t appended_ = 0;  // input bytes given to the writer
  uint64_t synced_ = 0;    // input bytes the partial record covers
  std::string unsynced_;   // input bytes [synced_, appended_)
  std::optional<FollowClock::time_point> last_sync_;
  std::optional<FollowClock::time_point> sync_due_;
  bool lossy_written_ = false;
  std::string handle_;
  std::string partial_record_;

  // Output: collected per Drain(), then written and flushed.
  std::string out_buf_;
  StreamingTokenCount output_tokens_;
  uint64_t bytes_out_ = 0;
  uint64_t tokens_before_ = 0;
};

// Batch `compress` of an input beyond its size limit whose type has an online stage: the
// follow path over `head` (the bytes read so far) and then the rest of `rest`, streaming to
// `out` with the real clock. REQUIRES: config.type is set (an online type).
Result<CompressResult> FollowFromSource(const FollowConfig& config, ByteSource& head, ByteSource& rest, ByteSink& out);

}  // namespace caveman::internal

#endif  // CAVEMAN_ENGINE_INTERNAL_FOLLOW_SESSION_H_
