#include "compressors/log.h"

#include <string.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compressors/internal/bm25.h"
#include "compressors/elision.h"
#include "compressors/internal/invariants.h"
#include "compressors/lines.h"
#include "compressors/log_rules.h"
#include "compressors/internal/redundancy.h"
#include "compressors/internal/templates.h"
#include "compressors/text_util.h"
#include "compressors/repetition.h"
#include "stream/bits.h"
#include "stream/line_splitter.h"
#include "stream/spool.h"

namespace caveman {
namespace {

constexpr size_t kHead = 2;
constexpr size_t kTailBudget = 2;
constexpr size_t kMinLines = 4;
constexpr size_t kQueryLimit = 16;
constexpr double kQueryThreshold = 0.30;
using internal::IsLogMarkerLine;
using internal::IsLogNoteLine;
using internal::KeepMatcher;
using internal::kEllipsis;
using internal::kLogMarkerText;
using internal::kRepeatPrefix;
using internal::RepeatMarker;

struct LineInfo {
  bool pattern = false;         // matches the keep pattern
  bool marker_or_note = false;  // a marker or note line (always kept, not a tail line)
  bool note_prefix = false;     // contains the note prefix anywhere
  bool repeat_prefix = false;   // starts with `… caveman: ` (never collapsed)
  bool git_header = false;      // a git history header line (GitHistoryTracker): always kept
  bool terminated = false;      // an LF follows the line
  uint64_t offset = 0;          // of the line's first byte in the body (of a run: its first line's)
};

// Per-line classification bits: computed once (pass 1, Hyperscan) and replayed by the later
// passes, which then need no pattern scan.
constexpr uint8_t kPatternBit = 1;
constexpr uint8_t kMarkerOrNoteBit = 2;
constexpr uint8_t kNotePrefixBit = 4;
constexpr uint8_t kRepeatPrefixBit = 8;
constexpr uint8_t kGitHeaderBit = 16;

// A sequence of bytes written once and replayed in order from the start, in a spool (memory
// ≤ 1 MiB + 64 KiB; the rest spills to a 0600 temporary file), so memory does not grow with
// the number of lines. Holds pass 1's classification bits (one byte per line), its template
// ids (two bytes per element) and its forced elements (LogRun::KeptAt: 24 bytes each).
class ByteLog {
 public:
  static constexpr size_t kBuffer = 64 * 1024;
  void Append(uint8_t f) {
    pending_.push_back(static_cast<char>(f));
    if (pending_.size() >= kBuffer) Flush();
  }
  void AppendU64(uint64_t v) {
    internal::AppendLe64(v, &pending_);
    if (pending_.size() >= kBuffer) Flush();
  }
  Status Finish() {
    Flush();
    return status_;
  }

  // Replays the bytes from the first on. Errors end in status().
  class Reader {
   public:
    explicit Reader(const ByteLog& log) : log_(log) {}
    uint8_t Next() {
      if (pos_ == buf_.size()) {
        buf_.clear();
        pos_ = 0;
        if (status_.ok()) status_ = log_.spool_.ReadRange(offset_, kBuffer, &buf_);
        offset_ += buf_.size();
        if (buf_.empty()) {
          if (status_.ok()) status_ = Status::Internal("log: replayed bytes out of step");
          return 0;
        }
      }
      return static_cast<uint8_t>(buf_[pos_++]);
    }
    uint64_t NextU64() {  // little-endian, as AppendU64 wrote it
      uint64_t v = 0;
      if (buf_.size() - pos_ >= 8) {
        v = internal::LoadLe64(buf_.data() + pos_);
        pos_ += 8;
        return v;
      }
      for (int i = 0; i < 8; ++i) v |= uint64_t{Next()} << (8 * i);
      return v;
    }
    const Status& status() const { return status_; }

   private:
    const ByteLog& log_;
    std::string buf_;
    size_t pos_ = 0;
    uint64_t offset_ = 0;
    Status status_;
  };

