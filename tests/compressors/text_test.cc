#include "compressors/text.h"

#include <gtest/gtest.h>

#include <string>

#include "compressors/compressor.h"

namespace caveman {
namespace {

std::string Paragraphs(int count, const char* eol = "\n") {
  std::string s = std::string("# Release notes") + eol + eol;
  for (int i = 0; i < count; ++i) {
    s += "The service handled request batch number " + std::to_string(i) +
         " without any trouble, and the latency stayed well inside the agreed budget." + eol + eol;
  }
  s += std::string("Final words of the document go here.") + eol;
  return s;
}

TEST(TextCompressor, ElidesSimilarParagraphsAndKeepsHeadings) {
  auto out = RunOnString(*NewTextCompressor(), Paragraphs(30));
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->rfind("# Release notes\n\n", 0), 0u);
  EXPECT_NE(out->find("sections elided (caveman)"), std::string::npos);
  EXPECT_NE(out->back(), '\n');
  EXPECT_TRUE(out->ends_with("Final words of the document go here."));
  auto again = RunOnString(*NewTextCompressor(), *out);
  EXPECT_TRUE(!again.has_value() || *again == *out);
}

TEST(TextCompressor, DeclinesShortInput) {
  EXPECT_FALSE(RunOnString(*NewTextCompressor(), Paragraphs(3)).has_value());
  EXPECT_FALSE(RunOnString(*NewTextCompressor(), "").has_value());
}

TEST(TextCompressor, FencedCodeStaysOneSection) {
  std::string in = Paragraphs(12);
  in += "```\ncode line 1\n\ncode line 2\n```\n\n";
  in += Paragraphs(12);
  auto out = RunOnString(*NewTextCompressor(), in);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("```\ncode line 1\n\ncode line 2\n```"), std::string::npos) << *out;
}

TEST(TextCompressor, QueryKeepsRelevantParagraph) {
  std::string in = Paragraphs(20);
  in.insert(in.find("request batch number 9 "), "");
  auto out = RunOnString(*NewTextCompressor(), in, "batch number 11");
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("request batch number 11 "), std::string::npos);
}

TEST(TextCompressor, HtmlScriptsAreReplacedBeforeSectioning) {
  std::string in = "<html><body>\n<script>var x = 1;\n\nvar y = 2;</script>\n\n" + Paragraphs(20) +
                   "<!-- hidden comment -->\n</body></html>\n";
  auto out = RunOnString(*NewTextCompressor(), in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->find("var x"), std::string::npos);
  EXPECT_EQ(out->find("hidden comment"), std::string::npos);
}

TEST(TextCompressor, CrlfInsideSectionsSurvivesSeparatorsAreLf) {
  std::string in = Paragraphs(30, "\r\n");
  auto out = RunOnString(*NewTextCompressor(), in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->find("\r\n\r\n"), std::string::npos);
  EXPECT_NE(out->find("\n\n"), std::string::npos);
}

}  // namespace
}  // namespace caveman

namespace caveman {
namespace {

// An `ls -l` listing: every line its own section; names and sizes differ in words and digits.
TEST(TextTemplateGrouping, ListingRowsAreRepresentedByAKeptRowOfTheirTemplate) {
  const char* words[] = {"ant", "bee", "cat", "dog", "eel", "fox", "gnu", "hen"};
  std::string in = "total 4242\n";
  for (int i = 0; i < 300; ++i) {
    in += std::string(i % 3 ? "-rw-r--r--" : "-rwxr-xr-x") + " 1 root root " +
          std::to_string(1000 + i * 37) + " Nov 27 12:12 " + words[i % 8] + words[(i / 8) % 8] +
          words[(i / 64) % 8] + ".bin\n";
  }
  auto spec = RunOnString(*NewTextCompressor(TextOptions{false}), in);
  auto grouped = RunOnString(*NewTextCompressor(), in);
  ASSERT_TRUE(grouped.has_value());
  EXPECT_LT(grouped->size() * 10, in.size());
  EXPECT_TRUE(!spec.has_value() || spec->size() > grouped->size() * 3);
  EXPECT_NE(grouped->find("sections elided (caveman): "), std::string::npos) << *grouped;
  auto again = RunOnString(*NewTextCompressor(), *grouped);
  EXPECT_TRUE(!again.has_value() || *again == *grouped);
}

}  // namespace
}  // namespace caveman
