#include "compressors/log.h"

#include <hs/hs.h>
#include <re2/re2.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "compressors/internal/bm25.h"
#include "compressors/internal/elision.h"
#include "compressors/internal/invariants.h"
#include "compressors/internal/lines.h"
#include "compressors/internal/redundancy.h"
#include "compressors/internal/text_util.h"
#include "stream/line_splitter.h"

namespace caveman {
namespace {

constexpr size_t kHead = 2;
constexpr size_t kTailBudget = 2;
constexpr size_t kMinLines = 4;
constexpr size_t kQueryLimit = 16;
constexpr double kQueryThreshold = 0.30;
constexpr std::string_view kMarkerText = "lines elided (caveman)";
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";

// The §5.2 keep pattern, in RE2 syntax (authoritative).
constexpr const char* kKeepPatternRe2 =
    R"((?i)(\b(ERROR|FATAL|PANIC|EXCEPTION|TRACEBACK|FAIL|FAILED|FAILURE|WARN|WARNING)\b|^\s+at\s|^\s+File "|\.go:\d+|^\s+--->|caused by))";
// The same for Hyperscan, which runs per line in block mode: `\s` spelled as RE2's class
// (Hyperscan's `\s` also matches VT), and ASCII case folding. RE2's (?i) additionally folds
// k/K with U+212A KELVIN SIGN and s/S with U+017F LONG S; lines containing either are
// re-checked with RE2 (KeepsLinesWithKelvinSign in log_test).
constexpr const char* kKeepPatternHs =
    R"(\b(ERROR|FATAL|PANIC|EXCEPTION|TRACEBACK|FAIL|FAILED|FAILURE|WARN|WARNING)\b|^[\t\n\f\r ]+at[\t\n\f\r ]|^[\t\n\f\r ]+File "|\.go:[0-9]+|^[\t\n\f\r ]+--->|caused by)";

const RE2& KeepPatternRe2() {
  static const RE2* re = new RE2(kKeepPatternRe2);
  return *re;
}

// Immutable compiled database, built once per process.
const hs_database_t* KeepDatabase() {
  static const hs_database_t* db = [] {
    hs_database_t* d = nullptr;
    hs_compile_error_t* err = nullptr;
    if (hs_compile(kKeepPatternHs, HS_FLAG_CASELESS | HS_FLAG_SINGLEMATCH, HS_MODE_BLOCK,
                   nullptr, &d, &err) != HS_SUCCESS) {
      hs_free_compile_error(err);
      return static_cast<hs_database_t*>(nullptr);
    }
    return d;
  }();
  return db;
}

int OnKeepMatch(unsigned int, unsigned long long, unsigned long long, unsigned int, void* ctx) {
  *static_cast<bool*>(ctx) = true;
  return 1;  // presence is enough: stop scanning (HS_SCAN_TERMINATED is not an error)
}

// Per-call matcher state: Hyperscan scratch (or the RE2 fallback if Hyperscan is unusable).
class KeepMatcher {
 public:
  KeepMatcher() {
    db_ = KeepDatabase();
    if (db_ != nullptr && hs_alloc_scratch(db_, &scratch_) != HS_SUCCESS) db_ = nullptr;
  }
  ~KeepMatcher() {
    if (scratch_ != nullptr) hs_free_scratch(scratch_);
  }
  KeepMatcher(const KeepMatcher&) = delete;
  KeepMatcher& operator=(const KeepMatcher&) = delete;

  bool Matches(std::string_view line) {
    if (db_ == nullptr || NeedsUnicodeFolding(line)) {
      return RE2::PartialMatch(line, KeepPatternRe2());
    }
    bool hit = false;
    hs_scan(db_, line.data(), static_cast<unsigned int>(line.size()), 0, scratch_, OnKeepMatch,
            &hit);
    return hit;
  }

 private:
  static bool NeedsUnicodeFolding(std::string_view line) {
    for (size_t i = 0; i + 1 < line.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(line[i]);
      if (c == 0xC5 && static_cast<unsigned char>(line[i + 1]) == 0xBF) return true;
      if (c == 0xE2 && i + 2 < line.size() && static_cast<unsigned char>(line[i + 1]) == 0x84 &&
          static_cast<unsigned char>(line[i + 2]) == 0xAA) {
        return true;
      }
    }
    return false;
  }
  const hs_database_t* db_ = nullptr;
  hs_scratch_t* scratch_ = nullptr;
};

bool IsMarkerLine(std::string_view line) { return internal::Contains(line, kMarkerText); }
bool IsNoteLine(std::string_view line) { return internal::StartsWith(line, internal::kNotePrefix); }

