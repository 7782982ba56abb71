#include "compressors/log_rules.h"

#include <hs/hs.h>
#include <re2/re2.h>

#include <algorithm>
#include <cstring>

#include "compressors/elision.h"
#include "compressors/internal/hs_cache.h"
#include "compressors/lines.h"
#include "compressors/text_util.h"

namespace caveman::internal {
namespace {

// The §5.2 keep pattern, in RE2 syntax (authoritative), plus one project rule (issue 16,
// docs/DECISIONS.md): a JSON Lines numeric level of 40 or more (pino/bunyan: 40 warn, 50 error,
// 60 fatal) is kept like the words WARN/ERROR/FATAL.
constexpr const char* kKeepPatternRe2 =
    R"re((?i)(\b(ERROR|FATAL|PANIC|EXCEPTION|TRACEBACK|FAIL|FAILED|FAILURE|WARN|WARNING)\b|^\s+at\s|^\s+File "|\.go:\d+|^\s+--->|caused by|"(level|lvl|severity)"[\t ]*:[\t ]*([4-9][0-9]|[1-9][0-9]{2,})\b))re";
// The same for Hyperscan, which scans blocks of complete lines in block mode with
// HS_FLAG_MULTILINE (`^` also after each LF): `\s` is spelled without LF (and without VT,
// which Hyperscan's `\s` would add) so that no match crosses a line, and case folding is
// ASCII. RE2's (?i) also folds k/K with U+212A KELVIN SIGN and s/S with U+017F LONG S; lines
// containing either are re-checked with RE2 (KeepsLinesWithKelvinSign in log_test).
constexpr const char* kKeepPatternHs =
    R"re(\b(ERROR|FATAL|PANIC|EXCEPTION|TRACEBACK|FAIL|FAILED|FAILURE|WARN|WARNING)\b|^[\t\f\r ]+at[\t\f\r ]|^[\t\f\r ]+File "|\.go:[0-9]+|^[\t\f\r ]+--->|caused by|"(level|lvl|severity)"[\t ]*:[\t ]*([4-9][0-9]|[1-9][0-9]{2,})\b)re";

const RE2& KeepPatternRe2() {
  static const RE2* re = new RE2(kKeepPatternRe2);
  return *re;
}

// Pattern ids of the compiled database.
constexpr unsigned int kKeepId = 0;
constexpr unsigned int kCavemanId = 1;  // "caveman": a line that might be a marker or note

// Immutable compiled database, built once per process.
const hs_database_t* KeepDatabase() {
  static const hs_database_t* db = [] {
    const char* patterns[] = {kKeepPatternHs, "caveman"};
    const unsigned int flags[] = {HS_FLAG_CASELESS | HS_FLAG_MULTILINE, 0};
    const unsigned int ids[] = {kKeepId, kCavemanId};
    return CompileMultiCached(patterns, flags, ids, 2, nullptr);
  }();
  return db;
}

int OnKeepMatch(unsigned int id, unsigned long long, unsigned long long to, unsigned int, void* ctx) {
  auto* ends = static_cast<std::vector<KeepMatcher::MatchEnd>*>(ctx);
  ends->push_back(KeepMatcher::MatchEnd{to, id});
  return 0;
}

bool NeedsUnicodeFolding(std::string_view line) {
  const char* p = line.data();
  const char* end = p + line.size();
  for (const char* q = p; (q = static_cast<const char*>(std::memchr(q, '\xC5', end - q))); ++q) {
    if (q + 1 < end && q[1] == '\xBF') return true;
  }
  for (const char* q = p; (q = static_cast<const char*>(std::memchr(q, '\xE2', end - q))); ++q) {
    if (q + 2 < end && q[1] == '\x84' && q[2] == '\xAA') return true;
  }
  return false;
}

}  // namespace

// §5.2's marker line is `lines elided \(caveman\)`; any compressor's marker counts here
// (sections, rows, context, search result and config lines): the stability guard runs the log
// compressor on other types' views (§1.5), and eliding their markers made a view that claimed
// "3 lines elided" where 60 were (docs/DECISIONS.md, "Other compressors' markers in a log").
bool IsLogMarkerLine(std::string_view line) { return Contains(line, kAnyMarkerText); }
bool IsLogNoteLine(std::string_view line) { return StartsWith(line, kNotePrefix); }

std::string RepeatMarker(uint64_t elided, bool crlf) {
  std::string m(kRepeatPrefix);
  m += std::to_string(elided);
  m += " identical lines elided ";
  m += kEllipsis;
  return SynthesizedLine(m, crlf);
}