 private:
  void Flush() {
    if (status_.ok() && !pending_.empty()) status_ = spool_.Write(pending_);
    pending_.clear();
  }
  Spool spool_{SpoolOptions{.memory_limit = 1 << 20}};
  std::string pending_;
  Status status_;
};

using LineFlags = ByteLog;

// Pass 1's template id of every element, replayed by passes 2 and 4 instead of mining the
// lines again (the miner is deterministic, so a replay would give the same ids; storing them
// halves the mining work: issue 19). Ids are < max_clusters ≤ 65,535 and kept in two bytes,
// 0xFFFF standing for kNoTemplate.
class TemplateIdLog {
 public:
  static constexpr uint16_t kNone = 0xFFFF;
  static_assert(internal::TemplateMinerOptions{}.max_clusters < kNone, "template ids fit in two bytes");
  void Append(uint32_t id) {
    const uint16_t v = id == internal::TemplateMiner::kNoTemplate ? kNone : static_cast<uint16_t>(id);
    log_.Append(static_cast<uint8_t>(v & 0xFF));
    log_.Append(static_cast<uint8_t>(v >> 8));
  }
  Status Finish() { return log_.Finish(); }

  class Reader {
   public:
    explicit Reader(const TemplateIdLog& ids) : reader_(ids.log_) {}
    uint32_t Next() {
      const uint16_t lo = reader_.Next();
      const uint16_t v = static_cast<uint16_t>(lo | (reader_.Next() << 8));
      return v == kNone ? internal::TemplateMiner::kNoTemplate : v;
    }
    const Status& status() const { return reader_.status(); }

   private:
    ByteLog::Reader reader_;
  };

 private:
  ByteLog log_;
};

// Pass 1 classifier: Hyperscan over each block, bits recorded into `record`.
class LiveClassifier {
 public:
  LiveClassifier(KeepMatcher* matcher, LineFlags* record) : matcher_(matcher), record_(record) {}
  void ScanBlock(std::string_view block) { matcher_->ScanBlock(block); }
  uint8_t Classify(std::string_view line, size_t begin) {
    bool pattern = false, caveman = false;
    matcher_->Classify(line, begin, &pattern, &caveman);
    uint8_t f = pattern ? kPatternBit : 0;
    if (git_.Feed(line)) f |= kGitHeaderBit;
    if (caveman) {  // marker and note lines both contain "caveman"
      if (IsLogMarkerLine(line) || IsLogNoteLine(line)) f |= kMarkerOrNoteBit;
      if (internal::Contains(line, internal::kNotePrefix)) f |= kNotePrefixBit;
      if (internal::StartsWith(line, kRepeatPrefix)) f |= kRepeatPrefixBit;
    }
    record_->Append(f);
    return f;
  }

 private:
  KeepMatcher* matcher_;
  LineFlags* record_;
  internal::GitHistoryTracker git_;
};

// Later passes: the bits of pass 1, line by line.
class ReplayClassifier {
 public:
  explicit ReplayClassifier(const LineFlags& flags) : reader_(flags) {}
  void ScanBlock(std::string_view) {}
  uint8_t Classify(std::string_view, size_t) { return reader_.Next(); }
  const Status& status() const { return reader_.status(); }

