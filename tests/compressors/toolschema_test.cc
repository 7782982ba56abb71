#include "compressors/toolschema.h"

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "compressors/compressor.h"
#include "compressors/cj.h"
#include "caveman/stream/tokens.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

std::string Compress(std::string_view in) {
  auto c = NewToolschemaCompressor();
  std::optional<std::string> out = RunOnString(*c, in);
  return out ? *out : std::string("<declined>");
}

TEST(ToolschemaTest, ShortDescriptionsAreTrimmedOnly) {
  EXPECT_EQ(CompressToolDescription("  Short one.  "), "Short one.");
}

TEST(ToolschemaTest, KeepsConstraintSentencesAndFirstOtherCapped) {
  std::string d =
      "Write bytes to a file on disk. This trailing sentence is pure filler that carries no rule "
      "and should be dropped once the description grows past the small budget. The path must be "
      "an absolute path. Provide exactly one of body or body_b64.";
  EXPECT_EQ(CompressToolDescription(d),
            "Write bytes to a file on disk. The path must be an absolute path. Provide exactly "
            "one of body or body_b64.");
  std::string long_first =
      "The number of items to return in a single page of results, which the server paginates "
      "for you automatically without any further round trips. Values above 100 are invalid.";
  EXPECT_EQ(CompressToolDescription(long_first),
            "The number of items to return in a single page of results, which the server "
            "Values above 100 are invalid.");
}

TEST(ToolschemaTest, AbbreviationsDoNotEndSentences) {
  std::string d =
      "Opens the file, e.g. Reports or Logs, and returns its contents to the caller as text. "
      "Written by Dr. Who and the U.S. Team for the benefit of everybody who ever needs it. "
      "Paths longer than the limit are rejected.";
  // "e.g." and "Dr." and "U.S." are abbreviations, so the first sentence runs to "text.".
  EXPECT_EQ(CompressToolDescription(d),
            "Opens the file, e.g. Reports or Logs, and returns its contents to the caller as "
            "Paths longer than the limit are rejected.");
}

TEST(ToolschemaTest, CapCutsAtValidUtf8AndLastSpace) {
  // 79 ASCII bytes then a 2-byte character straddling byte 80; no space after byte 40.
  std::string first = std::string(30, 'a') + " " + std::string(48, 'b') + "\xC3\xA9" + "cd.";
  std::string d = first +
                  " Another sentence without rules that is long enough to pass the "
                  "one hundred and sixty byte budget.";
  EXPECT_EQ(CompressToolDescription(d), std::string(30, 'a') + " " + std::string(48, 'b'));
}

TEST(ToolschemaTest, DocumentShapes) {
  EXPECT_EQ(Compress(R"({"title":"T","type":"string","examples":[1]})"), R"({"type":"string"})");
  EXPECT_EQ(Compress(R"({"tools":[{"name":"a","title":"kept in envelope","parameters":{"title":"x"}}]})"),
            R"({"tools":[{"name":"a","parameters":{},"title":"kept in envelope"}]})");
  EXPECT_EQ(Compress(R"({"properties":{"title":{"title":"t","enum":["<a>"]}}})"),
            R"({"properties":{"title":{"enum":["\u003ca\u003e"]}}})");
  EXPECT_EQ(Compress("42"), "42");
  EXPECT_EQ(Compress("{"), "<declined>");
}

TEST(ToolschemaTest, GoldenFixturesAndIdempotence) {
  for (std::string name : {"openai_functions", "bare_schema"}) {
    std::string in = testing::ReadFile("fixtures/toolschema/" + name + ".in");
    std::string expected = testing::ReadFile("fixtures/toolschema/" + name + ".expected");
    std::string out = Compress(in);
    EXPECT_EQ(out + "\n", expected) << name;
    EXPECT_EQ(Compress(out), out) << name;
  }
}

// Behaviour on the third-party reference fixtures (§13), read in place, never copied.
TEST(ToolschemaTest, ReferenceFixtures) {
  const std::string ref_dir = testing::ReferenceDir();
  if (ref_dir.empty()) GTEST_SKIP() << "reference fixtures absent";
  std::string catalog = testing::ReadAbsolute(ref_dir + "tool_catalog.json");
  std::string out = Compress(catalog);
  EXPECT_TRUE(internal::IsJson(out));
  EXPECT_NE(out.find("search_files"), std::string::npos);
  EXPECT_NE(out.find("regex"), std::string::npos);
  EXPECT_EQ(out.find("respects .gitignore"), std::string::npos);
  const TokenCounter& tc = DefaultTokenCounter();
  double before = static_cast<double>(tc.Count(catalog));
  double ratio = (before - static_cast<double>(tc.Count(out))) / before;
  std::printf("tool-catalog ratio %.3f\n", ratio);
  EXPECT_GE(ratio, 0.55);
  EXPECT_LE(ratio, 0.85);

  std::string in = testing::ReadAbsolute(ref_dir + "toolschema_constraints_catalog.json");
  std::string golden = testing::ReadAbsolute(ref_dir + "toolschema_constraints_catalog.golden.json");
  std::optional<internal::JsonValue> want = internal::ParseJson(golden);
  std::optional<internal::JsonValue> got = internal::ParseJson(Compress(in));
  ASSERT_TRUE(want && got);
  EXPECT_EQ(internal::Cji(*got), internal::Cji(*want));
}

}  // namespace
}  // namespace caveman
