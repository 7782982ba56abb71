// The Compress pipeline of §1.3 over chunked input (§1.4).
//
// One chunk's journey: read → SHA-256 and raw spool (re-readable input) on this thread;
// streaming token count and store record writer (zstd frame spool) on the InputWorker thread,
// from a small queue or, when it falls behind, re-read from the spool after end of input, so
// both overlap the transform → after end of input: unwrap / detect / select → transform into
// an output spool → stability guard → re-wrap → token count of the output → (join the
// worker) size gate → store commit → only then the winner is copied to the sink.
#include "engine/engine.h"

#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "compressors/detect.h"
#include "compressors/narrow.h"
#include "compressors/registry.h"
#include "stream/sha256.h"
#include "stream/spool.h"

namespace caveman {
namespace {

// Bytes of the input inspected to decide whether a presentation layer could apply.
constexpr size_t kLayerProbeBytes = 64 * 1024;
// Maximum re-runs of the stability guard (§1.5: y0..y4).
constexpr int kStabilityRounds = 4;

std::string ErrorForStoreStatus(const Status& s) {
  return s.code() == StatusCode::kResourceExhausted ? "cave_ccr_budget_exceeded" : "cave_ccr_unavailable";
}

Status CountSpool(const Spool& spool, const TokenCounter& counter, uint64_t* tokens) {
  if (spool.in_memory()) {
    *tokens = counter.Count(spool.memory_view());
    return Status::OK();
  }
  StreamingTokenCount tc(counter);
  auto reader = spool.NewReader();
  std::vector<char> buf(kDefaultChunkSize);
  for (;;) {
    CAVEMAN_ASSIGN_OR_RETURN(size_t n, reader->Read(buf.data(), buf.size()));
    if (n == 0) break;
    tc.Feed(std::string_view(buf.data(), n));
  }
  *tokens = tc.Finish();
  return Status::OK();
}

// Byte equality of a spool and a body, streaming.
Result<bool> SameBytes(const Spool& a, const Body& b) {
  if (a.size() != b.size()) return false;
  auto ra = a.NewReader();
  auto rb = b.NewReader();
  std::vector<char> ba(kDefaultChunkSize), bb(kDefaultChunkSize);
  size_t na = 0, nb = 0, pa = 0, pb = 0;
  for (;;) {
    if (pa == na) {
      CAVEMAN_ASSIGN_OR_RETURN(na, ra->Read(ba.data(), ba.size()));
      pa = 0;
    }
    if (pb == nb) {
      CAVEMAN_ASSIGN_OR_RETURN(nb, rb->Read(bb.data(), bb.size()));
      pb = 0;
    }
    if (na == 0 || nb == 0) return na == 0 && nb == 0;
    size_t k = std::min(na - pa, nb - pb);
    if (std::memcmp(ba.data() + pa, bb.data() + pb, k) != 0) return false;
    pa += k;
    pb += k;
  }
}

// Sink for a stability-guard re-run: compares what is written with the previous output y
// without storing it; only after the first difference does it materialise the new output
// (y's equal prefix, then the rest). Most re-runs decline or reproduce y, so this costs no
// memory or disk in the common case.
class DiffSink final : public ByteSink {
 public:
  DiffSink(const Spool& y, const SpoolOptions& so) : y_(y), so_(so) {}
  Status Write(std::string_view d) override {
    if (!status_.ok()) return status_;
    if (diverged_) return spool_->Write(d);
    while (!d.empty()) {
      if (pos_ >= y_.size()) return Diverge(d);
      buf_.clear();
      status_ = y_.ReadRange(pos_, std::min<uint64_t>(d.size(), kDefaultChunkSize), &buf_);
      if (!status_.ok()) return status_;
      size_t k = 0;
      while (k < buf_.size() && buf_[k] == d[k]) ++k;
      if (k < buf_.size()) {
        pos_ += k;
        return Diverge(d.substr(k));
      }
      pos_ += buf_.size();
      d.remove_prefix(buf_.size());
    }
    return Status::OK();
  }
  Result<bool> Same() const {
    if (!status_.ok()) return status_;
    return !diverged_ && pos_ == y_.size();
  }
  // The full new output. REQUIRES: Same() is false.
  std::unique_ptr<Spool> TakeSpool() {
    if (!diverged_) {
      // A strict prefix of y: materialise it.
      spool_ = std::make_unique<Spool>(so_);
      std::string prefix;
      if (y_.ReadRange(0, pos_, &prefix).ok()) (void)spool_->Write(prefix);
    }
    return std::move(spool_);
  }

