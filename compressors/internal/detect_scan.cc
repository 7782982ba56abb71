#include "compressors/internal/detect_scan.h"

#include "compressors/internal/hs_cache.h"

#include <algorithm>
#include <cstdio>

#include <hs/hs.h>

namespace caveman::internal {
namespace {

constexpr unsigned kKeywordId = 100;
constexpr unsigned kConsoleBase = 200;
constexpr unsigned kLiteralBase = 1000;

// Regex spelling of each Literal, in enum order.
const char* const kLiteralPatterns[kLitCount] = {
    R"(=>)",       R"(className=)",
    R"(\}\);)",    R"(::)",
    R"(->)",       R"(\)\{)",
    R"(\) \{)",    R"(;
)",
    R"(\{)",       R"(def )",
    R"(:)",        R"(diff --git )",
    R"(
@@ )",           R"(
--- )",
    R"(
\+\+\+ )",
    R"(
    )",           R"(
import )",
    R"(
export )",           R"(
package )",
    R"(
func )",
    R"(
def )",           R"(
class )",
    R"(
const )",           R"(<body)",
    R"(<article)", R"(<main)",
    R"(<div)",     R"(<p[> ])",
};

struct Pattern {
  const char* expr;
  unsigned flags;
  unsigned id;
};

// Rule 9's regex, one alternative per pattern. RE2 runs it per line; here the whole text is
// scanned at once, so `^` is multiline and `\s` (which could cross an LF) becomes
// [\t\f\r ]. Under RE2's (?i), [A-Z] also matches U+017F and U+212A (simple case folding to
// s and k); their UTF-8 bytes are listed explicitly because Hyperscan runs in byte mode.
constexpr unsigned kCi = HS_FLAG_CASELESS;
constexpr unsigned kMl = HS_FLAG_MULTILINE;
const Pattern kLogPatterns[] = {
    {R"(\b(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|PANIC)\b)", kCi, 0},
    {R"(^[\t\f\r ]*\[(?:[A-Za-z]|\xC5\xBF|\xE2\x84\xAA)+\])", kCi | kMl, 1},
    {R"(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2})", kCi, 2},
    {R"(\b\d{2}:\d{2}:\d{2}\b)", 0, 3},
};

const char kKeywords[] = R"(\b(?:func|package|import|def|class|function|return|const|let|var|public|private|)"
                         R"(protected|static|void|struct|interface|namespace|module|fn|impl|trait|export|async|)"
                         R"(await)\b)";

