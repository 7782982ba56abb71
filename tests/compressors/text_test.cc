#include "compressors/text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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
  // The input's final LF is kept (issue 16; §5.7 dropped it).
  EXPECT_TRUE(out->ends_with("Final words of the document go here.\n"));
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

// Issue 16 (docs/DECISIONS.md, "Text line endings"): a CRLF document keeps CRLF everywhere,
// separators included; no bare LF is introduced.
TEST(TextCompressor, CrlfDocumentKeepsCrlfSeparators) {
  std::string in = Paragraphs(30, "\r\n");
  auto out = RunOnString(*NewTextCompressor(), in);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("\r\n\r\n"), std::string::npos);
  for (size_t i = out->find('\n'); i != std::string::npos; i = out->find('\n', i + 1)) {
    ASSERT_GT(i, 0u);
    EXPECT_EQ((*out)[i - 1], '\r') << "bare LF at byte " << i;
  }
}

// Every output line of line-mode text is an input line (indentation, trailing spaces and CR
// included) or a marker, in order; no blank lines are added; the final LF is kept.
void ExpectLinesAreInputLinesOrMarkers(const std::string& in, const std::string& out) {
  std::vector<std::string> in_lines, out_lines;
  auto split = [](const std::string& s, std::vector<std::string>* v) {
    size_t b = 0;
    for (size_t e = s.find('\n'); e != std::string::npos; b = e + 1, e = s.find('\n', b)) {
      v->push_back(s.substr(b, e - b));
    }
    if (b < s.size()) v->push_back(s.substr(b));
  };
  split(in, &in_lines);
  split(out, &out_lines);
  size_t k = 0, covered = 0;
  for (const std::string& line : out_lines) {
    if (line.find("sections elided (caveman)") != std::string::npos) {
      const size_t count = std::stoul(line.substr(line.find(' ') + 1));
      k += count;
      covered += count;
      continue;
    }
    ASSERT_LT(k, in_lines.size()) << "extra line: " << line;
    EXPECT_EQ(line, in_lines[k]) << "output line is not input line " << k;
    ++k;
    ++covered;
  }
  EXPECT_EQ(covered, in_lines.size()) << "markers do not add up";
}

// `apt list --installed` shape (issue 16): a short preamble paragraph, then one paragraph of
// hundreds of lines. The long paragraph is a listing: its lines are sections joined by one line
// ending, so the view elides inside it and adds no blank lines.
TEST(TextCompressor, LongParagraphIsAListingOfLines) {
  for (const char* eol : {"\n", "\r\n"}) {
    const std::string e = eol;
    std::string in = e + "WARNING: this tool has no stable interface." + e + e + "Listing..." + e;
    for (int i = 0; i < 300; ++i) {
      in += "package-" + std::to_string(i % 7 == 0 ? i : 5) + "/stable,now 1." + std::to_string(i % 3) +
            " amd64 [installed,automatic]" + e;
    }
    in += e + "Done." + e;
    auto out = RunOnString(*NewTextCompressor(), in);
    ASSERT_TRUE(out.has_value());
    EXPECT_NE(out->find("sections elided (caveman)"), std::string::npos);
    // Blank lines only where the input has paragraph breaks: after the preamble, before "Done.".
    size_t blank = 0;
    for (size_t p = out->find(e + e); p != std::string::npos; p = out->find(e + e, p + e.size())) ++blank;
    EXPECT_EQ(blank, 2u) << *out;
    // Every other line is an input line, in order.
    size_t from = 0;
    size_t b = 0;
    while (b < out->size()) {
      size_t end = out->find(e, b);
      if (end == std::string::npos) end = out->size();
      const std::string line = out->substr(b, end - b);
      b = end + e.size();
      if (line.empty() || line.find("caveman") != std::string::npos) continue;
      const size_t at = in.find(e + line + e, from == 0 ? 0 : from - e.size());
      ASSERT_NE(at, std::string::npos) << "not an input line: " << line;
      from = at + e.size() + line.size();
    }
    EXPECT_EQ(out->find('\n') == std::string::npos || (*out)[out->find('\n') - 1] == '\r', e == "\r\n");
  }
}

