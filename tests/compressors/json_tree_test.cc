// JsonTree on simdjson On-Demand (compressors/internal/json_tree.h): §0.3 validity edges that
// On-Demand alone would let through, depth boundaries for arrays and objects, in-place
// reading when the caller's buffer is padded, and Body::view_padding() of loaded spools.
#include "compressors/internal/json_tree.h"

#include <gtest/gtest.h>

#include <string>

#include "compressors/json.h"
#include "stream/spool.h"
#include "tests/testing/test_util.h"

namespace caveman::internal {
namespace {

std::string Cj(const JsonTree& t) {
  std::string out;
  AppendCanonicalJson(t, t.root(), &out);
  return out;
}

using caveman::testing::Nested;

TEST(JsonTreeOnDemand, RejectsWhatOnDemandWouldSkip) {
  JsonTree t;
  // A string value followed by ':' (On-Demand's skip would take it for a key), tokens after
  // the root value, malformed atoms and numbers, bad escapes.
  for (const char* bad : {"[\"b\" : 1]",
                          "{\"a\":\"b\":1}",
                          "{\"a\":\"b\":1,\"c\":2}",
                          "[{},\"b\" : 1}]",
                          "\"a\" \"b\"",
                          "\"a\"b",
                          "1 2",
                          "nullx",
                          "truex",
                          "[1]]",
                          "{}}",
                          "[] []",
                          "[1 2]",
                          "{\"a\":1 \"b\":2}",
                          "[01]",
                          "[1.]",
                          "[-]",
                          "[1e]",
                          "[.5]",
                          "[+1]",
                          "[\"\\x\"]",
                          "[\"\\u12\"]",
                          "[\"\\udc00\"]",
                          "[\"\\ud800\\u0041\"]",
                          "{\"\\ud800\":1}",
                          "[\"a\xC0\x80\"]",
                          "[\"\x01\"]",
                          "[[1]",
                          "{\"a\":[}",
                          " ",
                          "\n\t",
                          "[1,,2]",
                          "{,}",
                          "[,1]",
                          "{\"a\"1}",
                          "{1:2}"}) {
    EXPECT_FALSE(t.Parse(bad)) << bad;
  }
}

TEST(JsonTreeOnDemand, DecodesKeysAndStringsAndKeepsLiterals) {
  JsonTree t;
  ASSERT_TRUE(
      t.Parse("{\"b\":\"x\\ty\",\"a\\u0062\":[1e400,-0.0e-0,\"\\ud83d\\ude00\"],\"a\":1,"
              "\"\\u0061\":2, \"c\" : null ,\"d\":[true,false,{}]}"));
  // "\u0061" is "a": the later duplicate wins; "a\u0062" is "ab".
  EXPECT_EQ(Cj(t),
            "{\"a\":2,\"ab\":[1e400,-0.0e-0,\"\xF0\x9F\x98\x80\"],\"b\":\"x\\ty\",\"c\":null,"
            "\"d\":[true,false,{}]}");
  ASSERT_EQ(t.size(t.root()), 5u);
  EXPECT_EQ(t.key(t.root(), 1), "ab");
  for (const char* scalar : {"1e400", " -0 ", "\"\\u00e9\"", "true", "false", "null", "\"\""}) {
    EXPECT_TRUE(t.Parse(scalar)) << scalar;
  }
  ASSERT_TRUE(t.Parse(" 12.5e3\n"));
  EXPECT_EQ(t.kind(t.root()), JsonKind::kNumber);
  EXPECT_EQ(t.text(t.root()), "12.5e3");
}

TEST(JsonTreeOnDemand, DepthBoundariesForArraysAndObjects) {
  JsonTree t;
  for (const auto& [open, close] :
       {std::pair<std::string, std::string>{"[", "]"}, {"{\"k\":", "}"}, {"[{\"k\":", "}]"}}) {
    const size_t per = open == "[{\"k\":" ? 2 : 1;  // levels per repetition
    const std::string at = Nested(kJsonTreeMaxDepth / per, open, close);
    ASSERT_TRUE(t.Parse(at)) << open;
    EXPECT_EQ(Cj(t), at);
    EXPECT_FALSE(t.Parse(Nested(kJsonTreeMaxDepth / per, open, close, "[1]"))) << open;
    EXPECT_FALSE(t.Parse(Nested(100000, open, close))) << open;
  }
  // Unbalanced deep input declines too.
  EXPECT_FALSE(t.Parse(std::string(100000, '[')));
  EXPECT_FALSE(t.Parse(std::string(5000, '[') + std::string(4999, ']')));
}

TEST(JsonTreeOnDemand, PaddedBufferIsReadInPlace) {
  std::string buf = "{\"name\":\"web\",\"n\":12}";
  const size_t size = buf.size();
  buf.reserve(size + kJsonParsePadding);
  JsonTree t;
  ASSERT_TRUE(t.Parse(std::string_view(buf.data(), size), buf.capacity() - size));
  const int64_t id = t.Find(t.root(), "name");
  ASSERT_GE(id, 0);
  const std::string_view name = t.text(static_cast<JsonTree::NodeId>(id));
  EXPECT_EQ(name, "web");
  EXPECT_GE(name.data(), buf.data());  // points into the caller's buffer, no copy
  EXPECT_LT(name.data(), buf.data() + size);

  // A ',' right after the text is not trusted in place (On-Demand could read on past an
  // unbalanced end): the result is the same either way.
  std::string comma = "[[1]";
  comma.push_back(',');
  comma.reserve(64 + kJsonParsePadding);
  EXPECT_FALSE(t.Parse(std::string_view(comma.data(), 4), comma.capacity() - 4));
  EXPECT_FALSE(t.Parse(std::string_view(comma.data(), 4)));
  std::string ok = "[1],";
  ok.reserve(64 + kJsonParsePadding);
  ASSERT_TRUE(t.Parse(std::string_view(ok.data(), 3), ok.capacity() - 3));
  EXPECT_EQ(Cj(t), "[1]");
}

TEST(JsonTreeOnDemand, LoadedSpoolViewIsPadded) {
  SpoolOptions o;
  o.memory_limit = 16;  // spill at once
  Spool spool(o);
  const std::string text = "[" + std::string(40, ' ') + "{\"a\":[1,2,3]}]";
  ASSERT_TRUE(spool.Write(text).ok());
  ASSERT_FALSE(spool.in_memory());
  Body body = Body::FromSpool(spool);
  EXPECT_EQ(body.view_padding(), 0u);  // nothing loaded yet
  Result<std::string_view> view = body.View();
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view.value(), text);
  EXPECT_GE(body.view_padding(), Body::kViewPadding);
  JsonTree t;
  ASSERT_TRUE(t.Parse(view.value(), body.view_padding()));
  EXPECT_EQ(Cj(t), "[{\"a\":[1,2,3]}]");
  EXPECT_EQ(Body::FromView(text).view_padding(), 0u);
}

TEST(JsonTreeOnDemand, ElideJsonSameWithAndWithoutPadding) {
  std::string json = "[";
  for (int i = 0; i < 40; ++i) {
    if (i) json += ",";
    json += "{\"id\":" + std::to_string(i) + ",\"status\":\"" + (i == 17 ? "error" : "ok") + "\"}";
  }
  json += "]";
  const std::string_view view(json);
  std::string padded = json;
  padded.reserve(json.size() + kJsonParsePadding);
  auto a = ElideJson(view, "");
  auto b = ElideJson(padded, "", padded.capacity() - padded.size());
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(a->find("\"__caveman_elided__\""), std::string::npos);
}

}  // namespace
}  // namespace caveman::internal
