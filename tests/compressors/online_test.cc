// Online stages (follow mode) on generated logs: output does not depend on how lines are
// grouped into blocks, every output line is an input line or a marker and the markers account
// for every input line exactly, the lines the batch keep rules force (head, keep pattern,
// markers, the last line) are written, idle ticks only split runs, and events stand for
// exactly the input they claim.
#include "compressors/online.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <random>
#include <string>
#include <vector>

#include "compressors/compressor.h"
#include "compressors/lines.h"
#include "compressors/log.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

constexpr char kEll[] = "\xE2\x80\xA6";

struct Capture final : OnlineSink {
  void Emit(OnlineEvent&& e) override { events.push_back(std::move(e)); }
  std::string Text() const {
    std::string s;
    for (const OnlineEvent& e : events) s += e.bytes;
    return s;
  }
  std::vector<OnlineEvent> events;
};

// A CI-like log: routine lines with ids, identical runs, warnings, errors, stack frames,
// JSON lines, blank lines; CRLF for odd seeds; the last line unterminated for seeds % 3 == 0.
std::string GenerateLog(uint64_t seed, int lines) {
  std::mt19937_64 rng(seed);
  const std::string eol = seed % 2 ? "\r\n" : "\n";
  std::string s;
  for (int i = 0; i < lines; ++i) {
    std::string line;
    switch (rng() % 23) {
      case 0:
        line = "2026-12-03T10:00:0" + std::to_string(i % 10) + "Z ERROR db timeout id=" + std::to_string(rng() % 1000);
        break;
      case 1: line = "    at com.example.Service.call(Service.java:" + std::to_string(rng() % 400) + ")"; break;
      case 2: line = "WARNING: disk usage " + std::to_string(rng() % 100) + "%"; break;
      case 3: {
        const std::string same = "retrying connection to cache-" + std::to_string(rng() % 3);
        const int n = 1 + static_cast<int>(rng() % 6);
        for (int k = 0; k + 1 < n; ++k) s += same + eol;
        line = same;
        break;
      }
      case 4: line = ""; break;
      case 5:
        line = R"({"level":"info","ts":")" + std::to_string(i) + R"(","msg":"request served","status":200,"ms":)" +
               std::to_string(rng() % 90) + "}";
        break;
      case 6:
        line = "segfault in worker " + std::to_string(rng() % 4) + " (core dumped) " +
               std::string(1, static_cast<char>('a' + rng() % 26));
        break;
      default:
        line = "2026-12-03T10:00:00Z INFO [build] compiling src/module_" + std::to_string(rng() % 40) + ".cc (" +
               std::to_string(i) + "/5000) step=" + std::to_string(rng() % 7);
    }
    s += line;
    if (i + 1 < lines || seed % 3 != 0) s += eol;
  }
  return s;
}

// Feeds `input` to a stage: complete lines in blocks of random sizes (`seed` 0 = one block),
// ticks after random blocks when `ticks`.
std::string RunStage(std::string_view type, const std::string& input, uint64_t seed, bool ticks,
                     Capture* capture = nullptr, std::string_view query = {}) {
  auto stage = NewOnlineStage(type, query);
  Capture local;
  Capture& out = capture != nullptr ? *capture : local;
  std::mt19937_64 rng(seed);
  const size_t last_lf = input.rfind('\n');
  const size_t body = last_lf == std::string::npos ? 0 : last_lf + 1;
  size_t pos = 0;
  while (pos < body) {
    size_t end = body;
    if (seed != 0) {
      // a random number of whole lines
      const size_t lines = 1 + rng() % 40;
      end = pos;
      for (size_t k = 0; k < lines && end < body; ++k) end = input.find('\n', end) + 1;
    }
    stage->PushLines(std::string_view(input).substr(pos, end - pos), pos, out);
    pos = end;
    if (ticks && rng() % 5 == 0) stage->Tick(out);
  }
  stage->Finish(std::string_view(input).substr(body), body, false, out);
  return out.Text();
}

struct Accounting {
  bool ok = true;
  std::string why;
  std::vector<size_t> kept;  // input line indices written verbatim
};

