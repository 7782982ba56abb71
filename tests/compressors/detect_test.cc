#include "compressors/detect.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <random>

#include "compressors/cj.h"
#include "compressors/internal/detect_scan.h"
#include "compressors/internal/json_validity.h"
#include "stream/spool.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------
// Table-driven: fixtures/detect/<expected-type>/<name>.

struct FixtureCase {
  std::string expected;
  std::string relpath;
};

std::vector<FixtureCase> AllFixtures() {
  std::vector<FixtureCase> out;
  fs::path root = fs::path(testing::SourceDir()) / "fixtures" / "detect";
  if (!fs::exists(root)) return out;
  for (const auto& dir : fs::directory_iterator(root)) {
    if (!dir.is_directory()) continue;
    for (const auto& file : fs::directory_iterator(dir.path())) {
      if (!file.is_regular_file()) continue;
      out.push_back({dir.path().filename().string(), fs::relative(file.path(), testing::SourceDir()).string()});
    }
  }
  std::sort(out.begin(), out.end(), [](const FixtureCase& a, const FixtureCase& b) { return a.relpath < b.relpath; });
  return out;
}

TEST(DetectFixtures, EveryFixtureDetectsAsItsDirectory) {
  std::vector<FixtureCase> cases = AllFixtures();
  ASSERT_GE(cases.size(), 40u) << "fixtures/detect is missing";
  std::vector<std::string> types;
  for (const FixtureCase& c : cases) {
    std::string body = testing::ReadFile(c.relpath);
    EXPECT_EQ(DetectBody(body), c.expected) << c.relpath;
    // Detect() = unwrap + DetectBody; none of these fixtures has a presentation layer.
    EXPECT_EQ(Detect(body), c.expected) << c.relpath;
    if (std::find(types.begin(), types.end(), c.expected) == types.end()) {
      types.push_back(c.expected);
    }
  }
  // Every auto-detectable type has fixtures.
  EXPECT_EQ(types.size(), 11u);
}

TEST(DetectFixtures, GutteredAndWrappedFixturesDetectAsTheirBody) {
  for (const FixtureCase& c : AllFixtures()) {
    std::string body = testing::ReadFile(c.relpath);
    std::string guttered;
    size_t n = 1;
    size_t start = 0;
    while (start < body.size()) {
      size_t nl = body.find('\n', start);
      size_t end = nl == std::string::npos ? body.size() : nl;
      guttered += std::string(6 - std::min<size_t>(6, std::to_string(n).size()), ' ') + std::to_string(n) + "\t" +
                  body.substr(start, end - start) + "\n";
      ++n;
      start = end + 1;
    }
    if (n <= 8) continue;  // too short for a gutter
    std::string wrapped = "<file path=\"" + c.relpath + "\">" + guttered + "</file>\n";
    EXPECT_EQ(Detect(wrapped), c.expected) << c.relpath;
  }
}

// ---------------------------------------------------------------------------------------
// Spec rules on small inputs.

TEST(DetectRules, EmptyAndWhitespaceAreText) {
  EXPECT_EQ(DetectBody(""), "text");
  EXPECT_EQ(DetectBody(" \n\t\r\n  "), "text");
  EXPECT_EQ(DetectBody("\xC2\xA0\xE3\x80\x80"), "text");  // NBSP, ideographic space
}

TEST(DetectRules, JsonRequiresExactlyOneValidValue) {
  EXPECT_EQ(DetectBody("{\"a\": [1, 2, {\"b\": null}]}\n"), "json");
  EXPECT_EQ(DetectBody("[]"), "json");
  EXPECT_EQ(DetectBody("{\"a\":1} {\"b\":2}"), "text");
  EXPECT_EQ(DetectBody("{\"a\":1,}"), "text");
  EXPECT_EQ(DetectBody("[\"\xFF\"]"), "text");         // invalid UTF-8 in a string
  EXPECT_EQ(DetectBody("[1e400]"), "json");            // any magnitude is valid JSON
  EXPECT_EQ(DetectBody("[\"\\ud800\"]"), "text");      // lone surrogate
  EXPECT_EQ(DetectBody("\"just a string\""), "text");  // rule 3 needs { or [
  // Rule 3 tests TRIM(b): Unicode White_Space around the value is allowed.
  EXPECT_EQ(DetectBody("\xC2\xA0{\"a\": 1}\xE3\x80\x80\n"), "json");
}

