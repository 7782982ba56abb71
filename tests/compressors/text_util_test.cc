#include "compressors/text_util.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace caveman::internal
