#include "compressors/narrow.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace caveman {
namespace {

// The gap marker of §2.6 (U+2026 on both sides).
const std::string kM = "\xE2\x80\xA6 [caveman: non-adjacent] \xE2\x80\xA6";

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

TEST(NarrowForQuery, MarkerIsTheSpecBytes) { EXPECT_EQ(kM.size(), 31u); }

// --- JSON ---------------------------------------------------------------------------------

TEST(NarrowForQuery, JsonOneGroupRendersHitElementWithCji) {
  // Units: "", five elements, "". Member order in the output is sorted, nested values indented.
  const std::string original = R"({"meta":{"note":"n"},"items":[{"name":"alpha","id":1},)"
                               R"({"name":"beta","tags":["x",{"deep":true,"e":[],"o":{}}],"id":2},)"
                               R"({"name":"gamma","id":3},{"name":"delta","id":4},{"name":"epsilon","id":5},)"
                               R"({"name":"zeta","id":6},{"name":"eta","id":7}]})";
  const std::string element =
      "{\n"
      "  \"id\": 2,\n"
      "  \"name\": \"beta\",\n"
      "  \"tags\": [\n"
      "    \"x\",\n"
      "    {\n"
      "      \"deep\": true,\n"
      "      \"e\": [],\n"
      "      \"o\": {}\n"
      "    }\n"
      "  ]\n"
      "}";
  EXPECT_EQ(NarrowForQuery(original, "where is Beta?"), kM + "\n\n" + element + "\n\n" + kM);
}

TEST(NarrowForQuery, JsonTwoGroupsAreSeparatedByAnEmptyUnit) {
  // Sorted walk: a.list (group 1), then b (group 2); c holds scalars and is not a group.
  // Units: 0 "", 1 uno, 2 beta dos, 3 "", 4 beta one, 5 two, 6 three, 7 "".
  const std::string original = R"({"c":[1,2,"beta"],"b":[{"k":"beta one"},{"k":"two"},{"k":"three"}],)"
                               R"("a":{"list":[{"k":"uno"},{"k":"beta dos"}]},)"
                               R"("pad":"lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor )"
                               R"(incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud"})";
  const std::string u2 = "{\n  \"k\": \"beta dos\"\n}";
  const std::string u4 = "{\n  \"k\": \"beta one\"\n}";
  const std::string u5 = "{\n  \"k\": \"two\"\n}";
  // The last element of group 1 and the first of group 2 are never adjacent (unit 3 between).
  EXPECT_EQ(NarrowForQuery(original, "beta"), kM + "\n\n" + u2 + "\n\n" + kM + "\n\n" + u4 + "\n\n" + kM);
  // Adjacent hits inside one group are joined by a blank line only.
  EXPECT_EQ(NarrowForQuery(original, "beta two"),
            kM + "\n\n" + u2 + "\n\n" + kM + "\n\n" + u4 + "\n\n" + u5 + "\n\n" + kM);
}

TEST(NarrowForQuery, JsonMixedArrayIsDescendedIntoItsObjects) {
  const std::string original = R"([{"x":[{"q":"hit here"},{"q":"miss"}]},5,)"
                               R"({"pad":"lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod"}])";
  EXPECT_EQ(NarrowForQuery(original, "hit"), kM + "\n\n{\n  \"q\": \"hit here\"\n}\n\n" + kM);
}

TEST(NarrowForQuery, JsonWithoutGroupReturnsOriginal) {
  // Matching text exists, but JSON with no group has no units (it does not fall back to text).
  const std::string original =
      "{\"a\": \"beta beta beta\",\n\n \"b\": [1, 2, 3],\n\n \"c\": [],\n\n"
      " \"d\": \"lorem ipsum dolor sit amet consectetur adipiscing elit\"}";
  EXPECT_EQ(NarrowForQuery(original, "beta"), original);
  EXPECT_EQ(NarrowForQuery("[1,2,3,\"beta\"]", "beta"), "[1,2,3,\"beta\"]");
}

// --- Tables -------------------------------------------------------------------------------

