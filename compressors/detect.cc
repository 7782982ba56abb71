// Detection (§3.3) with this project's refinements (docs/DECISIONS.md, "Detection").
//
// Cost model. A body of at most kExactLimit bytes is classified on all of its bytes. A larger
// body is classified on a *sample*: its first kPrefixBytes cut back to a line end, plus
// kWindows windows of kWindowBytes spread evenly over the rest (each trimmed to whole lines);
// the table and config parsers see only the prefix. Only rules 2 and 3 read the whole body:
// JSON validity when it starts with `{` or `[`, the test-report parser when its XML root is
// testsuite(s). The sample is a function of the bytes alone, so DetectBody and DetectLarge
// agree on every input.
#include "compressors/detect.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "compressors/config.h"
#include "compressors/internal/detect_scan.h"
#include "compressors/internal/fixed_width.h"
#include "compressors/log_rules.h"
#include "compressors/internal/json_skeleton.h"
#include "compressors/internal/json_validity.h"
#include "compressors/text_util.h"
#include "compressors/tabular.h"
#include "compressors/test_report.h"

namespace caveman {
namespace {

constexpr uint64_t kExactLimit = 1u << 20;
constexpr uint64_t kPrefixBytes = 512u << 10;
constexpr uint64_t kWindowBytes = 64u << 10;
constexpr int kWindows = 8;

using internal::Contains;
using internal::StartsWith;

// ---------------------------------------------------------------------------------------
// Small byte helpers.

char AsciiLowerChar(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

bool StartsWithIgnoreCase(std::string_view s, std::string_view lower_prefix) {
  if (s.size() < lower_prefix.size()) return false;
  for (size_t i = 0; i < lower_prefix.size(); ++i) {
    if (AsciiLowerChar(s[i]) != lower_prefix[i]) return false;
  }
  return true;
}

size_t CountByte(std::string_view s, char c) {
  size_t n = 0;
  const char* p = s.data();
  const char* end = p + s.size();
  while ((p = static_cast<const char*>(std::memchr(p, c, end - p))) != nullptr) {
    ++n;
    ++p;
  }
  return n;
}

bool OnlyJsonWhitespace(std::string_view s) {
  for (char c : s) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return true;
}

bool IsRe2Space(char c) { return c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '; }

// Length of the valid UTF-8 code point at s[i], 0 if the bytes there are not one (RE2's
// character classes never match such bytes).
size_t ValidCodePointLength(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t j = i;
  uint32_t cp = internal::DecodeUtf8(s, &j);
  if (cp == 0xFFFD && j - i == 1) return 0;
  return j - i;
}

// ---------------------------------------------------------------------------------------
// Per-line predicates (RE2 semantics of the spec's patterns, hand-coded where a pattern is a
// simple anchored shape).

// Rule 10: (?m)^([./~A-Za-z0-9_-][^:\n]{0,240}:\d+(:\d+)?:|https?://\S+) within one line.
bool SearchResultLine(std::string_view line) {
  if (line.empty()) return false;
  if (StartsWith(line, "http://") || StartsWith(line, "https://")) {
    size_t i = line[4] == 's' ? 8 : 7;
    if (i < line.size() && !IsRe2Space(line[i]) && ValidCodePointLength(line, i) > 0) return true;
    // fall through: a URL line may still match the first alternative ("http" + ':' + …)
  }
  unsigned char c0 = static_cast<unsigned char>(line[0]);
  bool first_ok = (c0 >= 'A' && c0 <= 'Z') || (c0 >= 'a' && c0 <= 'z') || (c0 >= '0' && c0 <= '9') || c0 == '.' ||
                  c0 == '/' || c0 == '~' || c0 == '_' || c0 == '-';
  if (!first_ok) return false;
  // [^:\n]{0,240} can only stop at the first ':'; every code point before it must be valid
  // UTF-8 (RE2 classes never match invalid bytes) and there must be at most 240 of them.
  size_t colon = line.find(':', 1);
  if (colon == std::string_view::npos) return false;
  size_t count = 0;
  for (size_t i = 1; i < colon;) {
    size_t len = ValidCodePointLength(line, i);
    if (len == 0 || ++count > 240) return false;
    i += len;
  }
  size_t i = colon;
  size_t d = ++i;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
  return i > d && i < line.size() && line[i] == ':';
}

// Project rule "strict search-result": grep -n style `path:N:` / `path:N:M:` where the path
// looks like a file path (has a '/' or an extension), or a grep context line `path-N-`.
enum class GrepLine { kNone, kMatch, kContext };

// True if s ends with ".ext": the dot at last_dot, then 1–10 extension characters.
bool EndsWithExtension(std::string_view s, size_t last_dot) {
  if (last_dot == std::string_view::npos || last_dot + 1 >= s.size() || s.size() - last_dot - 1 > 10) {
    return false;
  }
  for (size_t k = last_dot + 1; k < s.size(); ++k) {
    char c = s[k];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '+' ||
          c == '-')) {
      return false;
    }
  }
  return true;
}

GrepLine ClassifyGrepLine(std::string_view line) {
  if (line == "--" || line == "--\r") return GrepLine::kContext;
  size_t n = 0;
  while (n < line.size() && line[n] != ':' && !IsRe2Space(line[n])) ++n;
  std::string_view token = line.substr(0, n);
  if (token.empty()) return GrepLine::kNone;
  if (n < line.size() && line[n] == ':') {
    bool path_like = token.find('/') != std::string_view::npos || EndsWithExtension(token, token.rfind('.'));
    if (path_like && SearchResultLine(line)) return GrepLine::kMatch;
  }
  // Context line: path-N- (the path itself may contain '-'). One pass, tracking what the
  // prefix before each '-' holds, so long dash runs stay linear.
  bool slash = false;
  size_t last_dot = std::string_view::npos;
  for (size_t p = 0; p < token.size(); ++p) {
    char c = token[p];
    if (c == '/') slash = true;
    if (c == '.') last_dot = p;
    if (c != '-' || p == 0) continue;
    size_t q = p + 1;
    while (q < token.size() && token[q] >= '0' && token[q] <= '9') ++q;
    if (q > p + 1 && q < line.size() && line[q] == '-' && (slash || EndsWithExtension(token.substr(0, p), last_dot))) {
      return GrepLine::kContext;
    }
  }
  return GrepLine::kNone;
}

// Rule 5 line-start alternatives: ^(diff --git |@@ |--- |\+\+\+ |[+-][^+-]).
bool DiffLineStart(std::string_view text, size_t i) {
  std::string_view s = text.substr(i, 12);
  if (StartsWith(s, "diff --git ") || StartsWith(s, "@@ ") || StartsWith(s, "--- ") || StartsWith(s, "+++ ")) {
    return true;
  }
  if (s.empty() || (s[0] != '+' && s[0] != '-')) return false;
  if (i + 1 >= text.size()) return false;
  char c = text[i + 1];
  return c != '+' && c != '-' && ValidCodePointLength(text, i + 1) > 0;
}

// Rule 4 ANSI CSI: \x1b\[[0-9;?]*[ -/]*[@-~] starting at s[i] (an ESC).
bool AnsiAt(std::string_view s, size_t i) {
  if (i + 1 >= s.size() || s[i + 1] != '[') return false;
  size_t k = i + 2;
  while (k < s.size() && ((s[k] >= '0' && s[k] <= '9') || s[k] == ';' || s[k] == '?')) ++k;
  while (k < s.size() && s[k] >= ' ' && s[k] <= '/') ++k;
  return k < s.size() && s[k] >= '@' && s[k] <= '~';
}

bool HasAnsi(std::string_view s) {
  for (size_t p = s.find('\x1b'); p != std::string_view::npos; p = s.find('\x1b', p + 1)) {
    if (AnsiAt(s, p)) return true;
  }
  return false;
}

// (count of CR) − (count of CRLF) = CRs not followed by LF.
size_t BareCrCount(std::string_view s) {
  size_t n = 0;
  for (size_t p = s.find('\r'); p != std::string_view::npos; p = s.find('\r', p + 1)) {
    if (p + 1 >= s.size() || s[p + 1] != '\n') ++n;
  }
  return n;
}

// Punctuation a word may end with. NUL is in the set because the rule was first written with
// strchr, which matches the terminator: kept so detection stays what it was.
constexpr internal::ByteSet kWordSuffix(std::string_view(",.;:!?)\"'*_\r\0", 13));

// Prose heuristics (project rule): a line of at least 6 space-separated fields of which at
// least 3/4 are words (letters, apostrophes and hyphens, optional bracket/quote prefix and
// punctuation suffix). Non-ASCII bytes count as letters.
bool ProseLine(std::string_view t) {
  // Six fields need at least five separators. Braces, assignments and statement ends mark
  // code even when every token is a word (C prototypes such as "void glFlush (void);").
  // One pass for both (this runs on every detected line).
  if (t.size() < 11 || t.back() == ';') return false;
  size_t separators = 0;
  unsigned code_marks = 0;
  for (char c : t) {  // no early exit: the compiler vectorises this loop
    separators += static_cast<size_t>(c == ' ') + static_cast<size_t>(c == '\t');
    code_marks |= static_cast<unsigned>(c == '{') | static_cast<unsigned>(c == '}') | static_cast<unsigned>(c == '=');
  }
  if (separators < 5 || code_marks != 0) return false;
  size_t fields = 0, words = 0;
  size_t i = 0;
  while (i < t.size()) {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t')) ++i;
    if (i >= t.size()) break;
    size_t j = i;
    while (j < t.size() && t[j] != ' ' && t[j] != '\t') ++j;
    std::string_view f = t.substr(i, j - i);
    ++fields;
    size_t a = 0, b = f.size();
    while (a < b && (f[a] == '(' || f[a] == '"' || f[a] == '\'' || f[a] == '*' || f[a] == '_')) {
      ++a;
    }
    while (b > a && kWordSuffix.Has(f[b - 1])) --b;
    bool word = b > a;
    for (size_t k = a; k < b && word; ++k) {
      unsigned char c = static_cast<unsigned char>(f[k]);
      word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80 || c == '\'' || c == '-';
    }
    if (word) ++words;
    i = j;
  }
  return fields >= 6 && words * 4 >= fields * 3;
}

// C preprocessor directives start with '#' but are code.
bool PreprocessorLine(std::string_view t) {
  if (t.empty() || t[0] != '#') return false;
  size_t k = 1;
  while (k < t.size() && (t[k] == ' ' || t[k] == '\t')) ++k;
  std::string_view rest = t.substr(k);
  static constexpr std::string_view kDirectives[] = {"define", "include", "ifdef", "ifndef", "if ",    "if(",
                                                     "endif",  "else",    "elif",  "undef",  "pragma", "error"};
  for (std::string_view d : kDirectives) {
    if (StartsWith(rest, d)) return true;
  }
  return false;
}

bool CommentMarked(std::string_view t) {
  if (t.empty()) return false;
  char c1 = t.size() > 1 ? t[1] : '\0';
  switch (t[0]) {
    case '#': return !PreprocessorLine(t);
    case '/': return c1 == '/' || c1 == '*';
    case '*':
    case ';':
    case '%':
    case '>': return true;
    case '-': return c1 == '-';
    case '<': return StartsWith(t, "<!--");
    case '\'': return StartsWith(t, "\'\'\'");
    case '"': return StartsWith(t, "\"\"\"");
    default: return false;
  }
}

// Markdown link reference definition: "[label]: destination".
bool LinkReferenceDefinition(std::string_view t) {
  if (t.size() < 5 || t[0] != '[') return false;
  size_t close = t.find(']');
  if (close == std::string_view::npos || close < 2 || close + 2 >= t.size() || t[close + 1] != ':') {
    return false;
  }
  size_t k = close + 2;
  while (k < t.size() && (t[k] == ' ' || t[k] == '\t')) ++k;
  if (k == close + 2 || k >= t.size()) return false;
  // The destination looks like a link (computed keys in JS, `[x]: y,`, do not).
  std::string_view dest = t.substr(k, t.find_first_of(" \t", k) - k);
  if (dest.back() == ',' || dest.back() == ';' || dest.back() == '{') return false;
  return Contains(dest, "://") || dest[0] == '/' || dest[0] == '.' || dest[0] == '#' ||
         internal::EndsWith(dest, ".md") || StartsWith(dest, "mailto:");
}

std::string_view TrimAscii(std::string_view s) {
  while (!s.empty() && (IsRe2Space(s.front()) || s.front() == '\v')) s.remove_prefix(1);
  while (!s.empty() && (IsRe2Space(s.back()) || s.back() == '\v')) s.remove_suffix(1);
  return s;
}

// ---------------------------------------------------------------------------------------
// Everything the rules need from the scanned text, computed in one pass.

struct Features {
  size_t pieces = 0;  // LF pieces, final empty piece kept (rules 9/10)
  size_t nonblank = 0;
  size_t log_lines = 0;
  size_t console_lines = 0;
  size_t log_or_console_lines = 0;
  size_t search_lines = 0;
  size_t grep_match_lines = 0;
  size_t grep_context_lines = 0;
  size_t diff_line_starts = 0;
  size_t keyword_matches = 0;
  size_t prose_lines = 0;
  size_t fence_lines = 0;
  size_t tag_lines = 0;        // TRIM starts with '<'
  size_t link_item_lines = 0;  // Markdown list items that are links: "* [x](y)"
  // Over non-blank lines outside Markdown fenced blocks that are not comment lines:
  size_t unfenced_nonblank = 0;
  size_t code_keyword_matches = 0;     // rule 8 keywords
  size_t statement_keywords = 0;       // rule 8 keywords that start a statement
  size_t doc_lines = 0;                // prose lines and Markdown link items
  size_t preprocessor_lines = 0;       // #define, #include, #if …
  bool first_nonblank_is_log = false;  // the first non-blank line matches the log regex
  // Our own synthesized lines (`… caveman: …`, `… N lines elided (caveman) …`): a compressed
  // view's markers are not content, so the log rule does not count them (docs/DECISIONS.md).
  size_t caveman_lines = 0;
  uint64_t literals = 0;  // internal::Literal bits
  bool Has(internal::Literal l) const { return (literals >> l) & 1; }
};

Features ComputeFeatures(std::string_view b) {
  Features f;
  std::vector<size_t> starts;
  starts.reserve(b.size() / 40 + 1);
  starts.push_back(0);
  for (size_t p = b.find('\n'); p != std::string_view::npos; p = b.find('\n', p + 1)) {
    starts.push_back(p + 1);
  }
  f.pieces = starts.size();
  internal::ScanResult scan = internal::ScanDetectPatterns(b, starts);
  f.keyword_matches = scan.keyword_matches;
  f.literals = scan.literals;
  bool in_fence = false;
  for (size_t k = 0; k < starts.size(); ++k) {
    size_t end = k + 1 < starts.size() ? starts[k + 1] - 1 : b.size();
    std::string_view line = b.substr(starts[k], end - starts[k]);
    uint8_t flags = scan.line_flags[k];
    if (flags & internal::kLineLog) ++f.log_lines;
    if (StartsWith(line, "\xE2\x80\xA6 ") && Contains(line, "caveman")) ++f.caveman_lines;
    if (flags & internal::kLineConsole) ++f.console_lines;
    if (flags) ++f.log_or_console_lines;
    if (SearchResultLine(line)) ++f.search_lines;
    switch (ClassifyGrepLine(line)) {
      case GrepLine::kMatch: ++f.grep_match_lines; break;
      case GrepLine::kContext: ++f.grep_context_lines; break;
      case GrepLine::kNone: break;
    }
    if (DiffLineStart(b, starts[k])) ++f.diff_line_starts;
    std::string_view t = TrimAscii(line);
    if (t.empty()) continue;
    if (f.nonblank == 0) f.first_nonblank_is_log = (flags & internal::kLineLog) != 0;
    ++f.nonblank;
    // CommonMark fences are indented by at most 3 spaces.
    size_t indent = line.find_first_not_of(' ');
    bool fence = indent <= 3 && (StartsWith(t, "```") || StartsWith(t, "~~~"));
    if (fence) {
      ++f.fence_lines;
      in_fence = !in_fence;
      continue;
    }
    bool list = (StartsWith(t, "- ") || StartsWith(t, "* ") || StartsWith(t, "+ ")) && t.size() > 2;
    // "* [text](url)" list items and "[label]: url" reference definitions.
    bool link_item = (list && t[2] == '[' && Contains(t, "](")) || LinkReferenceDefinition(t);
    if (link_item) ++f.link_item_lines;
    if (t[0] == '<') ++f.tag_lines;
    bool comment = CommentMarked(t);
    if (in_fence || comment) continue;
    bool prose = ProseLine(t);
    if (prose) ++f.prose_lines;
    ++f.unfenced_nonblank;
    f.code_keyword_matches += scan.line_keywords[k];
    f.statement_keywords += scan.line_statements[k];
    if (PreprocessorLine(t)) ++f.preprocessor_lines;
    if (prose || link_item) ++f.doc_lines;
  }
  return f;
}

// Markdown document (project rule): fenced code blocks or link lists.
// ATX headings are not used: C preprocessor lines (`# define`) and shell/Python comments
// look the same.
bool LooksLikeMarkdown(const Features& f) { return f.fence_lines >= 2 || f.link_item_lines >= 3; }

// ---------------------------------------------------------------------------------------
// The rules.

// Root element of an XML document after the prolog (declaration, comments, PIs, DOCTYPE).
std::string_view XmlRootName(std::string_view t) {
  size_t i = 0;
  for (;;) {
    while (i < t.size() && IsRe2Space(t[i])) ++i;
    if (i >= t.size() || t[i] != '<') return {};
    std::string_view rest = t.substr(i);
    size_t close;
    if (StartsWith(rest, "<?")) {
      close = rest.find("?>");
      if (close == std::string_view::npos) return {};
      i += close + 2;
    } else if (StartsWith(rest, "<!--")) {
      close = rest.find("-->", 4);
      if (close == std::string_view::npos) return {};
      i += close + 3;
    } else if (StartsWith(rest, "<!DOCTYPE") || StartsWith(rest, "<!doctype")) {
      // A DOCTYPE may hold an internal subset in brackets.
      size_t k = 9;
      int bracket = 0;
      while (k < rest.size() && !(rest[k] == '>' && bracket == 0)) {
        if (rest[k] == '[') ++bracket;
        if (rest[k] == ']') --bracket;
        ++k;
      }
      if (k >= rest.size()) return {};
      i += k + 1;
    } else {
      size_t k = 1;
      while (k < rest.size() && !IsRe2Space(rest[k]) && rest[k] != '>' && rest[k] != '/') ++k;
      return rest.substr(1, k - 1);
    }
  }
}

bool HasCodeStructureForHtml(std::string_view t, const Features& f) {
  using internal::Literal;
  if (f.Has(internal::kLitFatArrow) || f.Has(internal::kLitClassName) || f.Has(internal::kLitCloseCall)) {
    return true;
  }
  static constexpr std::string_view kStarts[] = {"import ", "export ",  "package ", "func ", "def ",
                                                 "const ",  "#include", "#!",       "//",    "/*"};
  for (std::string_view s : kStarts) {
    if (StartsWith(t, s)) return true;
  }
  static constexpr Literal kLines[] = {internal::kLitLfImport, internal::kLitLfExport, internal::kLitLfPackage,
                                       internal::kLitLfFunc,   internal::kLitLfDef,    internal::kLitLfClass,
                                       internal::kLitLfConst};
  for (Literal l : kLines) {
    if (f.Has(l)) return true;
  }
  return false;
}

bool IsHtml(std::string_view b, std::string_view t, const Features& f) {
  if (StartsWithIgnoreCase(t, "<!doctype html") || StartsWithIgnoreCase(t, "<html")) return true;
  if (HasCodeStructureForHtml(t, f)) return false;
  bool marker = f.Has(internal::kLitTagBody) || f.Has(internal::kLitTagArticle) || f.Has(internal::kLitTagMain) ||
                f.Has(internal::kLitTagDiv) || f.Has(internal::kLitTagP);
  if (!marker || CountByte(t, '<') < 6) return false;
  // Project rule: markup must lead the document or fill a third of its lines; source code
  // or data that merely mentions tags in strings (templates, generated tables) is not HTML.
  if (t.front() != '<' && f.tag_lines * 3 < f.nonblank) return false;
  // Project rule: a Markdown README with a few HTML blocks (badges, centred logos) is text.
  if (LooksLikeMarkdown(f) && f.tag_lines * 2 < f.nonblank) return false;
  return true;
}

// Rule 8's structural test. `^` anchors at the start of b only (no (?m)).
bool CodeStructural(std::string_view b, const Features& f) {
  static constexpr internal::Literal kAny[] = {
      internal::kLitFatArrow,        internal::kLitColonColon,  internal::kLitArrow, internal::kLitParenBrace,
      internal::kLitParenSpaceBrace, internal::kLitSemicolonLf, internal::kLitBrace, internal::kLitLfFourSpaces};
  for (internal::Literal l : kAny) {
    if (f.Has(l)) return true;
  }
  if (f.Has(internal::kLitDefSpace) && f.Has(internal::kLitColon)) return true;
  size_t i = 0;
  while (i < b.size() && IsRe2Space(b[i])) ++i;
  std::string_view rest = b.substr(i);
  if (StartsWith(rest, "#include")) return true;
  if (StartsWith(rest, "from ")) {
    std::string_view line =
        rest.substr(5, rest.find('\n') == std::string_view::npos ? std::string_view::npos : rest.find('\n') - 5);
    size_t p = line.find(" import ", 1);
    if (p != std::string_view::npos && internal::IsValidUtf8(line.substr(0, p))) return true;
  }
  return false;
}

bool IsJsonLines(std::string_view b) {
  size_t pos = 0, objects = 0;
  while (pos < b.size() && objects < 16) {
    size_t nl = b.find('\n', pos);
    const bool last = nl == std::string_view::npos;
    if (last) nl = b.size();
    std::string_view line = TrimAscii(b.substr(pos, nl - pos));
    pos = nl + 1;
    if (line.empty()) continue;
    // A compressed view's markers are not content (as in the log rule).
    if (StartsWith(line, "\xE2\x80\xA6 ") && Contains(line, "caveman")) continue;
    // An unterminated last line of a sample may be cut: it is not held against the body.
    if (last && objects >= 4 && line.front() == '{') break;
    if (line.size() < 2 || line.front() != '{' || line.back() != '}') return false;
    internal::JsonShape shape = internal::ValidateJson(line);
    if (!shape.valid || !shape.top_is_object) return false;
    ++objects;
  }
  return objects >= 4;
}

bool IsLog(const Features& f) {
  return f.pieces >= 4 && f.log_lines >= 3 && f.log_lines * 2 >= f.pieces - f.caveman_lines;
}

bool IsConsoleLog(const Features& f) { return f.console_lines >= 3 && f.log_or_console_lines * 5 >= f.nonblank; }

bool IsStrictSearch(const Features& f) {
  size_t grep = f.grep_match_lines + f.grep_context_lines;
  return f.pieces >= 6 && f.grep_match_lines >= 2 && grep >= 4 && grep * 3 >= f.pieces * 2;
}

bool IsSearch(const Features& f) { return f.pieces >= 6 && f.search_lines >= 4 && f.search_lines * 3 >= f.pieces; }

// `ls -l` entry: a file type letter and nine permission characters ("drwxr-xr-x",
// "-rw-r--r--", "lrwxrwxrwx", "crw-rw----", "drwxrwxrwt"), then a space or an ACL/xattr mark.
bool IsLongListingLine(std::string_view l) {
  if (l.size() < 11 || std::string_view("-dlcbps").find(l[0]) == std::string_view::npos) return false;
  for (size_t i = 1; i < 10; ++i) {
    if (std::string_view("rwxsStTl-").find(l[i]) == std::string_view::npos) return false;
  }
  return l[10] == ' ' || l[10] == '.' || l[10] == '+' || l[10] == '@';
}

// An entry of a symbol or address listing (`nm`, `objdump -t`, `nm -C`): 8 to 16 hex digits
// and a blank, or (`nm`'s undefined symbols) 8 to 16 spaces, a blank, a letter and a blank.
bool IsAddressLine(std::string_view l) {
  size_t i = 0;
  while (i < l.size() && i < 17 && (std::isxdigit(static_cast<unsigned char>(l[i])) != 0)) ++i;
  if (i >= 8 && i <= 16 && i < l.size() && (l[i] == ' ' || l[i] == '\t')) return true;
  i = 0;
  while (i < l.size() && i < 17 && l[i] == ' ') ++i;
  return i >= 9 && i <= 17 && i + 2 < l.size() && std::isalpha(static_cast<unsigned char>(l[i])) != 0 &&
         l[i + 1] == ' ';
}

// Project rules (DECISIONS.md), one pass over the lines for both: a listing is never code,
// whatever its names spell, and is text, whose template grouping represents its rows.
// - `ls -l` (issue 16): `ls -la /usr/lib/x86_64-linux-gnu` has `->`, `.so`, `gconv` …
//   "total N" lines aside.
// - Symbols and addresses ("Symbol listings are never code"): `nm -C` prints `namespace`, `::`,
//   `const`, `std::`; tree-sitter spent ~1 s per 64 KB of it in error recovery before the code
//   compressor declined. Caveman markers aside, so a compressed listing stays one.
// Each: ≥ 5 entries and ≥ 4 of 5 counted non-blank lines entries; "dir:" / "file.o:" headers
// aside.
bool IsListing(std::string_view b) {
  struct Tally {
    size_t entries = 0, other = 0;
    void Add(bool entry) { ++(entry ? entries : other); }
    bool Mostly() const { return entries >= 5 && entries >= 4 * other; }
  } long_listing, addresses;
  for (size_t pos = 0; pos < b.size();) {
    size_t e = b.find('\n', pos);
    if (e == std::string_view::npos) e = b.size();
    std::string_view l = internal::TrimRight(b.substr(pos, e - pos));
    pos = e + 1;
    if (l.empty() || (l.back() == ':' && l.find(' ') == std::string_view::npos)) continue;
    if (!StartsWith(l, "total ")) long_listing.Add(IsLongListingLine(l));
    if (!internal::IsCavemanLine(l)) addresses.Add(IsAddressLine(l));
  }
  return long_listing.Mostly() || addresses.Mostly();
}

bool IsCode(std::string_view b, std::string_view t, const Features& f) {
  if (IsLog(f)) return false;
  if (IsListing(b)) return false;
  if (StartsWith(t, "#!")) return true;
  if (f.keyword_matches < 3 || !CodeStructural(b, f)) return false;
  // Project rules (DECISIONS.md): keywords inside Markdown fences and comment lines do not
  // make a document code, Markdown is text, and a body whose
  // lines are mostly prose or Markdown link lists (READMEs, licences) is text.
  // C/C++ headers keep their keywords in comments and macros: count them all there.
  const bool header = f.preprocessor_lines >= 3;
  size_t keywords = header ? f.keyword_matches : f.code_keyword_matches;
  if (keywords < 3) return false;
  // Project rule (DECISIONS.md, "Code keywords start statements"): outside headers, at least 3
  // keywords start a statement. Paths (`/var/lib`, `stream/export.h`), type strings of a
  // compiler's AST dump (`'const char *'`), profiler and disassembler listings hold them
  // mid-statement only.
  if (!header && f.statement_keywords < 3) return false;
  if (LooksLikeMarkdown(f) || f.doc_lines * 2 >= f.unfenced_nonblank) return false;
  return true;
}

// §4.1 line count: drop one final LF, split on LF.
size_t Section41LineCount(std::string_view b) {
  size_t lf = CountByte(b, '\n');
  return (!b.empty() && b.back() == '\n') ? lf : lf + 1;
}

// Lazily loaded whole body (for JSON validity and the test-report parser).
class WholeBody {
 public:
  virtual ~WholeBody() = default;
  // nullopt on I/O error.
  virtual std::optional<std::string_view> Get() = 0;
  // The Body being detected, when there is one: the JSON rule leaves the skeleton of a large
  // text on it for the json compressor.
  const Body* body = nullptr;
};

// ValidateJson(jt); for a large text of a Body, the same verdict from the skeleton-building
// validator, and the skeleton is left on the Body (Body::SetDerived). Building it may run out
// of memory: then the plain validator answers, so the verdict never depends on memory.
internal::JsonShape ValidateJsonKeepingSkeleton(std::string_view jt, const Body* body) {
  if (body == nullptr || jt.size() < internal::kJsonPiecewiseMinBytes) return internal::ValidateJson(jt);
  internal::JsonShape shape;
  try {
    auto derived = std::make_shared<internal::DerivedJsonSkeleton>();
    if (derived->skeleton.Build(jt, internal::kJsonSkeletonNodeBytes, internal::kJsonSkeletonDepth, &shape)) {
      derived->data = jt.data();
      derived->size = jt.size();
      body->SetDerived(&internal::kDerivedJsonSkeletonTag, std::move(derived));
    }
    return shape;
  } catch (const std::bad_alloc&) {
    return internal::ValidateJson(jt);
  }
}

class ViewWhole final : public WholeBody {
 public:
  explicit ViewWhole(std::string_view v) : v_(v) {}
  std::optional<std::string_view> Get() override { return v_; }