 private:
  Status Diverge(std::string_view rest) {
    diverged_ = true;
    spool_ = std::make_unique<Spool>(so_);
    for (uint64_t off = 0; off < pos_; off += kDefaultChunkSize) {
      buf_.clear();
      CAVEMAN_RETURN_IF_ERROR(y_.ReadRange(off, std::min<uint64_t>(kDefaultChunkSize, pos_ - off), &buf_));
      CAVEMAN_RETURN_IF_ERROR(spool_->Write(buf_));
    }
    return spool_->Write(rest);
  }

  const Spool& y_;
  SpoolOptions so_;
  uint64_t pos_ = 0;
  bool diverged_ = false;
  Status status_;
  std::string buf_;
  std::unique_ptr<Spool> spool_;
};

void AppendJsonNumber(std::string* out, uint64_t v) { *out += std::to_string(v); }

// The input work that need not delay the transform, on the second core: compiling the
// detection pattern database (a fixed ~0.1 s per process; skipped when the input starts like
// JSON, which detection settles without it), the input token count (§7.4
// chunked counting) and the store's zstd frame (with the store's own SHA-256 check).
//
// While it keeps up, the worker takes chunks from a small queue as they are read. When the
// queue is full the main thread does not wait: the worker stops taking chunks and, once the
// input is complete, reads the rest from the original spool (complete and read-only from then
// on). So reading a fast input costs the main thread only hashing and spooling, the counting
// and compressing overlap the transform, and memory stays bounded (≤ kMaxQueued chunks).
// Totals are those of StreamingTokenCount over the whole input.
//
// Thread-safety: Offer/InputComplete/Join/Cancel from the one thread that reads the input.
class InputWorker {
 public:
  InputWorker(const TokenCounter& counter, RecordWriter* writer, bool warm_detection)
      : counter_(counter), tokens_(counter), writer_(writer), warm_detection_(warm_detection),
        thread_([this] { Run(); }) {}
  ~InputWorker() { Cancel(); }
  InputWorker(const InputWorker&) = delete;
  InputWorker& operator=(const InputWorker&) = delete;

  // The next chunk of input, in order.
  void Offer(std::string_view chunk) {
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

  // End of input. `original` holds every byte offered or not and is not written again.
  // `whole`, when not empty, is the complete input already in memory (and alive until Join):
  // the worker then counts it in one call instead of streaming the rest, because a streaming
  // count of text without safe cuts (indented JSON: every line starts with a space) would
  // copy the whole input into its carry while the transform holds its own copy.
  void InputComplete(const Spool* original, std::string_view whole = {}) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      original_ = original;
      whole_ = whole;
      complete_ = true;
    }
    cv_.notify_all();
  }

  // Whether detection will need its pattern database: a body that starts like JSON is
  // settled by rules 2-3 (test-report, json) before any pattern scan, so compiling would be
  // wasted; anything else (or an invalid JSON look-alike, compiled on demand) needs it.
  static bool LooksLikeJson(std::string_view first_bytes) {
    for (char c : first_bytes) {
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
      return c == '{' || c == '[';
    }
    return false;
  }

  // Called by the reading thread when it has nothing else to do before Join(): counts the
  // tokens of not-yet-started segments from the back while the worker works from the front.
  // REQUIRES: InputComplete() was called.
  void Help() {
    {
      std::unique_lock<std::mutex> lock(mu_);
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
      StreamingTokenCount tc(counter_);
      Status s = ForEachPiece(*original_, segments_[k], segments_[k + 1], &help_buf_,
                              [&](std::string_view piece) { tc.Feed(piece); });
      if (!s.ok()) {
        helper_status_ = s;  // the worker's frame read fails the record the same way
        return;
      }
      helped_tokens_ += tc.Finish();
    }
  }

  // Waits for the worker. REQUIRES: InputComplete() was called. Idempotent.
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  uint64_t tokens() const { return token_total_ + helped_tokens_; }  // REQUIRES: Join()
  // REQUIRES: Join().
  const Status& writer_status() const { return writer_status_.ok() ? helper_status_ : writer_status_; }

