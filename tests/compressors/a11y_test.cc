#include "compressors/a11y.h"

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "compressors/compressor.h"
#include "caveman/stream/tokens.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

std::string Compress(std::string_view in, std::string_view query = {}, TransformMeta* meta = nullptr) {
  auto c = NewA11yCompressor();
  std::optional<std::string> out = RunOnString(*c, in, query, meta);
  return out ? *out : std::string("<declined>");
}

TEST(A11yTest, Quote) {
  EXPECT_EQ(A11yQuote("plain é €"), "\"plain é €\"");
  EXPECT_EQ(A11yQuote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(A11yQuote("\a\b\f\n\r\t\v"), "\"\\a\\b\\f\\n\\r\\t\\v\"");
  EXPECT_EQ(A11yQuote(std::string("\x01\x7f", 2)), "\"\\x01\\x7f\"");
  EXPECT_EQ(A11yQuote("nb\xC2\xA0sp\xE2\x80\x8B"), "\"nb\\u00a0sp\\u200b\"");
  EXPECT_EQ(A11yQuote("\xF3\xA0\x80\x81"), "\"\\U000e0001\"");       // tag character (Cf)
  EXPECT_EQ(A11yQuote("\xF0\x9F\x98\x80"), "\"\xF0\x9F\x98\x80\"");  // emoji (So) is printable
}

TEST(A11yTest, ValidityDeclines) {
  EXPECT_EQ(Compress("[]"), "<declined>");
  EXPECT_EQ(Compress(R"({"nodes": []})"), "<declined>");
  EXPECT_EQ(Compress(R"([{"nodeId": "1", "ignored": true, "role": {"value": "x"}}])"), "<declined>");
  EXPECT_EQ(Compress(R"([{"nodeId": "", "role": {"value": "button"}}])"), "<declined>");
  EXPECT_EQ(Compress(R"([{"nodeId": "1", "role": {"value": "a"}}, {"nodeId": "1", "role": {"value": "b"}}])"),
            "<declined>");
  EXPECT_EQ(Compress(R"([{"nodeId": "1", "role": {"value": "  "}}])"), "<declined>");
  EXPECT_EQ(Compress(R"([{"nodeId": 1, "role": {"value": "button"}}])"), "<declined>");
  EXPECT_EQ(Compress(R"([{"nodeId": "1", "role": "button"}])"), "<declined>");
  EXPECT_EQ(Compress(R"([{"nodeId": "1", "role": {"value": "button"}, "backendDOMNodeId": 1.5}])"), "<declined>");
  // Only dropped records → no record.
  EXPECT_EQ(Compress(R"([{"nodeId": "1", "role": {"value": "InlineTextBox"}, "name": {"value": "x"}}])"), "<declined>");
}

TEST(A11yTest, UidsCountReusedBackendIds) {
  std::string in = R"([
    {"nodeId": "r", "role": {"value": "WebArea"}, "childIds": ["a", "b", "c"], "backendDOMNodeId": 40},
    {"nodeId": "a", "role": {"value": "button"}, "name": {"value": "One"}, "backendDOMNodeId": 40},
    {"nodeId": "b", "role": {"value": "button"}, "name": {"value": "Two"}, "backendDOMNodeID": 40, "frameId": "F"},
    {"nodeId": "c", "role": {"value": "generic"}, "properties": [{"name": "clickable", "value": {"value": "yes"}}], "backendDOMNodeId": 41}
  ])";
  TransformMeta meta;
  EXPECT_EQ(Compress(in, {}, &meta), "page\n  [u14] button \"One\"\n  [u14_2] button \"Two\"\n  [u15] generic");
  EXPECT_EQ(meta.method, "a11y");
  EXPECT_EQ(
      meta.recovery_metadata,
      R"({"uids":{"u14":{"backendDOMNodeId":40,"nodeId":"a"},"u14_2":{"backendDOMNodeId":40,"frameId":"F","nodeId":"b"},"u15":{"backendDOMNodeId":41,"nodeId":"c"}}})");
}

TEST(A11yTest, StaticTextDuplicatesAndCompactValues) {
  std::string in = R"([
    {"nodeId": "1", "role": {"value": "RootWebArea"}, "name": {"value": "T"}, "childIds": ["2", "3", "4", "9"]},
    {"nodeId": "2", "role": {"value": "link"}, "name": {"value": "Docs"}, "childIds": ["5"]},
    {"nodeId": "5", "role": {"value": "StaticText"}, "name": {"value": " docs "}},
    {"nodeId": "3", "role": {"value": "StaticText"}, "name": {"value": "Kept  text"},
     "properties": [{"name": "focused", "value": {"value": true}}]},
    {"nodeId": "4", "role": {"value": "slider"}, "value": {"value": 1e2}, "name": {"value": "Vol"}},
    {"nodeId": "9", "role": {"value": "LabelText"}, "properties": [{"name": "selected", "value": {"value": 1}}]}
  ])";
  EXPECT_EQ(Compress(in),
            "page \"T\"\n  link \"Docs\"\n  text \"Kept text\"\n  slider \"Vol\" = \"100\"\n"
            "  label {selected}");
}

TEST(A11yTest, LongChainsDoNotExhaustTheStack) {
  // 200,000 nested groups: walked iteratively; the indentation alone would dwarf the input,
  // so the transform declines.
  std::string in = "[";
  for (int i = 0; i < 200000; ++i) {
    if (i) in += ",";
    in += R"({"nodeId":")" + std::to_string(i) + R"(","role":{"value":"group"},"childIds":[")" + std::to_string(i + 1) +
          R"("]})";
  }
  in += "]";
  EXPECT_EQ(Compress(in), "<declined>");
}

TEST(A11yTest, GoldenFixtures) {
  std::string in = testing::ReadFile("fixtures/a11y/orders_page.in");
  EXPECT_EQ(Compress(in) + "\n", testing::ReadFile("fixtures/a11y/orders_page.expected"));
  TransformMeta meta;
  EXPECT_EQ(Compress(in, "payment failed", &meta) + "\n",
            testing::ReadFile("fixtures/a11y/orders_page.payment_failed.expected"));
  EXPECT_EQ(meta.recovery_metadata, R"({"uids":{"uj":{"backendDOMNodeId":19,"nodeId":"19"}}})");
  EXPECT_EQ(Compress(in, "no such thing"), "page \"Order admin\"\n  note \"no accessible match\"");
  // The output is not a tree dump, so a second pass declines.
  EXPECT_EQ(Compress(Compress(in)), "<declined>");
}

TEST(A11yTest, ReferenceTrees) {
  const std::string dir = testing::ReferenceDir();
  if (dir.empty()) GTEST_SKIP() << "reference fixtures absent";
  for (std::string name : {"axtree_cdp_local_page.json", "axtree_high_noise.json"}) {
    std::string in = testing::ReadAbsolute(dir + name);
    std::string out = Compress(in);
    ASSERT_NE(out, "<declined>") << name;
    EXPECT_NE(out.find("button \"Save settings\""), std::string::npos) << name;
    EXPECT_NE(out.find("textbox \"Email address\" = \"ops@example.com\" {editable}"), std::string::npos) << name;
    EXPECT_EQ(out.find("InlineTextBox"), std::string::npos);
    const TokenCounter& tc = DefaultTokenCounter();
    double before = static_cast<double>(tc.Count(in));
    std::printf("%s ratio %.3f\n", name.c_str(), (before - static_cast<double>(tc.Count(out))) / before);
  }
}

}  // namespace
}  // namespace caveman
