// The stages of the batch pipeline (docs/ARCHITECTURE.md, "Stage graph"), one to one:
//
//   ReadStage    chunked read → SHA-256 (handle), original spool, InputWorker (token count,
//                the record's zstd frame)
//   Select       unwrap presentation layers, detect, registry lookup, pass-through rules
//   Transform    the compressor with the query rules of §1.3 step 7
//   Stabilise    the stability guard of §1.5
//   Rewrap       the presentation layers around the view
//   Gate         token count of the view against the input's; byte-identical views lose
//   CommitStage  the one owner of the store's RecordWriter: Begin, Abandon, Commit
//   Emit         copy the winner (view or original) to the sink
//
// Engine::RunPipeline (engine/engine.cc) calls them in this order; Engine::Compress commits
// and emits. The stages that may end the run early return a PassThroughReason: kNone means
// "go on", anything else is why the original passes through.
#ifndef CAVEMAN_ENGINE_INTERNAL_STAGES_H_
#define CAVEMAN_ENGINE_INTERNAL_STAGES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <string>
#include <string_view>

#include "compressors/compressor.h"
#include "compressors/detect.h"
#include "compressors/registry.h"
#include "caveman/engine/engine.h"
#include "engine/internal/input_worker.h"
#include "caveman/store/store.h"
#include "caveman/stream/byte_io.h"
#include "stream/chunk_buffer.h"
#include "stream/spool.h"
#include "caveman/stream/status.h"
#include "caveman/stream/tokens.h"

namespace caveman::internal {

// What the stages of one run need to know besides their inputs.
struct StageConfig {
  const TokenCounter& counter;
  const Registry& registry;
  SpoolOptions spool;
  std::string_view forced_type;  // empty = detect
  std::string_view query;
  bool compress_mode;                           // Mode::kCompress or Simulate
  bool may_emit_lossy;                          // a store, external recovery, or Simulate
  const std::vector<std::string>& never_types;  // CompressOptions::never_types
  double min_savings;                           // CompressOptions::min_savings
};

// Whether `content_type` is in `never_types` (or the list holds "*").
bool NeverCompressed(const std::vector<std::string>& never_types, std::string_view content_type);

// Commit: the one owner of the store's record writer for a batch run. Begun before reading
// (the InputWorker appends the original to it), abandoned on every pass-through and error,
// committed once when the view wins the gate.
class CommitStage {
 public:
  // Begins a record on `store` (nullptr: none); a failure is kept and returned by Commit.
  void Begin(RecoveryStore* store);
  // Where the original goes; nullptr when there is no record.
  RecordWriter* writer() const { return writer_.get(); }
  // The frame could not be written (`frame` not OK): drops the record; Commit returns `frame`.
  void FrameFailed(const Status& frame);
  // Drops the record, if any. Idempotent.
  void Abandon();
  // Writes the record under `handle` in one transaction. Errors: those of Begin, of the frame
  // and of RecordWriter::Commit; kInternal when there is no record.
  Status Commit(const std::string& handle, const RecordInfo& info);

 private:
  std::unique_ptr<RecordWriter> writer_;
  Status status_;
};

// The report's `error` for a failed Commit: cave_ccr_budget_exceeded or cave_ccr_unavailable.
std::string StoreError(const Status& s);

// Read: reads the input in chunks; each chunk updates the SHA-256, is appended to the
// original spool and is offered to the InputWorker (token count, record frame).
class ReadStage {
 public:
  // `record` outlives this stage and has begun its record, if any (the worker appends to
  // record->writer()); `warm_detection`: detection will run (type not forced).
  ReadStage(const TokenCounter& counter, CommitStage* record, bool warm_detection)
      : record_(record), worker_(counter, record->writer(), warm_detection) {}

  // Reads `in` to its end into `original`. `load_json`: when the input starts like JSON,
  // load it whole now, so that the worker counts that copy (JSON detection and the JSON
  // compressors load it anyway). Errors: kResourceExhausted over `max_bytes` (then
  // oversized() is true and `original` holds every byte read, the rest is still in `in`),
  // kResourceExhausted when the original cannot be held (memory and the spill file both
  // failed; std::bad_alloc while reading; issue 15): then unheld() is true, `original` holds
  // the bytes read before, held_back() the chunk it could not take, the rest is still in
  // `in`; those of `in`.
  Status Run(ByteSource& in, uint64_t max_bytes, bool load_json, Spool* original);
  bool oversized() const { return oversized_; }
  bool unheld() const { return unheld_; }
  // After an unheld Run: the read buffer, whose first *size bytes were read but are not in
  // `original` (0 when it took them all). Moves the buffer out (no allocation).
  ChunkBuffer TakeHeldBack(size_t* size) {
    *size = held_back_;
    return std::move(buf_);
  }
  // After Run:
  uint64_t bytes() const { return bytes_; }
  // ccr_ + 32 hex of the input's SHA-256. Valid after Finish(): when the record writer hashes
  // what it is given (RecordWriter::AppendedHandle), the handle is taken from it and the input
  // is hashed once, on the worker, instead of twice (issue 19).
  const std::string& handle() const {
    CAVEMAN_DCHECK(finished_);
    return handle_;
  }
  std::string_view probe() const { return probe_; }  // the first kLayerProbeBytes
  const Body& input() const { return *input_; }      // the original spool, re-readable