  // Stops early (error paths); the results are then meaningless.
  void Cancel() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancel_ = true;
    }
    cv_.notify_all();
    Join();
  }

 private:
  static constexpr size_t kMaxQueued = 4;
  static constexpr uint64_t kSegmentBytes = 2 << 20;  // catch-up segments for Help()
  static constexpr size_t kCutWindow = 64 * 1024;     // where a segment's safe cut is sought
  enum class Split { kUndecided, kSegmented, kNone };

  void Process(std::string_view chunk) {
    tokens_.Feed(chunk);
    if (writer_ != nullptr && writer_status_.ok()) writer_status_ = writer_->Append(chunk);
  }

  void Run() {
    RunSegments();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (split_ == Split::kUndecided) split_ = Split::kNone;  // Help() has nothing to take
    }
    cv_.notify_all();
  }

  void RunSegments() {
    const Spool* original = nullptr;
    std::string_view whole;
    uint64_t from = 0;
    bool first = true;
    for (;;) {
      std::string chunk;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return cancel_ || complete_ || !queue_.empty(); });
        if (cancel_) return;
        if (queue_.empty()) {
          original = original_;
          whole = whole_;
          from = queued_bytes_;
          break;
        }
        chunk = std::move(queue_.front());
        queue_.pop_front();
      }
      if (first && warm_detection_ && !LooksLikeJson(chunk)) {
        (void)DetectBody("caveman: warm up the detection patterns\n");
      }
      first = false;
      Process(chunk);
      std::lock_guard<std::mutex> lock(mu_);
      free_.push_back(std::move(chunk));
    }
    if (!whole.empty()) {
      // The frame gets the rest in order; the count restarts on the whole text.
      for (uint64_t off = from; off < whole.size() && writer_ != nullptr && writer_status_.ok();
           off += kDefaultChunkSize) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          if (cancel_) return;
        }
        writer_status_ = writer_->Append(whole.substr(off, kDefaultChunkSize));
      }
      (void)tokens_.Finish();
      token_total_ = counter_.Count(whole);
      return;
    }
    // Catch up from the spool (only what never went through the queue), in segments that
    // start at safe cuts (§7.4), so that the main thread can count segments from the back once
    // it has nothing else to do (Help); the frame still gets every byte in order from here.
    if (original == nullptr) return;
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
        if (cancel_) return;
        if (k < back_) {
          front_ = k + 1;
          count = true;
        }
      }
      StreamingTokenCount segment(counter_);
      StreamingTokenCount& tc = k == 0 ? tokens_ : segment;
      Status s = ForEachPiece(*original, starts[k], starts[k + 1], &read_buf_,
                              [&](std::string_view piece) {
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
  }

  // Calls fn(piece) for [begin, end) of `spool` in chunks read into `buf` (reused by the
  // caller: fresh 256 KiB buffers per segment fragment the heap and show up as RSS).
  // Errors: spool reads.
  template <class Fn>
  static Status ForEachPiece(const Spool& spool, uint64_t begin, uint64_t end, std::string* buf,
                             Fn&& fn) {
    for (uint64_t off = begin; off < end;) {
      buf->clear();
      CAVEMAN_RETURN_IF_ERROR(spool.ReadRange(off, std::min<uint64_t>(kDefaultChunkSize, end - off), buf));
      if (buf->empty()) return Status::IoError("short spool read");
      fn(std::string_view(*buf));
      off += buf->size();
    }
    return Status::OK();
  }

  // Segment starts for [from, size): `from`, then the last safe cut in a window after every
  // kSegmentBytes, then size. Counts add up across these cuts only for o200k_base (§7.4);
  // approx-chars/4 applies its formula to the whole, so it gets one segment.
  std::vector<uint64_t> SegmentStarts(const Spool& spool, uint64_t from) const {
    std::vector<uint64_t> starts = {from};
    if (counter_.name() == "o200k_base") {
      std::string window;
      for (uint64_t p = from + kSegmentBytes; p + kSegmentBytes / 2 < spool.size(); p += kSegmentBytes) {
        window.clear();
        if (!spool.ReadRange(p, kCutWindow, &window).ok()) break;
        const size_t cut = LastSafeCut(window);
        if (cut > 0) starts.push_back(p + cut);  // none in the window: segments merge
      }
    }
    starts.push_back(spool.size());
    return starts;
  }

  const TokenCounter& counter_;
  StreamingTokenCount tokens_;
  RecordWriter* writer_;
  const bool warm_detection_;
  Status writer_status_;
  uint64_t token_total_ = 0;
  bool lagging_ = false;  // main thread only

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
  uint64_t helped_tokens_ = 0;      // main thread (Help) only
  Status helper_status_;            // main thread (Help) only
  std::string help_buf_;            // main thread (Help) only
  std::string read_buf_;            // worker only
  bool cancel_ = false;
  std::thread thread_;  // last: starts after the other members exist
};

}  // namespace

