#include "compressors/log.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <random>
#include <string>
#include <vector>

#include "compressors/compressor.h"
#include "compressors/internal/bm25.h"
#include "compressors/elision.h"
#include "compressors/internal/invariants.h"
#include "compressors/lines.h"
#include "compressors/log_rules.h"
#include "compressors/internal/redundancy.h"
#include "compressors/internal/templates.h"
#include "compressors/text_util.h"
#include "stream/spool.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

// The single-pass in-memory definition of §5.2, written directly from the spec with RE2 and
// the shared machinery; the streaming compressor must match it byte for byte.
//
// With `collapse` (the project's identical-run rule, docs/DECISIONS.md) the §5.2 rules run on
// elements: a run of ≥ 3 identical lines (TRIM non-empty, not starting with `… caveman: `) is
// one element of weight = run length; a kept element is followed by the §5.15 marker, a
// dropped one counts `weight` lines (bytes, fields) in its run; lines starting with
// `… caveman: ` are kept like markers.
std::optional<std::string> ReferenceLog(std::string_view body, std::string_view query, bool collapse = false) {
  if (!internal::IsValidUtf8(body)) return std::nullopt;
  internal::SplitResult split = internal::SplitLines(body);
  if (split.lines.size() < 4) return std::nullopt;
  std::vector<std::string_view> lines;
  std::vector<uint64_t> weight;
  for (size_t i = 0; i < split.lines.size();) {
    size_t j = i;
    while (j < split.lines.size() && split.lines[j] == split.lines[i]) ++j;
    const bool collapsible =
        !internal::Trim(split.lines[i]).empty() && !internal::StartsWith(split.lines[i], "\xE2\x80\xA6 caveman: ");
    if (collapse && j - i >= 3 && collapsible) {
      lines.push_back(split.lines[i]);
      weight.push_back(j - i);
    } else {
      for (size_t k = i; k < j; ++k) {
        lines.push_back(split.lines[k]);
        weight.push_back(1);
      }
    }
    i = j;
  }
  const size_t n = lines.size();
  static const RE2 keep_re(
      R"((?i)(\b(ERROR|FATAL|PANIC|EXCEPTION|TRACEBACK|FAIL|FAILED|FAILURE|WARN|WARNING)\b|^\s+at\s|^\s+File "|\.go:\d+|^\s+--->|caused by))");
  auto marker = [&](std::string_view l) {
    return internal::Contains(l, "lines elided (caveman)") ||
           (collapse && internal::StartsWith(l, "\xE2\x80\xA6 caveman: "));
  };
  auto note = [](std::string_view l) { return internal::StartsWith(l, internal::kNotePrefix); };
  std::vector<bool> keep(n, false);
  for (size_t i = 0; i < n; ++i) {
    keep[i] = i < 2 || RE2::PartialMatch(lines[i], keep_re) || marker(lines[i]) || note(lines[i]);
  }
  int budget = 2;
  for (size_t i = n - 1; n > 2 && i >= 2 && budget > 0; --i) {
    keep[i] = true;
    if (!marker(lines[i]) && !note(lines[i])) --budget;
  }
  internal::KeepQueryRelevant(&keep, lines, query, 16, 0.30);
  internal::KeepNonRedundant(lines, &keep);
  const bool crlf = internal::IsMajorityCrlf(body);
  std::vector<std::string> out;
  uint64_t elided = 0;
  bool changed = false;
  for (size_t i = 0; i < n;) {
    if (keep[i]) {
      out.emplace_back(lines[i]);
      if (weight[i] > 1) {
        out.push_back(internal::SynthesizedLine(
            "\xE2\x80\xA6 caveman: " + std::to_string(weight[i] - 1) + " identical lines elided \xE2\x80\xA6", crlf));
        changed = true;
      }
      ++i;
      continue;
    }
    size_t j = i;
    uint64_t bytes = 0;
    uint64_t count = 0;
    internal::InvariantAccumulator acc;
    internal::FieldScratch scratch;
    internal::FieldList fields;
    for (; j < n && !keep[j]; ++j) {
      bytes += weight[j] * (lines[j].size() + 1);
      count += weight[j];
      internal::LogLineFields(lines[j], &scratch, &fields);
      for (uint64_t k = 0; k < weight[j]; ++k) acc.Add(fields);
    }
    std::string summary = acc.Render(static_cast<int64_t>(bytes));
    std::string m = "\xE2\x80\xA6 " + std::to_string(count) + " lines elided (caveman)";
    if (!summary.empty()) m += ": " + summary;
    m += " \xE2\x80\xA6";
    if (internal::WorthEliding(count, m.size(), bytes, summary)) {
      changed = true;
      out.push_back(internal::SynthesizedLine(m, crlf));
      elided += bytes;
    } else {
      for (size_t k = i; k < j; ++k) out.emplace_back(lines[k]);
    }
    i = j;
  }
  if (elided >= 4096 && !internal::Contains(body, internal::kNotePrefix)) {
    out.push_back(internal::SynthesizedLine(internal::ContractNote("lines"), crlf));
  }
  std::string joined = internal::JoinLines(out, split.trailing);
  if (!changed || joined == body) return std::nullopt;
  return joined;
}

