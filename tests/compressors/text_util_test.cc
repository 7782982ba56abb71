#include "compressors/text_util.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace caveman::internal {
namespace {

TEST(TextUtil, Utf8Validity) {
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("\xE2\x80\xA6 \xF0\x9F\x91\x8D"));
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("abc\xE2\x80"));       // truncated
  Utf8Validator v;
  v.Feed("\xE2");
  v.Feed("\x80");
  v.Feed("\xA6");
  EXPECT_TRUE(v.Finish());
}

TEST(TextUtil, TrimUsesUnicodeWhiteSpace) {
  EXPECT_EQ(Trim(" \t\xC2\xA0x y\xE3\x80\x80\n"), "x y");
  EXPECT_EQ(Trim("\xEF\xBB\xBFx"), "\xEF\xBB\xBFx");  // U+FEFF is not White_Space
  EXPECT_EQ(Trim("   "), "");
  EXPECT_EQ(Trim("x\xff "), "x\xff");
}

TEST(TextUtil, FieldsAndLower) {
  auto f = Fields("  a b\t\tc  ");
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[2], "c");
  EXPECT_EQ(Lower("ÉCOLE Straße"), "école straße");
}

TEST(TextUtil, NumberRules) {
  EXPECT_TRUE(ParseNumber("42").has_value());
  EXPECT_TRUE(ParseNumber("-3.5e2").has_value());
  EXPECT_TRUE(ParseNumber(".5").has_value());
  EXPECT_TRUE(ParseNumber("5.").has_value());
  EXPECT_TRUE(ParseNumber("0x1p3").has_value());
  EXPECT_EQ(*ParseNumber("0x1_0p0"), 16.0);
  EXPECT_TRUE(ParseNumber("-Infinity").has_value());
  EXPECT_TRUE(ParseNumber("nan").has_value());
  EXPECT_FALSE(ParseNumber("1e400").has_value());
  EXPECT_FALSE(ParseNumber("0x1").has_value());  // hex needs the exponent
  EXPECT_FALSE(ParseNumber(" 1").has_value());
  EXPECT_FALSE(ParseNumber("1_000").has_value());
  EXPECT_FALSE(ParseNumber("e5").has_value());
  EXPECT_FALSE(ParseNumber("").has_value());
}

// ByteSet answers what std::string_view::find_first_of answers, for every byte value
// (NUL and bytes >= 0x80 included), every start position and the prefix helpers.
TEST(TextUtil, ByteSetFindsWhatFindFirstOfFinds) {
  std::mt19937 rng(7);
  const std::string sets[] = {"{}=", std::string(",.;:!?)\"'*_\r\0", 13), "\xff\x80", " \t", std::string("\0", 1)};
  for (const std::string& set : sets) {
    const ByteSet bytes(set);
    for (int c = 0; c < 256; ++c) {
      EXPECT_EQ(bytes.Has(static_cast<char>(c)), set.find(static_cast<char>(c)) != std::string::npos) << c;
    }
    for (int round = 0; round < 200; ++round) {
      std::string text(rng() % 40, '\0');
      for (char& ch : text) ch = static_cast<char>(rng() % 4 == 0 ? set[rng() % set.size()] : rng() % 256);
      const std::string_view v(text);
      for (size_t pos = 0; pos <= v.size() + 1; ++pos) {
        EXPECT_EQ(bytes.FindIn(v, pos), v.find_first_of(set, pos));
      }
      EXPECT_EQ(bytes.AnyIn(v), v.find_first_of(set) != std::string_view::npos);
    }
  }
  EXPECT_TRUE(StartsWith("abc", ""));
  EXPECT_TRUE(StartsWith("abc", "ab"));
  EXPECT_FALSE(StartsWith("ab", "abc"));
  EXPECT_FALSE(StartsWith("abc", "b"));
  EXPECT_TRUE(EndsWith("abc", "bc"));
  EXPECT_TRUE(EndsWith("abc", ""));
  EXPECT_FALSE(EndsWith("bc", "abc"));
  EXPECT_FALSE(EndsWith("abc", "ab"));
}

}  // namespace
}  // namespace caveman::internal