TEST(DetectRules, JsonDepthLimitIsTenThousand) {
  std::string ok = std::string(10000, '[') + std::string(10000, ']');
  std::string deep = std::string(10001, '[') + std::string(10001, ']');
  EXPECT_EQ(DetectBody(ok), "json");
  EXPECT_NE(DetectBody(deep), "json");
}

TEST(DetectRules, JsonValidityAgreesWithTreeParser) {
  const char* cases[] = {
      "{}",
      "[]",
      "[1,2,3]",
      "{\"a\":\"b\"}",
      " [ 1 , 2 ] ",
      "[01]",
      "[1.]",
      "[.5]",
      "[-]",
      "[-0.0e+5]",
      "[tru]",
      "[true]",
      "[truex]",
      "[null]",
      "[nul]",
      "[1 2]",
      "{\"a\" 1}",
      "{\"a\":1,}",
      "[1,]",
      "[",
      "]",
      "{\"\\uZZZZ\":1}",
      "[\"\\u00e9\"]",
      "[\"a\tb\"]",
      "[\"\\ud83d\\ude00\"]",
      "[\"\\udc00\"]",
      "[\"\\x\"]",
      "{\"a\":{\"b\":[{}]}}",
      "[1]x",
      "[\"\\/\\b\\f\\n\\r\\t\\\\\\\"\"]",
      "{\"k\":1}\n\n",
      "[123456789012345678901234567890]",
      "[1E5,1e-5,0.25]",
      "{\"a\":1 \"b\":2}",
      "[{]}",
  };
  for (const char* c : cases) {
    EXPECT_EQ(internal::ValidateJson(c).valid, internal::IsJson(c)) << c;
  }
}

TEST(DetectRules, TerminalOnAnsiOrBareCarriageReturns) {
  EXPECT_EQ(DetectBody("plain \x1b[1mbold\x1b[0m text"), "terminal");
  EXPECT_EQ(DetectBody("a\rb\rc\rd\n"), "terminal");
  EXPECT_EQ(DetectBody("a\r\nb\r\nc\r\nd\r\n"), "text");  // CRLF is not a bare CR
  EXPECT_EQ(DetectBody("a\rb\r\n"), "text");              // only one bare CR
}

TEST(DetectRules, DiffNeedsMarkersAndFourLineStarts) {
  EXPECT_EQ(DetectBody("--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n"), "diff");
  // Markers but fewer than 4 matching line starts.
  EXPECT_NE(DetectBody("diff --git a b\nhello\n"), "diff");
}

TEST(DetectRules, HtmlRules) {
  EXPECT_EQ(DetectBody("<!DOCTYPE html><title>x</title>"), "html");
  EXPECT_EQ(DetectBody("  <HTML><body>hi</body></HTML>"), "html");
  // Code structure wins over tags.
  EXPECT_NE(DetectBody("const x = () => <div><p>a</p><p>b</p><p>c</p></div>;"), "html");
  // Fewer than six '<'.
  EXPECT_NE(DetectBody("<div>a</div> <p>b"), "html");
}

TEST(DetectRules, LogRule) {
  EXPECT_EQ(DetectBody("INFO a\nINFO b\nWARN c\nnothing\n"), "log");
  // 3 of 7 pieces (the trailing newline adds a piece) is less than half.
  EXPECT_NE(DetectBody("INFO a\nINFO b\nWARN c\nx\ny\nz\n"), "log");
  // (?i) and the [A-Z]+ bracket alternative, including U+212A KELVIN SIGN folding to k.
  EXPECT_EQ(DetectBody("[\xE2\x84\xAA] one\n  [abc] two\n[x] three\n"), "log");
}

TEST(DetectRules, SearchResultRuleCountsCodePoints) {
  std::string lines;
  for (int i = 0; i < 6; ++i) lines += "notes" + std::to_string(i) + ":" + std::to_string(i + 1) + ":hit\n";
  EXPECT_EQ(DetectBody(lines), "search-result");
  // [^:\n] never matches an invalid byte: these lines do not count.
  std::string bad;
  for (int i = 0; i < 6; ++i) bad += "n\xFFotes:" + std::to_string(i + 1) + ":hit\n";
  EXPECT_NE(DetectBody(bad), "search-result");
}