// A generated log with randomly injected errors, warnings and stack traces.
std::string GenerateLog(uint64_t seed, size_t lines, bool crlf, bool final_newline,
                        std::vector<std::string>* injected = nullptr) {
  std::mt19937_64 rng(seed);
  const char* eol = crlf ? "\r\n" : "\n";
  const char* mods[] = {"orders", "ledger", "auth", "search"};
  std::string s;
  for (size_t i = 0; i < lines; ++i) {
    std::string line;
    const uint64_t r = rng() % 100;
    const std::string mod = mods[rng() % 4];
    if (r < 3) {
      line = "2026-01-01T00:00:" + std::to_string(10 + i % 50) + " ERROR [" + mod + "] request " +
             std::to_string(rng() % 100000) + " failed";
    } else if (r < 5) {
      line = "2026-01-01T00:00:00 WARN disk at " + std::to_string(rng() % 100) + "% on " + mod;
    } else if (r < 6) {
      line = "    at com.example." + mod + ".Handler.run(Handler.java:" + std::to_string(rng() % 900) + ")";
    } else if (r < 7) {
      line = "  File \"src/" + mod + ".py\", line " + std::to_string(rng() % 900) + ", in f";
    } else if (r < 40) {
      line = "level=info module=" + mod +
             " msg=\"request done\" status=200 duration_ms=" + std::to_string(rng() % 500) + " id=req-" +
             std::to_string(1000 + i);
    } else {
      line =
          "2026-01-01T00:00:00 INFO [" + mod + "] compiled unit " + std::to_string(i) + " of " + std::to_string(lines);
    }
    if (r < 7 && injected) injected->push_back(line);
    s += line;
    if (i + 1 < lines || final_newline) s += eol;
  }
  return s;
}

// Input lines an output stands for: each kept line counts 1, an elision marker its N, the
// contract note 0; with `with_repeat_markers`, an identical-run marker right after the line it
// repeats counts its N too (a marker after another marker is a kept input line).
uint64_t LinesRepresented(std::string_view out, bool with_repeat_markers = false) {
  static const RE2 marker_re(R"(^… (\d+) lines elided \(caveman\))");
  static const RE2 repeat_re(R"(^… caveman: (\d+) identical lines elided …$)");
  const internal::SplitResult s = internal::SplitLines(out);
  uint64_t total = 0;
  for (size_t i = 0; i < s.lines.size(); ++i) {
    uint64_t k = 0;
    if (RE2::PartialMatch(s.lines[i], marker_re, &k)) {
      total += k;
    } else if (with_repeat_markers && RE2::FullMatch(s.lines[i], repeat_re, &k) && i > 0 &&
               !internal::StartsWith(s.lines[i - 1], "\xE2\x80\xA6 caveman: ")) {
      total += k;
    } else if (!internal::StartsWith(s.lines[i], internal::kNotePrefix)) {
      total += 1;
    }
  }
  return total;
}

// Exactly §5.2 (template grouping and identical-run collapsing off) unless `grouping` /
// `collapse`.
std::string RunLog(std::string_view in, std::string_view query = {}, size_t read_size = 256 * 1024,
                   bool grouping = false, bool collapse = false) {
  auto c = NewLogCompressor(LogCompressorOptions{read_size, grouping, collapse});
  auto out = RunOnString(*c, in, query);
  return out ? *out : std::string("<declined>");
}

TEST(LogCompressor, DeclinesShortInvalidAndUnchangedInputs) {
  EXPECT_EQ(RunLog("a\nb\nc\n"), "<declined>");
  EXPECT_EQ(RunLog("a\nb\nc\n\xff\n"), "<declined>");
  EXPECT_EQ(RunLog("one\ntwo\nthree\nfour\n"), "<declined>");  // all kept
  EXPECT_EQ(RunLog(""), "<declined>");
}

TEST(LogCompressor, ElidesRunWithMarkerAndKeepsErrors) {
  std::string in;
  for (int i = 0; i < 20; ++i) in += "INFO worker " + std::to_string(i) + " ok\n";
  in.insert(in.find("INFO worker 10"), "ERROR worker 10 crashed\n");
  EXPECT_EQ(RunLog(in),
            "INFO worker 0 ok\nINFO worker 1 ok\n"
            "\xE2\x80\xA6 8 lines elided (caveman) \xE2\x80\xA6\n"
            "ERROR worker 10 crashed\n"
            "\xE2\x80\xA6 8 lines elided (caveman) \xE2\x80\xA6\n"
            "INFO worker 18 ok\nINFO worker 19 ok\n");
}