// Everything one pipeline run produced; Compress and Simulate decide what to do with it.
struct Engine::Run {
  explicit Run(const SpoolOptions& so) : original(so), output(std::make_unique<Spool>(so)) {}
  Spool original;                          // exact input bytes
  std::unique_ptr<Spool> output;           // the emitted view if accepted
  std::unique_ptr<RecordWriter> writer;    // pending store record
  Status store_status;                     // BeginRecord/Append failure, if any
  std::string handle;
  CompressResult result;
  const Compressor* compressor = nullptr;  // the compressor of ct, if any
  TransformMeta meta;
  bool accepted = false;                   // output wins the gate
};

Mode ParseMode(std::string_view mode) { return mode == "compress" ? Mode::kCompress : Mode::kRecord; }

Engine::Engine(EngineOptions options) : options_(std::move(options)) {
  static const bool malloc_tuned = [] {
#if defined(__GLIBC__)
    // glibc raises its mmap threshold each time a large block is freed, after which the
    // pipeline's 64 KiB-4 MiB buffers (chunks, spool memory, token-count carries) come from the
    // heap, fragment it and stay resident: 64 MiB CI log peak RSS 50 MiB instead of 43 MiB,
    // and RSS that seems to grow with the input. Fixing the threshold at glibc's default
    // (128 KiB) keeps large blocks in mmap, returned on free; no measurable CPU cost.
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
    return true;
  }();
  (void)malloc_tuned;
  counter_ = options_.counter != nullptr ? options_.counter : &DefaultTokenCounter();
  if (options_.registry != nullptr) {
    registry_ = options_.registry;
  } else {
    owned_registry_ = std::make_unique<Registry>(RegistryOptions::FromEnv());
    registry_ = owned_registry_.get();
  }
}

Engine::~Engine() = default;

namespace {

// Coalesces small writes (line compressors write every line and every LF separately) into
// 64 KiB pieces, so a spilled output spool or the guard's DiffSink costs one syscall per
// 64 KiB instead of two per line (9.4 M short lines: 2.8 s of system time before).
class BufferedSink final : public ByteSink {
 public:
  explicit BufferedSink(ByteSink& out) : out_(out) {}
  Status Write(std::string_view d) override {
    if (buf_.size() + d.size() > kBuffer) {
      CAVEMAN_RETURN_IF_ERROR(Drain());
      if (d.size() >= kBuffer) return out_.Write(d);
    }
    if (buf_.capacity() < kBuffer) buf_.reserve(kBuffer);
    buf_.append(d);
    return Status::OK();
  }
  // Hands the buffered bytes on (the wrapped sink is not flushed: spools have nothing to flush).
  Status Drain() {
    if (buf_.empty()) return Status::OK();
    Status s = out_.Write(buf_);
    buf_.clear();
    return s;
  }
  Status Flush() override { return Drain(); }

 private:
  static constexpr size_t kBuffer = 64 * 1024;
  ByteSink& out_;
  std::string buf_;
};

// Runs one compressor with the query rules of §1.3 step 7.
Result<TransformOutcome> RunCompressor(const Compressor& c, const Body& body, std::string_view query,
                                       ByteSink* out, TransformMeta* meta) {
  std::string_view q;
  if (c.metadata_aware() || (c.query_aware() && !query.empty())) q = query;
  BufferedSink buffered(*out);
  Result<TransformOutcome> r = c.Transform(body, q, buffered, meta);
  if (!r.ok()) return r;
  CAVEMAN_RETURN_IF_ERROR(buffered.Drain());
  return r;
}

}  // namespace