// Reads `body` in `read_size` pieces and calls on_chunk(chunk) for every piece and
// on_line(line, index) for every line of the §4.1 split. Returns whether the input ended
// with LF (the "trailing" state). Stops early (without error) when on_line returns false.
template <class ChunkFn, class LineFn>
Result<bool> ScanLines(const Body& body, size_t read_size, ChunkFn&& on_chunk, LineFn&& on_line) {
  std::unique_ptr<ByteSource> reader = body.NewReader();
  std::string buf(read_size, '\0');
  LineSplitter splitter;
  uint64_t index = 0;
  bool go = true;
  auto deliver = [&](std::string_view piece, bool terminated) {
    if (!go) return;
    if (!terminated && index > 0 && piece.empty()) return;  // the input ended with LF
    go = on_line(piece, index);
    ++index;
  };
  bool last_was_lf = false;
  while (go) {
    CAVEMAN_ASSIGN_OR_RETURN(size_t got, reader->Read(buf.data(), buf.size()));
    if (got == 0) break;
    std::string_view chunk(buf.data(), got);
    last_was_lf = chunk.back() == '\n';
    on_chunk(chunk);
    splitter.Push(chunk, deliver);
  }
  if (go) splitter.Finish(deliver);
  return last_was_lf;
}

struct Candidate {
  double score;
  uint64_t index;
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

Result<TransformOutcome> LogCompressor::Transform(const Body& body, std::string_view query,
                                                  ByteSink& out, TransformMeta*) const {
  const size_t read_size = options_.read_size;
  KeepMatcher matcher;
  auto no_chunk = [](std::string_view) {};

  // ---- Pass 1: validity, line count, CRLF majority, note presence, tail start, BM25 stats.
  internal::Utf8Validator utf8;
  internal::CrlfCounter crlf_counter;
  internal::Bm25Index bm25(query);
  const bool use_query = !query.empty() && bm25.has_terms();
  bool has_note_prefix = false;
  uint64_t n = 0;
  uint64_t forced_total = 0;
  // The last two lines with index ≥ 2 that are neither markers nor notes, with the number of
  // forced lines before each: the tail is [t, n) with t the older of the two (§5.2 tail walk).
  uint64_t tail_idx[2] = {0, 0};
  uint64_t tail_prefix[2] = {0, 0};
  uint64_t tail_seen = 0;
  CAVEMAN_ASSIGN_OR_RETURN(
      bool trailing,
      ScanLines(
          body, read_size,
          [&](std::string_view chunk) {
            utf8.Feed(chunk);
            crlf_counter.Feed(chunk);
          },
          [&](std::string_view line, uint64_t idx) {
            n = idx + 1;
            if (!has_note_prefix && internal::Contains(line, internal::kNotePrefix)) {
              has_note_prefix = true;
            }
            const bool marker_or_note = IsMarkerLine(line) || IsNoteLine(line);
            if (idx >= kHead && !marker_or_note) {
              tail_idx[0] = tail_idx[1];
              tail_prefix[0] = tail_prefix[1];
              tail_idx[1] = idx;
              tail_prefix[1] = forced_total;
              ++tail_seen;
            }
            if (idx < kHead || marker_or_note || matcher.Matches(line)) ++forced_total;
            if (use_query) bm25.AddDocument(line);
            return utf8.valid_so_far();
          }));
  if (!utf8.Finish() || n < kMinLines) return TransformOutcome::kDeclined;
  static_assert(kTailBudget == 2, "tail tracking keeps exactly two positions");
  const uint64_t tail_start = tail_seen >= kTailBudget ? tail_idx[0] : kHead;
  const uint64_t forced_before_tail = tail_seen >= kTailBudget ? tail_prefix[0] : kHead;
  const bool crlf = crlf_counter.majority_crlf();
  auto is_forced = [&](std::string_view line, uint64_t idx) {
    return idx < kHead || idx >= tail_start || IsMarkerLine(line) || IsNoteLine(line) ||
           matcher.Matches(line);
  };

  // ---- Pass 2 (query only): the 16 best not-yet-kept lines, filtered by the threshold.
  std::vector<uint64_t> fill;  // sorted line indices added by the query fill
  if (use_query && bm25.document_count() > 0) {
    double max_score = 0;
    std::vector<Candidate> best;  // ≤ kQueryLimit, by score desc then index asc
    auto better = [](const Candidate& a, const Candidate& b) {
      return a.score > b.score || (a.score == b.score && a.index < b.index);
    };
    CAVEMAN_ASSIGN_OR_RETURN(
        bool ignored, ScanLines(body, read_size, no_chunk, [&](std::string_view line, uint64_t idx) {
          const double score = bm25.Score(line);
          max_score = std::max(max_score, score);
          if (score <= 0 || is_forced(line, idx)) return true;
          Candidate c{score, idx};
          if (best.size() == kQueryLimit && !better(c, best.back())) return true;
          best.insert(std::upper_bound(best.begin(), best.end(), c, better), c);
          if (best.size() > kQueryLimit) best.pop_back();
          return true;
        }));
    (void)ignored;
    if (max_score > 0) {
      for (const Candidate& c : best) {
        if (c.score / max_score >= kQueryThreshold) fill.push_back(c.index);
      }
      std::sort(fill.begin(), fill.end());
    }
  }
  auto in_fill = [&](uint64_t idx) { return std::binary_search(fill.begin(), fill.end(), idx); };
  const uint64_t kept_count = forced_before_tail + (n - tail_start) + fill.size();

  // ---- Pass 3: seed classes from the kept lines K[0], K[step], … (≤ 64).
  internal::RedundancyGuard guard;
  {
    uint64_t ordinal = 0;
    CAVEMAN_ASSIGN_OR_RETURN(
        bool ignored, ScanLines(body, read_size, no_chunk, [&](std::string_view line, uint64_t idx) {
          if (!is_forced(line, idx) && !in_fill(idx)) return true;
          if (internal::RedundancyGuard::IsSeed(ordinal, kept_count)) guard.AddSeed(line);
          ++ordinal;
          return guard.seed_count() < internal::kMaxSeedClasses;
        }));
    (void)ignored;
  }

  // ---- Pass 4: redundancy guard, runs, markers, emit.
  bool first_out = true;
  Status write_status;
  auto emit = [&](std::string_view line) {
    if (!write_status.ok()) return;
    if (!first_out) write_status = out.Write("\n");
    first_out = false;
    if (write_status.ok()) write_status = out.Write(line);
  };
  uint64_t elided_total = 0;
  uint64_t run_count = 0;
  uint64_t run_bytes = 0;
  std::vector<std::string> run_lines;  // buffered while the run may still be emitted verbatim
  internal::InvariantAccumulator acc;
  internal::FieldScratch scratch;
  internal::FieldList fields;
  bool any_marker = false;
  auto flush_run = [&]() {
    if (run_count == 0) return;
    const std::string summary = acc.Render(static_cast<int64_t>(run_bytes));
    std::string marker = std::string(kEllipsis) + " " + std::to_string(run_count) + " " +
                         std::string(kMarkerText);
    if (!summary.empty()) marker += ": " + summary;
    marker += " " + std::string(kEllipsis);
    if (internal::WorthEliding(run_count, marker.size(), run_bytes, summary)) {
      emit(internal::SynthesizedLine(marker, crlf));
      elided_total += run_bytes;
      any_marker = true;
    } else {
      for (const std::string& l : run_lines) emit(l);
    }
    run_count = 0;
    run_bytes = 0;
    run_lines.clear();
    acc.Reset();
  };
  CAVEMAN_ASSIGN_OR_RETURN(
      bool ignored, ScanLines(body, read_size, no_chunk, [&](std::string_view line, uint64_t idx) {
        bool keep = is_forced(line, idx) || in_fill(idx) || guard.Test(line);
        if (keep) {
          flush_run();
          emit(line);
          return write_status.ok();
        }
        ++run_count;
        run_bytes += line.size() + 1;
        if (run_count < internal::kAlwaysElideCount) {
          run_lines.emplace_back(line);
        } else {
          run_lines.clear();
        }
        internal::LogLineFields(line, &scratch, &fields);
        acc.Add(fields);
        return true;
      }));
  (void)ignored;
  flush_run();
  CAVEMAN_RETURN_IF_ERROR(write_status);
  if (!any_marker) return TransformOutcome::kDeclined;  // output would equal the input
  if (elided_total >= internal::kNoteMinElidedBytes && !has_note_prefix) {
    emit(internal::SynthesizedLine(internal::ContractNote("lines"), crlf));
  }
  if (trailing && write_status.ok()) write_status = out.Write("\n");
  CAVEMAN_RETURN_IF_ERROR(write_status);
  return TransformOutcome::kAccepted;
}

}  // namespace

std::unique_ptr<Compressor> NewLogCompressor(LogCompressorOptions options) {
  return std::make_unique<LogCompressor>(options);
}

}  // namespace caveman