TEST(NarrowForQuery, CsvPrintsHeaderFirst) {
  const std::string original =
      "id,name,note\n"
      "1,alpha,first row with some padding text\n"
      "2,beta,second row with some padding text\n"
      "3,gamma,third row with some padding text\n"
      "4,delta,fourth row with some padding text\n"
      "5,epsilon,fifth row with some padding text\n";
  EXPECT_EQ(NarrowForQuery(original, "gamma"),
            "id,name,note\n" + kM + "\n\n3,gamma,third row with some padding text\n\n" + kM);
  // First data record is unit 0: no leading marker; last record: no trailing marker.
  EXPECT_EQ(NarrowForQuery(original, "alpha epsilon"), "id,name,note\n1,alpha,first row with some padding text\n\n" +
                                                           kM + "\n\n5,epsilon,fifth row with some padding text");
}

TEST(NarrowForQuery, CsvUnitsAreByteRangesBetweenRecordEnds) {
  // CRLF records, a quoted field spanning lines, and a blank line that stays with the record
  // after it; trailing CR/LF bytes are removed from each unit and from the header.
  const std::string original =
      "id,name,note\r\n"
      "1,alpha,\"multi\r\nline\"\r\n"
      "\r\n"
      "2,beta,plain\r\n"
      "3,gamma,lorem ipsum dolor sit amet consectetur\r\n"
      "4,delta,adipiscing elit sed do eiusmod tempor\r\n";
  EXPECT_EQ(NarrowForQuery(original, "line beta"),
            "id,name,note\n1,alpha,\"multi\r\nline\"\n\n\r\n2,beta,plain\n\n" + kM);
}

TEST(NarrowForQuery, TsvUsesTabDelimiter) {
  // Two TABs and one comma in the first line: TAB. The comma counts differ per row, so a comma
  // reading would fail and fall back to text (which prints no header line).
  const std::string original =
      "id\tname\tnote, with comma\n"
      "1\tlorem\tipsum, dolor sit amet\n"
      "2\tconsectetur\tadipiscing, elit, sed\n"
      "3\tdo\teiusmod tempor incididunt ut labore et dolore magna aliqua\n";
  EXPECT_EQ(NarrowForQuery(original, "consectetur"),
            "id\tname\tnote, with comma\n" + kM + "\n\n2\tconsectetur\tadipiscing, elit, sed\n\n" + kM);
}

TEST(NarrowForQuery, TableNeedsTwoDataRecordsElseText) {
  // One data record: text units split on LF, so no header line is printed.
  const std::string original = "id,name,lorem ipsum dolor sit amet consectetur adipiscing elit\n1,beta,x\n";
  EXPECT_EQ(NarrowForQuery(original, "beta"), kM + "\n\n1,beta,x");
  // A table-like payload whose TRIM starts with '[' (not JSON) is text too.
  const std::string bracket = "  [x,y,z\n1,beta,2\n3,lorem ipsum dolor sit amet consectetur adipiscing elit,4\n";
  EXPECT_EQ(NarrowForQuery(bracket, "beta"), kM + "\n\n1,beta,2\n\n" + kM);
}

// --- Text ---------------------------------------------------------------------------------

TEST(NarrowForQuery, TextSplitsOnBlankLinesWhenPresent) {
  const std::string original =
      "alpha one lorem ipsum\nalpha two dolor sit\n\n  beta three  \n\n"
      "gamma four amet\nmore gamma consectetur\n\n\n\ndelta adipiscing elit";
  // Units: "alpha one…\nalpha two…", "beta three", "gamma…\nmore gamma…", "delta…".
  EXPECT_EQ(NarrowForQuery(original, "beta"), kM + "\n\nbeta three\n\n" + kM);
  EXPECT_EQ(NarrowForQuery(original, "gamma"), kM + "\n\ngamma four amet\nmore gamma consectetur\n\n" + kM);
}

TEST(NarrowForQuery, TextSplitsOnLinesOtherwise) {
  const std::string original =
      "line one alpha lorem ipsum\n  beta two \n\r\nline three gamma dolor sit amet\n"
      "line four delta consectetur adipiscing\n";
  // Units (TRIMmed, empty dropped): "line one…", "beta two", "line three…", "line four…".
  EXPECT_EQ(NarrowForQuery(original, "beta"), kM + "\n\nbeta two\n\n" + kM);
}

