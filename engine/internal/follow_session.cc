#include "engine/internal/follow_session.h"
#include "engine/internal/marker_map.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "compressors/detect.h"
#include "engine/internal/pipelined_writer.h"
#include "engine/internal/stages.h"
#include "compressors/elision.h"
#include "compressors/log_rules.h"
#include "stream/check.h"

namespace caveman::internal {
namespace {

// Bytes fed to the stage per step, so that a forced sync can run between steps even when one
// Push() carries a lot (tests; the descriptor loop reads 256 KiB at a time).
constexpr size_t kFeedStep = 256 * 1024;
// With a line-type hint detection needs only the first line (or this many bytes).
constexpr size_t kHintedDetectBytes = 4096;
// Lines of the early detection check (§3.3 rule 9 needs 4 pieces).
constexpr uint64_t kEarlyDetectLines = 4;

std::string StoreErrorName(const Status& s) {
  return s.code() == StatusCode::kResourceExhausted ? "cave_ccr_budget_exceeded" : "cave_ccr_unavailable";
}

}  // namespace

bool StructuralType(std::string_view t) { return t == "json" || t == "html" || t == "diff" || t == "test-report"; }

class FollowSession::Queue final : public OnlineSink {
 public:
  void Emit(OnlineEvent&& e) override {
    markers.Add(e);  // in queue order = write order, so the map is known at commit
    events.push_back(std::move(e));
  }
  std::deque<OnlineEvent> events;
  OnlineMarkerTracker markers;
};

// FollowConfig::counter, checked before the session binds a reference to it.
static const TokenCounter& CheckedCounter(const TokenCounter* counter) {
  CAVEMAN_DCHECK(counter != nullptr);
  return *counter;
}

FollowSession::FollowSession(FollowConfig config, ByteSink& out)
    : config_(std::move(config)),
      out_(out),
      input_tokens_(CheckedCounter(config_.counter)),
      queue_(std::make_unique<Queue>()),
      output_tokens_(*config_.counter) {
  if (!config_.type.empty() && config_.type != "auto") {
    Decide();
  } else {
    // Detection's pattern database takes a while to compile (0.1-0.5 s): do it on the other
    // core while the first input arrives, as the batch InputWorker does.
    warm_ = std::thread([] {
      try {
        (void)DetectBody("caveman: warm up the detection patterns\n");
      } catch (const std::bad_alloc&) {  // only a warm-up: detection compiles on demand
      }
    });
  }
}

FollowSession::~FollowSession() {
  if (warm_.joinable()) warm_.join();
}

// Whether the first bytes could be one of the structural types a hint must not override; if
// not, a line-type hint decides without running detection at all.
static bool MayBeStructural(std::string_view sample) {
  size_t i = sample.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos) return false;
  const char c = sample[i];
  if (c == '{' || c == '[' || c == '<') return true;
  return sample.find("diff --git ") != std::string_view::npos || sample.find("\n@@ ") != std::string_view::npos ||
         sample.rfind("@@ ", 0) == 0 || sample.rfind("--- ", 0) == 0;
}

// The first `max_lines` complete lines of `s`, at most `max_bytes` (cut after an LF when
// possible): detection sees the same bytes however the input was chunked.
static std::string_view FirstLines(std::string_view s, size_t max_lines, size_t max_bytes) {
  size_t end = 0, lines = 0;
  while (lines < max_lines) {
    const size_t nl = s.find('\n', end);
    if (nl == std::string_view::npos || nl + 1 > max_bytes) break;
    end = nl + 1;
    ++lines;
  }
  if (lines == 0) end = std::min(s.size(), max_bytes);  // no complete line (yet): what is there
  return s.substr(0, end);
}

void FollowSession::Decide() {
  if (!config_.type.empty() && config_.type != "auto") {
    content_type_ = config_.type;
  } else if (!config_.type_hint.empty() && IsOnlineContentType(config_.type_hint) && !MayBeStructural(sample_)) {
    content_type_ = config_.type_hint;
  } else {
    content_type_ = std::string(DetectBody(FirstLines(sample_, config_.detect_lines, config_.detect_bytes)));
    if (!config_.type_hint.empty() && !StructuralType(content_type_)) content_type_ = config_.type_hint;
  }
  if (IsOnlineContentType(content_type_) && !NeverCompressed(config_.never_types, content_type_)) {
    StartOnline();
  } else {
    phase_ = Phase::kBatch;
  }
}