// Console lines of build and test tools. None of them can match across an LF.
const char* const kConsolePatterns[] = {
    // gcc / clang diagnostics and their context lines
    R"(^[^\t\n\f\r :]+:\d+:(?:\d+:)? (?:fatal error|error|warning|note|remark):)",
    R"(^[^\n]*: In (?:function|member function|static member function|constructor|destructor|instantiation of|lambda function) )",
    R"(^In file included from )",
    R"(^ +\d+ \| )",
    R"(^ +\| +[\^~])",
    R"(\(\d+(?:,\d+)?\): (?:fatal error|error|warning) [A-Z]+\d+:)",
    R"(^collect2: )",
    R"(^/usr/bin/ld: )",
    // make, cmake, ninja
    R"(^\[ *\d+%\] )",
    R"(^\[\d+/\d+\] )",
    R"(^g?make(?:\[\d+\])?: )",
    R"(^ninja: )",
    // cargo / rustc
    R"(^ +(?:Compiling|Checking|Finished|Running|Downloaded|Documenting|Fresh) [^\n])",
    R"(^error(?:\[E\d+\])?: )",
    R"(^warning: )",
    R"(^ +--> [^\n]+:\d+:\d+)",
    // pytest
    R"(^={3,} [^\n]* ={3,}\r?$)",
    R"(^_{3,} [^\n]* _{3,}\r?$)",
    R"(^(?:PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) [^\n])",
    R"(::[^\t\n\r ]+ (?:PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS))",
    R"(\.py [.FEsxX]+ *(?:\[ *\d+%\])?\r?$)",
    R"(^collected \d+ items?)",
    R"(^platform [a-z0-9]+ -- Python )",
    R"(^rootdir: )",
    R"(^E {2,}[^\n])",
    R"(^[^\n]*\.py:\d+: [A-Za-z_.]*(?:Error|Exception|Failed))",
    R"(^Traceback \(most recent call last\):)",
    R"(^  File "[^"\n]+", line \d+)",
    // python -m unittest: "test_x (mod.Class.test_x) ... ok", "FAIL: test_x (mod.Class.test_x)",
    // "Ran 60 tests in 0.003s", "FAILED (failures=4)"
    R"(^[^\n]* \.\.\. (?:ok|FAIL|ERROR|skipped[^\n]*|expected failure|unexpected success)\r?$)",
    R"(^(?:FAIL|ERROR): [^\t\n\r ]+ \([^\n)]*\)\r?$)",
    R"(^Ran \d+ tests? in [\d.]+s\r?$)",
    R"(^FAILED \((?:failures|errors|skipped)=\d+)",
    // ctest
    R"(^ *\d+/\d+ Test +#\d+: )",
    R"(^ +Start +\d+: )",
    R"(^Test project )",
    R"(tests passed, \d+ tests? failed out of \d+)",
    R"(^Total Test time)",
    R"(^The following tests (?:FAILED|did not run):)",
    // GoogleTest: "[ RUN      ] Suite.Name", "[  FAILED  ] ...", "[==========] 12 tests ...",
    // "path/x_test.cc:33: Failure"
    R"(^\[ +(?:RUN|OK|FAILED|PASSED|SKIPPED|DISABLED) +\] )",
    R"(^\[(?:={10}|-{10})\] (?:Running |Global test environment|\d+ tests? (?:from|ran)))",
    R"(^[^\t\n\f\r :]+:\d+: Failure\r?$)",
    // go test
    R"(^=== (?:RUN|PAUSE|CONT|NAME) )",
    R"(^ *--- (?:PASS|FAIL|SKIP): )",
    R"(^(?:PASS|FAIL)\r?$)",
    R"(^ok +[^\t\n\r ]+ +[\d.]+s)",
    R"(^FAIL\t)",
    // jest / npm / gradle / maven
    R"(^ *(?:PASS|FAIL) [^\n]+\.(?:test|spec)\.[jt]sx?)",
    R"(^(?:Tests|Test Suites|Snapshots): +\d+)",
    R"(^ +(?:\xE2\x9C\x93|\xE2\x9C\x95|\xE2\x88\x9A|\xC3\x97) [^\n])",
    R"(^ *\xE2\x97\x8F [^\n])",
    R"(^npm (?:ERR!|WARN) )",
    R"(^> Task :)",
    R"(^BUILD (?:SUCCESS|SUCCESSFUL|FAILED))",
    // docker build (BuildKit and legacy), pip, npm
    R"(^#\d+ (?:\[|\d+\.\d+ |DONE \d|CACHED|ERROR|exporting|naming to|writing image))",
    R"(^Step \d+/\d+ : )",
    R"(^ ---> )",
    R"(^(?:Collecting|Downloading|Installing collected packages|Successfully installed|Successfully built|Requirement already satisfied|Building wheels? for) )",
    R"(^npm (?:notice|warn|error) )",
    // kernel ring buffer (dmesg, serial consoles): "[    0.000401] text" (issue 16)
    R"(^\[ *\d+\.\d{6}\] )",
    R"(^(?:added|removed|changed|up to date, audited) \d+ packages?)",
};

const hs_database_t* CompileDatabase() {
  std::vector<const char*> exprs;
  std::vector<unsigned> flags;
  std::vector<unsigned> ids;
  for (const Pattern& p : kLogPatterns) {
    exprs.push_back(p.expr);
    flags.push_back(p.flags);
    ids.push_back(p.id);
  }
  exprs.push_back(kKeywords);
  flags.push_back(0);
  ids.push_back(kKeywordId);
  unsigned id = kConsoleBase;
  for (const char* e : kConsolePatterns) {
    exprs.push_back(e);
    flags.push_back(kMl);
    ids.push_back(id++);
  }
  for (int l = 0; l < kLitCount; ++l) {
    exprs.push_back(kLiteralPatterns[l]);
    flags.push_back(HS_FLAG_SINGLEMATCH | (l >= kLitTagBody ? HS_FLAG_CASELESS : 0u));
    ids.push_back(kLiteralBase + static_cast<unsigned>(l));
  }
  std::string error;
  const hs_database_t* db =
      CompileMultiCached(exprs.data(), flags.data(), ids.data(), static_cast<unsigned>(exprs.size()), &error);
  if (db == nullptr) {
    // Fixed patterns: this only happens on a platform Hyperscan does not support. Detection
    // then fails open (no pattern ever matches).
    std::fprintf(stderr, "caveman: hyperscan compile failed: %s\n", error.c_str());
    return nullptr;
  }
  return db;
}

const hs_database_t* Database() {
  static const hs_database_t* const db = CompileDatabase();
  return db;
}

struct ScratchHolder {
  hs_scratch_t* scratch = nullptr;
  ~ScratchHolder() {
    if (scratch) hs_free_scratch(scratch);
  }
};

struct Context {
  std::string_view text;
  const std::vector<size_t>* starts;
  ScanResult* out;
  size_t line = 0;  // cached line index of the last match
};