 private:
  std::string_view v_;
};

class SpoolWhole final : public WholeBody {
 public:
  explicit SpoolWhole(const Body& b) : b_(b) {}
  std::optional<std::string_view> Get() override {
    Result<std::string_view> v = b_.View();
    if (!v.ok()) {
      status_ = v.status();
      return std::nullopt;
    }
    return *v;
  }
  const Status& status() const { return status_; }

 private:
  const Body& b_;
  Status status_;
};

// `sample` is the whole body (exact) or the sample; `prefix` is the whole body or the
// sampled prefix; `whole` gives the whole body for the JSON-based rules.
std::string_view Classify(std::string_view sample, std::string_view prefix, WholeBody& whole, bool sampled) {
  std::string_view b = sample;
  std::string_view t = internal::Trim(b);
  // 1. empty
  if (t.empty()) return "text";

  // 2. test-report, 3. json — both need every byte.
  char first = t.front();
  if (first == '<') {
    std::string_view root = XmlRootName(t);
    if (root == "testsuites" || root == "testsuite") {
      std::optional<std::string_view> all = sampled ? whole.Get() : std::optional(b);
      if (all && ParsesAsTestReport(*all)) return "test-report";
    }
  } else if (first == '{' || first == '[') {
    std::optional<std::string_view> all = sampled ? whole.Get() : std::optional(b);
    if (all) {
      // Rule 3 asks whether t (TRIM: Unicode White_Space) is JSON; rule 2 whether b is, which
      // additionally needs everything around t to be JSON whitespace.
      std::string_view jt = internal::Trim(*all);
      internal::JsonShape shape = ValidateJsonKeepingSkeleton(jt, whole.body);
      size_t lead = static_cast<size_t>(jt.data() - all->data());
      bool b_is_json =
          shape.valid && OnlyJsonWhitespace(all->substr(0, lead)) && OnlyJsonWhitespace(all->substr(lead + jt.size()));
      if (b_is_json && shape.top_is_object &&
          ((shape.has_exitcode && shape.has_tests) || (shape.has_num_failed_tests && shape.has_test_results)) &&
          ParsesAsTestReport(*all)) {
        if (whole.body != nullptr) whole.body->SetDerived(nullptr, nullptr);  // no json compressor will use it
        return "test-report";
      }
      if (shape.valid) return "json";
    }
  }

  // 4. terminal
  if (HasAnsi(b) || BareCrCount(b) >= 3) return "terminal";

  Features f = ComputeFeatures(b);

  // 5. diff
  if ((f.Has(internal::kLitLfAt) || f.Has(internal::kLitDiffGit) ||
       (f.Has(internal::kLitLfMinus) && f.Has(internal::kLitLfPlus))) &&
      f.diff_line_starts >= 4) {
    return "diff";
  }
  // Project rule (issue 16): git history without patches (`git log`, `git log --stat`) is a
  // log; with patches rule 5 has made it a diff already.
  if (internal::IsGitCommitLine(t.substr(0, t.find('\n'))) && (Contains(b, "\nAuthor: ") || Contains(b, "\nMerge: "))) {
    return "log";
  }
  // Project rule (issue 13): JSON Lines (one object per line: zap, logrus, bunyan, pino with
  // numeric levels and epoch times, `go test -json`) are a log even without level words or
  // timestamps; checked on the first 16 non-blank lines, each a valid JSON object.
  if (IsJsonLines(b)) return "log";
  // 6. html
  if (IsHtml(b, t, f)) return "html";
  // 7. tabular
  // Project rule: a log whose lines all carry one comma (Python/log4j "10:00:37,123"
  // timestamps) parses as a 2-column CSV. A real table has a header row; when the first line
  // is itself a log line and the body passes the log rule, it is a log.
  if (std::optional<size_t> rows = TableRowCount(prefix);
      rows && *rows >= 8 && !(f.first_nonblank_is_log && IsLog(f))) {
    return "tabular";
  }
  // Project rule (DECISIONS.md, "Fixed-width tables"): aligned columns under a header row
  // (ps, df, ss, lsof, dpkg -l, kubectl get, docker ps), ahead of log, search, config and code.
  if (!(f.first_nonblank_is_log && IsLog(f)) && internal::IsFixedWidthTable(prefix)) {
    return "tabular";
  }
  // Project rules (before the spec's rules 8–11): build/test console output is a log;
  // grep -n output over files is a search result even when the matched lines are code or log
  // lines.
  if (IsConsoleLog(f)) return "log";
  if (IsStrictSearch(f)) return "search-result";
  // Spec rules 9 and 10. Rule 8 (code) excludes log-looking bodies, so checking log first
  // changes nothing; search-result and config move ahead of code (DECISIONS.md).
  if (IsLog(f)) return "log";
  if (IsSearch(f)) return "search-result";
  // IsConfig includes the project's reading of INI bare keys (DECISIONS.md).
  if (Section41LineCount(prefix) >= 12 && IsConfig(prefix)) return "config";
  if (IsCode(b, t, f)) return "code";
  return "text";
}

// Appends the whole lines of `window` to *sample: drops the partial first line (unless the
// window starts at a line start) and the partial last line (unless it ends the body).
void AppendWholeLines(std::string_view window, bool at_line_start, bool at_end, std::string* sample) {
  size_t begin = 0;
  if (!at_line_start) {
    size_t nl = window.find('\n');
    if (nl == std::string_view::npos) return;
    begin = nl + 1;
  }
  size_t end = window.size();
  if (!at_end) {
    size_t nl = window.rfind('\n');
    if (nl == std::string_view::npos || nl < begin) return;
    end = nl + 1;
  }
  if (end <= begin) return;
  if (!sample->empty() && sample->back() != '\n') sample->push_back('\n');
  sample->append(window.substr(begin, end - begin));
}

// Reads the prefix and windows of a large body through `read(offset, len, out)` (which appends
// to *out) into *sample; the prefix is sample's first *prefix_len bytes. One buffer reserved
// for the largest sample: no second copy of the prefix, no regrowth (each fresh page of a
// one-shot process is a fault; issue 19).
template <typename ReadFn>
Status BuildSample(uint64_t size, ReadFn read, std::string* sample, size_t* prefix_len) {
  sample->clear();
  sample->reserve(kPrefixBytes + kWindows * (kWindowBytes + 2));  // + a partial line's LF each
  CAVEMAN_RETURN_IF_ERROR(read(0, kPrefixBytes, sample));
  // Cut the prefix back to its last line end so no rule sees half a line.
  size_t nl = sample->rfind('\n');
  if (nl != std::string::npos) sample->resize(nl + 1);
  *prefix_len = sample->size();
  uint64_t rest_begin = sample->size();
  uint64_t rest = size - rest_begin;
  std::string window;
  window.reserve(kWindowBytes + 1);
  for (int k = 0; k < kWindows; ++k) {
    uint64_t off = rest_begin + rest * static_cast<uint64_t>(k) / kWindows;
    // The last window ends the body.
    if (k == kWindows - 1) off = std::max(off, size > kWindowBytes ? size - kWindowBytes : 0);
    // A window starts one byte early so a line start at `off` is recognised.
    uint64_t read_off = off > 0 ? off - 1 : 0;
    window.clear();
    CAVEMAN_RETURN_IF_ERROR(read(read_off, kWindowBytes + 1, &window));
    bool at_end = read_off + window.size() >= size;
    AppendWholeLines(window, read_off == 0, at_end, sample);
  }
  return Status::OK();
}

// DetectBody, leaving what the JSON rule learns of a large text on `keep` (may be null).
std::string_view DetectView(std::string_view body, const Body* keep) {
  ViewWhole whole(body);
  whole.body = keep;
  if (body.size() <= kExactLimit) return Classify(body, body, whole, /*sampled=*/false);
  std::string sample;
  size_t prefix_len = 0;
  Status st = BuildSample(
      body.size(),
      [&](uint64_t off, uint64_t len, std::string* out) {
        if (off < body.size()) out->append(body.substr(off, len));
        return Status::OK();
      },
      &sample, &prefix_len);
  (void)st;  // in-memory reads cannot fail
  return Classify(sample, std::string_view(sample).substr(0, prefix_len), whole, /*sampled=*/true);
}

}  // namespace

std::string_view DetectBody(std::string_view body) { return DetectView(body, nullptr); }

std::string_view Detect(std::string_view input) {
  // The prefix test avoids copying the input when no layer can apply.
  if (!MayHavePresentationLayer(input.substr(0, 64 * 1024))) return DetectBody(input);
  Unwrapped u = Unwrap(input);
  if (u.layers.empty()) return DetectBody(input);
  return DetectBody(u.body);
}

Result<std::string_view> DetectLarge(const Body& body) {
  if (body.contiguous()) {
    CAVEMAN_ASSIGN_OR_RETURN(std::string_view v, body.View());
    return DetectView(v, &body);
  }
  if (body.size() <= kExactLimit) {
    std::string all;
    CAVEMAN_RETURN_IF_ERROR(body.ReadRange(0, body.size(), &all));
    return DetectBody(all);
  }
  std::string sample;
  size_t prefix_len = 0;
  CAVEMAN_RETURN_IF_ERROR(BuildSample(
      body.size(), [&](uint64_t off, uint64_t len, std::string* out) { return body.ReadRange(off, len, out); }, &sample,
      &prefix_len));
  SpoolWhole whole(body);
  whole.body = &body;
  std::string_view type = Classify(sample, std::string_view(sample).substr(0, prefix_len), whole, /*sampled=*/true);
  if (!whole.status().ok()) return whole.status();
  return type;
}

}  // namespace caveman