// Project rule (DECISIONS.md, "Symbol listings are never code"): `nm -C` output spells C++
// (namespaces, `::`, `const`) but is a listing of addresses; it stays text after compression
// (its markers do not count), while code holding a few address-like lines stays code.
TEST(DetectRules, SymbolListingsAreNotCode) {
  std::string listing = "code.cc.o:\n";
  for (int i = 0; i < 12; ++i) {
    listing += "00000000000000" + std::to_string(10 + i) + " t caveman::internal::(anonymous namespace)::Walk" +
               std::to_string(i) + "(std::string_view, unsigned long) const\n";
  }
  listing += "                 U std::__throw_bad_alloc()\n";
  EXPECT_EQ(DetectBody(listing), "text");
  std::string view = listing;
  for (int i = 0; i < 5; ++i) view += "\xE2\x80\xA6 2 sections elided (caveman) \xE2\x80\xA6\n";
  EXPECT_EQ(DetectBody(view), "text");
  std::string code = "#include <cstdint>\nnamespace x {\nconst uint64_t kMasks[] = {\n";
  for (int i = 0; i < 4; ++i) code += "0000000000000010 , // mask\n";
  code += "};\nstatic int f(int a) { return a; }\nclass C { public: void g(); };\nstruct S { int v; };\n}\n";
  EXPECT_EQ(DetectBody(code), "code");
}

// docs/DECISIONS.md, "Code keywords start statements": rule 8's keywords count only where a
// statement starts (line start, or after `;`, `{`, `}`), outside headers.
TEST(DetectRules, CodeKeywordsMustStartStatements) {
  // Keywords inside paths and quoted type strings, braces and `->` present: not code.
  std::string deps = "build/engine/CMakeFiles/engine.dir/engine.cc.o: #deps 3, deps mtime 1 (VALID)\n";
  for (const char* p : {"/work/main/stream/export.h", "/usr/include/c++/12/bits/move.h", "/var/lib/x/const.h",
                        "/work/main/compressors/internal/module.h", "/work/main/store/static.h"}) {
    deps += std::string("    ") + p + "\n";
  }
  deps += "    /usr/include/c++/12/functional {x} -> y\n";
  EXPECT_EQ(DetectBody(deps), "text");
  std::string ast = "TranslationUnitDecl 0x1 <<invalid sloc>> <invalid sloc>\n";
  for (int i = 0; i < 6; ++i) {
    ast += "|-FunctionDecl 0x2 <a.c:" + std::to_string(i + 1) + ":1> col:5 f" + std::to_string(i) +
           " 'int (const struct node *, void *)' {}\n";
  }
  EXPECT_EQ(DetectBody(ast), "text");
  // The same keywords starting statements: code, on separate lines or minified on one.
  EXPECT_EQ(DetectBody("import x from 'y';\nexport function f(a) {\n  const b = a -> 1;\n  return b;\n}\n"), "code");
  EXPECT_EQ(DetectBody("!function(e){var t=1;function n(r){return r+t}const o=n(e);return o}(2);\n"), "code");
  EXPECT_EQ(DetectBody("pub struct Q { v: u32 }\nimpl Q {\n    pub fn get(&self) -> u32 {\n        self.v\n    }\n}\n"),
            "code");
}

// `pub(…)` before a keyword is looked for at most 64 bytes back on its line: a keyword after
// a `)` with no `(` near it is no statement start (an unbounded look-back from every such
// keyword made detection quadratic on `a) fn` repeated).
TEST(DetectRules, PubPathIsLookedForNearTheKeywordOnly) {
  auto statements = [](const std::string& text) {
    std::vector<size_t> starts{0};
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') starts.push_back(i + 1);
    }
    internal::ScanResult r = internal::ScanDetectPatterns(text, starts);
    EXPECT_TRUE(r.ok);
    return r.line_statements.empty() ? 0 : static_cast<int>(r.line_statements[0]);
  };
  EXPECT_EQ(statements("pub(crate) fn get() {}\n"), 1);
  EXPECT_EQ(statements("pub(in a::b) struct S;\n"), 1);
  EXPECT_EQ(statements("pub(" + std::string(100, 'x') + ") fn get() {}\n"), 0);
  EXPECT_EQ(statements("f(x) fn\n"), 0);  // a `(` but no `pub` before it
  std::string many;
  for (int i = 0; i < 20000; ++i) many += "a) fn\n";
  EXPECT_EQ(DetectBody(many), "text");
}