namespace {

bool IsHexDigit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

std::string_view WithoutCr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// "Author: …", "Date:   …", "Merge: …", "CommitDate: …": a capitalised key and ": ".
bool IsGitKeyLine(std::string_view line) {
  size_t i = 0;
  if (line.empty() || line[0] < 'A' || line[0] > 'Z') return false;
  while (i < line.size() && ((line[i] >= 'A' && line[i] <= 'Z') || (line[i] >= 'a' && line[i] <= 'z'))) ++i;
  return i >= 4 && i + 1 < line.size() && line[i] == ':' && line[i + 1] == ' ';
}

// " src/a.cc | 12 ++--", " bin/x | Bin 0 -> 12 bytes", " 3 files changed, 5 insertions(+)".
bool IsGitStatLine(std::string_view line) {
  if (line.size() < 4 || line[0] != ' ') return false;
  const size_t bar = line.find(" | ");
  if (bar != std::string_view::npos && bar > 1) {
    std::string_view rest = Trim(line.substr(bar + 3));
    if (StartsWith(rest, "Bin ")) return true;
    size_t k = 0;
    while (k < rest.size() && rest[k] >= '0' && rest[k] <= '9') ++k;
    if (k == 0) return false;
    for (; k < rest.size(); ++k) {
      if (rest[k] != ' ' && rest[k] != '+' && rest[k] != '-') return false;
    }
    return true;
  }
  std::string_view t = Trim(line);
  size_t k = 0;
  while (k < t.size() && t[k] >= '0' && t[k] <= '9') ++k;
  return k > 0 && (StartsWith(t.substr(k), " file changed") || StartsWith(t.substr(k), " files changed"));
}

}  // namespace

bool IsGitCommitLine(std::string_view line) {
  line = WithoutCr(line);
  if (!StartsWith(line, "commit ")) return false;
  size_t i = 7;
  while (i < line.size() && IsHexDigit(line[i])) ++i;
  const size_t hex = i - 7;
  if (hex < 7 || hex > 64) return false;
  return i == line.size() || line[i] == ' ';  // " (HEAD -> main, origin/main)" decorations
}

bool GitHistoryTracker::Feed(std::string_view raw) {
  const std::string_view line = WithoutCr(raw);
  if (IsGitCommitLine(line)) {
    state_ = State::kHeader;
    return true;
  }
  switch (state_) {
    case State::kNone: return false;
    case State::kHeader:
      if (IsGitKeyLine(line)) return true;
      if (Trim(line).empty()) {
        state_ = State::kBeforeSubject;
        return true;
      }
      state_ = State::kBody;
      break;
    case State::kBeforeSubject:
      if (Trim(line).empty()) return true;
      state_ = State::kBody;
      if (StartsWith(line, "    ")) return true;  // the subject
      break;
    case State::kBody: break;
  }
  return IsGitStatLine(line);
}

KeepMatcher::KeepMatcher() {
  db_ = KeepDatabase();
  if (db_ != nullptr && hs_alloc_scratch(db_, &scratch_) != HS_SUCCESS) db_ = nullptr;
}

KeepMatcher::~KeepMatcher() {
  if (scratch_ != nullptr) hs_free_scratch(scratch_);
}

namespace {

// Calls f(begin, line, repeat) for each line of `block` in order (LF excluded; the last line
// may lack it), where `repeat`: the line is not empty and equals the line before it.
template <class F>
void ForEachBlockLine(std::string_view block, F&& f) {
  std::string_view prev;
  bool first = true;
  for (size_t pos = 0; pos < block.size();) {
    const char* nl = static_cast<const char*>(std::memchr(block.data() + pos, '\n', block.size() - pos));
    const size_t end = nl != nullptr ? static_cast<size_t>(nl - block.data()) : block.size();
    const std::string_view line = block.substr(pos, end - pos);
    const bool repeat = !first && !line.empty() && line.size() == prev.size() &&
                        std::memcmp(line.data(), prev.data(), line.size()) == 0;
    f(pos, line, repeat);
    first = false;
    prev = line;
    pos = end + 1;
  }
}

// Hyperscan does not promise to report matches in order of their end; Classify walks them so.
void SortByEnd(std::vector<KeepMatcher::MatchEnd>* ends) {
  auto by_end = [](const KeepMatcher::MatchEnd& a, const KeepMatcher::MatchEnd& b) { return a.to < b.to; };
  if (!std::is_sorted(ends->begin(), ends->end(), by_end)) std::stable_sort(ends->begin(), ends->end(), by_end);
}

}  // namespace