// Walks output lines against input lines: each output line is the next input line, or a
// marker standing for N input lines, or the note (last). Counts must end exactly at the input.
Accounting Account(const std::string& input, const std::string& output) {
  static const RE2 kRun("^\xE2\x80\xA6 (\\d+) lines elided \\(caveman\\)(: .*)? \xE2\x80\xA6\r?$");
  static const RE2 kRepeat("^\xE2\x80\xA6 caveman: (\\d+) identical lines elided \xE2\x80\xA6\r?$");
  Accounting a;
  internal::SplitResult in = internal::SplitLines(input);
  internal::SplitResult out = internal::SplitLines(output);
  if (input.empty()) {
    if (!output.empty()) a = Accounting{false, "output for empty input", {}};
    return a;
  }
  if (in.trailing != out.trailing) return Accounting{false, "trailing newline differs", {}};
  size_t i = 0;
  for (size_t k = 0; k < out.lines.size(); ++k) {
    std::string_view line = out.lines[k];
    uint64_t n = 0;
    if (i < in.lines.size() && line == in.lines[i]) {
      a.kept.push_back(i);
      ++i;
    } else if (RE2::FullMatch(line, kRun, &n) || RE2::FullMatch(line, kRepeat, &n)) {
      i += n;
    } else if (line.substr(0, std::string_view("\xE2\x80\xA6 caveman: elided ").size()) ==
                   "\xE2\x80\xA6 caveman: elided " &&
               k + 1 == out.lines.size()) {
      // the contract note
    } else {
      return Accounting{false,
                        "output line " + std::to_string(k) + " is neither input line " + std::to_string(i) +
                            " nor a marker: " + std::string(line),
                        {}};
    }
    if (i > in.lines.size()) return Accounting{false, "markers claim more lines than the input has", {}};
  }
  if (i != in.lines.size()) {
    return Accounting{
        false, "accounted " + std::to_string(i) + " of " + std::to_string(in.lines.size()) + " lines", {}};
  }
  return a;
}

TEST(OnlineStage, TypesAndPolicies) {
  EXPECT_TRUE(IsOnlineContentType("log"));
  EXPECT_TRUE(IsOnlineContentType("terminal"));
  EXPECT_TRUE(IsOnlineContentType("repetition"));
  EXPECT_FALSE(IsOnlineContentType("json"));
  EXPECT_FALSE(IsOnlineContentType("text"));
  EXPECT_EQ(NewOnlineStage("json", ""), nullptr);
}

TEST(OnlineStage, OutputDoesNotDependOnBlockGrouping) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const std::string input = GenerateLog(seed, 400);
    for (std::string_view type : {"log", "terminal", "repetition"}) {
      const std::string whole = RunStage(type, input, 0, false);
      for (uint64_t split = 1; split <= 4; ++split) {
        ASSERT_EQ(RunStage(type, input, seed * 10 + split, false), whole) << type << " seed " << seed;
      }
    }
  }
}

TEST(OnlineStage, MarkersAccountForEveryLineAndForcedLinesAreKept) {
  static const RE2 kPattern(
      R"((?i)(\b(ERROR|FATAL|PANIC|EXCEPTION|TRACEBACK|FAIL|FAILED|FAILURE|WARN|WARNING)\b|^\s+at\s|^\s+File "|\.go:\d+|^\s+--->|caused by))");
  int compressed = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const std::string input = GenerateLog(seed, 300 + static_cast<int>(seed) * 7);
    for (bool ticks : {false, true}) {
      const std::string output = RunStage("log", input, seed, ticks);
      Accounting a = Account(input, output);
      ASSERT_TRUE(a.ok) << a.why << " (seed " << seed << ", ticks " << ticks << ")";
      compressed += output.size() < input.size() ? 1 : 0;
      internal::SplitResult in = internal::SplitLines(input);
      std::vector<bool> kept(in.lines.size(), false);
      for (size_t k : a.kept) kept[k] = true;
      // Head (§5.2: two elements; a line repeating its predecessor is in that run's marker).
      ASSERT_TRUE(kept[0]) << "head, seed " << seed;
      ASSERT_TRUE(kept[1] || in.lines[1] == in.lines[0]) << "head, seed " << seed;
      ASSERT_TRUE(kept.back()) << "last line, seed " << seed;
      for (size_t i = 0; i < in.lines.size(); ++i) {
        if (!RE2::PartialMatch(in.lines[i], kPattern)) continue;
        // A pattern line is written itself or, when it repeats the line before, in that line's
        // identical-run marker.
        const bool repeat = i > 0 && in.lines[i] == in.lines[i - 1];
        ASSERT_TRUE(kept[i] || repeat) << "pattern line " << i << " dropped, seed " << seed << ": " << in.lines[i];
      }
    }
  }
  EXPECT_GE(compressed, 70);  // the generator's logs do compress
}