Result<std::unique_ptr<Engine::Run>> Engine::RunPipeline(ByteSource& in, const CompressOptions& o,
                                                         bool simulate) {
  SpoolOptions so{.memory_limit = options_.spool_memory_limit, .temp_dir = options_.temp_dir};
  auto run = std::make_unique<Run>(so);
  CompressResult& r = run->result;
  r.token_count_basis = std::string(counter_->name());
  const bool compress_mode = o.mode == Mode::kCompress || simulate;
  const bool want_record = !simulate && compress_mode && !o.external_recovery && options_.store != nullptr;
  if (want_record) {
    auto w = options_.store->BeginRecord();
    if (w.ok()) {
      run->writer = std::move(w).value();
    } else {
      run->store_status = w.status();
    }
  }
  const bool forced = !o.type.empty() && o.type != "auto";

  // The re-readable input; declared before the worker, which may read its loaded view, so the
  // worker is joined before it goes away.
  std::optional<Body> input_holder;
  // 1. Read: hash and spool on this thread; token count and the store's frame on the worker
  //    (which also warms up detection when it will be needed).
  InputWorker worker(*counter_, run->writer.get(), /*warm_detection=*/!forced);
  bool worker_joined = false;
  // Joins the worker once: tokens_before and the frame's status are final afterwards.
  auto join_worker = [&]() {
    if (worker_joined) return;
    worker_joined = true;
    worker.Help();  // nothing else to do here: count segments the worker has not reached
    worker.Join();
    r.tokens_before = worker.tokens();
    if (run->writer && !worker.writer_status().ok()) {
      run->writer->Abandon();
      run->writer.reset();
      run->store_status = worker.writer_status();
    }
  };
  auto stages = [&]() -> Status {
    Sha256 sha;
    std::vector<char> buf(kDefaultChunkSize);
    std::string probe;
    for (;;) {
      CAVEMAN_ASSIGN_OR_RETURN(size_t n, in.Read(buf.data(), buf.size()));
      if (n == 0) break;
      if (r.bytes_in + n > o.max_input_bytes) {
        return Status::ResourceExhausted("cave_input_too_large: stdin exceeds " +
                                         std::to_string(o.max_input_bytes) + " bytes");
      }
      std::string_view chunk(buf.data(), n);
      r.bytes_in += n;
      sha.Update(chunk);
      if (probe.size() < kLayerProbeBytes) probe.append(chunk.substr(0, kLayerProbeBytes - probe.size()));
      CAVEMAN_RETURN_IF_ERROR(run->original.Write(chunk));
      worker.Offer(chunk);
    }
    run->handle = HandleFromDigest(sha.Final());
    input_holder.emplace(Body::FromSpool(run->original));
    const Body& input = *input_holder;
    if (InputWorker::LooksLikeJson(probe) && compress_mode) {
      // JSON detection and the JSON compressors load the whole body anyway; loading it now
      // lets the worker count on that copy instead of building its own.
      CAVEMAN_ASSIGN_OR_RETURN(std::string_view whole, input.View());
      worker.InputComplete(&run->original, whole);
    } else {
      worker.InputComplete(&run->original);
    }

    // 2. Unwrap presentation layers (only when the first bytes allow one) and pick the type.
    Unwrapped unwrapped;
    bool layered = false;
    if (MayHavePresentationLayer(probe)) {
      CAVEMAN_ASSIGN_OR_RETURN(std::string_view whole, input.View());
      unwrapped = Unwrap(whole);
      layered = !unwrapped.layers.empty();
    }
    Body body = layered ? Body::FromView(unwrapped.body) : input;
    if (forced) {
      r.content_type = o.type;
    } else {
      CAVEMAN_ASSIGN_OR_RETURN(std::string_view ct, DetectLarge(body));
      r.content_type = std::string(ct);
    }

    // 3-6. Pass-through rules that need no transform. Only the empty input counts 0 tokens
    // (both counters give every non-empty text ≥ 1), so the count need not be waited for.
    auto pass = [&r](PassThroughReason why) {
      r.pass_through_reason = why;
      return Status::OK();
    };
    if (!compress_mode) return pass(PassThroughReason::kRecordMode);
    if (r.bytes_in == 0) return pass(PassThroughReason::kEmptyInput);
    run->compressor = registry_->Find(r.content_type);
    // Only S4 is known here; any other class is treated as not registered.
    if (run->compressor == nullptr || run->compressor->safety_class() != SafetyClass::kS4) {
      return pass(PassThroughReason::kNoCompressor);
    }
    if (!simulate && options_.store == nullptr && !o.external_recovery) return pass(PassThroughReason::kNoStore);

    // 7. Transform, then the stability guard (§1.5) on the unwrapped body.
    auto y = std::make_unique<Spool>(so);
    CAVEMAN_ASSIGN_OR_RETURN(TransformOutcome outcome,
                             RunCompressor(*run->compressor, body, o.query, y.get(), &run->meta));
    if (outcome != TransformOutcome::kAccepted) return pass(PassThroughReason::kDeclined);
    CAVEMAN_ASSIGN_OR_RETURN(bool same_as_body, SameBytes(*y, body));
    if (same_as_body) return pass(PassThroughReason::kNoChange);
    bool stable = false;
    for (int round = 0; round < kStabilityRounds; ++round) {
      const Compressor* c = run->compressor;
      Body yk = Body::FromSpool(*y);
      if (!forced) {
        CAVEMAN_ASSIGN_OR_RETURN(std::string_view ct, DetectLarge(yk));
        c = registry_->Find(ct);
      }
      if (c == nullptr) {
        stable = true;
        break;
      }
      DiffSink next(*y, so);
      TransformMeta ignored;
      CAVEMAN_ASSIGN_OR_RETURN(TransformOutcome again, RunCompressor(*c, yk, o.query, &next, &ignored));
      if (again != TransformOutcome::kAccepted) {
        stable = true;
        break;
      }
      CAVEMAN_ASSIGN_OR_RETURN(bool same, next.Same());
      if (same) {
        stable = true;
        break;
      }
      y = next.TakeSpool();
    }
    if (!stable) return pass(PassThroughReason::kUnstable);

    // 8. Re-wrap.
    if (layered) {
      CAVEMAN_ASSIGN_OR_RETURN(std::string yv, y->ReadAllToString());
      CAVEMAN_RETURN_IF_ERROR(run->output->Write(unwrapped.layers.Rewrap(yv)));
    } else {
      run->output = std::move(y);
    }

    // 9. Size gate on tokens; byte-identical output passes through.
    uint64_t after = 0;
    CAVEMAN_RETURN_IF_ERROR(CountSpool(*run->output, *counter_, &after));
    join_worker();
    if (after >= r.tokens_before) return pass(PassThroughReason::kNotSmaller);
    CAVEMAN_ASSIGN_OR_RETURN(bool identical, SameBytes(*run->output, input));
    if (identical) return pass(PassThroughReason::kNoChange);

    // 10. Method and losslessness defaults.
    run->accepted = true;
    r.tokens_after = after;
    r.method = run->meta.method.empty() ? std::string(run->compressor->content_type()) : run->meta.method;
    r.lossless_to_model = run->meta.lossless_to_model.value_or(false);
    r.ratio = static_cast<double>(r.tokens_before - r.tokens_after) / static_cast<double>(r.tokens_before);
    return Status::OK();
  };
  Status s = stages();
  if (!s.ok()) {
    worker.Cancel();
    if (run->writer) run->writer->Abandon();
    return s;
  }
  join_worker();
  if (!run->accepted) r.tokens_after = r.tokens_before;
  return run;
}