TEST(DetectRules, ShebangIsCode) { EXPECT_EQ(DetectBody("#!/bin/sh\necho hi\n"), "code"); }

// ---------------------------------------------------------------------------------------
// Bad input never crashes and always gets a type.

TEST(DetectBadInput, NulBytesInvalidUtf8AndHugeLine) {
  std::string nul("abc\0def\0\0ghi\n", 13);
  EXPECT_EQ(DetectBody(nul), "text");
  EXPECT_EQ(DetectBody("\xFF\xFE\xFD garbage \xC0\xAF\n"), "text");
  std::string line(64u << 20, 'x');
  EXPECT_EQ(DetectBody(line), "text");
  line[0] = '{';
  EXPECT_EQ(DetectBody(line), "text");
  std::string half_json = "[" + std::string(3u << 20, '1');
  EXPECT_EQ(DetectBody(half_json), "text");
}

TEST(DetectBadInput, PathologicalRepetitionsStayLinear) {
  // Shapes that would make a naive scan quadratic (the test times out if one does).
  auto repeat = [](std::string_view unit, size_t bytes) {
    std::string s;
    while (s.size() < bytes) s += unit;
    return s;
  };
  for (std::string_view unit : {"a-", "-1", "a.b-1", "\x1b[", "\x1b[1", "<", "<file", "\r", "1\t", ":", "a:", "[", "{",
                                "\"", "\\", " ", "\n", "#", "``"}) {
    std::string s = repeat(unit, 1u << 20);
    EXPECT_FALSE(Detect(s).empty()) << unit;
    EXPECT_FALSE(DetectBody(s + s + s).empty()) << unit;  // sampled path
    Unwrapped u = Unwrap(s);                              // none of these has 8 numbered lines or one <file … </file>
    EXPECT_TRUE(u.layers.empty()) << unit;
    EXPECT_EQ(u.body, s);
  }
}

TEST(DetectBadInput, RandomBytesGetAType) {
  uint64_t x = 88172645463325252ull;
  for (int round = 0; round < 200; ++round) {
    std::string s;
    size_t n = round * 37 % 4096;
    for (size_t i = 0; i < n; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      s.push_back(static_cast<char>(x & 0xFF));
    }
    std::string_view t = Detect(s);
    EXPECT_FALSE(t.empty());
  }
}

// ---------------------------------------------------------------------------------------
// Large bodies: sampling is a function of the bytes, so the spooled and in-memory paths agree.

std::string BigLog(size_t bytes) {
  std::string s;
  s.reserve(bytes + 128);
  for (size_t i = 0; s.size() < bytes; ++i) {
    s += "2026-11-02T10:00:" + std::to_string(10 + i % 50) + " INFO [orders] compiling src/a_" + std::to_string(i) +
         ".cc\n";
  }
  return s;
}

TEST(DetectLargeTest, SpooledAndInMemoryAgree) {
  std::string log = BigLog(5u << 20);
  ASSERT_EQ(DetectBody(log), "log");
  SpoolOptions opts;
  opts.memory_limit = 64 * 1024;  // force a spill to disk
  Spool spool(opts);
  ASSERT_TRUE(spool.Write(log).ok());
  ASSERT_FALSE(spool.in_memory());
  Body body = Body::FromSpool(spool);
  Result<std::string_view> t = DetectLarge(body);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, "log");
  Result<std::string_view> t2 = DetectLarge(Body::FromView(log));
  ASSERT_TRUE(t2.ok());
  EXPECT_EQ(*t2, "log");
}

