#include "compressors/online.h"

#include <cstring>
#include <deque>
#include <optional>
#include <vector>

#include "compressors/internal/bm25.h"
#include "compressors/elision.h"
#include "compressors/internal/invariants.h"
#include "compressors/lines.h"
#include "compressors/log_rules.h"
#include "compressors/internal/redundancy.h"
#include "compressors/internal/templates.h"
#include "compressors/text_util.h"
#include "compressors/terminal.h"

namespace caveman {
namespace {

using internal::TemplateMiner;

enum class PatternKind : uint8_t { kNone, kLog, kTerminal };

// The per-type policy of the one online line stage: data, not code (one loop for all types).
struct OnlinePolicy {
  std::string_view content_type;
  size_t head;             // first lines kept (§5.2: 2, §5.16: 3)
  size_t tail;             // last lines kept at end of input
  PatternKind pattern;     // the keep pattern of the batch compressor
  bool clean_terminal;     // §5.16 CR redraw and ANSI deletion before everything else
  bool elide;              // false: only identical runs collapse (repetition)
  bool template_grouping;  // Drain-style templates as in the batch compressors
  bool field_summary;      // §4.4 log fields in run markers
  bool note;               // §4.6 contract note at the end
  bool crlf_markers;       // synthesized lines follow the input's line ending
};

constexpr OnlinePolicy kPolicies[] = {
    {"log", 2, 2, PatternKind::kLog, false, true, true, true, true, true},
    {"terminal", 3, 3, PatternKind::kTerminal, true, true, true, false, false, true},
    // §5.15: every line is written; runs of ≥ 3 identical lines become one marker (no CR).
    {"repetition", 0, 0, PatternKind::kNone, false, false, false, false, false, false},
};

const OnlinePolicy* FindPolicy(std::string_view content_type) {
  for (const OnlinePolicy& p : kPolicies) {
    if (p.content_type == content_type) return &p;
  }
  return nullptr;
}

// Field names that carry a structured log line's level and message (JSON Lines: zap, logrus,
// bunyan, slog, `go test -json`'s Action/Output).
constexpr std::string_view kLevelNames[] = {"level", "lvl", "severity", "loglevel", "log.level", "action"};
constexpr std::string_view kMessageNames[] = {"msg", "message", "event", "text", "output"};

template <size_t N>
bool NameIn(std::string_view name, const std::string_view (&names)[N]) {
  for (std::string_view n : names) {
    if (internal::EqualsAsciiIgnoreCase(name, n)) return true;
  }
  return false;
}

// A dropped line held back because it may turn out to be one of the last `tail` lines.
struct Held {
  std::string text;  // as it would be written (cleaned for terminal)
  uint64_t begin = 0;
  uint64_t end = 0;
  bool rewritten = false;  // text differs from the input bytes
  bool template_drop = false;
  uint32_t tid = TemplateMiner::kNoTemplate;
};

class LineStage final : public OnlineStage {
 public:
  LineStage(const OnlinePolicy& policy, std::string_view query)
      : policy_(policy),
        bm25_(query),
        use_query_(!query.empty() && bm25_.has_terms()),
        kept_templates_(internal::TemplateMinerOptions().max_clusters, false) {}

  void PushLines(std::string_view block, uint64_t offset, OnlineSink& out) override {
    out_ = &out;
    if (policy_.pattern == PatternKind::kLog) matcher_.ScanBlock(block);
    size_t pos = 0;
    while (pos < block.size()) {
      const char* nl = static_cast<const char*>(std::memchr(block.data() + pos, '\n', block.size() - pos));
      const size_t end = nl != nullptr ? static_cast<size_t>(nl - block.data()) : block.size();
      OnLine(block.substr(pos, end - pos), pos, offset + pos, offset + end + 1);
      pos = end + 1;
    }
  }

  void Tick(OnlineSink& out) override {
    out_ = &out;
    CloseRepeats();
    if (run_.count() > 0 && run_.Marker().has_value()) FlushRun();
  }

  void Barrier(uint64_t lines, OnlineSink& out) override {
    out_ = &out;
    CloseRepeats();
    FlushHeld();
    elements_ += lines;
    have_prev_ = false;
  }

  void Finish(std::string_view last, uint64_t offset, bool output_open, OnlineSink& out) override {
    out_ = &out;
    finishing_ = true;
    if (!last.empty()) {
      if (policy_.pattern == PatternKind::kLog) matcher_.ScanBlock(last);
      OnLine(last, 0, offset, offset + last.size());
    }
    CloseRepeats();
    FlushRun();
    for (Held& h : held_) EmitLine(std::move(h.text), h.begin, h.end, 1, h.rewritten);
    held_.clear();
    if (policy_.note && elided_bytes_ >= internal::kNoteMinElidedBytes && !saw_note_prefix_) {
      EmitLine(Synthesized(internal::ContractNote("lines")), last_end_, last_end_, 0, false);
    }
    const bool trailing = last.empty() && !output_open;
    for (size_t i = 0; i < final_.size(); ++i) {
      OnlineEvent& e = final_[i];
      std::string bytes;
      if (i == 0 && output_open) bytes += '\n';
      bytes += e.bytes;
      if (i + 1 < final_.size() || trailing) bytes += '\n';
      e.bytes = std::move(bytes);
      out.Emit(std::move(e));
    }
    final_.clear();
  }

