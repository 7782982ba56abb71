#include "compressors/terminal.h"

#include <re2/re2.h>

#include <optional>
#include <string>
#include <vector>

#include "compressors/elision.h"
#include "compressors/internal/line_skeleton.h"
#include "compressors/lines.h"
#include "compressors/internal/redundancy.h"
#include "compressors/internal/templates.h"
#include "compressors/text_util.h"

namespace caveman {
namespace {

constexpr size_t kHead = 3;
constexpr size_t kTail = 3;
constexpr size_t kMinLinesForElision = 4;
constexpr char kEsc = '\x1b';

const RE2& KeepPattern() {
  static const RE2* re = new RE2(
      R"((?i)(\b(ERROR|ERR|FATAL|PANIC|EXCEPTION|TRACEBACK|FAIL|FAILED|FAILURE|WARN|WARNING)\b|[A-Za-z]+Error\b|[A-Za-z]+Exception\b|^\s+at\s|^\s+File "|\.go:\d+|:\d+:\d+:|^\s*--->|caused by|\bexit status [1-9]))");
  return *re;
}

// Length of the escape-sequence match of
// `\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\x5c-_]` at s[i]
// (s[i] == ESC), or 0 if none; alternatives are tried in order (leftmost-first).
size_t EscapeMatch(std::string_view s, size_t i) {
  const size_t n = s.size();
  if (i + 1 >= n) return 0;
  const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
  if (c1 == '[') {
    size_t j = i + 2;
    while (j < n && ((s[j] >= '0' && s[j] <= '9') || s[j] == ';' || s[j] == '?')) ++j;
    while (j < n && s[j] >= ' ' && s[j] <= '/') ++j;
    if (j < n && s[j] >= '@' && s[j] <= '~') return j + 1 - i;
  }
  if (c1 == ']') {
    size_t j = i + 2;
    while (j < n && s[j] != '\x07' && s[j] != kEsc) ++j;
    if (j < n && s[j] == '\x07') return j + 1 - i;
    if (j + 1 < n && s[j] == kEsc && s[j + 1] == '\\') return j + 2 - i;
  }
  if ((c1 >= '@' && c1 <= 'Z') || (c1 >= 0x5c && c1 <= '_')) return 2;
  return 0;
}

}  // namespace

namespace {

// True when the §5.16 cleanup leaves `line` as it is: no escape, no CR but a final one.
bool IsClean(std::string_view line) {
  if (line.find(kEsc) != std::string_view::npos) return false;
  const size_t cr = line.find('\r');
  return cr == std::string_view::npos || cr + 1 == line.size();
}

// One pass of the §5.16 cleanup of `line`, appended to *out (never more bytes than `line`).
void AppendCleanedOnce(std::string_view line, std::string* out) {
  bool final_cr = !line.empty() && line.back() == '\r';
  if (final_cr) line.remove_suffix(1);
  if (line.find('\r') != std::string_view::npos) {
    std::string_view last;
    size_t start = 0;
    while (true) {
      size_t cr = line.find('\r', start);
      std::string_view seg = line.substr(start, cr == std::string_view::npos ? cr : cr - start);
      if (!seg.empty()) last = seg;
      if (cr == std::string_view::npos) break;
      start = cr + 1;
    }
    line = last;
  }
  size_t i = 0;
  while (i < line.size()) {
    size_t esc = line.find(kEsc, i);
    if (esc == std::string_view::npos) {
      out->append(line.substr(i));
      break;
    }
    out->append(line.substr(i, esc - i));
    size_t m = EscapeMatch(line, esc);
    if (m == 0) {
      out->push_back(kEsc);
      i = esc + 1;
    } else {
      i = esc + m;
    }
  }
  if (final_cr) out->push_back('\r');
}

// Appends the cleaned `line` to *out (never more bytes than `line` has): the §5.16 pass,
// repeated while it still removes something. One pass is not idempotent (§1.5): deleting a
// sequence can join an unmatched ESC with the bytes after it into a new one — "ESC[3" then
// "ESC[31m" then "E" leaves "ESC[3E", which a second pass deletes. Each further pass removes at
// least two bytes and leaves no CR inside the line, so this ends; a pass that changes nothing
// leaves the size unchanged (docs/DECISIONS.md, "Terminal cleanup to a fixed point").
void AppendCleaned(std::string_view line, std::string* out) {
  const size_t start = out->size();
  AppendCleanedOnce(line, out);
  std::string again;
  while (out->find(kEsc, start) != std::string::npos) {
    again.clear();
    AppendCleanedOnce(std::string_view(*out).substr(start), &again);
    if (again.size() == out->size() - start) break;
    out->resize(start);
    out->append(again);
  }
}

}  // namespace

std::string CleanTerminalLine(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  AppendCleaned(line, &out);
  return out;
}

bool TerminalKeepPattern(std::string_view cleaned_line) { return RE2::PartialMatch(cleaned_line, KeepPattern()); }

namespace {

class TerminalCompressor final : public InMemoryCompressor {
 public:
  explicit TerminalCompressor(TerminalOptions options) : options_(options) {}
  std::string_view content_type() const override { return "terminal"; }
  // Working set (issue 15 ceiling; scripts/memory_table.py --shapes): line views, the arena
  // of cleaned lines, the elision's per-line records and its output.
  MemoryModel memory_model() const override { return {.per_byte = 1.5, .per_line = 120}; }

 protected:
  std::optional<std::string> TransformText(std::string_view body, std::string_view, TransformMeta*) const override {
    if (body.empty() || !internal::IsValidUtf8(body)) return std::nullopt;
    internal::SplitResult split = internal::SplitLines(body);
    const size_t n = split.lines.size();
    // Cleaned lines are views: into the body where cleanup changes nothing (most lines of
    // most sessions), else into one arena. Cleanup never lengthens a line, so an arena
    // reserved at the body's size never reallocates and its views stay valid (issue 15: one
    // std::string per line cost ~120 bytes of heap per line on a 64 MiB log).
    std::string arena;
    std::vector<std::string_view>& views = split.lines;
    for (std::string_view& line : views) {
      if (IsClean(line)) continue;
      if (arena.capacity() < body.size()) arena.reserve(body.size());
      const size_t at = arena.size();
      AppendCleaned(line, &arena);
      line = std::string_view(arena).substr(at);
    }
    std::string result;
    if (n < kMinLinesForElision) {
      result = internal::JoinLines(views, split.trailing);
    } else {
      internal::LinePolicy policy;
      policy.head = kHead;
      policy.tail = kTail;
      policy.alarm = TerminalKeepPattern;
      policy.marker_text = "lines elided (caveman)";
      // Runs dropped mostly by grouping summarise their variable tokens (extension).
      policy.guard = options_.template_grouping ? internal::LineGuard::kTemplates : internal::LineGuard::kProfiles;
      std::optional<std::string> elided =
          internal::ElideLines(views, split.trailing, internal::IsMajorityCrlf(body), {}, policy);
      result = elided ? std::move(*elided) : internal::JoinLines(views, split.trailing);
    }
    if (result == body) return std::nullopt;
    return result;
  }

 private:
  TerminalOptions options_;
};

}  // namespace

std::unique_ptr<Compressor> NewTerminalCompressor(TerminalOptions options) {
  return std::make_unique<TerminalCompressor>(options);
}

}  // namespace caveman