// The stability guard runs the log compressor on other types' views (§1.5): their markers are
// marker lines here too, never elided into a "lines" marker that would misstate the count.
TEST(LogCompressor, KeepsOtherCompressorsMarkers) {
  std::string in;
  std::vector<std::string> markers;
  for (int i = 0; i < 40; ++i) {
    in += "INFO worker " + std::to_string(i) + " ok\n";
    if (i % 8 == 4) {  // alike, so the redundancy guard alone would keep one of them
      markers.push_back("\xE2\x80\xA6 " + std::to_string(50 + i) + " sections elided (caveman) \xE2\x80\xA6\n");
      in += markers.back();
    }
  }
  const std::string out = RunLog(in);
  for (const std::string& m : markers) EXPECT_NE(out.find(m), std::string::npos) << m << out;
  EXPECT_NE(out.find(" lines elided (caveman) "), std::string::npos) << out;  // the rest still goes
}

TEST(LogCompressor, MarkerCarriesLogfmtInvariants) {
  std::string in = "start\nboot\n";
  for (int i = 0; i < 10; ++i) {
    in += "level=info svc=api status=200 took=" + std::to_string(10 + i) + "\n";
  }
  in += "end1\nend2\n";
  std::string out = RunLog(in);
  EXPECT_NE(out.find("lines elided (caveman): all level=info svc=api status=200"), std::string::npos) << out;
  EXPECT_NE(out.find("range took=11..19"), std::string::npos) << out;
}

TEST(LogCompressor, KeepsLinesWithKelvinSign) {
  // RE2's (?i) folds K with U+212A; Hyperscan alone would miss this line.
  std::string in;
  for (int i = 0; i < 12; ++i) in += "INFO step " + std::to_string(i) + "\n";
  in.insert(in.find("INFO step 6"), "TRACEBAC\xE2\x84\xAA here\n");
  std::string out = RunLog(in);
  EXPECT_NE(out.find("TRACEBAC\xE2\x84\xAA here"), std::string::npos) << out;
  EXPECT_EQ(out, *ReferenceLog(in, ""));
}

TEST(LogCompressor, MatchesInMemoryDefinitionOnGeneratedLogs) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    for (bool crlf : {false, true}) {
      for (bool nl : {false, true}) {
        std::string in = GenerateLog(seed, 50 + seed * 37, crlf, nl);
        auto ref = ReferenceLog(in, "");
        EXPECT_EQ(RunLog(in), ref ? *ref : "<declined>") << "seed " << seed;
        auto ref_q = ReferenceLog(in, "auth failed request");
        EXPECT_EQ(RunLog(in, "auth failed request"), ref_q ? *ref_q : "<declined>") << "seed " << seed;
      }
    }
  }
}

TEST(LogCompressor, EveryInjectedLineSurvivesAndCountsAddUp) {
  for (uint64_t seed = 20; seed < 30; ++seed) {
    std::vector<std::string> injected;
    std::string in = GenerateLog(seed, 3000, false, true, &injected);
    std::string out = RunLog(in, {}, 256 * 1024, /*grouping=*/seed % 2 == 0);
    ASSERT_NE(out, "<declined>");
    for (const std::string& l : injected) {
      EXPECT_NE(out.find(l + "\n"), std::string::npos) << l;
    }
    // kept + elided = input lines.
    EXPECT_EQ(LinesRepresented(out), internal::SplitLines(in).lines.size());
  }
}

TEST(LogCompressor, OutputIndependentOfChunkingAndReadSize) {
  std::string in = GenerateLog(7, 800, false, true);
  const std::string whole = RunLog(in);
  ASSERT_NE(whole, "<declined>");
  for (size_t read_size : {1, 2, 3, 7, 64, 4096}) {
    EXPECT_EQ(RunLog(in, {}, read_size), whole) << read_size;
  }
  testing::ExpectChunkingInvariant(in, [&](const std::vector<std::string_view>& pieces) {
    Spool spool(SpoolOptions{/*memory_limit=*/1024, ""});  // spills: a real file-backed body
    for (std::string_view p : pieces) EXPECT_TRUE(spool.Write(p).ok());
    auto c = NewLogCompressor(LogCompressorOptions{13, true});
    StringSink sink;
    TransformMeta meta;
    auto r = c->Transform(Body::FromSpool(spool), "", sink, &meta);
    EXPECT_TRUE(r.ok());
    return r.ok() && *r == TransformOutcome::kAccepted ? sink.data() : std::string("<declined>");
  });
}

TEST(LogCompressor, CompressingOutputAgainPassesThrough) {
  for (uint64_t seed = 40; seed < 46; ++seed) {
    std::string in = GenerateLog(seed, 2000, seed % 2 == 0, seed % 3 != 0);
    for (std::string_view q : {std::string_view(), std::string_view("ledger compiled")}) {
      const bool grouping = seed % 2 == 1;
      std::string out = RunLog(in, q, 256 * 1024, grouping);
      ASSERT_NE(out, "<declined>");
      std::string again = RunLog(out, q, 256 * 1024, grouping);
      EXPECT_TRUE(again == "<declined>" || again == out) << "seed " << seed;
    }
  }
}

TEST(LogCompressor, AppendsNoteOnceWhenEnoughWasElided) {
  std::string in = GenerateLog(3, 2000, true, true);
  std::string out = RunLog(in);
  const std::string note = internal::ContractNote("lines") + "\r\n";
  ASSERT_GE(out.size(), note.size());
  EXPECT_EQ(out.substr(out.size() - note.size()), note);
}