  bool lossy() const override { return lossy_; }

 private:
  void OnLine(std::string_view raw, size_t pos_in_block, uint64_t begin, uint64_t end) {
    last_end_ = end;
    if (!saw_note_prefix_ && std::memchr(raw.data(), '\xE2', raw.size()) != nullptr) {
      saw_note_prefix_ = internal::Contains(raw, internal::kNotePrefix);
    }
    if (policy_.crlf_markers) crlf_ = !raw.empty() && raw.back() == '\r';
    std::string cleaned;
    std::string_view view = raw;
    // A line with ill-formed UTF-8 is not terminal text (batch terminal declines such input,
    // §5.16): its CR and ESC bytes are data, and "resolving" them dropped a binary input's bytes
    // without a marker. It is kept as it came.
    if (policy_.clean_terminal && internal::IsValidUtf8(raw)) {
      cleaned = CleanTerminalLine(raw);
      view = cleaned;
    }
    const bool rewritten = view.size() != raw.size() || view != raw;
    bool pattern = false, caveman = false;
    switch (policy_.pattern) {
      case PatternKind::kLog: matcher_.Classify(raw, pos_in_block, &pattern, &caveman); break;
      case PatternKind::kTerminal:
        pattern = TerminalKeepPattern(view);
        caveman = internal::Contains(view, "caveman");
        break;
      case PatternKind::kNone: caveman = internal::StartsWith(view, internal::kRepeatPrefix); break;
    }
    const bool repeat_prefix = caveman && internal::StartsWith(view, internal::kRepeatPrefix);
    const bool git_header = policy_.pattern == PatternKind::kLog && git_.Feed(raw);
    // Identical repeats of a kept line (§5.15; TRIM non-empty, not a `… caveman: ` line).
    if (have_prev_ && prev_kept_ && !repeat_prefix && view == prev_ && !internal::Trim(view).empty()) {
      if (repeat_count_ == 0) repeat_begin_ = begin;
      ++repeat_count_;
      repeat_end_ = end;
      return;
    }
    CloseRepeats();
    const uint64_t index = elements_++;
    const bool marker_like =
        caveman && (internal::IsLogMarkerLine(view) || internal::IsLogNoteLine(view) || repeat_prefix);
    const bool forced =
        !policy_.elide || index < policy_.head || marker_like || pattern || git_header || QueryHit(view);
    uint32_t tid = TemplateMiner::kNoTemplate;
    if (policy_.elide && policy_.template_grouping) {
      std::string text;
      tid = miner_.Add(TemplateText(view, &text));
    }
    bool keep = forced;
    bool template_drop = false;
    if (policy_.elide) {
      if (forced) {
        guard_.AddKept(internal::ComputeProfile(view));
        MarkTemplate(tid);
      } else if (tid != TemplateMiner::kNoTemplate && kept_templates_[tid]) {
        // A kept line of the same template represents this one (template grouping).
        template_drop = !guard_.Represents(internal::ComputeProfile(view));
      } else {
        keep = guard_.TestAndLearn(internal::ComputeProfile(view));
        if (keep) MarkTemplate(tid);
      }
    }
    have_prev_ = true;
    prev_.assign(view);
    prev_kept_ = keep;
    prev_rewritten_ = rewritten;
    if (keep) {
      FlushHeld();
      EmitLine(std::string(view), begin, end, 1, rewritten);
      return;
    }
    held_.push_back(Held{std::string(view), begin, end, rewritten, template_drop, tid});
    if (held_.size() > policy_.tail) {
      AddToRun(held_.front());
      held_.pop_front();
    }
  }

  bool QueryHit(std::string_view line) {
    if (!use_query_) return false;
    bm25_.AddDocument(line);
    return bm25_.Score(line) > 0;
  }

  // The text templates are mined from: a JSON Lines object's level and message fields (so
  // lines differing only in timestamps, ids and other fields share a template), else the line.
  std::string_view TemplateText(std::string_view line, std::string* buf) {
    if (policy_.pattern != PatternKind::kLog) return line;
    std::string_view t = internal::Trim(line);
    if (t.size() < 2 || t.front() != '{' || t.back() != '}') return line;
    internal::LogLineFields(line, &scratch_, &fields_);
    std::string_view level, message;
    for (const internal::Field& f : fields_) {
      if (level.empty() && NameIn(f.name, kLevelNames)) level = f.value;
      if (message.empty() && NameIn(f.name, kMessageNames)) message = f.value;
    }
    if (level.empty() && message.empty()) return line;
    buf->assign(level);
    buf->push_back(' ');
    buf->append(message);
    return *buf;
  }