void FollowSession::StartOnline() {
  phase_ = Phase::kOnline;
  stage_ = NewOnlineStage(content_type_, config_.query);
  if (config_.store == nullptr) {
    phase_ = Phase::kRaw;  // nothing may be elided without a stored original
  } else {
    auto w = config_.store->BeginStreamRecord(config_.command);
    if (w.ok()) {
      // SHA-256 and zstd of the original on the second core (issue 19).
      writer_ = std::make_unique<PipelinedStreamWriter>(std::move(w).value());
      unsynced_.reserve(config_.max_unsynced + kFeedStep);  // one allocation, not a doubling chain
    } else {
      StoreFailed(w.status());
    }
  }
  std::string sample = std::move(sample_);
  sample_.clear();
  Feed(sample);
}

Status FollowSession::Push(std::string_view bytes, FollowClock::time_point now) {
  if (bytes.empty()) return Status::OK();
  if (!first_input_) first_input_ = now;
  last_input_ = now;
  idle_ticked_ = false;
  bytes_in_ += bytes.size();
  input_tokens_.Feed(bytes);
  if (phase_ == Phase::kDetecting) {
    sample_.append(bytes);
    const bool hinted = !config_.type_hint.empty() && IsOnlineContentType(config_.type_hint);
    sample_lines_ += static_cast<uint64_t>(std::count(bytes.begin(), bytes.end(), '\n'));
    // Early: when the first few lines already detect as a line type, waiting for more would
    // only delay them (the same lines decide whatever the chunking).
    if (!early_checked_ && sample_lines_ >= kEarlyDetectLines && config_.type_hint.empty()) {
      early_checked_ = true;
      if (IsOnlineContentType(DetectBody(FirstLines(sample_, kEarlyDetectLines, config_.detect_bytes)))) {
        Decide();
        return phase_ == Phase::kBatch ? Status::OK() : Drain(now, false);
      }
    }
    if (sample_.size() >= config_.detect_bytes || now >= *first_input_ + config_.detect_window ||
        sample_lines_ >= config_.detect_lines ||
        (hinted &&
         (sample_.size() >= kHintedDetectBytes || std::memchr(sample_.data(), '\n', sample_.size()) != nullptr))) {
      Decide();
    }
    if (phase_ == Phase::kDetecting || phase_ == Phase::kBatch) return Status::OK();
    return Drain(now, false);
  }
  if (phase_ == Phase::kBatch) return Status::Internal("follow: input after the batch hand-over");
  for (size_t off = 0; off < bytes.size(); off += kFeedStep) {
    Feed(bytes.substr(off, kFeedStep));
    CAVEMAN_RETURN_IF_ERROR(Drain(now, false));
  }
  return Status::OK();
}

void FollowSession::Feed(std::string_view bytes) {
  while (!bytes.empty()) {
    if (huge_) {
      const char* nl = static_cast<const char*>(std::memchr(bytes.data(), '\n', bytes.size()));
      const size_t n = nl != nullptr ? static_cast<size_t>(nl - bytes.data()) + 1 : bytes.size();
      AppendOriginal(bytes.substr(0, n));
      EmitRaw(bytes.substr(0, n), offset_);
      offset_ += n;
      if (nl != nullptr) huge_ = false;
      bytes.remove_prefix(n);
      continue;
    }
    if (!carry_.empty()) {
      const char* nl = static_cast<const char*>(std::memchr(bytes.data(), '\n', bytes.size()));
      if (nl == nullptr) {
        carry_.append(bytes);
        if (carry_.size() > config_.max_line) StartHugeLine();
        return;
      }
      const size_t n = static_cast<size_t>(nl - bytes.data()) + 1;
      carry_.append(bytes.substr(0, n));
      std::string line = std::move(carry_);
      carry_.clear();
      ProcessBlock(line);
      bytes.remove_prefix(n);
      continue;
    }
    const void* last = memrchr(bytes.data(), '\n', bytes.size());
    if (last == nullptr) {
      carry_.assign(bytes);
      if (carry_.size() > config_.max_line) StartHugeLine();
      return;
    }
    const size_t n = static_cast<size_t>(static_cast<const char*>(last) - bytes.data()) + 1;
    ProcessBlock(bytes.substr(0, n));
    bytes.remove_prefix(n);
  }
}

void FollowSession::ProcessBlock(std::string_view block) {
  AppendOriginal(block);
  if (phase_ == Phase::kOnline) {
    stage_->PushLines(block, offset_, *queue_);
  } else {
    EmitRaw(block, offset_);
  }
  offset_ += block.size();
}

void FollowSession::StartHugeLine() {
  if (phase_ == Phase::kOnline) stage_->Barrier(1, *queue_);
  std::string line = std::move(carry_);
  carry_.clear();
  AppendOriginal(line);
  EmitRaw(line, offset_);
  offset_ += line.size();
  huge_ = true;
}

