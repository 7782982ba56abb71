#include "compressors/tabular.h"

#include <gtest/gtest.h>

#include <string>

namespace caveman {
namespace {

TEST(TableRowCount, CsvCountsHeaderAndRecords) {
  EXPECT_EQ(TableRowCount("a,b\n1,2\n3,4\n"), 3u);
  EXPECT_EQ(TableRowCount("a,b\r\n1,2\r\n3,4"), 3u);
}

TEST(TableRowCount, CsvSkipsEmptyLinesAndHandlesQuotes) {
  EXPECT_EQ(TableRowCount("a,b\n\n\"x,\"\"y\"\"\",2\n\r\n\"multi\r\nline\",3\n"), 3u);
}

TEST(TableRowCount, CsvRejectsRaggedRowsStrayQuotesAndSingleRecords) {
  EXPECT_EQ(TableRowCount("a,b\n1,2,3\n"), std::nullopt);
  EXPECT_EQ(TableRowCount("a,b\n1,x\"y\n"), std::nullopt);
  EXPECT_EQ(TableRowCount("a,b\n\"1\"x,2\n"), std::nullopt);
  EXPECT_EQ(TableRowCount("a,b\n\"unterminated,2\n"), std::nullopt);
  EXPECT_EQ(TableRowCount("a,b\n"), std::nullopt);
  EXPECT_EQ(TableRowCount("ab\ncd\n"), std::nullopt);
  EXPECT_EQ(TableRowCount("   \n"), std::nullopt);
  EXPECT_EQ(TableRowCount(""), std::nullopt);
}

TEST(TableRowCount, CsvTrailingDelimiterOpensEmptyField) {
  EXPECT_EQ(TableRowCount("a,b,\n1,2,"), 2u);
  EXPECT_EQ(TableRowCount("a,b,\n1,2"), std::nullopt);
}

TEST(TableRowCount, TsvChosenWhenMoreTabsThanCommas) {
  EXPECT_EQ(TableRowCount("a\tb,c\tz\n1\t2,3\t4\n"), 2u);
  // One tab, two commas: comma wins, and the rows have 3 comma fields.
  EXPECT_EQ(TableRowCount("a\tb,c,d\n1\t2,3,4\n"), 2u);
}

TEST(TableRowCount, FieldLimits) {
  std::string wide, too_wide;
  for (int i = 0; i < 128; ++i) wide += (i ? "," : "") + std::to_string(i);
  for (int i = 0; i < 129; ++i) too_wide += (i ? "," : "") + std::to_string(i);
  EXPECT_EQ(TableRowCount(wide + "\n" + wide + "\n"), 2u);
  EXPECT_EQ(TableRowCount(too_wide + "\n" + too_wide + "\n"), std::nullopt);
}

TEST(TableRowCount, MarkdownCountsHeaderAndSeparator) {
  EXPECT_EQ(TableRowCount("| a | b |\n|---|:---:|\n| 1 | 2 |\n"), 3u);
  EXPECT_EQ(TableRowCount("| a | b |\r\n| --- | ---: |\r\n| 1 | 2 |\r\n| 3 | 4 |"), 4u);
}

TEST(TableRowCount, MarkdownRejectsBadSeparatorOrWidth) {
  EXPECT_EQ(TableRowCount("| a | b |\n|--|---|\n| 1 | 2 |\n"), std::nullopt);
  EXPECT_EQ(TableRowCount("| a | b |\n|---|---|\n| 1 | 2 | 3 |\n"), std::nullopt);
  EXPECT_EQ(TableRowCount("| a |\n|---|\n| 1 |\n"), std::nullopt);
}

TEST(TableRowCount, RejectsInvalidUtf8) {
  EXPECT_EQ(TableRowCount("a,b\n\xff,2\n"), std::nullopt);
}

}  // namespace
}  // namespace caveman