Result<CompressResult> Engine::Compress(ByteSource& in, const CompressOptions& o, ByteSink& out) {
  CAVEMAN_ASSIGN_OR_RETURN(std::unique_ptr<Run> run, RunPipeline(in, o, /*simulate=*/false));
  CompressResult& r = run->result;
  auto pass_through = [&]() -> Result<CompressResult> {
    if (run->writer) run->writer->Abandon();
    r.tokens_after = r.tokens_before;
    r.ratio = 0;
    r.method.clear();
    r.lossless_to_model.reset();
    r.recovery_handle.clear();
    r.bytes_out = run->original.size();
    CAVEMAN_RETURN_IF_ERROR(run->original.CopyTo(out));
    CAVEMAN_RETURN_IF_ERROR(out.Flush());
    return r;
  };
  if (!run->accepted) return pass_through();

  // 11. Store the full original before anything transformed escapes.
  if (!o.external_recovery) {
    Status s = run->store_status;
    if (s.ok() && !run->writer) s = Status::Internal("no record writer");
    if (s.ok()) {
      RecordInfo info{r.content_type, std::string(run->compressor->content_type()), r.tokens_before,
                      r.tokens_after, run->meta.recovery_metadata};
      s = run->writer->Commit(run->handle, info);
      run->writer.reset();
    }
    if (!s.ok()) {
      r.error = ErrorForStoreStatus(s);
      r.pass_through_reason = PassThroughReason::kStoreFailed;
      return pass_through();
    }
    r.recovery_handle = run->handle;
  }

  // 12. Publish.
  r.bytes_out = run->output->size();
  CAVEMAN_RETURN_IF_ERROR(run->output->CopyTo(out));
  CAVEMAN_RETURN_IF_ERROR(out.Flush());
  return r;
}

