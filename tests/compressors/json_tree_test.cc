// JsonTree on simdjson On-Demand (compressors/internal/json_tree.h): §0.3 validity edges that
// On-Demand alone would let through, depth boundaries for arrays and objects, in-place
// reading when the caller's buffer is padded, and Body::view_padding() of loaded spools.
#include "compressors/internal/json_tree.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "compressors/internal/json_skeleton.h"
#include "compressors/cj.h"
#include "compressors/internal/json_validity.h"
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

// Members come out sorted by key, the last of duplicate keys winning, for objects on both
// sides of the insertion-sort bound: the tree's canonical form against cj.h's reference parser.
TEST(JsonTreeOnDemand, MembersSortedAndLastDuplicateWinsAtEverySize) {
  uint64_t state = 7;
  auto next = [&](uint64_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % bound;
  };
  const char* keys[] = {"a", "b", "ab", "aa", "ba", "", "a\\u0062", "\\u0061", "zz", "z", "\\u00e9", "k1", "k10", "k2"};
  for (int round = 0; round < 400; ++round) {
    const size_t members = next(40);
    std::string text = "{";
    for (size_t m = 0; m < members; ++m) {
      if (m > 0) text += ",";
      text += "\"" + std::string(keys[next(std::size(keys))]) + std::to_string(next(3) == 0 ? next(5) : 0) + "\":";
      text += next(4) == 0 ? "{\"y\":1,\"x\":[2,{\"b\":3,\"a\":4}]}" : std::to_string(m);
    }
    text += "}";
    JsonTree t;
    ASSERT_TRUE(t.Parse(text)) << text;
    const auto reference = ParseJson(text);
    ASSERT_TRUE(reference.has_value()) << text;
    ASSERT_EQ(Cj(t), internal::Cj(*reference)) << text;
  }
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

// ---- JsonSkeleton: the upper levels of a text, from the byte validator's walk

TEST(JsonSkeleton, RecordsLargeContainersAndTheirChildren) {
  //                    0         1         2         3         4
  //                    0123456789012345678901234567890123456789012345
  const std::string t = R"({"a": [1, 22, {"x":0}], "b" : {"c":"v"}, "d":7})";
  JsonSkeleton sk;
  ASSERT_TRUE(sk.Build(t, 1, 8));
  ASSERT_GE(sk.root(), 0);
  EXPECT_FALSE(sk.node(sk.root()).is_array);
  auto top = sk.children(sk.root());
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(t.substr(top[0].key, 3), "\"a\"");
  EXPECT_EQ(t.substr(top[0].begin, top[0].end - top[0].begin), R"([1, 22, {"x":0}])");
  EXPECT_EQ(t.substr(top[1].key, 3), "\"b\"");
  EXPECT_EQ(t.substr(top[1].begin, top[1].end - top[1].begin), R"({"c":"v"})");
  EXPECT_EQ(t.substr(top[2].begin, top[2].end - top[2].begin), "7");
  EXPECT_LT(top[2].node, 0);  // a scalar is a piece
  ASSERT_GE(top[0].node, 0);
  auto items = sk.children(top[0].node);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(t.substr(items[1].begin, items[1].end - items[1].begin), "22");
  EXPECT_EQ(t.substr(items[2].begin, items[2].end - items[2].begin), R"({"x":0})");

  // Only containers of ≥ 12 bytes are nodes; depth 1 keeps the top level alone.
  ASSERT_TRUE(sk.Build(t, 12, 8));
  top = sk.children(sk.root());
  EXPECT_GE(top[0].node, 0);  // 16 bytes
  EXPECT_LT(top[1].node, 0);  // 9 bytes
  EXPECT_LT(sk.children(top[0].node)[2].node, 0);
  ASSERT_TRUE(sk.Build(t, 1, 1));
  EXPECT_LT(sk.children(sk.root())[0].node, 0);
}

TEST(JsonSkeleton, FailsWithMoreThanOneChildPerBytesPerRecord) {
  std::string tiny = "[";
  for (int i = 0; i < 10000; ++i) tiny += "1,";
  tiny += "1]";
  JsonSkeleton sk;
  EXPECT_FALSE(sk.Build(tiny, 1, 4));  // 2 bytes per child, the default allows one per 64
  JsonShape shape;
  EXPECT_FALSE(sk.Build(tiny, 1, 4, &shape));
  EXPECT_TRUE(shape.valid);  // the verdict stands
  EXPECT_TRUE(sk.Build(tiny, 1, 4, nullptr, 2));
  EXPECT_EQ(sk.children(sk.root()).size(), 10001u);
  std::string padded = "[";
  for (int i = 0; i < 10000; ++i) padded += "\"" + std::string(70, 'x') + "\",";
  padded += "1]";
  EXPECT_TRUE(sk.Build(padded, 1, 4));
}

TEST(JsonSkeleton, SameVerdictAsTheValidator) {
  for (const char* t : {"{\"a\":[1,2,}", "[1,2] x", "{\"a\" 1}", "[\"\\ud800\"]", "[01]", "{}", "[[[]]]", " 3 ",
                        "{\"k\":{\"k\":[true,false,null]}}", "[1e400]", "{\"a\":1,}"}) {
    SCOPED_TRACE(t);
    JsonSkeleton sk;
    EXPECT_EQ(sk.Build(t, 1, 4), ValidateJsonBytes(t).valid);
  }
  std::string deep(10001, '[');
  deep += std::string(10001, ']');
  JsonSkeleton sk;
  EXPECT_FALSE(sk.Build(deep, 1, 4));
}

// The 16-byte loop against a byte-at-a-time count, at every length and offset around the
// 16-byte steps, with the bytes that differ from '[' and '{' by one bit around.
TEST(JsonValueBound, CountsCommasAndOpeningBracketsPlusOne) {
  const std::string alphabet = std::string("[{,]}\"a ;") + "\x5B\x7B\xDB\xFB\x0C\xAC\x2C";
  uint64_t state = 12345;
  for (size_t len = 0; len < 80; ++len) {
    for (int round = 0; round < 20; ++round) {
      std::string text;
      size_t expected = 1;
      for (size_t i = 0; i < len; ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const char c = alphabet[(state >> 33) % alphabet.size()];
        text += c;
        expected += (c == ',' || c == '[' || c == '{') ? 1 : 0;
      }
      for (size_t skip = 0; skip < 3 && skip <= len; ++skip) {
        size_t want = expected;
        for (size_t i = 0; i < skip; ++i) want -= (text[i] == ',' || text[i] == '[' || text[i] == '{') ? 1 : 0;
        ASSERT_EQ(JsonValueBound(std::string_view(text).substr(skip)), want) << len << " " << skip;
      }
    }
  }
  EXPECT_EQ(JsonValueBound(""), 1u);
  // Long texts cross the 255-block counter flushes of the 16-byte loop.
  for (size_t len : {4079u, 4080u, 4081u, 4096u, 100000u}) {
    EXPECT_EQ(JsonValueBound(std::string(len, '{')), len + 1);
    EXPECT_EQ(JsonValueBound(std::string(len, ',') + "x"), len + 1);
  }
}

}  // namespace
}  // namespace caveman::internal