TEST(LogCompressor, OneHugeLineAmongShortOnes) {
  std::string in = "a\nb\n" + std::string(1 << 20, 'x') + "\nc 1\nc 2\nc 3\nc 4\nc 5\nd\ne\n";
  auto ref = ReferenceLog(in, "");
  EXPECT_EQ(RunLog(in, {}, 4096), ref ? *ref : "<declined>");
}

// dpkg-style lines differ in words (package names), so the §4.2 profiles do not represent each
// other; a kept line of the same template does.
std::string PackageLog(size_t lines, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const char* actions[] = {"status installed", "status unpacked", "status half-configured", "configure"};
  const char* syllables[] = {"lib",  "gtk",  "perl", "xml",  "ssl",  "cups",
                             "font", "zlib", "dev",  "core", "util", "tools"};
  std::string s;
  for (size_t i = 0; i < lines; ++i) {
    std::string pkg;
    for (int k = 0; k < 3; ++k) pkg += syllables[rng() % 12];
    s += "2026-05-09 07:29:" + std::to_string(10 + i % 50) + " " + actions[rng() % 4] + " " + pkg + ":amd64 1." +
         std::to_string(rng() % 40) + "-1\n";
  }
  return s;
}

TEST(LogTemplateGrouping, DropsLinesWhoseTemplateIsKept) {
  std::string in = PackageLog(3000, 5);
  const std::string spec = RunLog(in, {}, 256 * 1024, false);
  const std::string grouped = RunLog(in, {}, 256 * 1024, true);
  ASSERT_NE(grouped, "<declined>");
  EXPECT_LT(grouped.size() * 10, spec == "<declined>" ? in.size() : spec.size());
  EXPECT_NE(grouped.find("lines elided (caveman)"), std::string::npos);
  // The variable words are summarised by position.
  EXPECT_NE(grouped.find("$4:"), std::string::npos) << grouped;
  std::string again = RunLog(grouped, {}, 256 * 1024, true);
  EXPECT_TRUE(again == "<declined>" || again == grouped);
}

TEST(LogTemplateGrouping, ErrorsStillKeptAndCountsAddUp) {
  std::string in = PackageLog(2000, 6);
  in.insert(in.find("07:29:30"), "2026-05-09 07:29:30 ERROR dpkg: error processing package foo\n");
  const std::string out = RunLog(in, {}, 256 * 1024, true);
  EXPECT_NE(out.find("ERROR dpkg: error processing package foo\n"), std::string::npos);
  EXPECT_EQ(LinesRepresented(out), internal::SplitLines(in).lines.size());
}

TEST(LogTemplateGrouping, TemplateTableIsCappedAndOutputStillValid) {
  // Every line a different token count and first word: > 512 templates requested.
  std::string in;
  for (int i = 0; i < 3000; ++i) {
    in +=
        "w" + std::string(1, static_cast<char>('a' + i % 26)) + std::string(1, static_cast<char>('a' + (i / 26) % 26));
    for (int k = 0; k < i % 60; ++k) in += " t";
    in += "\n";
  }
  const std::string out = RunLog(in, {}, 256 * 1024, true);
  const std::string again = RunLog(out == "<declined>" ? in : out, {}, 256 * 1024, true);
  EXPECT_TRUE(again == "<declined>" || again == out);
}

// ---- Identical-run collapsing (project decision, docs/DECISIONS.md).

// GenerateLog's lines with runs of byte-identical lines: repeated warnings, errors, retries,
// blank lines, lines that already start with `… caveman: `, runs at the head and the tail.
std::string GenerateRepetitiveLog(uint64_t seed, size_t lines, bool crlf, bool final_newline) {
  std::mt19937_64 rng(seed);
  const std::string eol = crlf ? "\r\n" : "\n";
  const std::string generated = GenerateLog(seed, lines, crlf, false);
  internal::SplitResult base = internal::SplitLines(generated);
  std::string s;
  auto add = [&](std::string_view line, uint64_t times) {
    for (uint64_t k = 0; k < times; ++k) {
      s.append(line);
      s += eol;
    }
  };
  add("retrying fixture teardown ...", 1 + rng() % 6);  // a run at the head
  for (std::string_view l : base.lines) {
    if (crlf && !l.empty() && l.back() == '\r') l.remove_suffix(1);
    const uint64_t r = rng() % 100;
    if (r < 15) {
      add(l, 1 + rng() % 40);
    } else if (r < 18) {
      add("2026-01-01T00:00:00 WARN [pool] connection re-established", 2 + rng() % 50);
    } else if (r < 19) {
      add("", 3 + rng() % 4);  // blank runs stay verbatim
    } else if (r < 20) {
      add("   ", 3);  // TRIM-empty
    } else if (r < 21) {
      // Never collapsed (quoted so the counting below does not take it for a marker).
      add("\xE2\x80\xA6 caveman: 7 identical lines elided \xE2\x80\xA6 (quoted)", 3);
    } else {
      add(l, 1);
    }
  }
  add("done waiting", 1 + rng() % 5);  // a run at the tail
  if (!final_newline) s.resize(s.size() - eol.size());
  return s;
}

