// Regression (reliability, found by the ASan run of hostile_input_test): the order-preserving
// JSON parser of internal/cj (used by toon, toolschema, toolschema-annotations and a11y)
// recursed once per nesting level before noticing the 10,000 limit, so 100,000 levels
// overflowed the 8 MiB stack of a sanitizer build. Over-deep input is now rejected by a flat
// scan before any recursion.
#include <string>

#include <gtest/gtest.h>

#include "compressors/cj.h"

namespace caveman::internal {
namespace {

std::string Nested(size_t depth, const std::string& open, const std::string& close) {
  std::string s;
  for (size_t i = 0; i < depth; ++i) s += open;
  s += "1";
  for (size_t i = 0; i < depth; ++i) s += close;
  return s;
}

TEST(CjDeepNesting, HundredThousandLevelsAreRejectedWithoutRecursion) {
  EXPECT_FALSE(ParseJson(Nested(100000, "[", "]")).has_value());
  EXPECT_FALSE(ParseJson(Nested(100000, "{\"a\":", "}")).has_value());
  EXPECT_FALSE(ParseJson(std::string(1000000, '[')).has_value());
}

TEST(CjDeepNesting, LimitIsExactlyTenThousand) {
  // Shallow enough to parse on any test stack; the exact limit is checked by the scan.
  EXPECT_TRUE(ParseJson(Nested(500, "[", "]")).has_value());
  EXPECT_FALSE(ParseJson(Nested(kMaxJsonDepth + 1, "[", "]")).has_value());
}

TEST(CjDeepNesting, BracketsInsideStringsDoNotCount) {
  const std::string deep_text = "\"" + std::string(20000, '[') + "\\\"" + std::string(20000, '{') + "\"";
  auto v = ParseJson("{\"s\":" + deep_text + "}");
  ASSERT_TRUE(v.has_value());
}

}  // namespace
}  // namespace caveman::internal
