#include "compressors/tabular.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "compressors/compressor.h"

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

TEST(TableRowCount, RejectsInvalidUtf8) { EXPECT_EQ(TableRowCount("a,b\n\xff,2\n"), std::nullopt); }

}  // namespace
}  // namespace caveman

namespace caveman {
namespace {

std::string Csv(int rows, const char* eol = "\n", bool final_eol = true) {
  std::string s = std::string("name,region,revenue,status") + eol;
  for (int i = 0; i < rows; ++i) {
    s += "customer-" + std::to_string(100 + i) + "," + (i % 2 ? "eu" : "us") + "," + std::to_string(1000 + i) + ",ok";
    if (i + 1 < rows || final_eol) s += eol;
  }
  return s;
}

TEST(TabularCompressor, ElidesRunsWithInvariantMarkerRow) {
  auto out = RunOnString(*NewTabularCompressor(), Csv(30));
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->rfind("name,region,revenue,status\n", 0), 0u);
  EXPECT_NE(out->find("rows elided (caveman): all status=ok"), std::string::npos) << *out;
  EXPECT_TRUE(out->ends_with("customer-129,eu,1029,ok\n"));
  auto again = RunOnString(*NewTabularCompressor(), *out);
  EXPECT_FALSE(again.has_value());
}

TEST(TabularCompressor, KeepsAlarmRowsAndCrlfAndMissingFinalNewline) {
  std::string in = Csv(30, "\r\n", false);
  in.insert(in.find("customer-115"), "customer-x,eu,5,FAILED chargeback\r\n");
  auto out = RunOnString(*NewTabularCompressor(), in);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("customer-x,eu,5,FAILED chargeback\r\n"), std::string::npos);
  EXPECT_FALSE(out->ends_with("\n"));
}

TEST(TabularCompressor, MarkdownReencodedWithNormalisedPadding) {
  std::string in = "|  id |  name  |\n|:---|---:|\n";
  for (int i = 0; i < 20; ++i) in += "| " + std::to_string(i) + " | item " + std::to_string(i) + " |\n";
  auto out = RunOnString(*NewTabularCompressor(), in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->rfind("| id | name |\n| :--- | ---: |\n| 0 | item 0 |\n", 0), 0u) << *out;
  EXPECT_NE(out->find("rows elided (caveman)"), std::string::npos);
}

// A TSV whose first row is data (`du -ab`): summaries name the columns "column 1", ...,
// never after the first row's values; a header over year columns stays a header.
TEST(TabularCompressor, FirstRowOfDigitsIsDataAndColumnsAreNumbered) {
  std::string du;
  for (int i = 0; i < 40; ++i) {
    du += std::to_string(4096 * (1 + i % 3)) + "\t/usr/share/doc/pkg" + std::to_string(i) + "/copyright\n";
  }
  auto out = RunOnString(*NewTabularCompressor(), du);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->rfind("4096\t/usr/share/doc/pkg0/copyright\n", 0), 0u) << *out;
  EXPECT_NE(out->find("rows elided (caveman): range column 1=4096..12288"), std::string::npos) << *out;
  EXPECT_EQ(out->find("4096="), std::string::npos) << *out;
  EXPECT_EQ(out->find("copyright="), std::string::npos) << *out;

  std::string years = "country,2019,2020\n";
  for (int i = 0; i < 40; ++i) years += "land" + std::to_string(i) + "," + std::to_string(i) + ",7\n";
  auto y = RunOnString(*NewTabularCompressor(), years);
  ASSERT_TRUE(y.has_value());
  EXPECT_NE(y->find("all 2020=7"), std::string::npos) << *y;
  EXPECT_EQ(y->find("column "), std::string::npos) << *y;
}

TEST(TabularCompressor, DeclinesSmallTables) {
  EXPECT_FALSE(RunOnString(*NewTabularCompressor(), Csv(10)).has_value());
}

TEST(TabularCompressor, QuotesFieldsThatNeedIt) {
  std::string in = "a,b\n";
  for (int i = 0; i < 20; ++i) in += "\" lead " + std::to_string(i) + "\",\"x,\"\"y\"\"\"\n";
  auto out = RunOnString(*NewTabularCompressor(), in);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("\" lead 0\",\"x,\"\"y\"\"\"\n"), std::string::npos) << *out;
}

}  // namespace
}  // namespace caveman

namespace caveman {
namespace {

// Rows of unique hashes: §4.2 profiles never repeat, so the spec keeps every row; rows of one
// shape are represented by a kept row with template grouping.
std::string HashTable(int rows) {
  std::string s = "id,digest,owner\n";
  uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < rows; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    char buf[64];
    std::snprintf(buf, sizeof buf, "obj-%d,%016llx%08x,%s\n", 1000 + i, static_cast<unsigned long long>(x),
                  static_cast<unsigned>(x >> 11), i % 2 ? "alice" : "bob");
    s += buf;
  }
  return s;
}

TEST(TabularTemplateGrouping, RowsOfUniqueHashesCompressOnlyWithGrouping) {
  const std::string in = HashTable(400);
  auto spec = RunOnString(*NewTabularCompressor(TabularOptions{false}), in);
  auto grouped = RunOnString(*NewTabularCompressor(), in);
  ASSERT_TRUE(grouped.has_value());
  EXPECT_LT(grouped->size() * 10, in.size());
  EXPECT_TRUE(!spec.has_value() || spec->size() > grouped->size() * 5);
  EXPECT_NE(grouped->find("owner: "), std::string::npos) << *grouped;
  EXPECT_FALSE(RunOnString(*NewTabularCompressor(), *grouped).has_value());
}

}  // namespace
}  // namespace caveman
