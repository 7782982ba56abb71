// The batch pipeline's stages: see stages.h.
#include "engine/internal/stages.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include "compressors/lines.h"
#include "stream/chunk_buffer.h"
#include "stream/sha256.h"

namespace caveman::internal {
namespace {

// Bytes of the input inspected to decide whether a presentation layer could apply.
constexpr size_t kLayerProbeBytes = 64 * 1024;
// Maximum re-runs of the stability guard (§1.5: y0..y4).
constexpr int kStabilityRounds = 4;

Status CountSpool(const Spool& spool, const TokenCounter& counter, uint64_t* tokens) {
  if (spool.in_memory()) {
    *tokens = counter.Count(spool.memory_view());
    return Status::OK();
  }
  StreamingTokenCount tc(counter);
  auto reader = spool.NewReader();
  ChunkBuffer buf;
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
  ChunkBuffer ba, bb;
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

// SHA-256 of what is written to it.
struct HashingSink final : public ByteSink {
  Status Write(std::string_view d) override {
    sha.Update(d);
    return Status::OK();
  }
  Sha256 sha;
};

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
Result<TransformOutcome> RunCompressor(const Compressor& c, const Body& body, std::string_view query, ByteSink* out,
                                       TransformMeta* meta) {
  std::string_view q;
  if (c.metadata_aware() || (c.query_aware() && !query.empty())) q = query;
  BufferedSink buffered(*out);
  Result<TransformOutcome> r = c.Transform(body, q, buffered, meta);
  if (!r.ok()) return r;
  CAVEMAN_RETURN_IF_ERROR(buffered.Drain());
  return r;
}

// The line compressors: their views are input lines and synthesized marker lines.
bool IsLineType(std::string_view t) {
  return t == "log" || t == "terminal" || t == "repetition" || t == "diff" || t == "search-result" || t == "config" ||
         t == "tabular" || t == "text";
}

}  // namespace

// Issue 16 (docs/DECISIONS.md, "Stability guard keeps line structure"): a re-run of the guard
// over a line type's view may drop lines of `y` and add synthesized lines (every marker and note
// names caveman), but not reshape, reorder or re-end them: each line of `next` is a line of `y`,
// in order, or holds "caveman", and both agree on majority CRLF.
bool KeepsLineStructure(std::string_view y, std::string_view next) {
  if (IsMajorityCrlf(y) != IsMajorityCrlf(next)) return false;
  size_t yp = 0;
  size_t np = 0;
  auto line_at = [](std::string_view s, size_t* pos) {
    size_t e = s.find('\n', *pos);
    if (e == std::string_view::npos) e = s.size();
    std::string_view line = s.substr(*pos, e - *pos);
    *pos = e + 1;
    return line;
  };
  while (np < next.size()) {
    std::string_view line = line_at(next, &np);
    if (line.find("caveman") != std::string_view::npos) continue;
    for (;;) {
      if (yp >= y.size()) return false;
      if (line_at(y, &yp) == line) break;
    }
  }
  return true;
}

// ---- Commit ----

void CommitStage::Begin(RecoveryStore* store) {
  if (store == nullptr) return;
  auto w = store->BeginRecord();
  if (w.ok()) {
    writer_ = std::move(w).value();
  } else {
    status_ = w.status();
  }
}

void CommitStage::FrameFailed(const Status& frame) {
  if (!writer_ || frame.ok()) return;
  writer_->Abandon();
  writer_.reset();
  status_ = frame;
}

void CommitStage::Abandon() {
  if (writer_) writer_->Abandon();
}

Status CommitStage::Commit(const std::string& handle, const RecordInfo& info) {
  Status s = status_;
  if (s.ok() && !writer_) s = Status::Internal("no record writer");
  if (s.ok()) {
    s = writer_->Commit(handle, info);
    writer_.reset();
  }
  return s;
}

std::string StoreError(const Status& s) {
  return s.code() == StatusCode::kResourceExhausted ? "cave_ccr_budget_exceeded" : "cave_ccr_unavailable";
}

// ---- Read ----

Status ReadStage::Run(ByteSource& in, uint64_t max_bytes, bool load_json, Spool* original) {
  // Before the first Offer: the worker has not touched the writer yet.
  hash_here_ = record_->writer() == nullptr || !record_->writer()->AppendedHandle().has_value();
  Sha256 sha;
  // The input starts like JSON and is held in memory whole: the worker is offered none of its
  // chunks and gets it whole at the end (then compressed in place, RecordWriter::AppendLast).
  bool loading_whole = false;
  ChunkBuffer& buf = buf_;
  for (;;) {
    // An input loaded whole is read straight into its spool (no copy out of the read buffer;
    // issue 19); otherwise, or when the spool cannot take it so, through the buffer.
    std::string_view chunk;
    bool in_original = false;
    // Before the read: a chunk read into `original` is held, never held back (below).
    const uint64_t held_before = original->size();
    if (loading_whole) {
      CAVEMAN_ASSIGN_OR_RETURN(std::optional<std::string_view> direct, original->ReadFrom(in, buf.size()));
      if (direct) {
        chunk = *direct;
        in_original = true;
      }
    }
    if (!in_original) {
      CAVEMAN_ASSIGN_OR_RETURN(size_t read, in.Read(buf.data(), buf.size()));
      chunk = std::string_view(buf.data(), read);
    }
    const size_t n = chunk.size();
    if (n == 0) break;
    bytes_ += n;
    // Issue 15: a chunk the original cannot take (memory and spill file both gone), or memory
    // running out anywhere in this loop, ends the read with unheld(): the caller streams what
    // `original` holds, held_back() and the rest of `in` through instead of losing them.
    Status held;
    try {
      if (bytes_ > max_bytes) {
        // The original so far (this chunk included) stays in `original` for the caller's
        // oversize path; the worker's count and frame are moot.
        oversized_ = true;
        if (!in_original) held = original->Write(chunk);
        if (held.ok()) {
          return Status::ResourceExhausted("cave_input_too_large: stdin exceeds " + std::to_string(max_bytes) +
                                           " bytes");
        }
      } else {
        if (hash_here_) sha.Update(chunk);
        if (probe_.size() < kLayerProbeBytes) {
          probe_.append(chunk.substr(0, kLayerProbeBytes - probe_.size()));
          // An input that starts like JSON is loaded whole below: hold it in memory from the
          // start instead of spilling it and reading it back (the peak is the same; issue 19).
          if (load_json && InputWorker::LooksLikeJson(probe_)) {
            original->RaiseMemoryLimit(max_bytes);
            loading_whole = true;
          }
        }
        if (!in_original) held = original->Write(chunk);
        if (held.ok() && !loading_whole) worker_.Offer(chunk);
      }
    } catch (const std::bad_alloc&) {
      held = Status::ResourceExhausted("out of memory");
    }
    if (!held.ok()) {
      oversized_ = false;
      unheld_ = true;
      held_back_ = original->size() == held_before ? n : 0;  // Spool::Write takes all or nothing
      return Status::ResourceExhausted("cave_out_of_memory: the input cannot be held: " + held.message());
    }
  }
  if (hash_here_) handle_ = HandleFromDigest(sha.Final());
  input_.emplace(Body::FromSpool(*original));
  if (loading_whole) {
    std::optional<Result<std::string_view>> whole;
    try {
      whole.emplace(input_->View());
    } catch (const std::bad_alloc&) {
      // The whole input is held: the worker counts it from the spool, and the caller's next
      // allocation failure passes the original through (kOutOfMemory).
    }
    if (whole) {
      CAVEMAN_RETURN_IF_ERROR(whole->status());
      worker_.InputComplete(original, **whole);
      return Status::OK();
    }
  }
  worker_.InputComplete(original);
  return Status::OK();
}

uint64_t ReadStage::Finish() {
  if (finished_) return tokens_;
  finished_ = true;
  worker_.Help();  // nothing else to do here: count segments the worker has not reached
  worker_.Join();
  tokens_ = worker_.tokens();
  out_of_memory_ = worker_.out_of_memory();
  if (!hash_here_) {
    if (worker_.writer_status().ok()) {
      handle_ = record_->writer()->AppendedHandle().value_or(std::string());
    } else if (input_) {
      // The writer stopped taking bytes: hash the original from its spool (rare path).
      HashingSink sink;
      if (CopyStream(*input_->NewReader(), sink).ok()) handle_ = HandleFromDigest(sink.sha.Final());
    }
  }
  record_->FrameFailed(worker_.writer_status());
  return tokens_;
}

bool NeverCompressed(const std::vector<std::string>& never_types, std::string_view content_type) {
  return std::any_of(never_types.begin(), never_types.end(),
                     [&](const std::string& t) { return t == "*" || t == content_type; });
}

// ---- Select ----

Result<PassThroughReason> Select(const ReadStage& read, const StageConfig& config, Selection* out) {
  if (MayHavePresentationLayer(read.probe())) {
    CAVEMAN_ASSIGN_OR_RETURN(std::string_view whole, read.input().View());
    out->unwrapped = Unwrap(whole);
    out->layered = !out->unwrapped.layers.empty();
  }
  out->body.emplace(out->layered ? Body::FromView(out->unwrapped.body) : read.input());
  if (!config.forced_type.empty()) {
    out->content_type = std::string(config.forced_type);
  } else {
    CAVEMAN_ASSIGN_OR_RETURN(std::string_view ct, DetectLarge(*out->body));
    out->content_type = std::string(ct);
  }
  // Only the empty input counts 0 tokens (both counters give every non-empty text ≥ 1), so
  // the count need not be waited for.
  if (!config.compress_mode) return PassThroughReason::kRecordMode;
  if (NeverCompressed(config.never_types, out->content_type)) return PassThroughReason::kNeverCompress;
  if (read.bytes() == 0) return PassThroughReason::kEmptyInput;
  out->compressor = config.registry.Find(out->content_type);
  // Only S4 is known here; any other class is treated as not registered.
  if (out->compressor == nullptr || out->compressor->safety_class() != SafetyClass::kS4) {
    return PassThroughReason::kNoCompressor;
  }
  if (!config.may_emit_lossy) return PassThroughReason::kNoStore;
  return PassThroughReason::kNone;
}

// ---- Transform ----

Result<PassThroughReason> Transform(const Selection& selection, const StageConfig& config, std::unique_ptr<Spool>* view,
                                    TransformMeta* meta) {
  *view = std::make_unique<Spool>(config.spool);
  CAVEMAN_ASSIGN_OR_RETURN(TransformOutcome outcome,
                           RunCompressor(*selection.compressor, *selection.body, config.query, view->get(), meta));
  if (outcome != TransformOutcome::kAccepted) {
    return meta->over_memory_ceiling ? PassThroughReason::kOverMemoryCeiling : PassThroughReason::kDeclined;
  }
  CAVEMAN_ASSIGN_OR_RETURN(bool same_as_body, SameBytes(**view, *selection.body));
  if (same_as_body) return PassThroughReason::kNoChange;
  return PassThroughReason::kNone;
}

// ---- Stabilise ----

Result<PassThroughReason> Stabilise(const Selection& selection, const StageConfig& config, std::unique_ptr<Spool>* view,
                                    TransformMeta* meta) {
  std::unique_ptr<Spool>& y = *view;
  for (int round = 0; round < kStabilityRounds; ++round) {
    const Compressor* c = selection.compressor;
    Body yk = Body::FromSpool(*y);
    if (config.forced_type.empty()) {
      CAVEMAN_ASSIGN_OR_RETURN(std::string_view ct, DetectLarge(yk));
      c = config.registry.Find(ct);
    }
    if (c == nullptr) return PassThroughReason::kNone;
    DiffSink next(*y, config.spool);
    TransformMeta round_meta;
    CAVEMAN_ASSIGN_OR_RETURN(TransformOutcome again, RunCompressor(*c, yk, config.query, &next, &round_meta));
    if (again != TransformOutcome::kAccepted) return PassThroughReason::kNone;
    CAVEMAN_ASSIGN_OR_RETURN(bool same, next.Same());
    if (same) return PassThroughReason::kNone;
    // A lossless view (minified JSON, TOON) stays lossless: a lossy re-run (a TOON table
    // re-detected as tabular, say) does not replace it (issue 16).
    const bool round_lossless = round_meta.lossless_to_model.value_or(false);
    if (meta->lossless_to_model.value_or(false) && !round_lossless) return PassThroughReason::kNone;
    std::unique_ptr<Spool> candidate = next.TakeSpool();
    if (IsLineType(selection.compressor->content_type())) {
      CAVEMAN_ASSIGN_OR_RETURN(std::string yv, y->ReadAllToString());
      CAVEMAN_ASSIGN_OR_RETURN(std::string cv, candidate->ReadAllToString());
      // The re-run would break the line view's structure (issue 16), so it is not taken; but
      // then y is not stable either: `compress` of y would make that very change (§1.5). Such a
      // view is declined like one that never settles (fuzz_engine found terminal views that
      // re-detect as html; docs/DECISIONS.md, "Stability guard: a refused re-run declines").
      if (!KeepsLineStructure(yv, cv)) return PassThroughReason::kUnstable;
    }
    y = std::move(candidate);
    if (!round_lossless) meta->lossless_to_model = false;
    if (!round_meta.method.empty()) meta->method = round_meta.method;  // it made the view
  }
  return PassThroughReason::kUnstable;
}

// ---- Rewrap ----

Status Rewrap(const Selection& selection, std::unique_ptr<Spool> view, std::unique_ptr<Spool>* output) {
  if (!selection.layered) {
    *output = std::move(view);
    return Status::OK();
  }
  CAVEMAN_ASSIGN_OR_RETURN(std::string yv, view->ReadAllToString());
  return (*output)->Write(selection.unwrapped.layers.Rewrap(yv));
}

// ---- Gate ----

Result<PassThroughReason> Gate(const Spool& view, ReadStage& read, const TokenCounter& counter, double min_savings,
                               uint64_t* tokens_after) {
  CAVEMAN_RETURN_IF_ERROR(CountSpool(view, counter, tokens_after));
  const uint64_t before = read.Finish();
  if (read.out_of_memory()) return PassThroughReason::kOutOfMemory;
  if (*tokens_after >= before) return PassThroughReason::kNotSmaller;
  if (min_savings > 0 && static_cast<double>(before - *tokens_after) < min_savings * static_cast<double>(before)) {
    return PassThroughReason::kBelowMinSavings;
  }
  CAVEMAN_ASSIGN_OR_RETURN(bool identical, SameBytes(view, read.input()));
  if (identical) return PassThroughReason::kNoChange;
  return PassThroughReason::kNone;
}

// ---- Emit ----

Status Emit(const Spool& winner, ByteSink& out, uint64_t* bytes_out) {
  *bytes_out = winner.size();
  CAVEMAN_RETURN_IF_ERROR(winner.CopyTo(out));
  return out.Flush();
}

}  // namespace caveman::internal