TEST(DetectLargeTest, LargeJsonIsValidatedWhole) {
  std::string json = "[";
  for (int i = 0; json.size() < (3u << 20); ++i) {
    if (i) json += ",\n";
    json += "{\"id\":" + std::to_string(i) + ",\"name\":\"item " + std::to_string(i) + "\"}";
  }
  json += "]\n";
  EXPECT_EQ(DetectBody(json), "json");
  SpoolOptions opts;
  opts.memory_limit = 64 * 1024;
  Spool spool(opts);
  ASSERT_TRUE(spool.Write(json).ok());
  Result<std::string_view> t = DetectLarge(Body::FromSpool(spool));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, "json");
  // Broken at the very end: only a whole-body check can see it.
  json[json.size() - 2] = ',';
  EXPECT_NE(DetectBody(json), "json");
}

TEST(DetectLargeTest, SampledPathAgreesBetweenSpoolAndView) {
  // Every fixture repeated past the exact-classification limit: whatever type the sample
  // gives, the in-memory and the spilled path must give the same.
  for (const FixtureCase& c : AllFixtures()) {
    std::string unit = testing::ReadFile(c.relpath);
    if (unit.empty()) continue;
    if (unit.back() != '\n') unit.push_back('\n');
    std::string big;
    while (big.size() < (1u << 20) + (1u << 17)) big += unit;
    SpoolOptions opts;
    opts.memory_limit = 64 * 1024;
    Spool spool(opts);
    ASSERT_TRUE(spool.Write(big).ok());
    Result<std::string_view> spooled = DetectLarge(Body::FromSpool(spool));
    ASSERT_TRUE(spooled.ok());
    EXPECT_EQ(*spooled, DetectBody(big)) << c.relpath;
  }
}

TEST(DetectLargeTest, LargeLogAndCsvKeepTheirType) {
  std::string csv = "id,host,cpu_pct,status\n";
  for (int i = 0; csv.size() < (5u << 20); ++i) {
    csv += std::to_string(i) + ",web-" + std::to_string(i % 7) + "," + std::to_string(i % 100) +
           (i % 13 ? ",ok\n" : ",degraded\n");
  }
  EXPECT_EQ(DetectBody(csv), "tabular");
  std::string grep;
  for (int i = 0; grep.size() < (5u << 20); ++i) {
    grep += "src/module_" + std::to_string(i % 300) + "/file.cc:" + std::to_string(i % 900 + 1) +
            ":  return Status::OK();\n";
  }
  EXPECT_EQ(DetectBody(grep), "search-result");
}

TEST(DetectLargeTest, SpoolWriteChunkingDoesNotMatter) {
  std::string log = BigLog((1u << 20) + (1u << 16));  // just past the exact limit: sampled
  ASSERT_EQ(DetectBody(log), "log");
  testing::ExpectChunkingInvariant(log, [](const std::vector<std::string_view>& pieces) {
    SpoolOptions opts;
    opts.memory_limit = 256 * 1024;
    Spool spool(opts);
    for (std::string_view p : pieces) {
      if (!spool.Write(p).ok()) return std::string("write error");
    }
    Result<std::string_view> t = DetectLarge(Body::FromSpool(spool));
    return t.ok() ? std::string(*t) : std::string("error");
  });
}

TEST(DetectThreads, ConcurrentDetectionIsDeterministic) {
  std::vector<FixtureCase> cases = AllFixtures();
  std::vector<std::string> bodies;
  std::vector<std::string> expected;
  for (const FixtureCase& c : cases) {
    bodies.push_back(testing::ReadFile(c.relpath));
    expected.emplace_back(DetectBody(bodies.back()));
  }
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        for (size_t i = 0; i < bodies.size(); ++i) {
          size_t k = (i + t * 7) % bodies.size();
          if (DetectBody(bodies[k]) != expected[k]) ++mismatches[t];
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

// ---------------------------------------------------------------------------------------
// Presentation layers (§3.2).

std::string Numbered(const std::vector<std::string>& lines, const std::string& sep, int first = 1) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    out += "  " + std::to_string(first + static_cast<int>(i)) + sep + lines[i] + "\n";
  }
  return out;
}

const std::vector<std::string> kTen = {"alpha", "beta", "gamma", "delta", "epsilon",
                                       "zeta",  "eta",  "theta", "iota",  "kappa"};