std::string CollapseLog(std::string_view in, std::string_view query = {}, size_t read_size = 256 * 1024,
                        bool grouping = false) {
  return RunLog(in, query, read_size, grouping, /*collapse=*/true);
}

TEST(LogIdenticalRuns, CollapsesRunsLikeRepetition) {
  std::string in = "boot\nstart\n";
  for (int i = 0; i < 40; ++i) in += "2026-01-01 WARN [pool] connection re-established\n";
  in += "ERROR x\nERROR x\n";  // a run of 2 stays verbatim
  in += "end1\nend2\n";
  EXPECT_EQ(CollapseLog(in),
            "boot\nstart\n"
            "2026-01-01 WARN [pool] connection re-established\n"
            "\xE2\x80\xA6 caveman: 39 identical lines elided \xE2\x80\xA6\n"
            "ERROR x\nERROR x\nend1\nend2\n");
  // Exactly §5.2 keeps every WARN line, so nothing is dropped and the input passes through.
  EXPECT_EQ(RunLog(in), "<declined>");
  // A log that is one repeated line: the head keeps it, the marker carries the count.
  std::string same;
  for (int i = 0; i < 10; ++i) same += "retrying ...\r\n";
  EXPECT_EQ(CollapseLog(same), "retrying ...\r\n\xE2\x80\xA6 caveman: 9 identical lines elided \xE2\x80\xA6\r\n");
}

TEST(LogIdenticalRuns, DroppedRunCountsEveryRepeatedLine) {
  std::string in = "boot\nstart\n";
  for (int i = 0; i < 30; ++i) in += "INFO compiled unit " + std::to_string(i) + "\n";
  for (int i = 0; i < 25; ++i) in += "INFO compiled unit 3\n";  // same profile as kept lines
  in += "end1\nend2\n";
  const std::string out = CollapseLog(in);
  EXPECT_EQ(out, *ReferenceLog(in, "", /*collapse=*/true));
  // The 25 repeats are inside the one elided run: units 1..29 and the 25 repeats.
  EXPECT_NE(out.find("\xE2\x80\xA6 54 lines elided (caveman)"), std::string::npos) << out;
  EXPECT_EQ(out.find("identical lines elided"), std::string::npos) << out;
}

TEST(LogIdenticalRuns, MatchesInMemoryDefinition) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    for (bool crlf : {false, true}) {
      for (bool nl : {false, true}) {
        const std::string in = GenerateRepetitiveLog(seed, 60 + seed * 41, crlf, nl);
        for (std::string_view q : {std::string_view(), std::string_view("pool re-established")}) {
          auto ref = ReferenceLog(in, q, /*collapse=*/true);
          EXPECT_EQ(CollapseLog(in, q), ref ? *ref : "<declined>") << "seed " << seed;
          EXPECT_EQ(CollapseLog(in, q, 5), ref ? *ref : "<declined>") << "seed " << seed;
        }
      }
    }
  }
}

TEST(LogIdenticalRuns, CountsAddUpAndErrorsSurvive) {
  for (uint64_t seed = 50; seed < 56; ++seed) {
    const std::string in = GenerateRepetitiveLog(seed, 3000, false, true);
    const std::string out = CollapseLog(in, {}, 256 * 1024, /*grouping=*/seed % 2 == 0);
    ASSERT_NE(out, "<declined>");
    ASSERT_LT(out.size(), in.size());
    EXPECT_EQ(LinesRepresented(out, /*with_repeat_markers=*/true), internal::SplitLines(in).lines.size())
        << "seed " << seed;
    // Every keep-pattern line of the input appears at least once.
    for (std::string_view l : internal::SplitLines(in).lines) {
      if (internal::Contains(l, "ERROR") || internal::Contains(l, "WARN")) {
        EXPECT_NE(out.find(std::string(l) + "\n"), std::string::npos) << l;
      }
    }
  }
}

TEST(LogIdenticalRuns, CompressingOutputAgainPassesThrough) {
  for (uint64_t seed = 60; seed < 66; ++seed) {
    const std::string in = GenerateRepetitiveLog(seed, 1500, seed % 2 == 0, seed % 3 != 0);
    for (std::string_view q : {std::string_view(), std::string_view("ledger teardown")}) {
      for (bool grouping : {false, true}) {
        const std::string out = CollapseLog(in, q, 256 * 1024, grouping);
        ASSERT_NE(out, "<declined>");
        const std::string again = CollapseLog(out, q, 256 * 1024, grouping);
        EXPECT_TRUE(again == "<declined>" || again == out) << "seed " << seed;
      }
    }
  }
}