 private:
  LineFlags::Reader reader_;
};

// The read buffer of ScanLines, kept by a LogRun across its passes: one allocation instead of
// one per pass (each a fresh mapping of read_size bytes, faulted in again; issue 19).
struct ScanBuffer {
  std::unique_ptr<char[]> data;
  size_t cap = 0;
};

// Reads `body` in `read_size` pieces, calls on_chunk(chunk) for every piece, and
// on_line(line, index, info) for every line of the §4.1 split, in order. Lines are cut from
// blocks of whole lines (the unfinished last line is carried to the next read), and each block
// is classified once (`classifier`: Hyperscan in pass 1, replayed bits later). Returns whether
// the input ended with LF. Stops early (without error) when on_line returns false.
template <class Classifier, class ChunkFn, class LineFn>
Result<bool> ScanLines(const Body& body, size_t read_size, ScanBuffer* scratch, Classifier* classifier,
                       ChunkFn&& on_chunk, LineFn&& on_line) {
  std::unique_ptr<ByteSource> reader = body.NewReader();
  // Carried partial line + the bytes just read; grown without zero-filling.
  std::unique_ptr<char[]>& buf = scratch->data;
  size_t& cap = scratch->cap;
  size_t len = 0;
  uint64_t base = 0;  // offset in the body of buf[0]
  uint64_t index = 0;
  bool last_was_lf = false;
  auto process = [&](std::string_view block, bool final_piece) -> bool {
    classifier->ScanBlock(block);
    size_t pos = 0;
    while (pos < block.size() || final_piece) {
      const char* nl = static_cast<const char*>(std::memchr(block.data() + pos, '\n', block.size() - pos));
      const size_t end = nl ? static_cast<size_t>(nl - block.data()) : block.size();
      std::string_view line = block.substr(pos, end - pos);
      if (nl == nullptr && line.empty() && index > 0) return true;  // input ended with LF
      LineInfo info;
      info.terminated = nl != nullptr;
      info.offset = base + pos;
      const uint8_t f = classifier->Classify(line, pos);
      info.pattern = (f & kPatternBit) != 0;
      info.marker_or_note = (f & kMarkerOrNoteBit) != 0;
      info.note_prefix = (f & kNotePrefixBit) != 0;
      info.repeat_prefix = (f & kRepeatPrefixBit) != 0;
      info.git_header = (f & kGitHeaderBit) != 0;
      if (!on_line(line, index, info)) return false;
      ++index;
      if (nl == nullptr) return true;
      pos = end + 1;
    }
    return true;
  };
  while (true) {
    if (len + read_size > cap) {
      const size_t grown = std::max(len + read_size, 2 * cap);
      std::unique_ptr<char[]> bigger(new char[grown]);
      if (len > 0) std::memcpy(bigger.get(), buf.get(), len);
      buf = std::move(bigger);
      cap = grown;
    }
    CAVEMAN_ASSIGN_OR_RETURN(size_t got, reader->Read(buf.get() + len, read_size));
    if (got == 0) break;
    std::string_view fresh(buf.get() + len, got);
    len += got;
    last_was_lf = fresh.back() == '\n';
    on_chunk(fresh);
    const void* last_nl = memrchr(fresh.data(), '\n', fresh.size());
    if (last_nl == nullptr) continue;
    const size_t cut = static_cast<size_t>(static_cast<const char*>(last_nl) - buf.get()) + 1;
    if (!process(std::string_view(buf.get(), cut), false)) return last_was_lf;
    std::memmove(buf.get(), buf.get() + cut, len - cut);
    len -= cut;
    base += cut;
  }
  process(std::string_view(buf.get(), len), true);
  return last_was_lf;
}

// Identical-run collapsing (project decision beyond §5.2, docs/DECISIONS.md): the §5.2 rules
// run over *elements*, where a maximal run of ≥ 3 byte-identical consecutive lines (§5.15:
// TRIM non-empty, not starting with `… caveman: `) is one element of weight = run length and
// every other line is an element of weight 1. A kept element is emitted followed by the §5.15
// marker `… caveman: <weight−1> identical lines elided …`; a dropped one counts `weight` lines
// in its run. Memory: one copy of the current run's line (bounded by the longest line).
//
// Push() feeds raw lines in order and calls on_element(line, element_index, info, weight) for
// each finished element; an element is final only when the next different line (or Finish)
// arrives. Returns false once on_element asked to stop.
class RunCollapser {
 public:
  explicit RunCollapser(bool enabled) : enabled_(enabled) {}

  template <class Fn>
  bool Push(std::string_view line, const LineInfo& info, Fn&& on_element) {
    if (!enabled_) return on_element(line, next_index_++, info, uint64_t{1});
    if (count_ > 0 && line == pending_) {
      ++count_;
      return true;
    }
    if (!Flush(on_element)) return false;
    if (info.repeat_prefix) {
      // Never collapsed, and kept like a marker so that a second pass reproduces it.
      LineInfo marked = info;
      marked.marker_or_note = true;
      return on_element(line, next_index_++, marked, uint64_t{1});
    }
    pending_.assign(line);
    pending_info_ = info;
    count_ = 1;
    return true;
  }