TEST(OnlineStage, TerminalAndRepetitionAccount) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const std::string input = GenerateLog(seed, 250);
    const std::string rep = RunStage("repetition", input, seed, true);
    Accounting a = Account(input, rep);
    ASSERT_TRUE(a.ok) << a.why;
    // repetition writes every line that does not repeat its predecessor
    internal::SplitResult in = internal::SplitLines(input);
    size_t distinct = 0;
    for (size_t i = 0; i < in.lines.size(); ++i) distinct += (i == 0 || in.lines[i] != in.lines[i - 1]) ? 1 : 0;
    EXPECT_GE(a.kept.size(), distinct);
    const std::string term = RunStage("terminal", input, seed, true);
    Accounting t = Account(input, term);
    ASSERT_TRUE(t.ok) << t.why;
  }
}

// Follow mode on a binary input: a line with ill-formed UTF-8 keeps its CR and ESC bytes (a
// CR "overwrite" dropped everything before it, without a marker); valid lines are still cleaned.
TEST(OnlineStage, TerminalCleanupLeavesIllFormedLinesAsTheyCame) {
  const std::string binary =
      "\x7f"
      "ELF\x02\x01\xff\xfe head\rtail \x1b[31mred\x80\n";
  const std::string input = binary + "50%\r100% done\n" + binary;
  for (uint64_t seed : {0, 1, 2}) {
    const std::string out = RunStage("terminal", input, seed, false);
    EXPECT_EQ(out, binary + "100% done\n" + binary) << seed;
  }
}

TEST(OnlineStage, EventsStandForTheirInputBytes) {
  const std::string input = GenerateLog(7, 600);
  Capture cap;
  RunStage("log", input, 7, true, &cap);
  uint64_t covered = 0;
  bool any_marker = false;
  for (const OnlineEvent& e : cap.events) {
    ASSERT_LE(e.input_begin, e.input_end);
    ASSERT_LE(e.input_end, input.size());
    if (e.lines > 0) {
      // Consecutive: each event starts where the previous one ended.
      ASSERT_EQ(e.input_begin, covered);
      covered = e.input_end;
      const std::string_view span = std::string_view(input).substr(e.input_begin, e.input_end - e.input_begin);
      uint64_t lines = static_cast<uint64_t>(std::count(span.begin(), span.end(), '\n'));
      if (!span.empty() && span.back() != '\n') ++lines;
      ASSERT_EQ(lines, e.lines);
      if (!e.lossy) {
        // A verbatim event writes its input bytes (the last line may lack its LF in input).
        std::string expect(span);
        if (!expect.empty() && expect.back() != '\n' && e.bytes.size() == expect.size() + 1) expect += '\n';
        ASSERT_EQ(e.bytes, expect);
      }
    }
    any_marker = any_marker || e.lossy;
  }
  EXPECT_EQ(covered, input.size());
  EXPECT_TRUE(any_marker);
}

TEST(OnlineStage, IdleTickWritesADueMarkerButHoldsTheTail) {
  auto stage = NewOnlineStage("log", "");
  Capture out;
  std::string block = "first line\nsecond line\n";
  for (int i = 0; i < 20; ++i) block += "2026-12-03 INFO step " + std::to_string(i) + " done\n";
  stage->PushLines(block, 0, out);
  const std::string before = out.Text();
  EXPECT_EQ(before.find("lines elided"), std::string::npos);  // the run is pending
  stage->Tick(out);
  const std::string after = out.Text();
  ASSERT_NE(after.find("lines elided (caveman)"), std::string::npos) << after;
  EXPECT_EQ(after.find("step 19"), std::string::npos);  // held as a possible tail line
  stage->Finish("", block.size(), false, out);
  const std::string done = out.Text();
  EXPECT_NE(done.find("step 18 done\n2026-12-03 INFO step 19 done\n"), std::string::npos) << done;
  EXPECT_TRUE(Account(block, done).ok) << Account(block, done).why;
}