size_t LineOf(Context* c, size_t pos) {
  const std::vector<size_t>& s = *c->starts;
  size_t l = c->line;
  // Matches arrive roughly in end-offset order: try the cached line and the next ones.
  if (s[l] <= pos) {
    for (int k = 0; k < 4; ++k) {
      if (l + 1 >= s.size() || s[l + 1] > pos) {
        c->line = l;
        return l;
      }
      ++l;
    }
  }
  l = static_cast<size_t>(std::upper_bound(s.begin(), s.end(), pos) - s.begin()) - 1;
  c->line = l;
  return l;
}

// The longest `(…)` of Rust's `pub(…)` that StartsStatement looks back over (`pub(crate)`,
// `pub(super)`, `pub(in some::module::path)`).
constexpr size_t kMaxPubPath = 64;

bool IsAsciiLetter(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); }
bool IsBlank(char ch) { return ch == ' ' || ch == '\t' || ch == '\f' || ch == '\r'; }

// Whether the keyword that ends at `end` (a match of kKeywords, all letters) starts a
// statement: only blanks, optionally after Rust's `pub` or `pub(…)`, lie between it and the
// start of its line (`line_start`) or a `;`, `{` or `}` (project rule, docs/DECISIONS.md
// "Code keywords start statements").
bool StartsStatement(std::string_view text, size_t line_start, size_t end) {
  size_t i = end;
  while (i > line_start && IsAsciiLetter(text[i - 1])) --i;  // the keyword
  auto blanks_back = [&](size_t j) {
    while (j > line_start && IsBlank(text[j - 1])) --j;
    return j;
  };
  auto opens_statement = [&](size_t j) {
    return j == line_start || text[j - 1] == ';' || text[j - 1] == '{' || text[j - 1] == '}';
  };
  size_t j = blanks_back(i);
  if (opens_statement(j)) return true;
  if (j == i) return false;  // no blank before the keyword
  // `pub ` or `pub(crate) ` before it. The `(` is looked for at most kMaxPubPath bytes back
  // on the line: an unbounded search from every keyword after a `)` made detection quadratic
  // (`a) fn` repeated: 2.4 MB took 27 s).
  if (text[j - 1] == ')') {
    const size_t from = std::max(line_start, j - 1 > kMaxPubPath ? j - 1 - kMaxPubPath : size_t{0});
    const size_t open = text.substr(from, j - 1 - from).rfind('(');
    if (open == std::string_view::npos) return false;
    j = from + open;
  }
  if (j < line_start + 3 || text.substr(j - 3, 3) != "pub") return false;
  j -= 3;
  if (j > line_start && IsAsciiLetter(text[j - 1])) return false;
  return opens_statement(blanks_back(j));
}

int OnMatch(unsigned int id, unsigned long long /*from*/, unsigned long long to, unsigned int /*flags*/, void* ctx) {
  auto* c = static_cast<Context*>(ctx);
  if (id >= kLiteralBase) {
    c->out->literals |= uint64_t{1} << (id - kLiteralBase);
    return 0;
  }
  if (to == 0) return 0;
  size_t line = LineOf(c, static_cast<size_t>(to - 1));
  if (id == kKeywordId) {
    ++c->out->keyword_matches;
    uint16_t& k = c->out->line_keywords[line];
    if (k < 0xFFFF) ++k;
    uint16_t& st = c->out->line_statements[line];
    if (st < 0xFFFF && StartsStatement(c->text, (*c->starts)[line], static_cast<size_t>(to))) ++st;
    return 0;
  }

  c->out->line_flags[line] |= id >= kConsoleBase ? kLineConsole : kLineLog;
  return 0;
}

}  // namespace

ScanResult ScanDetectPatterns(std::string_view text, const std::vector<size_t>& line_starts) {
  ScanResult r;
  r.line_flags.assign(line_starts.size(), 0);
  r.line_keywords.assign(line_starts.size(), 0);
  r.line_statements.assign(line_starts.size(), 0);
  const hs_database_t* db = Database();
  if (db == nullptr || line_starts.empty()) {
    r.ok = db != nullptr;
    return r;
  }
  thread_local ScratchHolder holder;
  if (hs_alloc_scratch(db, &holder.scratch) != HS_SUCCESS) {
    r.ok = false;
    return r;
  }
  Context ctx{text, &line_starts, &r, 0};
  // Hyperscan takes an unsigned int length; detection never scans more than a few MiB.
  size_t len = std::min<size_t>(text.size(), 0xFFFFFFF0u);
  if (hs_scan(db, text.data(), static_cast<unsigned>(len), 0, holder.scratch, OnMatch, &ctx) != HS_SUCCESS) {
    r = ScanResult{};
    r.line_flags.assign(line_starts.size(), 0);
    r.line_keywords.assign(line_starts.size(), 0);
    r.line_statements.assign(line_starts.size(), 0);
    r.ok = false;
  }
  return r;
}

}  // namespace caveman::internal