TEST(LogIdenticalRuns, OutputIndependentOfChunking) {
  const std::string in = GenerateRepetitiveLog(9, 700, false, true);
  const std::string whole = CollapseLog(in, {}, 256 * 1024, true);
  ASSERT_NE(whole, "<declined>");
  for (size_t read_size : {1, 3, 64, 4096}) {
    EXPECT_EQ(CollapseLog(in, {}, read_size, true), whole) << read_size;
  }
  testing::ExpectChunkingInvariant(in, [&](const std::vector<std::string_view>& pieces) {
    Spool spool(SpoolOptions{/*memory_limit=*/1024, ""});  // spills: a real file-backed body
    for (std::string_view p : pieces) EXPECT_TRUE(spool.Write(p).ok());
    auto c = NewLogCompressor(LogCompressorOptions{17, true, true});
    StringSink sink;
    TransformMeta meta;
    auto r = c->Transform(Body::FromSpool(spool), "", sink, &meta);
    EXPECT_TRUE(r.ok());
    return r.ok() && *r == TransformOutcome::kAccepted ? sink.data() : std::string("<declined>");
  });
}

TEST(LogIdenticalRuns, DefaultOptionsCollapse) {
  std::string in = "a\nb\n";
  for (int i = 0; i < 5; ++i) in += "WARN same\n";
  in += "c\nd\n";
  auto out = RunOnString(*NewLogCompressor(), in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, "a\nb\nWARN same\n\xE2\x80\xA6 caveman: 4 identical lines elided \xE2\x80\xA6\nc\nd\n");
}

// KeepMatcher scans only the distinct lines of a block made largely of repeats (issue 19):
// every line must be classified as when it is scanned alone, whatever the share of repeats,
// with CRLF, empty and unterminated last lines, several matches per line, a Kelvin sign
// (RE2 fallback) and "caveman" lines among them.
TEST(KeepMatcher, RepeatedLinesClassifyAsWhenScannedAlone) {
  const std::vector<std::string> pool = {
      "2026-11-02T10:00:00.000Z WARN  [pool] connection re-established after timeout",
      "INFO step ok",
      "ERROR: failed FAILED failure",
      "    at com.foo.Bar(Bar.java:12)",
      "\u2026 caveman: 3 identical lines elided",
      "plain line with nothing",
      "main.go:42 panic here\r",
      "",
      " File \"x.py\", line 3",
      "TRACEBAC\xE2\x84\xAA here",
      "{\"level\":50,\"msg\":\"x\"}",
      "caused by: nothing",
      "FAILED",  // matches that end where their line ends
      "a caveman",
  };
  std::mt19937_64 rng(11);
  int compacted_blocks = 0;
  for (int round = 0; round < 300; ++round) {
    // Repeat lengths from 1 (no repeats) to 40 (mostly repeats).
    const int max_repeat = 1 + static_cast<int>(rng() % 40);
    std::vector<std::string> lines;
    const int n = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      const std::string& l = pool[rng() % pool.size()];
      const int r = 1 + static_cast<int>(rng() % static_cast<uint64_t>(max_repeat));
      for (int k = 0; k < r; ++k) lines.push_back(l);
    }
    const bool terminated = rng() % 2 == 0;
    std::string block;
    size_t repeated = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i > 0 && !lines[i].empty() && lines[i] == lines[i - 1]) repeated += lines[i].size() + 1;
      block += lines[i];
      if (i + 1 < lines.size() || terminated) block += '\n';
    }
    if (repeated >= block.size() / 4) ++compacted_blocks;
    internal::KeepMatcher whole;
    whole.ScanBlock(block);
    size_t begin = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      bool pattern = false, caveman = false;
      whole.Classify(lines[i], begin, &pattern, &caveman);
      internal::KeepMatcher alone;
      alone.ScanBlock(lines[i]);
      bool want_pattern = false, want_caveman = false;
      alone.Classify(lines[i], 0, &want_pattern, &want_caveman);
      ASSERT_EQ(pattern, want_pattern) << "round " << round << " line " << i << ": " << lines[i];
      ASSERT_EQ(caveman, want_caveman) << "round " << round << " line " << i << ": " << lines[i];
      begin += lines[i].size() + 1;
    }
  }
  EXPECT_GT(compacted_blocks, 100);  // the compacted scan ran, not only the plain one
}