TEST(NarrowForQuery, SeparatorsForLeadingAdjacentGapAndTrailingHits) {
  std::vector<std::string> lines;
  for (int i = 0; i < 10; ++i) {
    lines.push_back("row " + std::to_string(i) + " lorem ipsum dolor sit amet");
  }
  auto with_needles = [&](std::vector<int> at) {
    std::vector<std::string> l = lines;
    for (int i : at) l[i] += " needle";
    return l;
  };
  // Hits 0,1 (adjacent, first is unit 0), 4 (gap), 9 (last unit): no outer markers.
  std::vector<std::string> l = with_needles({0, 1, 4, 9});
  EXPECT_EQ(NarrowForQuery(Join(l, "\n"), "needle"),
            l[0] + "\n\n" + l[1] + "\n\n" + kM + "\n\n" + l[4] + "\n\n" + kM + "\n\n" + l[9]);
  // Hits 2,3,6: leading marker, adjacent pair, gap, trailing marker.
  l = with_needles({2, 3, 6});
  EXPECT_EQ(NarrowForQuery(Join(l, "\n"), "needle"),
            kM + "\n\n" + l[2] + "\n\n" + l[3] + "\n\n" + kM + "\n\n" + l[6] + "\n\n" + kM);
}

TEST(NarrowForQuery, KeepsTwentyBestHitsInSourceOrder) {
  // Units 0–4 contain the term but are long (lower BM25); units 5–25 are 21 equal, short hits,
  // so ties keep source order: 5–24 survive and 25 is cut; unit 26 is no hit.
  std::vector<std::string> units;
  for (int i = 0; i < 5; ++i) {
    units.push_back("needle lorem ipsum dolor sit amet consectetur adipiscing elit sed do");
  }
  for (int i = 0; i < 21; ++i) units.push_back("needle zz");
  units.push_back("nothing relevant");
  std::vector<std::string> kept(units.begin() + 5, units.begin() + 25);
  EXPECT_EQ(NarrowForQuery(Join(units, "\n"), "needle"), kM + "\n\n" + Join(kept, "\n\n") + "\n\n" + kM);
}

TEST(NarrowForQuery, NoHitReturnsOriginal) {
  const std::string original = "alpha lorem ipsum dolor\n\nbeta sit amet consectetur\n\ngamma";
  EXPECT_EQ(NarrowForQuery(original, "omega"), original);
  // Only stop words and one-byte runs: no query terms.
  EXPECT_EQ(NarrowForQuery(original, "what is a b c"), original);
  EXPECT_EQ(NarrowForQuery("", "beta"), "");
  EXPECT_EQ(NarrowForQuery(" \n\n \n", "beta"), " \n\n \n");
}

TEST(NarrowForQuery, EmptyOrBlankQueryReturnsOriginal) {
  const std::string original = "alpha lorem ipsum dolor\n\nbeta sit amet consectetur\n\ngamma";
  EXPECT_EQ(NarrowForQuery(original, ""), original);
  EXPECT_EQ(NarrowForQuery(original, " \t\r\n"), original);
  EXPECT_EQ(NarrowForQuery(original, "\xE3\x80\x80\xC2\xA0"), original);  // U+3000, U+00A0
}

TEST(NarrowForQuery, ViewNotShorterReturnsOriginal) {
  // View = marker + "\n\n" + "beta": equal to the original's length when the pad is 31 bytes.
  const std::string equal = std::string(31, 'z') + "\n\nbeta";
  EXPECT_EQ(NarrowForQuery(equal, "beta"), equal);
  const std::string longer = std::string(32, 'z') + "\n\nbeta";
  EXPECT_EQ(NarrowForQuery(longer, "beta"), kM + "\n\nbeta");
  EXPECT_EQ(NarrowForQuery("alpha\nbeta\ngamma", "beta"), "alpha\nbeta\ngamma");
}

TEST(NarrowForQuery, InvalidUtf8IsNarrowedAsText) {
  const std::string original =
      "a,b\n\xFF,beta\nlorem,ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod\n";
  EXPECT_EQ(NarrowForQuery(original, "beta"), kM + "\n\n\xFF,beta\n\n" + kM);
}

}  // namespace
}  // namespace caveman
