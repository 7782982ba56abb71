#include "compressors/log.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <random>
#include <string>
#include <vector>

#include "compressors/compressor.h"
#include "compressors/internal/bm25.h"
#include "compressors/internal/elision.h"
#include "compressors/internal/invariants.h"
#include "compressors/internal/lines.h"
#include "compressors/internal/redundancy.h"
#include "compressors/internal/text_util.h"
#include "stream/spool.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

// The single-pass in-memory definition of §5.2, written directly from the spec with RE2 and
// the shared machinery; the streaming compressor must match it byte for byte.
std::optional<std::string> ReferenceLog(std::string_view body, std::string_view query) {
  if (!internal::IsValidUtf8(body)) return std::nullopt;
  internal::SplitResult split = internal::SplitLines(body);
  const auto& lines = split.lines;
  const size_t n = lines.size();
  if (n < 4) return std::nullopt;
  static const RE2 keep_re(
      R"((?i)(\b(ERROR|FATAL|PANIC|EXCEPTION|TRACEBACK|FAIL|FAILED|FAILURE|WARN|WARNING)\b|^\s+at\s|^\s+File "|\.go:\d+|^\s+--->|caused by))");
  auto marker = [](std::string_view l) { return internal::Contains(l, "lines elided (caveman)"); };
  auto note = [](std::string_view l) { return internal::StartsWith(l, internal::kNotePrefix); };
  std::vector<bool> keep(n, false);
  for (size_t i = 0; i < n; ++i) {
    keep[i] = i < 2 || RE2::PartialMatch(lines[i], keep_re) || marker(lines[i]) || note(lines[i]);
  }
  int budget = 2;
  for (size_t i = n - 1; i >= 2 && budget > 0; --i) {
    keep[i] = true;
    if (!marker(lines[i]) && !note(lines[i])) --budget;
  }
  internal::KeepQueryRelevant(&keep, lines, query, 16, 0.30);
  internal::KeepNonRedundant(lines, &keep);
  const bool crlf = internal::IsMajorityCrlf(body);
  std::vector<std::string> out;
  uint64_t elided = 0;
  for (size_t i = 0; i < n;) {
    if (keep[i]) {
      out.emplace_back(lines[i++]);
      continue;
    }
    size_t j = i;
    uint64_t bytes = 0;
    internal::InvariantAccumulator acc;
    internal::FieldScratch scratch;
    internal::FieldList fields;
    for (; j < n && !keep[j]; ++j) {
      bytes += lines[j].size() + 1;
      internal::LogLineFields(lines[j], &scratch, &fields);
      acc.Add(fields);
    }
    std::string summary = acc.Render(static_cast<int64_t>(bytes));
    std::string m = "\xE2\x80\xA6 " + std::to_string(j - i) + " lines elided (caveman)";
    if (!summary.empty()) m += ": " + summary;
    m += " \xE2\x80\xA6";
    if (internal::WorthEliding(j - i, m.size(), bytes, summary)) {
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
  if (joined == body) return std::nullopt;
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
      line = "2026-01-01T00:00:" + std::to_string(10 + i % 50) + " ERROR [" + mod +
             "] request " + std::to_string(rng() % 100000) + " failed";
    } else if (r < 5) {
      line = "2026-01-01T00:00:00 WARN disk at " + std::to_string(rng() % 100) + "% on " + mod;
    } else if (r < 6) {
      line = "    at com.example." + mod + ".Handler.run(Handler.java:" +
             std::to_string(rng() % 900) + ")";
    } else if (r < 7) {
      line = "  File \"src/" + mod + ".py\", line " + std::to_string(rng() % 900) + ", in f";
    } else if (r < 40) {
      line = "level=info module=" + mod + " msg=\"request done\" status=200 duration_ms=" +
             std::to_string(rng() % 500) + " id=req-" + std::to_string(1000 + i);
    } else {
      line = "2026-01-01T00:00:00 INFO [" + mod + "] compiled unit " + std::to_string(i) + " of " +
             std::to_string(lines);
    }
    if (r < 7 && injected) injected->push_back(line);
    s += line;
    if (i + 1 < lines || final_newline) s += eol;
  }
  return s;
}

// Exactly §5.2 (template grouping off) unless `grouping`.
std::string RunLog(std::string_view in, std::string_view query = {}, size_t read_size = 256 * 1024,
                   bool grouping = false) {
  auto c = NewLogCompressor(LogCompressorOptions{read_size, grouping});
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

TEST(LogCompressor, MarkerCarriesLogfmtInvariants) {
  std::string in = "start\nboot\n";
  for (int i = 0; i < 10; ++i) {
    in += "level=info svc=api status=200 took=" + std::to_string(10 + i) + "\n";
  }
  in += "end1\nend2\n";
  std::string out = RunLog(in);
  EXPECT_NE(out.find("lines elided (caveman): all level=info svc=api status=200"), std::string::npos)
      << out;
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
        EXPECT_EQ(RunLog(in, "auth failed request"), ref_q ? *ref_q : "<declined>")
            << "seed " << seed;
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
    internal::SplitResult s = internal::SplitLines(out);
    static const RE2 marker_re(R"(^… (\d+) lines elided \(caveman\))");
    uint64_t total = 0;
    for (std::string_view l : s.lines) {
      uint64_t k = 0;
      if (RE2::PartialMatch(l, marker_re, &k)) {
        total += k;
      } else if (!internal::StartsWith(l, internal::kNotePrefix)) {
        total += 1;
      }
    }
    EXPECT_EQ(total, internal::SplitLines(in).lines.size());
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
  const char* actions[] = {"status installed", "status unpacked", "status half-configured",
                           "configure"};
  const char* syllables[] = {"lib", "gtk", "perl", "xml", "ssl", "cups", "font", "zlib", "dev",
                             "core", "util", "tools"};
  std::string s;
  for (size_t i = 0; i < lines; ++i) {
    std::string pkg;
    for (int k = 0; k < 3; ++k) pkg += syllables[rng() % 12];
    s += "2026-05-09 07:29:" + std::to_string(10 + i % 50) + " " + actions[rng() % 4] + " " + pkg +
         ":amd64 1." + std::to_string(rng() % 40) + "-1\n";
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
  internal::SplitResult s = internal::SplitLines(out);
  static const RE2 marker_re(R"(^… (\d+) lines elided \(caveman\))");
  uint64_t total = 0;
  for (std::string_view l : s.lines) {
    uint64_t k = 0;
    if (RE2::PartialMatch(l, marker_re, &k)) {
      total += k;
    } else if (!internal::StartsWith(l, internal::kNotePrefix)) {
      total += 1;
    }
  }
  EXPECT_EQ(total, internal::SplitLines(in).lines.size());
}

TEST(LogTemplateGrouping, TemplateTableIsCappedAndOutputStillValid) {
  // Every line a different token count and first word: > 512 templates requested.
  std::string in;
  for (int i = 0; i < 3000; ++i) {
    in += "w" + std::string(1, static_cast<char>('a' + i % 26)) + std::string(1, static_cast<char>('a' + (i / 26) % 26));
    for (int k = 0; k < i % 60; ++k) in += " t";
    in += "\n";
  }
  const std::string out = RunLog(in, {}, 256 * 1024, true);
  const std::string again = RunLog(out == "<declined>" ? in : out, {}, 256 * 1024, true);
  EXPECT_TRUE(again == "<declined>" || again == out);
}

}  // namespace
}  // namespace caveman
