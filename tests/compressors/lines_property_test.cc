// Property tests of the line compressors on generated inputs with randomly injected errors,
// warnings and stack traces: every injected line survives, marker counts add up (kept +
// elided = input lines), output does not depend on chunking (Spool-backed body built from
// random pieces), and compressing the output again passes through.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "compressors/compressor.h"
#include "compressors/diff.h"
#include "compressors/lines.h"
#include "compressors/search_result.h"
#include "compressors/tabular.h"
#include "compressors/terminal.h"
#include "stream/spool.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

struct Generated {
  std::string text;
  std::vector<std::string> must_keep;  // lines that must appear verbatim
};

Generated TerminalSession(uint64_t seed) {
  std::mt19937_64 rng(seed);
  Generated g;
  const char* eol = seed % 2 ? "\r\n" : "\n";
  for (int i = 0; i < 300; ++i) {
    std::string line;
    switch (rng() % 40) {
      case 0: line = "FAILED tests/test_" + std::to_string(rng() % 50) + ".py::test_x - boom"; break;
      case 1: line = "  File \"src/mod" + std::to_string(rng() % 9) + ".py\", line 3, in f"; break;
      case 2: line = "warning: unused variable 'v" + std::to_string(rng() % 99) + "'"; break;
      default: line = "\x1b[32m.\x1b[0m tests/test_mod.py::test_case_" + std::to_string(i) + " PASSED";
    }
    if (line[0] != '\x1b') g.must_keep.push_back(line);
    g.text += line + eol;
  }
  return g;
}

Generated Grep(uint64_t seed) {
  std::mt19937_64 rng(seed);
  Generated g;
  for (int i = 0; i < 200; ++i) {
    std::string line =
        "src/pkg" + std::to_string(i % 5) + "/file.go:" + std::to_string(i + 1) + ":\treturn compute(value)";
    if (rng() % 25 == 0) {
      line = "src/auth/token.go:" + std::to_string(i + 1) + ":\t// SECURITY check " + std::to_string(i);
      g.must_keep.push_back(line);
    }
    g.text += line + "\n";
  }
  return g;
}

Generated Diff(uint64_t seed) {
  std::mt19937_64 rng(seed);
  Generated g;
  g.text = "diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1,400 +1,400 @@\n";
  for (int i = 0; i < 400; ++i) {
    std::string line = " context line " + std::to_string(i);
    if (rng() % 30 == 0) line = (rng() % 2 ? "+added " : "-removed ") + std::to_string(i);
    if (line[0] != ' ') g.must_keep.push_back(line);
    g.text += line + "\n";
  }
  return g;
}

// Σ over output lines: a marker counts its N, any other line 1.
uint64_t CountRepresented(std::string_view out, const RE2& marker) {
  uint64_t total = 0;
  for (std::string_view l : internal::SplitLines(out).lines) {
    uint64_t k = 0;
    total += RE2::PartialMatch(l, marker, &k) ? k : 1;
  }
  return total;
}

std::string RunSpooled(const Compressor& c, std::string_view in, uint64_t seed) {
  Spool spool(SpoolOptions{/*memory_limit=*/512, ""});
  for (std::string_view p : testing::RandomSplit(in, seed, 97)) EXPECT_TRUE(spool.Write(p).ok());
  StringSink sink;
  TransformMeta meta;
  auto r = c.Transform(Body::FromSpool(spool), "", sink, &meta);
  EXPECT_TRUE(r.ok());
  return r.ok() && *r == TransformOutcome::kAccepted ? sink.data() : std::string(in);
}

struct Case {
  const char* name;
  std::function<std::unique_ptr<Compressor>()> make;
  std::function<Generated(uint64_t)> gen;
  const char* marker;  // RE2 with one capture: the elided count
};

TEST(LinesProperty, InjectedLinesSurviveCountsAddUpChunkingInvariantIdempotent) {
  const Case cases[] = {
      {"terminal", [] { return NewTerminalCompressor(); }, TerminalSession, R"(^… (\d+) lines elided \(caveman\))"},
      {"terminal-spec", [] { return NewTerminalCompressor(TerminalOptions{false}); }, TerminalSession,
       R"(^… (\d+) lines elided \(caveman\))"},
      {"search-result", [] { return NewSearchResultCompressor(); }, Grep,
       R"(^… (\d+) search result lines elided \(caveman\))"},
      {"diff", [] { return NewDiffCompressor(); }, Diff, R"(^… (\d+) context lines elided \(caveman\))"},
  };
  for (const Case& c : cases) {
    auto comp = c.make();
    const RE2 marker(c.marker);
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      Generated g = c.gen(seed);
      auto out = RunOnString(*comp, g.text);
      ASSERT_TRUE(out.has_value()) << c.name << " " << seed;
      for (const std::string& l : g.must_keep) {
        EXPECT_NE(out->find(l), std::string::npos) << c.name << ": " << l;
      }
      EXPECT_EQ(CountRepresented(*out, marker), internal::SplitLines(g.text).lines.size()) << c.name << " " << seed;
      EXPECT_EQ(RunSpooled(*comp, g.text, seed), *out) << c.name << " " << seed;
      auto again = RunOnString(*comp, *out);
      EXPECT_TRUE(!again.has_value() || *again == *out) << c.name << " " << seed;
    }
  }
}

TEST(LinesProperty, TabularRowsAddUpAndAlarmRowsSurvive) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    std::mt19937_64 rng(seed);
    std::string in = "host,region,latency,status\n";
    std::vector<std::string> alarms;
    const int rows = 150;
    for (int i = 0; i < rows; ++i) {
      std::string row =
          "web-" + std::to_string(i) + "," + (rng() % 2 ? "eu" : "us") + "," + std::to_string(10 + rng() % 90) + ",";
      if (rng() % 20 == 0) {
        row += "FAILED probe " + std::to_string(i);
        alarms.push_back(row);
      } else {
        row += "ok";
      }
      in += row + "\n";
    }
    for (bool grouping : {false, true}) {
      auto comp = NewTabularCompressor(TabularOptions{grouping});
      auto out = RunOnString(*comp, in);
      ASSERT_TRUE(out.has_value());
      for (const std::string& a : alarms) EXPECT_NE(out->find(a + "\n"), std::string::npos) << a;
      static const RE2 marker(R"(^"?… (\d+) rows elided \(caveman\))");  // quoted if it holds a comma
      uint64_t total = 0;
      for (std::string_view l : internal::SplitLines(*out).lines) {
        uint64_t k = 0;
        if (RE2::PartialMatch(l, marker, &k)) {
          total += k;
        } else if (l.find("caveman: elided") == std::string_view::npos) {
          total += 1;
        }
      }
      EXPECT_EQ(total, static_cast<uint64_t>(rows + 1));
      EXPECT_EQ(RunSpooled(*comp, in, seed), *out);
      EXPECT_FALSE(RunOnString(*comp, *out).has_value());
    }
  }
}

}  // namespace
}  // namespace caveman
