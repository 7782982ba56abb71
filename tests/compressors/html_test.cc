#include "compressors/html.h"

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "compressors/compressor.h"
#include "caveman/stream/tokens.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

std::string Compress(std::string_view in) {
  auto c = NewHtmlCompressor();
  std::optional<std::string> out = RunOnString(*c, in);
  return out ? *out : std::string("<declined>");
}

std::string Para(int i) {
  return "<p>Paragraph " + std::to_string(i) +
         " has real prose, with commas, clauses, and enough words to count as content for the "
         "extractor.</p>\n";
}

TEST(HtmlTest, PicksTheContentContainerAndDropsChrome) {
  std::string html = "<html><body><div class='nav'>" + Para(0) +
                     "</div><article class='post'><h1>Title of the piece</h1>" + Para(1) + Para(2) +
                     "<script>var tracking = 1;</script></article>"
                     "<div class='footer'>" +
                     Para(3) + "</div></body></html>";
  std::string out = Compress(html);
  EXPECT_EQ(out,
            "Title of the piece\n\n"
            "Paragraph 1 has real prose, with commas, clauses, and enough words to count as "
            "content for the extractor.\n\n"
            "Paragraph 2 has real prose, with commas, clauses, and enough words to count as "
            "content for the extractor.");
}

TEST(HtmlTest, PreKeepsItsWhitespace) {
  std::string html =
      "<body><div>" + Para(1) + Para(2) + "<pre>\n\nline  one\n\n\n   indented\t tab\n\n</pre></div></body>";
  std::string out = Compress(html);
  // Leading and trailing LFs of the pre text are stripped; inner whitespace is untouched.
  const std::string tail = "extractor.\n\nline  one\n\n\n   indented\t tab";
  ASSERT_GE(out.size(), tail.size());
  EXPECT_EQ(out.substr(out.size() - tail.size()), tail) << out;
}

TEST(HtmlTest, Declines) {
  EXPECT_EQ(Compress(""), "<declined>");
  EXPECT_EQ(Compress("  \n "), "<declined>");
  EXPECT_EQ(Compress("<body><div>" + Para(1) + "\xff</div></body>"), "<declined>");
  // Short text.
  EXPECT_EQ(Compress("<body><div><p>Only one short paragraph, with a comma.</p></div></body>"), "<declined>");
  // No scored container: paragraphs directly under body.
  EXPECT_EQ(Compress("<body>" + Para(1) + Para(2) + Para(3) + "</body>"), "<declined>");
  // Link-heavy winner.
  std::string links = "<body><div>";
  for (int i = 0; i < 5; ++i) {
    links +=
        "<p><a href='#'>A long link text that dominates this paragraph entirely, "
        "so it is navigation</a>.</p>";
  }
  EXPECT_EQ(Compress(links + "</div></body>"), "<declined>");
}

TEST(HtmlTest, VeryDeepPagesDeclineWithoutExhaustingTheStack) {
  std::string html = "<body>";
  for (int i = 0; i < 20000; ++i) html += "<div>";
  html += Para(1) + Para(2);
  EXPECT_EQ(Compress(html), "<declined>");
}

TEST(HtmlTest, GoldenFixtureAndIdempotence) {
  std::string in = testing::ReadFile("fixtures/html/docs_page.in");
  std::string expected = testing::ReadFile("fixtures/html/docs_page.expected");
  std::string out = Compress(in);
  EXPECT_EQ(out, expected);
  EXPECT_EQ(Compress(out), "<declined>");
}

TEST(HtmlTest, ReferenceArticle) {
  const std::string dir = testing::ReferenceDir();
  if (dir.empty()) GTEST_SKIP() << "reference fixtures absent";
  const std::string path = dir + "article.html";
  std::string in = testing::ReadAbsolute(path);
  std::string out = Compress(in);
  EXPECT_NE(out.find("How Byte-Safe Compression Earns Trust"), std::string::npos);
  EXPECT_EQ(out.find("tracking pixel"), std::string::npos);
  EXPECT_EQ(out.find("copyright boilerplate"), std::string::npos);
  const TokenCounter& tc = DefaultTokenCounter();
  double before = static_cast<double>(tc.Count(in));
  double ratio = (before - static_cast<double>(tc.Count(out))) / before;
  std::printf("html-article ratio %.3f\n", ratio);
  EXPECT_GE(ratio, 0.30);
  EXPECT_LE(ratio, 0.95);
  EXPECT_EQ(Compress(out), "<declined>");
}

}  // namespace
}  // namespace caveman

namespace caveman {
namespace {

// Issue 15 item 1: a tag with more than 1,000 attributes is declined by a linear pre-scan
// (gumbo's duplicate-attribute check is quadratic); at the bound the page still compresses,
// and quoted values containing spaces or '>' are not counted as attributes.
std::string PageWithAttributes(int n, const std::string& value) {
  std::string tag = "<div";
  for (int i = 0; i < n; ++i) tag += " a" + std::to_string(i) + "=" + value;
  tag += ">";
  return "<html><body>" + tag + "<nav>menu</nav>" + Para(1) + Para(2) + Para(3) + "</div></body></html>\n";
}

TEST(HtmlHardening, AttributeBoundIsCheckedBeforeParsing) {
  EXPECT_EQ(Compress(PageWithAttributes(80000, "\"v\"")), "<declined>");
  EXPECT_EQ(Compress(PageWithAttributes(1001, "\"v\"")), "<declined>");
  const std::string at_bound = Compress(PageWithAttributes(1000, "\"v\""));
  EXPECT_NE(at_bound, "<declined>");
  EXPECT_NE(at_bound.find("Paragraph 2"), std::string::npos);
  // 600 attributes whose values hold spaces and '>' count as 600, not thousands.
  EXPECT_NE(Compress(PageWithAttributes(600, "'x y z > w v u t s'")), "<declined>");
  // Unquoted attributes without values count too.
  std::string bare = "<html><body><div";
  for (int i = 0; i < 1001; ++i) bare += " b" + std::to_string(i);
  bare += ">" + Para(1) + Para(2) + "</div></body></html>";
  EXPECT_EQ(Compress(bare), "<declined>");
}

}  // namespace
}  // namespace caveman
