#include "compressors/repetition.h"

#include <gtest/gtest.h>

#include "stream/sha256.h"
#include "stream/spool.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

std::optional<std::string> Repetition(std::string_view in) {
  auto c = NewRepetitionCompressor();
  return RunOnString(*c, in);
}

// Runs the compressor on a spilled Spool body built from the given pieces, so the body is
// read back in the reader's own chunk sizes and long lines cross chunk boundaries.
std::string RunPieces(const std::vector<std::string_view>& pieces, size_t spool_mem) {
  Spool spool(SpoolOptions{.memory_limit = spool_mem});
  for (auto p : pieces) EXPECT_TRUE(spool.Write(p).ok());
  auto c = NewRepetitionCompressor();
  StringSink sink;
  TransformMeta meta;
  auto r = c->Transform(Body::FromSpool(spool), "", sink, &meta);
  EXPECT_TRUE(r.ok());
  if (!r.ok() || *r != TransformOutcome::kAccepted) return "<declined>";
  return sink.data();
}

TEST(RepetitionCompressor, SeedPytestLogGivesSpecOutput) {
  std::string in = testing::ReadFile("fixtures/seed/pytest.log");
  ASSERT_EQ(in.size(), 2609u);
  auto out = Repetition(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->size(), 466u);
  EXPECT_EQ(Sha256::Hex(Sha256::Digest(*out)), "5cee90cbcd6a139a210bd1af62342c7d11b4c782cbac8c27d6b688ed5f398731");
  EXPECT_NE(out->find("\xE2\x80\xA6 caveman: 27 identical lines elided \xE2\x80\xA6\n"), std::string::npos);
}

TEST(RepetitionCompressor, DeclinesShortInput) { EXPECT_FALSE(Repetition("a\na\na\na\n").has_value()); }

TEST(RepetitionCompressor, DeclinesInvalidUtf8) {
  std::string in(300, 'x');
  in += "\nline\nline\nline\n\xff\n";
  EXPECT_FALSE(Repetition(in).has_value());
}

TEST(RepetitionCompressor, DeclinesWhenNothingCollapses) {
  std::string in;
  for (int i = 0; i < 40; ++i) in += "line " + std::to_string(i) + "\n";
  EXPECT_FALSE(Repetition(in).has_value());
}

TEST(RepetitionCompressor, RunOfTwoStaysVerbatimRunOfThreeCollapses) {
  std::string pad(200, 'p');
  std::string ab(60, 'a'), cd(60, 'c');
  std::string in = pad + "\n" + ab + "\n" + ab + "\n" + cd + "\n" + cd + "\n" + cd + "\nend";
  auto out = Repetition(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, pad + "\n" + ab + "\n" + ab + "\n" + cd +
                      "\n\xE2\x80\xA6 caveman: 2 identical lines elided \xE2\x80\xA6\nend");
}

TEST(RepetitionCompressor, BlankRunsAndMarkerLinesAreNeverCollapsed) {
  std::string pad(200, 'p');
  std::string marker = "\xE2\x80\xA6 caveman: 5 identical lines elided \xE2\x80\xA6";
  std::string x(80, 'x');
  std::string in = pad + "\n\n\n\n\n \t\n \t\n \t\n" + marker + "\n" + marker + "\n" + marker + "\n" + x + "\n" + x +
                   "\n" + x + "\n" + x + "\n";
  auto out = Repetition(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, pad + "\n\n\n\n\n \t\n \t\n \t\n" + marker + "\n" + marker + "\n" + marker + "\n" + x +
                      "\n\xE2\x80\xA6 caveman: 3 identical lines elided \xE2\x80\xA6\n");
}

TEST(RepetitionCompressor, UnicodeWhiteSpaceLineCountsAsBlank) {
  std::string pad(200, 'p');
  std::string nbsp = "\xC2\xA0\xE3\x80\x80";  // U+00A0 U+3000
  std::string q(80, 'q');
  std::string in = pad + "\n" + nbsp + "\n" + nbsp + "\n" + nbsp + "\n" + q + "\n" + q + "\n" + q + "\n";
  auto out = Repetition(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, pad + "\n" + nbsp + "\n" + nbsp + "\n" + nbsp + "\n" + q +
                      "\n\xE2\x80\xA6 caveman: 2 identical lines elided \xE2\x80\xA6\n");
}

TEST(RepetitionCompressor, CrStaysPartOfLine) {
  std::string pad(200, 'p');
  // "z\r" x3 collapses; the bare "z" differs from "z\r" and stays.
  std::string z(80, 'z');
  std::string in = pad + "\r\n" + z + "\r\n" + z + "\r\n" + z + "\r\n" + z + "\n";
  auto out = Repetition(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, pad + "\r\n" + z + "\r\n\xE2\x80\xA6 caveman: 2 identical lines elided \xE2\x80\xA6\n" + z + "\n");
}

TEST(RepetitionCompressor, SecondPassDeclines) {
  std::string in = testing::ReadFile("fixtures/seed/pytest.log");
  auto once = Repetition(in);
  ASSERT_TRUE(once.has_value());
  EXPECT_FALSE(Repetition(*once).has_value());
}

TEST(RepetitionCompressor, OutputIndependentOfChunking) {
  std::string in = testing::ReadFile("fixtures/seed/pytest.log");
  testing::ExpectChunkingInvariant(in, [](const std::vector<std::string_view>& pieces) {
    return RunPieces(pieces, 64);  // spill early so reads cross piece boundaries
  });
}

TEST(RepetitionCompressor, LongLinesCompareByDigestAcrossChunks) {
  std::string long_a(3 * kRepetitionMaxInlineLine + 17, 'a');
  std::string long_b = long_a;
  long_b.back() = 'b';
  std::string in = long_a + "\n" + long_a + "\n" + long_a + "\n" + long_b + "\n" + long_b + "\nend\n";
  std::string expected =
      long_a + "\n\xE2\x80\xA6 caveman: 2 identical lines elided \xE2\x80\xA6\n" + long_b + "\n" + long_b + "\nend\n";
  auto out = Repetition(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(*out == expected);
  std::vector<std::string_view> pieces = testing::RandomSplit(in, 7, 5000);
  EXPECT_TRUE(RunPieces(pieces, 1 << 16) == expected);
}

TEST(RepetitionCompressor, NoFinalNewlineKept) {
  std::string pad(200, 'p');
  std::string k(80, 'k');
  auto out = Repetition(pad + "\n" + k + "\n" + k + "\n" + k);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, pad + "\n" + k + "\n\xE2\x80\xA6 caveman: 2 identical lines elided \xE2\x80\xA6");
}

}  // namespace
}  // namespace caveman
