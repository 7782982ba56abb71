#include "compressors/terminal.h"

#include <gtest/gtest.h>

#include <string>

#include "compressors/compressor.h"

namespace caveman {
namespace {

TEST(CleanTerminalLine, KeepsLastNonEmptyRedrawSegment) {
  EXPECT_EQ(CleanTerminalLine("10%\r50%\r100%\r"), "100%\r");
  EXPECT_EQ(CleanTerminalLine("abc\r\r"), "abc\r");
  EXPECT_EQ(CleanTerminalLine("\r\r"), "\r");
  EXPECT_EQ(CleanTerminalLine("a\rb"), "b");
}

TEST(CleanTerminalLine, DeletesCsiOscAndTwoByteEscapes) {
  EXPECT_EQ(CleanTerminalLine("\x1b[32mok\x1b[0m"), "ok");
  EXPECT_EQ(CleanTerminalLine("\x1b[?25lx\x1b[2K"), "x");
  EXPECT_EQ(CleanTerminalLine("\x1b]0;title\x07y"), "y");
  EXPECT_EQ(CleanTerminalLine("\x1b]8;;http://x\x1b\\link"), "link");
  EXPECT_EQ(CleanTerminalLine("\x1b"
                              "7z"),
            "\x1b"
            "7z");  // '7' is outside [@-Z\x5c-_]
  EXPECT_EQ(CleanTerminalLine("\x1bMup"), "up");
  EXPECT_EQ(CleanTerminalLine("\x1b]unterminated"), "unterminated");  // falls back to ESC ]
  EXPECT_EQ(CleanTerminalLine("\x1b[12"), "\x1b[12");                 // no final byte, '[' is no 2-byte escape
}

// §1.5: one pass of the §5.16 deletion can leave a new sequence behind (an unmatched "ESC[3"
// joined to the "E" after a deleted "ESC[31m"); the cleanup repeats until nothing is removed,
// so cleaning a cleaned line changes nothing (fuzz_engine found this input, reduced here).
TEST(CleanTerminalLine, IsIdempotentWhenADeletionJoinsANewSequence) {
  EXPECT_EQ(CleanTerminalLine("E\x1b[3\x1b[31mERROR\x1b[0m failed\r"), "ERROR failed\r");  // "ESC[3E" goes
  EXPECT_EQ(CleanTerminalLine("\x1b[\x1b[1m1m\x1b[0mx"), "x");                             // nested twice
  for (std::string_view line : {std::string_view("a\x1b[3\x1b[31mEb"), std::string_view("\x1b\x1bMM\x1b[12"),
                                std::string_view("\x1b]\x1b]t\x07\x07z"), std::string_view("p\x1b[?\x1b[0m25lq\r")}) {
    const std::string once = CleanTerminalLine(line);
    EXPECT_EQ(CleanTerminalLine(once), once) << "line: " << line;
  }
}

TEST(TerminalCompressor, CleanedOutputCompressesToItselfOrDeclines) {
  // The fuzz_engine input (tests/fuzz/corpus/fuzz_engine/terminal-rejoined-escape): compressed
  // twice, the second run must decline (§1.5).
  const std::string in =
      "\x10\x0c\x1b[31mERROR\x1b[0m failed\r\n\x1b[31mERROR\x1b[0m failed\r\n\x1b[31mERROR\x1b[0m faile:\r\n"
      "\x1b[31mERROR\x1b[0K" +
      std::string(7, '\0') + "\r\n\x1b[31mERROR!include[31mE\x1b[3\x1b[31mERROR\x1b[0m failed\r\n";
  auto c = NewTerminalCompressor();
  std::optional<std::string> once = RunOnString(*c, in);
  ASSERT_TRUE(once.has_value());
  EXPECT_FALSE(RunOnString(*c, *once).has_value()) << *once;
}

TEST(TerminalCompressor, CleanupAloneIsAcceptedForShortInputs) {
  auto c = NewTerminalCompressor();
  EXPECT_EQ(RunOnString(*c, "\x1b[1mhi\x1b[0m\n"), std::optional<std::string>("hi\n"));
  EXPECT_FALSE(RunOnString(*c, "plain\n").has_value());
  EXPECT_FALSE(RunOnString(*c, "").has_value());
}

TEST(TerminalCompressor, ElidesRedundantMiddleAndKeepsErrors) {
  std::string in;
  for (int i = 0; i < 40; ++i) in += "\x1b[32mok\x1b[0m test_" + std::to_string(i) + "\n";
  in.insert(in.size() / 2, "FAILED test_x - AssertionError: boom\n");
  auto out = RunOnString(*NewTerminalCompressor(), in);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("FAILED test_x - AssertionError: boom\n"), std::string::npos);
  EXPECT_NE(out->find("lines elided (caveman)"), std::string::npos);
  EXPECT_EQ(out->find("\x1b"), std::string::npos);
  auto again = RunOnString(*NewTerminalCompressor(), *out);
  EXPECT_TRUE(!again.has_value() || *again == *out);
}

}  // namespace
}  // namespace caveman

namespace caveman {
namespace {

// Package-manager progress: lines differ in package names, so §4.2 profiles keep them all.
TEST(TerminalTemplateGrouping, PackageProgressCollapsesOnlyWithGrouping) {
  const char* parts[] = {"lib", "gtk", "xml", "ssl", "zst", "dev", "core", "util"};
  std::string in = "\x1b[1mReading package lists...\x1b[0m\n";
  for (int i = 0; i < 400; ++i) {
    std::string pkg = std::string(parts[i % 8]) + parts[(i / 8) % 8] + parts[(i / 64) % 8];
    in += "Setting up " + pkg + ":amd64 (1." + std::to_string(i) + "-1) ...\r\n";
  }
  in += "Processing triggers for man-db (2.11.2-2) ...\n";
  auto spec = RunOnString(*NewTerminalCompressor(TerminalOptions{false}), in);
  auto grouped = RunOnString(*NewTerminalCompressor(), in);
  ASSERT_TRUE(grouped.has_value());
  ASSERT_TRUE(spec.has_value());  // cleanup alone is accepted
  EXPECT_LT(grouped->size() * 10, spec->size());
  EXPECT_NE(grouped->find("lines elided (caveman): $3: "), std::string::npos) << *grouped;
  auto again = RunOnString(*NewTerminalCompressor(), *grouped);
  EXPECT_TRUE(!again.has_value() || *again == *grouped);
}

}  // namespace
}  // namespace caveman
