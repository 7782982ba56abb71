#include "compressors/search_result.h"

#include <gtest/gtest.h>

#include <string>

#include "compressors/compressor.h"

namespace caveman {
namespace {

std::string Grep(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    s += "src/module_" + std::to_string(i % 3) + "/file.cc:" + std::to_string(10 + i) + ":    return compute(value);\n";
  }
  return s;
}

TEST(SearchResultCompressor, KeepsHeadTailAndAlarmLines) {
  std::string in = Grep(40);
  in.insert(in.find("src/module_2/file.cc:30:"), "src/auth/token.cc:7:  // SECURITY check\n");
  auto out = RunOnString(*NewSearchResultCompressor(), in);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("src/auth/token.cc:7:  // SECURITY check\n"), std::string::npos);
  EXPECT_NE(out->find("search result lines elided (caveman)"), std::string::npos);
  EXPECT_EQ(out->rfind(in.substr(0, in.find("file.cc:17:")), 0), 0u);  // 8 head lines
  auto again = RunOnString(*NewSearchResultCompressor(), *out);
  EXPECT_TRUE(!again.has_value() || *again == *out);
}

TEST(SearchResultCompressor, DeclinesBelowEighteenLines) {
  EXPECT_FALSE(RunOnString(*NewSearchResultCompressor(), Grep(17)).has_value());
}

TEST(SearchResultCompressor, QueryPullsInMatchingLine) {
  std::string in = Grep(40);
  in.insert(in.find("src/module_2/file.cc:30:"), "docs/notes.md:3: the zebra migration plan\n");
  auto out = RunOnString(*NewSearchResultCompressor(), in, "zebra migration");
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("zebra migration plan"), std::string::npos);
}

}  // namespace
}  // namespace caveman