size_t CountOccurrences(std::string_view text, std::string_view word) {
  size_t n = 0;
  for (size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

// Pass 3 reads the guard's seed lines at the offsets pass 1 logged (issue 19) instead of
// scanning the body again; the output must be the scan's. The logs mix lines forced by the
// keep pattern ("error"), near twins that are not (one token of 14 differs, so the class of a
// forced line represents its twin), identical runs, marker and repeat-prefix lines, git
// headers, CRLF and an unterminated last line; sizes from a handful of lines (every line
// kept) to enough kept lines for a seed step above 1. The zone names (letters: digits are
// masked in profiles) come from a pool larger than the 64 seeds, so which kept lines seed
// the guard decides which twins are dropped and which are promoted.
std::string SeedTestLog(uint64_t seed, size_t lines, bool crlf, bool final_newline) {
  std::mt19937_64 rng(seed);
  const std::string eol = crlf ? "\r\n" : "\n";
  auto zone = [&] {
    const uint64_t z = rng() % 150;
    return std::string{static_cast<char>('a' + z % 26), static_cast<char>('a' + z / 26), 'q'};
  };
  std::string s;
  for (size_t i = 0; i < lines; ++i) {
    const uint64_t r = rng() % 100;
    const std::string w = std::to_string(rng() % 9);
    std::string line;
    if (r < 30) {
      line = "worker " + w + " reported error while syncing shard 7 of cluster " + zone() + " region zone a";
    } else if (r < 60) {
      line = "worker " + w + " reported errand while syncing shard 7 of cluster " + zone() + " region zone a";
    } else if (r < 63) {
      line = "\xE2\x80\xA6 caveman: 3 identical lines elided \xE2\x80\xA6";
    } else if (r < 65) {
      line = "\xE2\x80\xA6 caveman: note " + w;
    } else if (r < 67) {
      line = "commit 0123456789abcdef0123456789abcdef0123456" + w;
    } else if (r < 75) {
      const std::string same = "step " + w + " waiting for lock on " + zone();
      const size_t repeat = 1 + rng() % 5;
      for (size_t k = 0; k + 1 < repeat; ++k) s += same + eol;
      line = same;
    } else {
      line = "pkg/" + zone() + "/unit_" + std::to_string(rng() % 1000) + ".go compiled in " + w + "ms";
    }
    s += line;
    if (i + 1 < lines || final_newline) s += eol;
  }
  return s;
}

TEST(LogSeedGuard, SeedsReadAtLoggedOffsetsEqualTheScan) {
  int accepted = 0, twins_split = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const size_t lines = seed % 5 == 0 ? 3 + seed % 7 : 40 + seed * 37;
    const bool crlf = seed % 3 == 0;
    const bool final_newline = seed % 4 != 1;
    const std::string in = SeedTestLog(seed, lines, crlf, final_newline);
    for (bool grouping : {false, true}) {
      for (bool collapse : {false, true}) {
        for (size_t read_size : {size_t{7}, size_t{256 * 1024}}) {
          auto run = [&](bool from_offsets) {
            LogCompressorOptions o{read_size, grouping, collapse};
            o.seed_from_offsets = from_offsets;
            auto out = RunOnString(*NewLogCompressor(o), in);
            return out ? *out : std::string("<declined>");
          };
          const std::string scanned = run(false);
          EXPECT_EQ(run(true), scanned) << "seed " << seed << " grouping " << grouping << " collapse " << collapse
                                        << " read_size " << read_size;
          if (scanned == "<declined>") continue;
          ++accepted;
          // Some twins kept and some dropped: the seeds decided between them.
          const size_t twins_in = CountOccurrences(in, "errand"), twins_out = CountOccurrences(scanned, "errand");
          if (twins_out > 0 && twins_out < twins_in) ++twins_split;
        }
      }
    }
  }
  EXPECT_GT(accepted, 300);
  EXPECT_GT(twins_split, 100);
}
// Logs of tens of thousands of forced lines: their offsets cross the kept log's 64 KiB reads
// (24 bytes each) and spill it to a file. And logs with one tail candidate only (every other
// line after the head a marker or a note), where every element is kept.
TEST(LogSeedGuard, LargeKeptLogsAndASingleTailCandidate) {
  for (uint64_t seed : {101, 102}) {
    const std::string in = SeedTestLog(seed, 150000, seed % 2 == 0, true);
    for (bool grouping : {false, true}) {
      LogCompressorOptions scan{64 * 1024, grouping, true};
      scan.seed_from_offsets = false;
      LogCompressorOptions offsets{64 * 1024, grouping, true};
      auto a = RunOnString(*NewLogCompressor(scan), in);
      auto b = RunOnString(*NewLogCompressor(offsets), in);
      ASSERT_TRUE(a.has_value());
      ASSERT_TRUE(b.has_value());
      EXPECT_EQ(*b, *a) << "seed " << seed << " grouping " << grouping;
    }
  }
  const std::string marker = "\xE2\x80\xA6 caveman: 3 identical lines elided \xE2\x80\xA6";
  for (const std::string& in :
       {"h1\nh2\nonly one\n" + marker + "\n" + marker + "\n", "h1\nh2\n" + marker + "\nonly one\n" + marker + "\n",
        "h1\nh2\nworker error\n" + marker + "\n" + marker + "\n" + marker + "\n"}) {
    for (bool from_offsets : {false, true}) {
      LogCompressorOptions o{7, true, true};
      o.seed_from_offsets = from_offsets;
      auto out = RunOnString(*NewLogCompressor(o), in);
      EXPECT_FALSE(out.has_value()) << in;  // every line kept: nothing to elide
    }
  }
}

// The same over a spilled spool (a file-backed body read with pread), every chunking.
TEST(LogSeedGuard, SpilledBodyEveryChunking) {
  const std::string in = SeedTestLog(77, 900, false, true);
  LogCompressorOptions scan_options{13, true, true};
  scan_options.seed_from_offsets = false;
  auto scanned = RunOnString(*NewLogCompressor(scan_options), in);
  ASSERT_TRUE(scanned.has_value());
  testing::ExpectChunkingInvariant(in, [&](const std::vector<std::string_view>& pieces) {
    Spool spool(SpoolOptions{/*memory_limit=*/1024, ""});
    for (std::string_view p : pieces) EXPECT_TRUE(spool.Write(p).ok());
    auto c = NewLogCompressor(LogCompressorOptions{13, true, true});
    StringSink sink;
    TransformMeta meta;
    auto r = c->Transform(Body::FromSpool(spool), "", sink, &meta);
    EXPECT_TRUE(r.ok());
    const std::string got = r.ok() && *r == TransformOutcome::kAccepted ? sink.data() : std::string("<declined>");
    EXPECT_EQ(got, *scanned);
    return got;
  });
}

// The miner's tokens come from bit masks (issue 19); they must be the SPACE/TAB split of the
// line without its final CR, and a token is a wildcard exactly when it holds an ASCII digit.
// Lines of every length around the 64-byte words and past the inline 512 bytes, with tabs,
// runs of blanks, CR, non-ASCII bytes and digits at token edges.
TEST(TemplateMiner, TokensAndDigitWildcardsEqualAByteSplit) {
  std::mt19937_64 rng(23);
  const std::string alphabet[] = {" ", "\t", "  ", "a", "Z", "0", "9", "/", ":", "\xC3\xA9", "\x80", "\r", "-", "x"};
  int too_long = 0, wildcards = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string line;
    const size_t target = round % 7 == 0 ? 500 + rng() % 700 : rng() % 200;
    while (line.size() < target) line += alphabet[rng() % std::size(alphabet)];
    if (rng() % 3 == 0) line += "\r";
    std::string_view body = line;
    if (!body.empty() && body.back() == '\r') body.remove_suffix(1);
    std::vector<std::string_view> want;
    for (size_t i = 0; i < body.size();) {
      if (body[i] == ' ' || body[i] == '\t') {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < body.size() && body[j] != ' ' && body[j] != '\t') ++j;
      want.push_back(body.substr(i, j - i));
      i = j;
    }
    std::vector<std::string_view> got;
    internal::TemplateTokens(line, &got);
    ASSERT_EQ(got, want) << "round " << round;
    internal::TemplateMiner miner;  // fresh: the line founds its own cluster
    const uint32_t id = miner.Add(line);
    if (want.empty() || want.size() > internal::TemplateMinerOptions{}.max_tokens) {
      EXPECT_EQ(id, internal::TemplateMiner::kNoTemplate) << "round " << round;
      too_long += !want.empty();
      continue;
    }
    ASSERT_NE(id, internal::TemplateMiner::kNoTemplate);
    for (size_t pos = 0; pos < want.size(); ++pos) {
      const bool digit = want[pos].find_first_of("0123456789") != std::string_view::npos;
      EXPECT_EQ(miner.IsWildcard(id, pos), digit) << "round " << round << " token " << pos;
      wildcards += digit;
    }
  }
  EXPECT_GT(too_long, 50);
  EXPECT_GT(wildcards, 1000);
}

