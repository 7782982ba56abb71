// Rules the log compressor's batch pass and the follow mode's online log stage share, so the
// two modes cannot drift: the §5.2 keep pattern (Hyperscan over blocks of whole lines, RE2
// where Unicode case folding matters), marker and note recognition, the §5.15 repeat marker,
// and the dropped-run accumulator that renders the `… N lines elided (caveman)[: SUMMARY] …`
// marker (§4.4 invariants, template fields, §4.5 worthEliding).
//
// Thread-safety: the compiled pattern database is built once per process and immutable; a
// KeepMatcher (scratch) and a DroppedRun belong to one payload.
#ifndef CAVEMAN_COMPRESSORS_LOG_RULES_H_
#define CAVEMAN_COMPRESSORS_LOG_RULES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compressors/internal/invariants.h"

struct hs_database;
struct hs_scratch;

namespace caveman::internal {

inline constexpr std::string_view kEllipsis = "\xE2\x80\xA6";
inline constexpr std::string_view kLogMarkerText = "lines elided (caveman)";
// What every compressor's "… N <units> elided (caveman) …" marker holds.
inline constexpr std::string_view kAnyMarkerText = " elided (caveman)";
// Identical-run collapsing (project decision, docs/DECISIONS.md): the §5.15 marker prefix.
// Lines starting with it are never collapsed and, on re-entry, are kept like markers.
inline constexpr std::string_view kRepeatPrefix = "\xE2\x80\xA6 caveman: ";
// Template fields describe a run only from this length on (docs/DECISIONS.md).
inline constexpr uint64_t kTemplateSummaryMinRun = 64;

// A §5.2 marker line (`lines elided (caveman)` anywhere) / a note line (starts with the prefix).
bool IsLogMarkerLine(std::string_view line);
bool IsLogNoteLine(std::string_view line);

// The §5.15 marker for `elided` repeats of a kept line (CR appended iff `crlf`).
std::string RepeatMarker(uint64_t elided, bool crlf);

// git history (`git log`, `--stat`, `-p`, `git show`; issue 16): the header block of every
// commit — the `commit <hash>` line through its subject line (Author:, Merge:, Date: and the
// other `Key: value` lines, the blank line, the first indented message line) — and the
// per-commit file stats (` path | 12 ++--`, ` 3 files changed, …`) are headers: kept, never
// elided as context. Lines are fed in order; nothing is a header before the first commit line.
bool IsGitCommitLine(std::string_view line);
class GitHistoryTracker {
 public:
  // Whether `line` (the next line of the input) is a git header line.
  bool Feed(std::string_view line);

 private:
  enum class State : uint8_t { kNone, kHeader, kBeforeSubject, kBody };
  State state_ = State::kNone;
};

// Per-payload matcher: Hyperscan scratch and the match offsets of the current block.
class KeepMatcher {
 public:
  KeepMatcher();
  ~KeepMatcher();
  KeepMatcher(const KeepMatcher&) = delete;
  KeepMatcher& operator=(const KeepMatcher&) = delete;

  // Scans a block of whole lines; Classify() then answers per line, in order. A line equal
  // to the line before it has the same matches (no match crosses a line), so when such
  // repeats make up a good part of the block only the other lines are scanned, copied into
  // one buffer, and each repeat is given its original's matches (issue 19: CI logs repeat
  // retry and progress lines: on the 64 MiB generated CI log, whose bytes are 90 % repeats,
  // the scan went from 694 M to 175 M instructions; docs/PERFORMANCE.md).
  void ScanBlock(std::string_view block);
  // Whether the line [begin, begin + line.size()) of the last scanned block matches the keep
  // pattern, and whether it mentions "caveman" (a possible marker or note). Lines are asked
  // in order.
  void Classify(std::string_view line, size_t begin, bool* pattern, bool* caveman);

  struct MatchEnd {
    uint64_t to;
    unsigned int id;
  };

 private:
  // ScanBlock's compaction: the block's distinct lines, and their matches.
  void ScanDistinct(std::string_view block);

  // A line of the scanned block: where it starts, its length (LF excluded), and whether it
  // repeats the line before it.
  struct BlockLine {
    uint64_t begin;
    uint64_t size;
    bool repeat;
  };

  const hs_database* db_ = nullptr;
  hs_scratch* scratch_ = nullptr;
  std::vector<MatchEnd> ends_;
  size_t next_ = 0;
  std::string distinct_bytes_;
  std::vector<BlockLine> lines_;
  std::vector<MatchEnd> distinct_ends_;
};

// One dropped run: every dropped line (or identical-run element of `weight` lines) is added in
// order; Marker() renders the marker of §5.2 when §4.5 allows one.
class DroppedRun {
 public:
  // `log_fields`: §4.4 log fields of the line; `group_fields`: the same, or (template grouping,
  // no log fields) the line's template fields; `template_drop`: dropped only by grouping.
  void Add(std::string_view line, uint64_t weight, bool template_drop, const FieldList& log_fields,
           const FieldList* group_fields);
  // The marker text (no CR), or nullopt when the run must be emitted verbatim (lines()).
  std::optional<std::string> Marker() const;
  // The run's lines while it is shorter than kAlwaysElideCount (empty afterwards).
  const std::vector<std::string>& lines() const { return lines_; }
  uint64_t count() const { return count_; }
  uint64_t bytes() const { return bytes_; }  // Σ weight × (len + 1)
  void Reset();

 private:
  uint64_t count_ = 0;
  uint64_t bytes_ = 0;
  uint64_t template_drops_ = 0;
  std::vector<std::string> lines_;
  InvariantAccumulator acc_;        // §4.4 log fields
  InvariantAccumulator group_acc_;  // log fields, else template fields
};

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_LOG_RULES_H_