Result<CompressResult> Engine::Compress(std::string_view input, const CompressOptions& o, std::string* out) {
  auto src = NewStringSource(input);
  StringSink sink;
  auto r = Compress(*src, o, sink);
  if (r.ok()) *out = std::move(sink.data());
  return r;
}

Result<SimResult> Engine::Simulate(ByteSource& in, const CompressOptions& o) {
  CAVEMAN_ASSIGN_OR_RETURN(std::unique_ptr<Run> run, RunPipeline(in, o, /*simulate=*/true));
  const CompressResult& r = run->result;
  SimResult s;
  s.content_type = r.content_type;
  s.tokens_before = r.tokens_before;
  s.tokens_after = r.tokens_before;
  s.token_count_basis = r.token_count_basis;
  if (run->accepted) {
    s.compressor = std::string(run->compressor->content_type());
    s.safety_class = "S4";
    s.tokens_after = r.tokens_after;
    s.ratio = r.ratio;
    s.requires_ccr = true;
    s.recoverable = options_.store != nullptr || o.external_recovery;
    s.method = r.method;
    s.lossless_to_model = r.lossless_to_model;
    CAVEMAN_ASSIGN_OR_RETURN(s.output, run->output->ReadAllToString());
  } else {
    CAVEMAN_ASSIGN_OR_RETURN(s.output, run->original.ReadAllToString());
  }
  return s;
}

Result<SimResult> Engine::Simulate(std::string_view input, const CompressOptions& o) {
  auto src = NewStringSource(input);
  return Simulate(*src, o);
}

Result<CompressResult> Engine::Compress(std::istream& in, const CompressOptions& o, std::ostream& out) {
  auto src = NewIstreamSource(in);
  auto sink = NewOstreamSink(out);
  return Compress(*src, o, *sink);
}

Result<CompressResult> Engine::CompressFd(int in_fd, const CompressOptions& o, int out_fd) {
  auto src = NewFdSource(in_fd);
  auto sink = NewFdSink(out_fd);
  return Compress(*src, o, *sink);
}

Status Engine::Retrieve(std::string_view handle, std::ostream& out) {
  auto sink = NewOstreamSink(out);
  CAVEMAN_RETURN_IF_ERROR(Retrieve(handle, *sink));
  return sink->Flush();
}

const char* LibraryVersion() { return CAVEMAN_LIBRARY_VERSION; }

const char* PassThroughReasonText(PassThroughReason reason) {
  switch (reason) {
    case PassThroughReason::kNone: return "a view was emitted";
    case PassThroughReason::kRecordMode: return "record mode: compression was not requested";
    case PassThroughReason::kEmptyInput: return "empty input";
    case PassThroughReason::kNoCompressor: return "no compressor is registered for this content type";
    case PassThroughReason::kNoStore: return "no recovery store, so no lossy view may be emitted";
    case PassThroughReason::kDeclined: return "the compressor found nothing to compress in this input";
    case PassThroughReason::kNoChange: return "compression left the input unchanged";
    case PassThroughReason::kUnstable: return "the view kept changing when compressed again";
    case PassThroughReason::kNotSmaller: return "the view would not count fewer tokens";
    case PassThroughReason::kStoreFailed: return "the original could not be stored";
  }
  return "unknown";
}

Result<std::unique_ptr<RecoveryStore>> OpenDefaultStore() {
  CAVEMAN_ASSIGN_OR_RETURN(StoreOptions options, StoreOptions::FromEnv());
  return OpenSqliteStore(options);
}

std::string Engine::Detect(std::string_view input) const { return std::string(caveman::Detect(input)); }

Status Engine::Retrieve(std::string_view handle, ByteSink& out) {
  if (options_.store == nullptr) return Status::NotSupported("no recovery store configured");
  return options_.store->Get(handle, out);
}

