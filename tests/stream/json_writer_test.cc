// JsonWriter (stream/json_writer.h): the compact form every JSON line of the CLI, MCP server
// and manifest is written in, the indented form of `stats`, and BeginObjectFrom, which
// extends an object another writer made. The escaping itself is checked byte by byte in
// tests/engine/engine_test.cc and tests/compressors/shared_machinery_test.cc.
#include "stream/json_writer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace caveman {
namespace {

// The escaper steps over 16-byte blocks with nothing to escape: against a byte-by-byte
// reference of the same rules, with each byte that needs escaping (and 0xE2 starting U+2028,
// U+2029 or another character) at every offset of strings up to 40 bytes, and random strings.
std::string ReferenceQuote(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(s[i + 2]) == 0xA8 || static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
      out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 2;
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == 0x08) {
      out += "\\b";
    } else if (c == 0x0C) {
      out += "\\f";
    } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

TEST(JsonQuote, EscapesLikeTheByteByByteRuleAtEveryOffset) {
  const std::vector<std::string> specials = {
      "\"",           "\\",           "\n",           "\x01", "\x1f",     "<",    ">", "&",
      "\xE2\x80\xA8", "\xE2\x80\xA9", "\xE2\x82\xAC", "\xE2", "\xC3\xA9", "\x7f", " "};
  for (size_t len = 0; len <= 40; ++len) {
    for (size_t at = 0; at <= len; ++at) {
      for (const std::string& sp : specials) {
        std::string s = std::string(at, 'a') + sp + std::string(len - at, 'z');
        ASSERT_EQ(JsonQuote(s), ReferenceQuote(s)) << len << " " << at << " " << sp;
      }
    }
  }
  std::mt19937 rng(19);
  for (int round = 0; round < 2000; ++round) {
    std::string s;
    const size_t n = rng() % 100;
    for (size_t i = 0; i < n; ++i) {
      const unsigned r = rng();
      // mostly plain letters, so that whole blocks are skipped between the special bytes
      s += r % 8 == 0 ? static_cast<char>(r >> 8) : static_cast<char>('a' + (r >> 8) % 26);
    }
    ASSERT_EQ(JsonQuote(s), ReferenceQuote(s)) << round;
  }
}

TEST(JsonWriter, CompactCommasBetweenMembersAndElements) {
  JsonWriter w;
  w.BeginObject().Key("a").Uint(1).Key("b").BeginArray().Int(-2).Bool(true).Null().EndArray();
  w.Key("c").BeginObject().EndObject().Key("d").String("x<y").Key("r").Ratio(0.25);
  w.Key("raw").Raw("[1,2]").EndObject();
  EXPECT_EQ(w.str(), R"({"a":1,"b":[-2,true,null],"c":{},"d":"x\u003cy","r":0.25,"raw":[1,2]})");
}

TEST(JsonWriter, TopLevelScalarAndArrayOfObjects) {
  EXPECT_EQ(JsonWriter().String("a\"b").Take(), R"("a\"b")");
  JsonWriter w;
  w.BeginArray().BeginObject().Key("k").Uint(0).EndObject().BeginObject().EndObject().EndArray();
  EXPECT_EQ(w.Take(), R"([{"k":0},{}])");
}

TEST(JsonWriter, IndentedPutsEachMemberOnItsOwnLine) {
  JsonWriter w(2);
  w.BeginObject().Key("totals").BeginObject().Key("count").Uint(3).Key("ratio").Ratio(0.5).EndObject();
  w.Key("empty").BeginObject().EndObject().Key("list").BeginArray().Uint(1).String("two").EndArray();
  w.Key("none").BeginArray().EndArray().EndObject();
  EXPECT_EQ(w.str(),
            "{\n"
            "  \"totals\": {\n"
            "    \"count\": 3,\n"
            "    \"ratio\": 0.5\n"
            "  },\n"
            "  \"empty\": {},\n"
            "  \"list\": [\n"
            "    1,\n"
            "    \"two\"\n"
            "  ],\n"
            "  \"none\": []\n"
            "}");
}

TEST(JsonWriter, BeginObjectFromAddsMembersAfterTheCopiedOnes) {
  JsonWriter w;
  w.BeginObjectFrom(R"({"content_type":"log","tokens":12})").Key("extra").Bool(false).EndObject();
  EXPECT_EQ(w.str(), R"({"content_type":"log","tokens":12,"extra":false})");
  // An empty object has no member the first added one would need a comma after.
  JsonWriter e;
  e.BeginObjectFrom("{}").Key("k").String("v").EndObject();
  EXPECT_EQ(e.str(), R"({"k":"v"})");
  // Nothing added: the object comes back unchanged, also as a member value.
  JsonWriter n;
  n.BeginObject().Key("report").BeginObjectFrom(R"({"a":1})").EndObject().EndObject();
  EXPECT_EQ(n.str(), R"({"report":{"a":1}})");
}

}  // namespace
}  // namespace caveman