void KeepMatcher::ScanBlock(std::string_view block) {
  ends_.clear();
  next_ = 0;
  if (db_ == nullptr || block.empty()) return;
  // One walk over the lines notes where each starts and whether it repeats the line before.
  lines_.clear();
  uint64_t repeated = 0;  // bytes of the lines equal to the line before them
  ForEachBlockLine(block, [&](size_t begin, std::string_view line, bool repeat) {
    lines_.push_back(BlockLine{begin, line.size(), repeat});
    if (repeat) repeated += line.size() + 1;
  });
  // Few repeats: one scan of the block as it is (copying would cost more than it saves).
  if (repeated < block.size() / 4) {
    hs_scan(db_, block.data(), static_cast<unsigned int>(block.size()), 0, scratch_, OnKeepMatch, &ends_);
    SortByEnd(&ends_);
    return;
  }
  ScanDistinct(block);
}

// The distinct lines (those that repeat no line before them) are copied one after the other,
// each followed by LF as in the block (the block's last line may lack it: a word boundary or
// `^` sees LF and the end of the data alike, and no pattern looks past a line's end), scanned
// once, and each line of the block gets the matches of the distinct line it is or repeats,
// moved to its own offset. Memory: the copy (at most the block), one entry per line of the
// block (ScanBlock's), and the matches.
void KeepMatcher::ScanDistinct(std::string_view block) {
  distinct_bytes_.clear();
  for (const BlockLine& l : lines_) {
    if (l.repeat) continue;
    distinct_bytes_.append(block.data() + l.begin, l.size);
    distinct_bytes_.push_back('\n');
  }
  distinct_ends_.clear();
  hs_scan(db_, distinct_bytes_.data(), static_cast<unsigned int>(distinct_bytes_.size()), 0, scratch_, OnKeepMatch,
          &distinct_ends_);
  SortByEnd(&distinct_ends_);
  // The current distinct line: its offset in the copy and its matches [first, last).
  uint64_t at = 0, next_at = 0;
  size_t first = 0, last = 0;
  for (const BlockLine& l : lines_) {
    if (!l.repeat) {
      at = next_at;
      next_at = at + l.size + 1;
      first = last;  // matches end in (at, at + size] (none crosses a line)
      while (first < distinct_ends_.size() && distinct_ends_[first].to <= at) ++first;
      last = first;
      while (last < distinct_ends_.size() && distinct_ends_[last].to <= at + l.size) ++last;
    }
    for (size_t i = first; i < last; ++i) {
      ends_.push_back(MatchEnd{l.begin + (distinct_ends_[i].to - at), distinct_ends_[i].id});
    }
  }
}

void KeepMatcher::Classify(std::string_view line, size_t begin, bool* pattern, bool* caveman) {
  if (db_ == nullptr) {
    *pattern = RE2::PartialMatch(line, KeepPatternRe2());
    *caveman = Contains(line, "caveman");
    return;
  }
  const uint64_t end = begin + line.size();
  *pattern = false;
  *caveman = false;
  // A match is never empty and never crosses a line: its end lies in (begin, end].
  while (next_ < ends_.size() && ends_[next_].to <= end) {
    if (ends_[next_].to > begin) {
      (ends_[next_].id == kKeepId ? *pattern : *caveman) = true;
    }
    ++next_;
  }
  if (!*pattern && NeedsUnicodeFolding(line)) {
    *pattern = RE2::PartialMatch(line, KeepPatternRe2());
  }
}

void DroppedRun::Add(std::string_view line, uint64_t weight, bool template_drop, const FieldList& log_fields,
                     const FieldList* group_fields) {
  count_ += weight;
  bytes_ += weight * (line.size() + 1);
  if (count_ < kAlwaysElideCount) {
    lines_.emplace_back(line);
  } else {
    lines_.clear();
  }
  template_drops_ += template_drop ? weight : 0;
  acc_.Add(log_fields, weight);
  if (group_fields != nullptr) {
    group_acc_.Add(*group_fields, weight);
  }
}

std::optional<std::string> DroppedRun::Marker() const {
  // Template fields describe a run only when template grouping dropped most of it and the run
  // is long enough for the summary to pay for itself (on the CI log, template summaries on
  // runs the §4.2 guard had mostly dropped anyway cost more than grouping saved;
  // docs/DECISIONS.md).
  const bool template_summary = template_drops_ * 2 >= count_ && count_ >= kTemplateSummaryMinRun;
  const std::string summary = (template_summary ? group_acc_ : acc_).Render(static_cast<int64_t>(bytes_));
  std::string marker = ElisionMarker(count_, kLogMarkerText, summary);
  if (!WorthEliding(count_, marker.size(), bytes_, summary)) return std::nullopt;
  return marker;
}

void DroppedRun::Reset() {
  count_ = 0;
  bytes_ = 0;
  template_drops_ = 0;
  lines_.clear();
  acc_.Reset();
  group_acc_.Reset();
}

}  // namespace caveman::internal