TEST(OnlineStage, KeptLineIsWrittenWithTheBlockThatCompletesIt) {
  auto stage = NewOnlineStage("log", "");
  Capture out;
  stage->PushLines("a\nb\nc\nd\n", 0, out);
  stage->PushLines("2026 ERROR payment declined\n", 8, out);
  EXPECT_NE(out.Text().find("ERROR payment declined\n"), std::string::npos) << out.Text();
}

TEST(OnlineStage, IdenticalRunOfAKeptLineBecomesOneMarker) {
  auto stage = NewOnlineStage("log", "");
  Capture out;
  std::string in = "start\nnext\n";
  for (int i = 0; i < 50; ++i) in += "WARN pool exhausted\n";
  in += "end\n";
  stage->PushLines(in, 0, out);
  stage->Finish("", in.size(), false, out);
  EXPECT_EQ(out.Text(), std::string("start\nnext\nWARN pool exhausted\n") + kEll +
                            " caveman: 49 identical lines elided " + kEll + "\nend\n");
}

TEST(OnlineStage, JsonLinesGroupByLevelAndMessage) {
  auto stage = NewOnlineStage("log", "");
  Capture out;
  std::string in;
  for (int i = 0; i < 200; ++i) {
    in += R"({"level":"info","ts":"2026-12-03T10:00:)" + std::to_string(10 + i % 50) +
          R"(Z","msg":"request served","path":"/api/v1/items/)" + std::to_string(i) + R"(","ms":)" +
          std::to_string(i % 17) + "}\n";
    if (i == 120)
      in += R"({"level":"info","ts":"2026-12-03T10:01:00Z","msg":"cache rebuilt","entries":4096})"
            "\n";
  }
  stage->PushLines(in, 0, out);
  stage->Finish("", in.size(), false, out);
  const std::string view = out.Text();
  EXPECT_LT(view.size() * 4, in.size());
  EXPECT_NE(view.find("cache rebuilt"), std::string::npos) << view;  // a new message is kept
  EXPECT_TRUE(Account(in, view).ok) << Account(in, view).why;
}

// pino/bunyan numeric levels (issue 16): 40 warn, 50 error, 60 fatal are kept like the words,
// online and in batch, on real pino output (fixtures/follow/pino-default.jsonl).
TEST(OnlineStage, NumericJsonLevelsFromFortyAreKept) {
  const std::string in = testing::ReadFile("fixtures/follow/pino-default.jsonl");
  std::vector<std::string> alarms;
  static const RE2 kAlarm(R"re("level":(4|5|6)0\b)re");
  for (std::string_view l : internal::SplitLines(in).lines) {
    if (RE2::PartialMatch(l, kAlarm)) alarms.emplace_back(l);
  }
  ASSERT_GE(alarms.size(), 10u);
  auto stage = NewOnlineStage("log", "");
  Capture out;
  stage->PushLines(in, 0, out);
  stage->Finish("", in.size(), false, out);
  const std::string online = out.Text();
  auto batch = RunOnString(*NewLogCompressor(), in);
  ASSERT_TRUE(batch.has_value());
  for (const std::string& a : alarms) {
    EXPECT_NE(online.find(a + "\n"), std::string::npos) << "online dropped: " << a;
    EXPECT_NE(batch->find(a + "\n"), std::string::npos) << "batch dropped: " << a;
  }
  EXPECT_TRUE(Account(in, online).ok) << Account(in, online).why;
  // Level 30 (info) is not an alarm: most info lines are still elided.
  EXPECT_LT(online.size() * 2, in.size());
}

TEST(OnlineStage, QueryTermsKeepLines) {
  std::string in = "a\nb\n";
  for (int i = 0; i < 100; ++i) in += "INFO handled request " + std::to_string(i) + " for tenant acme\n";
  in += "INFO handled request 7 for tenant globex\n";
  for (int i = 0; i < 100; ++i) in += "INFO handled request " + std::to_string(i) + " for tenant acme\n";
  const std::string without = RunStage("log", in, 3, false);
  const std::string with = RunStage("log", in, 3, false, nullptr, "globex");
  EXPECT_NE(with.find("tenant globex"), std::string::npos);
  EXPECT_TRUE(Account(in, with).ok);
  EXPECT_TRUE(Account(in, without).ok);
}

}  // namespace
}  // namespace caveman