void FollowSession::AppendOriginal(std::string_view bytes) {
  appended_ += bytes.size();
  if (writer_ == nullptr || store_failed_ || bytes.empty()) return;
  Status s = writer_->Append(bytes);
  if (!s.ok()) {
    StoreFailed(s);
    return;
  }
  unsynced_.append(bytes);
}

void FollowSession::EmitRaw(std::string_view bytes, uint64_t begin) {
  if (bytes.empty()) return;
  queue_->Emit(OnlineEvent{std::string(bytes), begin, begin + bytes.size(), 0, false});
}

void FollowSession::StoreFailed(const Status& s) {
  if (store_failed_) return;
  store_failed_ = true;
  store_error_ = StoreErrorName(s);
  // Whatever the stage holds is written now (split where uncovered); later input passes
  // through verbatim.
  if (phase_ == Phase::kOnline) {
    stage_->Barrier(0, *queue_);
    phase_ = Phase::kRaw;
  }
}

bool FollowSession::SyncNow(FollowClock::time_point now) {
  Status s = writer_->Sync();
  if (!s.ok()) {
    StoreFailed(s);
    return false;
  }
  synced_ = appended_;
  unsynced_.clear();
  last_sync_ = now;
  return true;
}

// Output is collected per Drain() and written with one call (one write(2) per read, not per line).
void FollowSession::Write(std::string_view bytes) {
  if (bytes.empty()) return;
  out_buf_.append(bytes);  // counted once per Drain, with the buffer (same total, less per-call work)
  bytes_out_ += bytes.size();
  output_open_ = bytes.back() != '\n';
}

// A lossy event whose input the partial record does not (fully) cover, after the store failed:
// the covered lines become a plain marker, the rest is written as it arrived.
void FollowSession::WriteUncovered(const OnlineEvent& e) {
  const uint64_t from = std::max(e.input_begin, synced_);
  if (e.input_begin < synced_ && e.lines > 0) {
    std::string_view after(unsynced_.data(), std::min<uint64_t>(unsynced_.size(), e.input_end - synced_));
    uint64_t lines_after = static_cast<uint64_t>(std::count(after.begin(), after.end(), '\n'));
    if (!after.empty() && after.back() != '\n') ++lines_after;
    if (e.lines > lines_after) {
      Write(ElisionMarker(e.lines - lines_after, kLogMarkerText) + "\n");
      lossy_written_ = true;
    }
  }
  if (e.input_end > from) {
    Write(std::string_view(unsynced_).substr(from - synced_, e.input_end - from));
  }
}

Status FollowSession::Drain(FollowClock::time_point now, bool force_sync) {
  bool wrote = false;
  if (writer_ != nullptr && !store_failed_ && unsynced_.size() > config_.max_unsynced) SyncNow(now);
  auto& events = queue_->events;
  while (!events.empty()) {
    OnlineEvent& e = events.front();
    if (e.lossy && e.input_end > synced_) {
      if (!store_failed_) {
        if (!force_sync && last_sync_ && now < *last_sync_ + config_.sync_interval) {
          sync_due_ = *last_sync_ + config_.sync_interval;
          break;
        }
        SyncNow(now);
      }
      if (store_failed_ && e.input_end > synced_) {
        WriteUncovered(e);
        events.pop_front();
        wrote = true;
        continue;
      }
    }
    Write(e.bytes);
    if (e.lossy) lossy_written_ = true;
    events.pop_front();
    wrote = true;
  }
  if (events.empty()) sync_due_.reset();
  if (!wrote) return Status::OK();
  output_tokens_.Feed(out_buf_);
  Status s = out_.Write(out_buf_);
  out_buf_.clear();
  if (out_buf_.capacity() > kFeedStep) out_buf_.shrink_to_fit();
  CAVEMAN_RETURN_IF_ERROR(s);
  return out_.Flush();
}

Status FollowSession::Tick(FollowClock::time_point now) {
  if (phase_ == Phase::kDetecting && first_input_ && now >= *first_input_ + config_.detect_window) {
    Decide();
  }
  if (phase_ == Phase::kOnline && last_input_ && !idle_ticked_ && now >= *last_input_ + config_.idle) {
    stage_->Tick(*queue_);
    idle_ticked_ = true;
  }
  if (phase_ == Phase::kOnline || phase_ == Phase::kRaw) return Drain(now, false);
  return Status::OK();
}

std::optional<FollowClock::time_point> FollowSession::Deadline() const {
  std::optional<FollowClock::time_point> d;
  auto consider = [&d](FollowClock::time_point t) {
    if (!d || t < *d) d = t;
  };
  if (phase_ == Phase::kDetecting && first_input_) consider(*first_input_ + config_.detect_window);
  if (phase_ == Phase::kOnline && last_input_ && !idle_ticked_) consider(*last_input_ + config_.idle);
  if (sync_due_) consider(*sync_due_);
  return d;
}