// Repeats of the section before are not kept as headings (project extension): `yes | head`,
// a retry line printed hundreds of times. The marker says what the run was; head and tail stay.
TEST(TextCompressor, RunOfIdenticalSectionsBecomesOneMarker) {
  std::string in = "connecting to db.internal:5432\n";
  for (int i = 0; i < 400; ++i) in += "retrying connection\n";
  in += "connected\n";
  auto out = RunOnString(*NewTextCompressor(), in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out,
            "connecting to db.internal:5432\nretrying connection\n"
            "\xE2\x80\xA6 398 sections elided (caveman): each identical to the one above \xE2\x80\xA6\n"
            "retrying connection\nconnected\n");
  EXPECT_FALSE(RunOnString(*NewTextCompressor(), *out).has_value());  // idempotent: declines
  // Paragraph mode: repeated paragraphs, and a run that differs from its neighbour keeps its rules.
  std::string para = "# Notes\n\n";
  for (int i = 0; i < 12; ++i) para += "Build 17 finished.\nNo warnings.\n\n";
  for (int i = 0; i < 12; ++i) para += "Step " + std::to_string(i) + "\n\n";
  para += "The end of a long enough document, " + std::string(1600, 'x') + ".\n";
  auto p = RunOnString(*NewTextCompressor(), para);
  ASSERT_TRUE(p.has_value());
  EXPECT_NE(p->find("sections elided (caveman): each identical to the one above"), std::string::npos) << *p;
  EXPECT_NE(p->find("Step 11"), std::string::npos) << *p;  // headings that differ are kept
  EXPECT_NE(p->find("Step 5"), std::string::npos) << *p;
  // A repeat shorter than the marker that would stand for it stays.
  std::string prose;
  for (int i = 0; i < 60; ++i) {
    prose += "Line " + std::to_string(i) + " of a report, with enough words to be prose rather than a title.\n";
    if (i % 4 == 0) prose += "Retrying\nRetrying\n";
  }
  auto r = RunOnString(*NewTextCompressor(), prose);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->find("identical to the one above"), std::string::npos) << *r;
  EXPECT_NE(r->find("Retrying\nRetrying\n"), std::string::npos) << *r;
}

// A dropped run that takes no more bytes than its marker is written as it is.
TEST(TextCompressor, NoMarkerStandsForFewerBytesThanItTakes) {
  std::string in;
  for (int i = 0; i < 30; ++i) in += "ERROR step " + std::to_string(i) + " failed\nx.y\n";
  for (int i = 0; i < 80; ++i) in += "/usr/share/doc/package-" + std::to_string(i) + "/changelog.Debian.gz\n";
  in += "ERROR last\n";
  auto out = RunOnString(*NewTextCompressor(), in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->find("\xE2\x80\xA6 1 sections elided"), std::string::npos) << *out;
  EXPECT_NE(out->find("ERROR step 7 failed\nx.y\nERROR step 8 failed\n"), std::string::npos) << *out;
  EXPECT_NE(out->find("sections elided (caveman)"), std::string::npos) << *out;  // the long run still goes
  const auto again = RunOnString(*NewTextCompressor(), *out);
  EXPECT_TRUE(!again.has_value() || *again == *out);
}

TEST(TextCompressor, LineModeKeepsLinesAndEndings) {
  for (const char* eol : {"\n", "\r\n"}) {
    std::string in;
    for (int i = 0; i < 200; ++i) {
      in += (i % 5 ? "  /usr/share/doc/package-" : "/usr/lib/") + std::to_string(i * 7919 % 1000) +
            (i % 7 ? "/file.txt " : "/README") + eol;
    }
    in += "ERROR: one alarm line";
    in += eol;
    for (int i = 0; i < 50; ++i) in += "/var/cache/item" + std::to_string(i) + eol;
    auto out = RunOnString(*NewTextCompressor(TextOptions{false}), in);
    ASSERT_TRUE(out.has_value()) << "eol " << (eol[0] == '\r' ? "CRLF" : "LF");
    EXPECT_EQ(out->find("\n\n"), std::string::npos);
    EXPECT_EQ(out->back(), '\n');
    EXPECT_NE(out->find("ERROR: one alarm line"), std::string::npos);
    ExpectLinesAreInputLinesOrMarkers(in, *out);
  }
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
    in += std::string(i % 3 ? "-rw-r--r--" : "-rwxr-xr-x") + " 1 root root " + std::to_string(1000 + i * 37) +
          " Nov 27 12:12 " + words[i % 8] + words[(i / 8) % 8] + words[(i / 64) % 8] + ".bin\n";
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