TEST(Unwrap, GutterStylesAreRecognised) {
  for (const std::string sep : {"\t", " | ", ": "}) {
    std::string in = Numbered(kTen, sep);
    Unwrapped u = Unwrap(in);
    ASSERT_FALSE(u.layers.empty()) << sep;
    EXPECT_EQ(u.body, "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\niota\nkappa\n");
  }
}

TEST(Unwrap, GutterRequiresEightIncreasingNumbers) {
  std::vector<std::string> seven(kTen.begin(), kTen.begin() + 7);
  EXPECT_TRUE(Unwrap(Numbered(seven, "\t")).layers.empty());
  std::string dec = Numbered(kTen, "\t");
  dec.replace(dec.find("  5\t"), 4, "  3\t");  // not strictly increasing
  EXPECT_TRUE(Unwrap(dec).layers.empty());
  std::string text_line = Numbered(kTen, "\t") + "no gutter here\n";
  EXPECT_TRUE(Unwrap(text_line).layers.empty());
  std::string thirteen = Numbered(kTen, "\t");
  thirteen.replace(thirteen.find("  1\t"), 4, "  1234567890123\t");
  EXPECT_TRUE(Unwrap(thirteen).layers.empty());
}

TEST(Unwrap, BlankLinesInheritTheNumberAndNumberedBlanks) {
  std::string in = "1\ta\n2\tb\n\n3\tc\n4\n5\te\n6\tf\n7\tg\n8\th\n";
  Unwrapped u = Unwrap(in);
  ASSERT_FALSE(u.layers.empty());
  EXPECT_EQ(u.body, "a\nb\n\nc\n\ne\nf\ng\nh\n");
  // Identity restore: every line traced.
  EXPECT_EQ(u.layers.Rewrap(u.body), "1\ta\n2\tb\n2\t\n3\tc\n4\t\n5\te\n6\tf\n7\tg\n8\th\n");
}

TEST(Unwrap, GutterRestoreTracesKeptLines) {
  Unwrapped u = Unwrap(Numbered(kTen, " | ", 10));
  ASSERT_FALSE(u.layers.empty());
  // A compressor kept lines 1, 2 and 9 and inserted a marker.
  std::string out = "alpha\nbeta\n… 6 lines elided …\niota\n";
  EXPECT_EQ(u.layers.Rewrap(out), "10\talpha\n11\tbeta\n12\t… 6 lines elided …\n18\tiota\n");
  // Without a trailing newline the output keeps none.
  EXPECT_EQ(u.layers.Rewrap("alpha\nbeta"), "10\talpha\n11\tbeta");
}

TEST(Unwrap, GutterRestoreDeclinedWhenTooFewLinesTrace) {
  Unwrapped u = Unwrap(Numbered(kTen, "\t"));
  ASSERT_FALSE(u.layers.empty());
  // 1 of 3 tracked lines traced: 1 × 2 < 3 → no gutter.
  std::string out = "alpha\n{\"re\": \"serialized\"}\n[1, 2]\n";
  EXPECT_EQ(u.layers.Rewrap(out), out);
  // 1 of 2 traced: 1 × 2 = 2, not < 2 → gutter restored.
  std::string out2 = "alpha\nsomething new\n";
  EXPECT_EQ(u.layers.Rewrap(out2), "1\talpha\n2\tsomething new\n");
  // Duplicate source lines are matched in order after the cursor.
  Unwrapped d = Unwrap("1\tx\n2\ty\n3\tx\n4\ty\n5\tz\n6\tz\n7\tx\n8\tw\n");
  ASSERT_FALSE(d.layers.empty());
  EXPECT_EQ(d.layers.Rewrap("y\nx\nw\n"), "2\ty\n3\tx\n8\tw\n");
}