Status FollowSession::EndOfInput(FollowClock::time_point now) {
  if (phase_ == Phase::kDetecting) Decide();
  if (phase_ == Phase::kBatch) return Status::OK();
  std::string last = std::move(carry_);
  carry_.clear();
  AppendOriginal(last);
  if (phase_ == Phase::kOnline) {
    stage_->Finish(last, offset_, output_open_ || huge_, *queue_);
  } else {
    EmitRaw(last, offset_);
  }
  offset_ += last.size();
  tokens_before_ = input_tokens_.Finish();
  // The writer hashed every byte (it has all of them unless the store failed, and then no
  // record is finalised).
  if (writer_ != nullptr) handle_ = writer_->handle();
  bool committed = false;
  if (writer_ != nullptr && !store_failed_ && stage_ != nullptr && stage_->lossy()) {
    // The record's tokens_after: what was written plus what is still queued, in order.
    StreamingTokenCount view = output_tokens_;
    for (const OnlineEvent& e : queue_->events) view.Feed(e.bytes);
    RecordInfo info;
    info.content_type = content_type_;
    info.compressor = content_type_;
    info.tokens_before = tokens_before_;
    info.tokens_after = view.Finish();
    info.command = config_.command;
    // EndOfInput: no marker follows. The map stays in its spool; the store copies it in pieces.
    const std::unique_ptr<Spool> map = queue_->markers.TakeBlob();
    info.marker_map_size = map->size();
    info.marker_map_reader = [m = map.get()] { return m->NewReader(); };
    Status s = writer_->Commit(handle_, info);
    info.marker_map_reader = nullptr;  // the spool goes with this block
    if (s.ok()) {
      committed = true;
      synced_ = appended_;
      unsynced_.clear();
    } else {
      StoreFailed(s);
    }
  }
  CAVEMAN_RETURN_IF_ERROR(Drain(now, /*force_sync=*/true));
  if (writer_ != nullptr && !committed) {
    if (lossy_written_) {
      partial_record_ = writer_->partial_id();  // holds the original of every marker written
    } else {
      writer_->Abandon();
    }
  }
  if (committed) partial_record_.clear();
  if (!committed) handle_.clear();
  return Status::OK();
}

CompressResult FollowSession::Finish() {
  CAVEMAN_DCHECK(phase_ != Phase::kDetecting && !wants_batch());  // EndOfInput() decided the type
  CompressResult r;
  r.follow = true;
  r.content_type = content_type_;
  r.token_count_basis = std::string(config_.counter->name());
  r.tokens_before = tokens_before_;
  r.tokens_after = output_tokens_.Finish();
  r.bytes_in = bytes_in_;
  r.bytes_out = bytes_out_;
  r.error = store_error_;
  r.partial_record = partial_record_;
  if (lossy_written_) {
    r.method = content_type_;
    r.lossless_to_model = false;
    r.recovery_handle = handle_;
    if (r.tokens_before > 0) {
      r.ratio = (static_cast<double>(r.tokens_before) - static_cast<double>(r.tokens_after)) /
                static_cast<double>(r.tokens_before);
    }
    if (handle_.empty()) r.pass_through_reason = PassThroughReason::kStoreFailed;
  } else {
    // Every line was written as it arrived: the view is the input.
    r.tokens_after = r.tokens_before;
    r.pass_through_reason = store_failed_              ? PassThroughReason::kStoreFailed
                            : config_.store == nullptr ? PassThroughReason::kNoStore
                            : r.bytes_in == 0          ? PassThroughReason::kEmptyInput
                                                       : PassThroughReason::kNoChange;
  }
  return r;
}

Result<CompressResult> FollowFromSource(const FollowConfig& config, ByteSource& head, ByteSource& rest, ByteSink& out) {
  CAVEMAN_DCHECK(IsOnlineContentType(config.type));
  FollowSession session(config, out);
  if (session.wants_batch()) return Status::InvalidArgument("follow: no online stage for " + config.type);
  std::string buf(kFeedStep, '\0');
  for (ByteSource* source : {&head, &rest}) {
    for (;;) {
      CAVEMAN_ASSIGN_OR_RETURN(size_t n, source->Read(buf.data(), buf.size()));
      if (n == 0) break;
      const auto now = FollowClock::now();
      CAVEMAN_RETURN_IF_ERROR(session.Push(std::string_view(buf.data(), n), now));
      CAVEMAN_RETURN_IF_ERROR(session.Tick(now));
    }
  }
  CAVEMAN_RETURN_IF_ERROR(session.EndOfInput(FollowClock::now()));
  return session.Finish();
}

}  // namespace caveman::internal