  template <class Fn>
  bool Finish(Fn&& on_element) {
    return Flush(on_element);
  }

  uint64_t elements() const { return next_index_; }

 private:
  template <class Fn>
  bool Flush(Fn&& on_element) {
    const uint64_t count = count_;
    count_ = 0;
    if (count == 0) return true;
    if (count >= kRepetitionMinRun && !internal::Trim(pending_).empty()) {
      return on_element(std::string_view(pending_), next_index_++, pending_info_, count);
    }
    for (uint64_t k = 0; k < count; ++k) {
      if (!on_element(std::string_view(pending_), next_index_++, pending_info_, uint64_t{1})) {
        return false;
      }
    }
    return true;
  }

  bool enabled_;
  std::string pending_;
  LineInfo pending_info_;
  uint64_t count_ = 0;
  uint64_t next_index_ = 0;
};

// ScanLines over elements (see RunCollapser): on_element(line, index, info, weight).
template <class ElementFn>
Status ScanElements(const Body& body, size_t read_size, ScanBuffer* scratch, const LineFlags& flags, bool collapse,
                    ElementFn&& on_element) {
  RunCollapser collapser(collapse);
  ReplayClassifier replay(flags);
  bool stopped = false;
  CAVEMAN_ASSIGN_OR_RETURN(bool ignored, ScanLines(
                                             body, read_size, scratch, &replay, [](std::string_view) {},
                                             [&](std::string_view line, uint64_t, const LineInfo& info) {
                                               stopped = !collapser.Push(line, info, on_element);
                                               return !stopped;
                                             }));
  (void)ignored;
  CAVEMAN_RETURN_IF_ERROR(replay.status());
  if (!stopped) collapser.Finish(on_element);
  return Status::OK();
}

struct Candidate {
  double score;
  uint64_t index;
  uint32_t template_id;
};

class LogCompressor final : public Compressor {
 public:
  explicit LogCompressor(LogCompressorOptions options) : options_(options) {
    if (options_.read_size == 0) options_.read_size = 1;
  }
  std::string_view content_type() const override { return "log"; }
  bool query_aware() const override { return true; }

  Result<TransformOutcome> Transform(const Body& body, std::string_view query, ByteSink& out,
                                     TransformMeta* meta) const override;

 private:
  LogCompressorOptions options_;
};

// One run of the §5.2 log compressor over a body: four named passes over the lines, sharing
// what each pass learns. Pass 1 classifies every line (Hyperscan, once) and the later passes
// replay that classification from `flags_`, so the pattern engine scans the body once. The
// body is read in full by passes 1 and 4, and by pass 2 with a query; pass 3 reads its seed
// lines at their offsets, or the whole body when a query fill added kept lines.
class LogRun {
 public:
  LogRun(const Body& body, std::string_view query, const LogCompressorOptions& options)
      : body_(body),
        read_size_(options.read_size),
        seed_from_offsets_(options.seed_from_offsets),
        bm25_(query),
        use_query_(!query.empty() && bm25_.has_terms()),
        grouping_(options.template_grouping),
        collapse_(options.collapse_identical_runs),
        kept_templates_(miner_options_.max_clusters, false),
        miner1_(miner_options_) {}

  // Pass 1: validity, line count, CRLF majority, note presence, the tail start, BM25 stats and
  // the templates. False when the body must be declined (invalid UTF-8, too few lines).
  Result<bool> Survey();
  // Pass 2 (query only): the 16 best not-yet-kept lines, filtered by the threshold.
  Status QueryFill();
  // Pass 3: seed the redundancy guard's classes from the kept lines K[0], K[step], … (≤ 64),
  // read at their offsets (kept_log_) or, with a query fill, by a scan.
  Status SeedGuard();
  // Pass 4: redundancy guard, dropped runs, markers, the note; writes the view to `out`.
  Result<TransformOutcome> Emit(ByteSink& out);