TEST(Unwrap, FileWrapper) {
  std::string in = "  <file path=\"a>b.txt\" note='it\"s'>\nhello world\n</file>\n\n";
  Unwrapped u = Unwrap(in);
  ASSERT_FALSE(u.layers.empty());
  EXPECT_EQ(u.body, "\nhello world\n");
  EXPECT_EQ(u.layers.Rewrap("X"), "  <file path=\"a>b.txt\" note='it\"s'>X</file>\n\n");
  EXPECT_EQ(u.layers.Rewrap(u.body), in);
  EXPECT_TRUE(Unwrap("<file>   </file>").layers.empty());       // empty inner
  EXPECT_TRUE(Unwrap("<filex>abc</file>").layers.empty());      // 6th byte
  EXPECT_TRUE(Unwrap("<file>a<file>b</file>").layers.empty());  // two <file
  EXPECT_TRUE(Unwrap("<file a='>abc</file>").layers.empty());   // '>' only inside quotes
  EXPECT_TRUE(Unwrap("<file>abc</file> trailing").layers.empty());
  EXPECT_FALSE(Unwrap("<file>x</file>").layers.empty());  // exactly 14 bytes
}

TEST(Unwrap, GutterInsideFileAndFourLayerLimit) {
  std::string guttered = Numbered(kTen, "\t");
  std::string in = "<file path=\"x\">\n" + guttered + "</file>";
  Unwrapped u = Unwrap(in);
  // The blank first line of the inner content is a gutter-less blank line (number 0).
  EXPECT_EQ(u.body, "\nalpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\niota\nkappa\n");
  // Restore writes every line as N<TAB>, the blank one with the number it inherited.
  EXPECT_EQ(u.layers.Rewrap(u.body),
            "<file path=\"x\">0\t\n1\talpha\n2\tbeta\n3\tgamma\n4\tdelta\n5\tepsilon\n6\tzeta\n"
            "7\teta\n8\ttheta\n9\tiota\n10\tkappa\n</file>");
  Unwrapped tight = Unwrap("<file path=\"x\">" + guttered + "</file>");
  EXPECT_EQ(tight.body, "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\niota\nkappa\n");

  // Five nested gutters: only four are removed.
  std::string body = "a\nb\nc\nd\ne\nf\ng\nh\n";
  std::string cur = body;
  for (int layer = 0; layer < 5; ++layer) {
    std::string next;
    size_t start = 0;
    int n = 1;
    while (start < cur.size()) {
      size_t nl = cur.find('\n', start);
      next += std::to_string(n++) + "\t" + cur.substr(start, nl - start) + "\n";
      start = nl + 1;
    }
    cur = next;
  }
  Unwrapped five = Unwrap(cur);
  EXPECT_EQ(five.body, "1\ta\n2\tb\n3\tc\n4\td\n5\te\n6\tf\n7\tg\n8\th\n");
  EXPECT_EQ(five.layers.Rewrap(five.body), cur);
}

TEST(Unwrap, MayHavePresentationLayer) {
  EXPECT_TRUE(MayHavePresentationLayer("   <file a=1>x"));
  EXPECT_TRUE(MayHavePresentationLayer("\n\n     1\tfoo\n"));
  EXPECT_TRUE(MayHavePresentationLayer("12 | x"));
  EXPECT_TRUE(MayHavePresentationLayer("   123"));  // may continue with a separator
  EXPECT_FALSE(MayHavePresentationLayer("{\"a\": 1}\n"));
  EXPECT_FALSE(MayHavePresentationLayer("2024-01-01 INFO x\n"));
  // Consistency: whenever Unwrap finds a layer, the prefix test says "maybe".
  for (const std::string sep : {"\t", " | ", ": "}) {
    std::string in = Numbered(kTen, sep);
    EXPECT_TRUE(MayHavePresentationLayer(in.substr(0, 5)));
    EXPECT_TRUE(MayHavePresentationLayer(in));
  }
}

TEST(Unwrap, NoLayerLeavesInputUntouched) {
  Unwrapped u = Unwrap("plain text\n");
  EXPECT_TRUE(u.layers.empty());
  EXPECT_EQ(u.body, "plain text\n");
  EXPECT_EQ(u.layers.Rewrap("out"), "out");
}

}  // namespace
}  // namespace caveman

