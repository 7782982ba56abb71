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
  EXPECT_EQ(CleanTerminalLine("\x1b" "7z"), "\x1b" "7z");  // '7' is outside [@-Z\x5c-_]
  EXPECT_EQ(CleanTerminalLine("\x1bMup"), "up");
  EXPECT_EQ(CleanTerminalLine("\x1b]unterminated"), "unterminated");  // falls back to ESC ]
  EXPECT_EQ(CleanTerminalLine("\x1b[12"), "\x1b[12");  // no final byte, '[' is no 2-byte escape
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