 private:
  void MarkTemplate(uint32_t id) {
    if (id != internal::TemplateMiner::kNoTemplate) kept_templates_[id] = true;
  }
  // A kept element of pass 1: its index, the offset of its line in the body and its length.
  struct KeptAt {
    uint64_t idx = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
  };
  void LogKept(const KeptAt& k) {
    kept_log_.AppendU64(k.idx);
    kept_log_.AppendU64(k.offset);
    kept_log_.AppendU64(k.size);
    ++kept_logged_;
  }
  Status SeedGuardByScan(uint64_t kept_count);
  // Kept whatever the guard says: the first lines, markers and notes, pattern and git header
  // lines (known in pass 1) ...
  static bool ForcedBeforeTail(uint64_t idx, const LineInfo& info) {
    return idx < kHead || info.marker_or_note || info.pattern || info.git_header;
  }
  // ... and the tail (known after it).
  bool IsForced(uint64_t idx, const LineInfo& info) const { return ForcedBeforeTail(idx, info) || idx >= tail_start_; }
  bool InFill(uint64_t idx) const { return std::binary_search(fill_.begin(), fill_.end(), idx); }

  const Body& body_;
  const size_t read_size_;
  KeepMatcher matcher_;
  LineFlags flags_;  // pass 1's classification of every line, replayed by passes 2-4
  const bool seed_from_offsets_;
  // Pass 1's forced elements (before the tail is known: first lines, markers, notes, pattern
  // and git header lines) as KeptAt records, in order; and the two tail candidates.
  ByteLog kept_log_;
  uint64_t kept_logged_ = 0;
  KeptAt tail_at_[2];
  bool tail_forced_[2] = {false, false};
  uint64_t tail_seen_ = 0;
  ScanBuffer scan_buffer_;
  internal::Bm25Index bm25_;
  const bool use_query_;
  const bool grouping_;
  const bool collapse_;
  const internal::TemplateMinerOptions miner_options_;
  // Templates with a kept line; miner1_ holds pass 1's final (most general) templates.
  std::vector<bool> kept_templates_;
  internal::TemplateMiner miner1_;
  TemplateIdLog template_ids_;  // pass 1's id of every element (when grouping_)
  // Pass 1 results.
  bool trailing_ = false;
  bool crlf_ = false;
  bool has_note_prefix_ = false;
  uint64_t n_ = 0;  // elements (identical runs collapsed)
  uint64_t tail_start_ = 0;
  uint64_t forced_before_tail_ = 0;
  // Pass 2 result: sorted element indices added by the query fill.
  std::vector<uint64_t> fill_;
  internal::RedundancyGuard guard_;
};

Result<bool> LogRun::Survey() {
  internal::Utf8Validator utf8;
  uint64_t lf_count = 0, crlf_count = 0;  // §4.1 majority CRLF, counted per line
  uint64_t forced_total = 0;
  // The last two lines with index ≥ 2 that are neither markers nor notes, with the number of
  // forced lines before each: the tail is [t, n) with t the older of the two (§5.2 tail walk).
  uint64_t tail_idx[2] = {0, 0};
  uint64_t tail_prefix[2] = {0, 0};
  uint64_t& tail_seen = tail_seen_;
  uint32_t tail_template[2] = {internal::TemplateMiner::kNoTemplate, internal::TemplateMiner::kNoTemplate};
  uint64_t raw_lines = 0;  // §4.1 lines (the decline rule counts these, not elements)
  auto element = [&](std::string_view line, uint64_t idx, const LineInfo& info, uint64_t) {
    n_ = idx + 1;
    const bool marker_or_note = info.marker_or_note;
    const uint32_t tid = grouping_ ? miner1_.Add(line) : internal::TemplateMiner::kNoTemplate;
    if (grouping_) template_ids_.Append(tid);
    const bool forced = ForcedBeforeTail(idx, info);
    if (idx >= kHead && !marker_or_note) {
      tail_idx[0] = tail_idx[1];
      tail_prefix[0] = tail_prefix[1];
      tail_template[0] = tail_template[1];
      tail_at_[0] = tail_at_[1];
      tail_forced_[0] = tail_forced_[1];
      tail_idx[1] = idx;
      tail_prefix[1] = forced_total;
      tail_template[1] = tid;
      tail_at_[1] = KeptAt{idx, info.offset, line.size()};
      tail_forced_[1] = forced;
      ++tail_seen;
    }
    if (forced) {
      ++forced_total;
      MarkTemplate(tid);
      if (seed_from_offsets_) LogKept(KeptAt{idx, info.offset, line.size()});
    }
    if (use_query_) bm25_.AddDocument(line);
    return true;
  };
  RunCollapser collapser(collapse_);
  LiveClassifier live(&matcher_, &flags_);
  CAVEMAN_ASSIGN_OR_RETURN(
      trailing_, ScanLines(
                     body_, read_size_, &scan_buffer_, &live, [&](std::string_view chunk) { utf8.Feed(chunk); },
                     [&](std::string_view line, uint64_t, const LineInfo& info) {
                       ++raw_lines;
                       if (info.terminated) {
                         ++lf_count;
                         if (!line.empty() && line.back() == '\r') ++crlf_count;
                       }
                       has_note_prefix_ = has_note_prefix_ || info.note_prefix;
                       collapser.Push(line, info, element);
                       return utf8.valid_so_far();
                     }));
  if (!utf8.Finish() || raw_lines < kMinLines) return false;
  CAVEMAN_RETURN_IF_ERROR(flags_.Finish());
  collapser.Finish(element);
  CAVEMAN_RETURN_IF_ERROR(template_ids_.Finish());
  CAVEMAN_RETURN_IF_ERROR(kept_log_.Finish());
  static_assert(kTailBudget == 2, "tail tracking keeps exactly two positions");
  // With fewer than two tail candidates every element from index 2 on is kept.
  tail_start_ = tail_seen >= kTailBudget ? tail_idx[0] : std::min<uint64_t>(kHead, n_);
  forced_before_tail_ = tail_seen >= kTailBudget ? tail_prefix[0] : std::min<uint64_t>(kHead, n_);
  crlf_ = lf_count > 0 && crlf_count * 2 > lf_count;
  if (tail_seen >= 1) MarkTemplate(tail_template[1]);
  if (tail_seen >= 2) MarkTemplate(tail_template[0]);
  return true;
}

Status LogRun::QueryFill() {
  if (!use_query_ || bm25_.document_count() == 0) return Status::OK();
  double max_score = 0;
  std::vector<Candidate> best;  // ≤ kQueryLimit, by score desc then index asc
  auto better = [](const Candidate& a, const Candidate& b) {
    return a.score > b.score || (a.score == b.score && a.index < b.index);
  };
  TemplateIdLog::Reader ids(template_ids_);
  CAVEMAN_RETURN_IF_ERROR(ScanElements(body_, read_size_, &scan_buffer_, flags_, collapse_,
                                       [&](std::string_view line, uint64_t idx, const LineInfo& info, uint64_t) {
                                         const uint32_t tid =
                                             grouping_ ? ids.Next() : internal::TemplateMiner::kNoTemplate;
                                         const double score = bm25_.Score(line);
                                         max_score = std::max(max_score, score);
                                         if (score <= 0 || IsForced(idx, info)) return true;
                                         Candidate c{score, idx, tid};
                                         if (best.size() == kQueryLimit && !better(c, best.back())) return true;
                                         best.insert(std::upper_bound(best.begin(), best.end(), c, better), c);
                                         if (best.size() > kQueryLimit) best.pop_back();
                                         return true;
                                       }));
  CAVEMAN_RETURN_IF_ERROR(ids.status());
  if (max_score > 0) {
    for (const Candidate& c : best) {
      if (c.score / max_score >= kQueryThreshold) {
        fill_.push_back(c.index);
        MarkTemplate(c.template_id);
      }
    }
    std::sort(fill_.begin(), fill_.end());
  }
  return Status::OK();
}

Status LogRun::SeedGuard() {
  const uint64_t kept_count = forced_before_tail_ + (n_ - tail_start_) + fill_.size();
  // With fewer than two tail candidates every element is kept (the head, then the tail from
  // index kHead on), so Emit never asks the guard.
  if (tail_seen_ < kTailBudget) return Status::OK();
  // A query fill adds kept elements pass 1 did not log: read by a scan.
  if (!seed_from_offsets_ || !fill_.empty()) return SeedGuardByScan(kept_count);
  // The kept elements in order: the logged forced ones, and the tail [tail_start_, n_), whose
  // elements are forced (markers and notes: only the two tail candidates are not markers or
  // notes) except for the tail candidates that are not. So they are the logged ones merged
  // with the candidates not forced; kept_count counts the same elements.
  KeptAt extra[2];
  size_t extras = 0;
  for (size_t k = 0; k < 2; ++k) {
    if (!tail_forced_[k]) extra[extras++] = tail_at_[k];
  }
  ByteLog::Reader log(kept_log_);
  uint64_t logged_read = 0;
  std::optional<KeptAt> logged;  // the next logged element, read but not yet taken
  uint64_t last_idx = 0;
  size_t next_extra = 0;
  const uint64_t step = internal::RedundancyGuard::SeedStep(kept_count);
  std::string line;
  // A kept log that cannot be read back or is damaged: the seeds come from a scan instead,
  // as with a query fill (never a failed transform for a side record).
  auto by_scan = [&] {
    guard_ = internal::RedundancyGuard();
    return SeedGuardByScan(kept_count);
  };
  for (uint64_t ordinal = 0; ordinal < kept_count && ordinal / step < internal::kMaxSeedClasses; ++ordinal) {
    if (!logged && logged_read < kept_logged_) {
      KeptAt k;
      k.idx = log.NextU64();
      k.offset = log.NextU64();
      k.size = log.NextU64();
      // Pass 1 logged them in order, each within the body: anything else is a damaged log.
      if (!log.status().ok() || (logged_read > 0 && k.idx <= last_idx) || k.offset > body_.size() ||
          k.size > body_.size() - k.offset) {
        return by_scan();
      }
      last_idx = k.idx;
      logged = k;
      ++logged_read;
    }
    KeptAt at;
    if (next_extra < extras && (!logged || extra[next_extra].idx < logged->idx)) {
      at = extra[next_extra++];
    } else if (logged) {
      at = *logged;
      logged.reset();
    } else {
      return by_scan();  // fewer records than kept_count counts
    }
    if (!internal::RedundancyGuard::IsSeed(ordinal, kept_count)) continue;
    line.clear();
    CAVEMAN_RETURN_IF_ERROR(body_.ReadRange(at.offset, at.size, &line));
    if (line.size() != at.size) return by_scan();
    guard_.AddSeed(line);
  }
  return Status::OK();
}

Status LogRun::SeedGuardByScan(uint64_t kept_count) {
  uint64_t ordinal = 0;
  return ScanElements(body_, read_size_, &scan_buffer_, flags_, collapse_,
                      [&](std::string_view line, uint64_t idx, const LineInfo& info, uint64_t) {
                        if (!IsForced(idx, info) && !InFill(idx)) return true;
                        if (internal::RedundancyGuard::IsSeed(ordinal, kept_count)) guard_.AddSeed(line);
                        ++ordinal;
                        return guard_.seed_count() < internal::kMaxSeedClasses;
                      });
}

Result<TransformOutcome> LogRun::Emit(ByteSink& out) {
  bool first_out = true;
  Status write_status;
  auto emit = [&](std::string_view line) {
    if (!write_status.ok()) return;
    if (!first_out) write_status = out.Write("\n");
    first_out = false;
    if (write_status.ok()) write_status = out.Write(line);
  };
  uint64_t elided_total = 0;
  internal::DroppedRun run;
  internal::FieldScratch scratch;
  internal::FieldList fields;
  internal::FieldList template_fields;
  bool any_marker = false;  // a §5.2 or an identical-run marker was written
  TemplateIdLog::Reader ids(template_ids_);
  std::vector<std::string_view> tokens;
  auto flush_run = [&]() {
    if (run.count() == 0) return;
    if (std::optional<std::string> marker = run.Marker()) {
      emit(internal::SynthesizedLine(*marker, crlf_));
      elided_total += run.bytes();
      any_marker = true;
    } else {
      for (const std::string& l : run.lines()) emit(l);
    }
    run.Reset();
  };
  CAVEMAN_RETURN_IF_ERROR(
      ScanElements(body_, read_size_, &scan_buffer_, flags_, collapse_,
                   [&](std::string_view line, uint64_t idx, const LineInfo& info, uint64_t weight) {
                     const uint32_t tid = grouping_ ? ids.Next() : internal::TemplateMiner::kNoTemplate;
                     bool keep = IsForced(idx, info) || InFill(idx);
                     bool template_drop = false;
                     if (!keep) {
                       const bool template_kept = tid != internal::TemplateMiner::kNoTemplate && kept_templates_[tid];
                       if (!template_kept) {
                         keep = guard_.Test(line);
                         if (keep && tid != internal::TemplateMiner::kNoTemplate) kept_templates_[tid] = true;
                       } else if (guard_.promotions() >= internal::kMaxPromotions) {
                         template_drop = true;  // §4.2 would keep it (document mode); its template is shown
                       } else {
                         internal::Profile p = internal::ComputeProfile(line);
                         // Template grouping: a kept line of the same template represents this one.
                         template_drop = !guard_.Represents(p);
                       }
                     }
                     if (keep) {
                       flush_run();
                       emit(line);
                       if (weight > 1) {
                         emit(RepeatMarker(weight - 1, crlf_));
                         any_marker = true;
                       }
                       return write_status.ok();
                     }
                     // A dropped element stands for `weight` identical lines of the run.
                     internal::LogLineFields(line, &scratch, &fields);
                     const internal::FieldList* group_fields = nullptr;
                     if (grouping_) {
                       group_fields = &fields;
                       if (fields.empty() && tid != internal::TemplateMiner::kNoTemplate) {
                         // The id is pass 1's; miner1 holds the final (most general) templates,
                         // whose wildcards cover every line of the cluster.
                         internal::TemplateFields(line, tid, miner1_, &tokens, &template_fields);
                         group_fields = &template_fields;
                       }
                     }
                     run.Add(line, weight, template_drop, fields, group_fields);
                     return true;
                   }));
  flush_run();
  CAVEMAN_RETURN_IF_ERROR(write_status);
  CAVEMAN_RETURN_IF_ERROR(ids.status());
  if (!any_marker) return TransformOutcome::kDeclined;  // output would equal the input
  if (elided_total >= internal::kNoteMinElidedBytes && !has_note_prefix_) {
    emit(internal::SynthesizedLine(internal::ContractNote("lines"), crlf_));
  }
  if (trailing_ && write_status.ok()) write_status = out.Write("\n");
  CAVEMAN_RETURN_IF_ERROR(write_status);
  return TransformOutcome::kAccepted;
}

Result<TransformOutcome> LogCompressor::Transform(const Body& body, std::string_view query, ByteSink& out,
                                                  TransformMeta*) const {
  LogRun run(body, query, options_);
  CAVEMAN_ASSIGN_OR_RETURN(bool accepted, run.Survey());
  if (!accepted) return TransformOutcome::kDeclined;
  CAVEMAN_RETURN_IF_ERROR(run.QueryFill());
  CAVEMAN_RETURN_IF_ERROR(run.SeedGuard());
  return run.Emit(out);
}

}  // namespace

std::unique_ptr<Compressor> NewLogCompressor(LogCompressorOptions options) {
  return std::make_unique<LogCompressor>(options);
}

}  // namespace caveman