  // Waits for the worker (counting segments it has not reached meanwhile), settles the handle
  // and hands a frame failure to the record. Returns the input's token count. Idempotent.
  // Errors reading the original back (only when the writer failed and the handle must be
  // computed from the spool) leave handle() empty; the record is dropped then anyway.
  uint64_t Finish();
  // After Finish(): the count is short because memory ran out on the way (InputWorker).
  bool out_of_memory() const { return out_of_memory_; }
  // Stops the worker early (error paths).
  void Cancel() { worker_.Cancel(); }

 private:
  CommitStage* record_;
  bool hash_here_ = true;  // no writer that hashes: Run hashes the input itself
  bool oversized_ = false;
  bool unheld_ = false;
  size_t held_back_ = 0;  // bytes at the start of buf_ that `original` did not take
  ChunkBuffer buf_;       // the read buffer, a member so TakeHeldBack() can hand it on
  uint64_t bytes_ = 0;
  std::string handle_;
  std::string probe_;
  bool finished_ = false;
  bool out_of_memory_ = false;
  uint64_t tokens_ = 0;
  // Before the worker, which may read its loaded view: the worker is joined before it goes.
  std::optional<Body> input_;
  InputWorker worker_;
};

// What Select picked. Not copyable: `body` may point into `unwrapped`.
struct Selection {
  Selection() = default;
  Selection(const Selection&) = delete;
  Selection& operator=(const Selection&) = delete;

  Unwrapped unwrapped;  // presentation layers, if any
  bool layered = false;
  std::optional<Body> body;                // the unwrapped body, or the input
  std::string content_type;                // forced or detected
  const Compressor* compressor = nullptr;  // the registry's for content_type
};

// Select: unwraps presentation layers (only when the first bytes allow one), detects the type
// (unless forced) and looks up its compressor; then the pass-through rules that need no
// transform: record mode, empty input, no S4 compressor, no store for a lossy view.
Result<PassThroughReason> Select(const ReadStage& read, const StageConfig& config, Selection* out);

// Transform: runs the selected compressor on the body into a new spool `*view` (kDeclined,
// kNoChange when it reproduced the body).
Result<PassThroughReason> Transform(const Selection& selection, const StageConfig& config, std::unique_ptr<Spool>* view,
                                    TransformMeta* meta);

// Issue 16: true iff each line of `next` is a line of `y` (in order) or holds "caveman", and
// both agree on majority CRLF. The guard keeps `y` when a re-run over a line type's view fails it.
bool KeepsLineStructure(std::string_view y, std::string_view next);

// Stabilise (§1.5): re-selects and re-runs on the view up to 4 times until it stops changing;
// `*view` is the last output (kUnstable when it never settles).
// A lossless view (`meta` says so) is only replaced by a lossless re-run; a round that changes
// a lossy view sets `meta`'s method to the round's, if it names one.
Result<PassThroughReason> Stabilise(const Selection& selection, const StageConfig& config, std::unique_ptr<Spool>* view,
                                    TransformMeta* meta);

// Rewrap: the view inside the selection's presentation layers, as `*output` (written into it
// when layered, else replaced by `view`).
Status Rewrap(const Selection& selection, std::unique_ptr<Spool> view, std::unique_ptr<Spool>* output);

// Gate: counts the view's tokens, then waits for the input's (read.Finish()); the view wins
// only if it counts fewer (kNotSmaller), saves at least min_savings of the input's tokens
// (kBelowMinSavings) and differs from the input (kNoChange).
Result<PassThroughReason> Gate(const Spool& view, ReadStage& read, const TokenCounter& counter, double min_savings,
                               uint64_t* tokens_after);

// Emit: copies `winner` to `out` and flushes; *bytes_out = its size.
Status Emit(const Spool& winner, ByteSink& out, uint64_t* bytes_out);

}  // namespace caveman::internal

#endif  // CAVEMAN_ENGINE_INTERNAL_STAGES_H_