Status Engine::RetrieveQuery(std::string_view handle, std::string_view query, ByteSink& out) {
  if (options_.store == nullptr) return Status::NotSupported("no recovery store configured");
  StringSink original;
  CAVEMAN_RETURN_IF_ERROR(options_.store->Get(handle, original));
  return out.Write(NarrowForQuery(original.data(), query));
}

Result<std::string> Engine::RetrieveMetadata(std::string_view handle) {
  if (options_.store == nullptr) return Status::NotSupported("no recovery store configured");
  return options_.store->GetMetadata(handle);
}

Result<StoreStats> Engine::Stats() {
  if (options_.store == nullptr) return StoreStats{};
  return options_.store->Stats();
}

std::string FormatRatio(double r) {
  if (r == 0 || !std::isfinite(r)) return "0";
  char buf[64];
  std::to_chars_result res;
  if (std::fabs(r) < 1e-6) {
    res = std::to_chars(buf, buf + sizeof buf, r, std::chars_format::scientific);
  } else {
    res = std::to_chars(buf, buf + sizeof buf, r, std::chars_format::fixed);
  }
  std::string s(buf, res.ptr);
  // Exponent form without '+' or leading zeros: 1e-07 → 1e-7.
  size_t e = s.find('e');
  if (e != std::string::npos) {
    std::string mant = s.substr(0, e), exp = s.substr(e + 1);
    bool neg = !exp.empty() && exp[0] == '-';
    if (!exp.empty() && (exp[0] == '-' || exp[0] == '+')) exp.erase(0, 1);
    while (exp.size() > 1 && exp[0] == '0') exp.erase(0, 1);
    s = mant + "e" + (neg ? "-" : "") + exp;
  }
  return s;
}

std::string JsonQuote(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case 0x08: out += "\\b"; break;
      case 0x0C: out += "\\f"; break;
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 15]);
        } else if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
                   (static_cast<unsigned char>(s[i + 2]) == 0xA8 || static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
          out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
          i += 2;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out += "\"";
  return out;
}

std::string CompressResult::ReportJson() const {
  std::string j = "{\"content_type\":" + JsonQuote(content_type);
  j += ",\"tokens_before\":";
  AppendJsonNumber(&j, tokens_before);
  j += ",\"tokens_after\":";
  AppendJsonNumber(&j, tokens_after);
  j += ",\"token_count_basis\":" + JsonQuote(token_count_basis);
  j += ",\"ratio\":" + FormatRatio(ratio);
  j += ",\"basis\":\"inferred\"";
  if (!recovery_handle.empty()) j += ",\"recovery_handle\":" + JsonQuote(recovery_handle);
  if (!method.empty()) j += ",\"method\":" + JsonQuote(method);
  if (!method.empty() && lossless_to_model.has_value()) {
    j += std::string(",\"lossless_to_model\":") + (*lossless_to_model ? "true" : "false");
  }
  if (!error.empty()) j += ",\"error\":" + JsonQuote(error);
  j += "}";
  return j;
}

std::string SimResult::ToJson() const {
  std::string j = "{\"content_type\":" + JsonQuote(content_type);
  if (!compressor.empty()) j += ",\"compressor\":" + JsonQuote(compressor);
  if (!safety_class.empty()) j += ",\"safety_class\":" + JsonQuote(safety_class);
  j += ",\"tokens_before\":" + std::to_string(tokens_before);
  j += ",\"tokens_after\":" + std::to_string(tokens_after);
  j += ",\"tokens_saved\":" + std::to_string(tokens_before - tokens_after);
  j += ",\"token_count_basis\":" + JsonQuote(token_count_basis);
  j += ",\"ratio\":" + FormatRatio(ratio);
  j += std::string(",\"lossy\":") + (lossy() ? "true" : "false");
  j += std::string(",\"requires_ccr\":") + (requires_ccr ? "true" : "false");
  j += std::string(",\"recoverable\":") + (recoverable ? "true" : "false");
  if (!method.empty()) j += ",\"method\":" + JsonQuote(method);
  if (lossless_to_model.has_value()) j += std::string(",\"lossless_to_model\":") + (*lossless_to_model ? "true" : "false");
  j += ",\"basis\":\"inferred\"}";
  return j;
}

}  // namespace caveman