namespace caveman {
namespace {

// Issue 15 item 8: the byte-level validator (used above 4 MiB and when no simdjson parser can
// be allocated) gives the same verdict and shape as the simdjson walk, so detection depends
// on the bytes only.
void ExpectSameVerdict(const std::string& text) {
  // Detection asks only about texts whose value starts with { or [ (§3.3 rule 3).
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || (text[first] != '{' && text[first] != '[')) return;
  const internal::JsonShape a = internal::ValidateJson(text);
  const internal::JsonShape b = internal::ValidateJsonBytes(text);
  EXPECT_EQ(a.valid, b.valid) << text.substr(0, 120);
  if (a.valid && b.valid) {
    EXPECT_EQ(a.top_is_object, b.top_is_object) << text.substr(0, 120);
    EXPECT_EQ(a.has_exitcode, b.has_exitcode);
    EXPECT_EQ(a.has_tests, b.has_tests);
    EXPECT_EQ(a.has_num_failed_tests, b.has_num_failed_tests);
    EXPECT_EQ(a.has_test_results, b.has_test_results);
  }
}

TEST(JsonByteValidator, AgreesWithSimdjsonOnCasesAndMutations) {
  std::vector<std::string> cases = {"{}",
                                    "[]",
                                    "0",
                                    "-0.5e+10",
                                    "1e400",
                                    "01",
                                    "1.",
                                    ".5",
                                    "\"a\\u00e9\"",
                                    "\"\\ud83d\\ude00\"",
                                    "\"\\ud83d\"",
                                    "\"\\ude00\"",
                                    "\"\\x\"",
                                    "\"tab\there\"",
                                    "[1,]",
                                    "[1 2]",
                                    "{\"a\":1,}",
                                    "{\"a\" 1}",
                                    "{1:2}",
                                    "[true,false,null]",
                                    "[tru]",
                                    "nul",
                                    "[\"\xff\"]",
                                    "{\"exitcode\":0,\"tests\":[]}",
                                    "{\"numFailedTests\":0,\"testResults\":[]}",
                                    "{\"te\\u0073ts\":1}",
                                    " [1] ",
                                    "[1] x",
                                    "[1]]",
                                    "{\"a\":{\"b\":[1,{\"c\":\"d\"}]}}",
                                    "[-]",
                                    "[1e]",
                                    "[1E+]",
                                    "\"unterminated",
                                    "[\"a\\\"]"};
  for (const char* f : {"fixtures/seed/orders.json"}) cases.push_back(testing::ReadFile(f));
  // Strings and indentation scanned eight bytes at a time: a special byte at every offset of
  // strings up to 24 bytes, and runs of spaces of every length up to 24.
  for (size_t len = 0; len <= 24; ++len) {
    for (size_t at = 0; at <= len; ++at) {
      for (const std::string special :
           {"\\\"", "\x01", "\x1f", "\"", "\\n", "\\u00e9", "\xc3\xa9", "\x7f", " ", "\\", "\\x"}) {
        cases.push_back("[\"" + std::string(at, 'a') + special + std::string(len - at, 'b') + "\"]");
      }
    }
    cases.push_back("[" + std::string(len, ' ') + "1,\n" + std::string(len, ' ') + "\t2" + std::string(len, ' ') + "]");
    cases.push_back("{" + std::string(len, ' ') + "\"k\"" + std::string(len, ' ') + ":" + std::string(len, ' ') + "1}");
  }
  std::string deep_ok(10000, '['), deep_bad(10001, '[');
  deep_ok += std::string(10000, ']');
  deep_bad += std::string(10001, ']');
  cases.push_back(deep_ok);
  cases.push_back(deep_bad);
  std::mt19937_64 rng(8);
  const std::string base = testing::ReadFile("fixtures/seed/orders.json");
  ASSERT_FALSE(base.empty())
      << "fixtures/seed/orders.json not found: run from the source tree or set CAVEMAN_SOURCE_DIR";
  for (int k = 0; k < 400; ++k) {
    std::string m = base;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % m.size();
      switch (rng() % 3) {
        case 0: {
          static constexpr char kBytes[] = "{}[],:\"\\0123456789eE+-.tfn \x01\xc3";
          m[at] = kBytes[rng() % (sizeof(kBytes) - 1)];  // not the terminating NUL
          break;
        }
        case 1: m.erase(at, 1 + rng() % 3); break;
        default: m.resize(at); break;
      }
      if (m.empty()) m = "x";
    }
    cases.push_back(m);
  }
  for (const std::string& c : cases) ExpectSameVerdict(c);
}

}  // namespace
}  // namespace caveman
