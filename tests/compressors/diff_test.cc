#include "compressors/diff.h"

#include <gtest/gtest.h>

#include <string>

#include "compressors/compressor.h"

namespace caveman {
namespace {

std::string MakeDiff(int context_lines, const char* eol = "\n") {
  std::string d = std::string("diff --git a/x b/x") + eol + "index 1..2 100644" + eol + "--- a/x" + eol + "+++ b/x" +
                  eol + "@@ -1,30 +1,30 @@" + eol;
  for (int i = 0; i < context_lines; ++i) d += " ctx " + std::to_string(i) + eol;
  d += std::string("-old") + eol + "+new" + eol;
  for (int i = 0; i < context_lines; ++i) d += " tail " + std::to_string(i) + eol;
  return d;
}

TEST(DiffCompressor, KeepsChangesWithTwoLinesOfContext) {
  auto c = NewDiffCompressor();
  auto out = RunOnString(*c, MakeDiff(10));
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out,
            "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1,30 +1,30 @@\n"
            " ctx 0\n ctx 1\n"
            "\xE2\x80\xA6 6 context lines elided (caveman) \xE2\x80\xA6\n"
            " ctx 8\n ctx 9\n-old\n+new\n tail 0\n tail 1\n"
            "\xE2\x80\xA6 8 context lines elided (caveman) \xE2\x80\xA6\n");
}

TEST(DiffCompressor, CrlfMarkersGetCr) {
  auto c = NewDiffCompressor();
  auto out = RunOnString(*c, MakeDiff(10, "\r\n"));
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("(caveman) \xE2\x80\xA6\r\n"), std::string::npos);
}

TEST(DiffCompressor, DeclinesBelowTwelveLinesOrWhenNothingDrops) {
  auto c = NewDiffCompressor();
  EXPECT_FALSE(RunOnString(*c, MakeDiff(2)).has_value());  // 11 lines
  EXPECT_FALSE(RunOnString(*c, MakeDiff(3)).has_value());  // 13 lines, all within context
  EXPECT_FALSE(RunOnString(*c, "x\xff\n" + MakeDiff(10)).has_value());
}

// docs/DECISIONS.md, "A forced diff needs a diff": lines starting with +/- but no hunk or file
// header (a forced `--type diff` on a log or a list) decline instead of becoming one marker.
TEST(DiffCompressor, DeclinesWithoutHunkOrFileHeaders) {
  auto c = NewDiffCompressor();
  std::string log;
  for (int i = 0; i < 40; ++i)
    log += "2026-12-06 10:00:" + std::to_string(10 + i) + " INFO step " + std::to_string(i) + "\n";
  EXPECT_FALSE(RunOnString(*c, log).has_value());
  EXPECT_FALSE(RunOnString(*c, log + "- item\n+ other\n" + log).has_value());
  // A --- / +++ pair without @@ (a file header of `diff -u` on empty files) is still a diff.
  std::string headed = "--- a/x\n+++ b/x\n" + log + "-old\n+new\n" + log;
  EXPECT_TRUE(RunOnString(*c, headed).has_value());
  EXPECT_TRUE(RunOnString(*c, MakeDiff(10)).has_value());
}

TEST(DiffCompressor, IdempotentOnItsOutput) {
  auto c = NewDiffCompressor();
  auto out = RunOnString(*c, MakeDiff(40));
  ASSERT_TRUE(out.has_value());
  auto again = RunOnString(*c, *out);
  EXPECT_TRUE(!again.has_value() || *again == *out);
}

}  // namespace
}  // namespace caveman
