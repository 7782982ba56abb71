#include "stream/line_splitter.h"

#include <gtest/gtest.h>

#include "tests/testing/test_util.h"

namespace caveman {
namespace {

// Renders pieces as "[piece]T" / "[piece]F" so every boundary and flag is visible.
std::string Pieces(const std::vector<std::string_view>& chunks) {
  LineSplitter s;
  std::string out;
  auto fn = [&](std::string_view p, bool terminated) { out += "[" + std::string(p) + "]" + (terminated ? "T" : "F"); };
  for (auto c : chunks) s.Push(c, fn);
  s.Finish(fn);
  return out;
}

std::string Fragments(const std::vector<std::string_view>& chunks, size_t max_line) {
  LineSplitter s;
  std::string out, line;
  auto fn = [&](std::string_view p, bool first, bool last, bool terminated) {
    if (first) line.clear();
    line += p;
    if (last) out += "[" + line + "]" + (terminated ? "T" : "F");
  };
  for (auto c : chunks) s.PushFragments(c, max_line, fn);
  s.FinishFragments(fn);
  return out;
}

TEST(LineSplitter, TerminatedPiecesAndFinalPiece) {
  EXPECT_EQ(Pieces({"a\nb"}), "[a]T[b]F");
  EXPECT_EQ(Pieces({"a\n"}), "[a]T[]F");
  EXPECT_EQ(Pieces({""}), "[]F");
  EXPECT_EQ(Pieces({}), "[]F");
  EXPECT_EQ(Pieces({"\n\n"}), "[]T[]T[]F");
}

TEST(LineSplitter, KeepsCarriageReturns) {
  EXPECT_EQ(Pieces({"a\r\nb\r\n"}), "[a\r]T[b\r]T[]F");
  EXPECT_EQ(Pieces({"a\r", "\nb"}), "[a\r]T[b]F");
}

TEST(LineSplitter, LinesSpanningChunks) { EXPECT_EQ(Pieces({"ab", "c\nd", "e", "f\n"}), "[abc]T[def]T[]F"); }

TEST(LineSplitter, ChunkingInvariant) {
  std::string in = "first line\r\nsecond\n\nthird without newline at the end \xE2\x80\xA6";
  for (int i = 0; i < 50; ++i) in += "line " + std::to_string(i) + (i % 3 ? "\n" : "\r\n");
  testing::ExpectChunkingInvariant(in, Pieces);
  testing::ExpectChunkingInvariant(in + "\n", Pieces);
}

TEST(LineSplitter, FragmentsReassembleToSameLines) {
  std::string in = std::string(10000, 'x') + "\nshort\n" + std::string(300, 'y');
  std::string expected = Pieces({in});
  testing::ExpectChunkingInvariant(in, [&](const std::vector<std::string_view>& chunks) {
    std::string got = Fragments(chunks, 64);
    EXPECT_EQ(got, expected);
    return got;
  });
}

TEST(LineSplitter, FragmentModeBoundsBuffer) {
  LineSplitter s;
  std::string big(1 << 20, 'z');
  size_t parts = 0;
  for (size_t off = 0; off < big.size(); off += 4096) {
    s.PushFragments(std::string_view(big).substr(off, 4096), 8192,
                    [&](std::string_view, bool, bool, bool) { ++parts; });
    EXPECT_LE(s.buffered(), 8192u + 4096u);
  }
  s.FinishFragments([&](std::string_view, bool, bool last, bool) {
    EXPECT_TRUE(last);
    ++parts;
  });
  EXPECT_GT(parts, 100u);
}

}  // namespace
}  // namespace caveman