// The miner hashes each token whole: a line with one token changed joins the cluster of the
// line (when that token is not the first: the first one and the count pick the bucket) and
// makes just that position a wildcard; the unchanged line is assigned its own cluster again.
TEST(TemplateMiner, ChangingOneTokenWildcardsExactlyIt) {
  std::mt19937_64 rng(29);
  int generalised = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<std::string> tokens;
    const size_t count = 2 + rng() % 12;
    for (size_t t = 0; t < count; ++t) {
      std::string token;
      const size_t len = 1 + rng() % (t % 3 == 0 ? 70 : 9);  // some tokens span 64-byte words
      for (size_t k = 0; k < len; ++k) token += static_cast<char>('a' + rng() % 26);
      tokens.push_back(token);
    }
    auto join = [&](const std::vector<std::string>& v) {
      std::string line;
      for (const std::string& t : v) line += (line.empty() ? "" : (rng() % 2 ? " " : " \t ")) + t;
      return line;
    };
    const std::string line = join(tokens);
    internal::TemplateMiner miner;
    const uint32_t id = miner.Add(line);
    ASSERT_NE(id, internal::TemplateMiner::kNoTemplate);
    EXPECT_EQ(miner.Add(line), id);
    // Change one byte (first, middle or last) of one token.
    const size_t pos = rng() % count;
    std::vector<std::string> changed = tokens;
    std::string& t = changed[pos];
    const size_t at = rng() % 3 == 0 ? 0 : rng() % 2 == 0 ? t.size() - 1 : t.size() / 2;
    t[at] = t[at] == 'z' ? 'y' : static_cast<char>(t[at] + 1);
    const uint32_t id2 = miner.Add(join(changed));
    if (pos == 0) {  // another bucket: a cluster of its own, the first one unchanged
      EXPECT_NE(id2, id) << "round " << round;
      for (size_t k = 0; k < count; ++k) EXPECT_FALSE(miner.IsWildcard(id, k)) << "round " << round;
      continue;
    }
    // Similarity (count - 1) / count of the line's constants, ≥ 0.5: the same cluster.
    ASSERT_EQ(id2, id) << "round " << round;
    for (size_t k = 0; k < count; ++k) EXPECT_EQ(miner.IsWildcard(id, k), k == pos) << "round " << round;
    ++generalised;
  }
  EXPECT_GT(generalised, 1500);
}

}  // namespace
}  // namespace caveman