  void MarkTemplate(uint32_t tid) {
    if (tid != TemplateMiner::kNoTemplate && tid < kept_templates_.size()) kept_templates_[tid] = true;
  }

  std::string Synthesized(std::string_view text) const { return internal::SynthesizedLine(text, crlf_); }

  void EmitLine(std::string text, uint64_t begin, uint64_t end, uint64_t lines, bool lossy) {
    lossy_ = lossy_ || lossy;
    OnlineEvent e{std::move(text), begin, end, lines, lossy};
    if (finishing_) {
      final_.push_back(std::move(e));
      return;
    }
    e.bytes.push_back('\n');
    out_->Emit(std::move(e));
  }

  void CloseRepeats() {
    if (repeat_count_ == 0) return;
    if (repeat_count_ + 1 >= internal::kAlwaysElideCount) {
      EmitLine(internal::RepeatMarker(repeat_count_, crlf_), repeat_begin_, repeat_end_, repeat_count_, true);
    } else {
      for (uint64_t k = 0; k < repeat_count_; ++k) {
        EmitLine(prev_, k == 0 ? repeat_begin_ : repeat_end_, repeat_end_, k == 0 ? repeat_count_ : 0, prev_rewritten_);
      }
    }
    repeat_count_ = 0;
  }

  void AddToRun(const Held& h) {
    if (run_.count() == 0) {
      run_begin_ = h.begin;
      run_rewritten_ = false;
      run_ranges_.clear();
    }
    if (run_.count() < internal::kAlwaysElideCount) run_ranges_.push_back({h.begin, h.end});
    run_end_ = h.end;
    run_rewritten_ = run_rewritten_ || h.rewritten;
    fields_.clear();
    if (policy_.field_summary) internal::LogLineFields(h.text, &scratch_, &fields_);
    const internal::FieldList* group = nullptr;
    if (policy_.template_grouping) {
      group = &fields_;
      if (fields_.empty() && h.tid != TemplateMiner::kNoTemplate) {
        internal::TemplateFields(h.text, h.tid, miner_, &tokens_, &template_fields_);
        group = &template_fields_;
      }
    }
    run_.Add(h.text, 1, h.template_drop, fields_, group);
  }

  void FlushRun() {
    if (run_.count() == 0) return;
    if (std::optional<std::string> marker = run_.Marker()) {
      EmitLine(Synthesized(*marker), run_begin_, run_end_, run_.count(), true);
      elided_bytes_ += run_.bytes();
    } else {
      // Shorter than a marker is worth: the run's lines verbatim.
      const std::vector<std::string>& lines = run_.lines();
      for (size_t k = 0; k < lines.size(); ++k) {
        EmitLine(lines[k], run_ranges_[k].first, run_ranges_[k].second, 1, run_rewritten_);
      }
    }
    run_.Reset();
  }

  // Held lines join the run (they were not the tail after all), then the run is written.
  void FlushHeld() {
    for (const Held& h : held_) AddToRun(h);
    held_.clear();
    FlushRun();
  }

  const OnlinePolicy& policy_;
  internal::KeepMatcher matcher_;
  internal::GitHistoryTracker git_;
  internal::Bm25Index bm25_;
  const bool use_query_;
  internal::OnlineGuard guard_;
  TemplateMiner miner_;
  std::vector<bool> kept_templates_;
  internal::FieldScratch scratch_;
  internal::FieldList fields_;
  internal::FieldList template_fields_;
  std::vector<std::string_view> tokens_;

  OnlineSink* out_ = nullptr;  // the sink of the current call
  uint64_t elements_ = 0;
  bool crlf_ = false;
  bool saw_note_prefix_ = false;
  uint64_t elided_bytes_ = 0;
  uint64_t last_end_ = 0;
  bool lossy_ = false;

  // The last line written or dropped, for identical-run collapsing.
  bool have_prev_ = false;
  bool prev_kept_ = false;
  bool prev_rewritten_ = false;
  std::string prev_;
  uint64_t repeat_count_ = 0;  // repeats of prev_ (a kept line) not yet written
  uint64_t repeat_begin_ = 0;
  uint64_t repeat_end_ = 0;

  std::deque<Held> held_;  // ≤ tail dropped lines, newest last
  internal::DroppedRun run_;
  uint64_t run_begin_ = 0;
  uint64_t run_end_ = 0;
  bool run_rewritten_ = false;
  std::vector<std::pair<uint64_t, uint64_t>> run_ranges_;  // input of the first lines of the run

  bool finishing_ = false;
  std::vector<OnlineEvent> final_;  // Finish(): written at the end with the trailing-LF rule
};

}  // namespace

bool IsOnlineContentType(std::string_view content_type) { return FindPolicy(content_type) != nullptr; }

std::unique_ptr<OnlineStage> NewOnlineStage(std::string_view content_type, std::string_view query) {
  const OnlinePolicy* p = FindPolicy(content_type);
  if (p == nullptr) return nullptr;
  return std::make_unique<LineStage>(*p, query);
}

}  // namespace caveman
