#include "compressors/toon.h"

#include <cstdio>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "compressors/compressor.h"
#include "compressors/cj.h"
#include "caveman/stream/tokens.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

std::string Enc(std::string_view json) {
  Result<std::string> r = EncodeToon(json);
  return r.ok() ? r.value() : "<error>";
}
std::string Dec(std::string_view toon) {
  Result<std::string> r = DecodeToon(toon);
  return r.ok() ? r.value() : "<error>";
}
std::string CjOf(std::string_view json) {
  std::optional<internal::JsonValue> v = internal::ParseJson(json);
  return v ? internal::Cj(*v) : "<not json>";
}

TEST(ToonTest, EncodesTabularNestedAndScalars) {
  EXPECT_EQ(Enc(R"({"b":{"y":1,"x":[]},"a":[{"n":"Ann","id":1},{"id":2,"n":"Bo b"}],"c":[1,"x",null]})"),
            "a[2]{n,id}:\n  Ann,1\n  Bo b,2\nb:\n  x[0]: []\n  y: 1\nc[3]: 1,x,null");
  EXPECT_EQ(Enc("{}"), "{}");
  EXPECT_EQ(Enc("[]"), "[]");
  EXPECT_EQ(Enc("  12.5e3 "), "12.5e3");
  EXPECT_EQ(Enc(R"("hello")"), "hello");
  EXPECT_EQ(Enc(R"("a<b")"), "a<b");
  EXPECT_EQ(Enc(R"([1,2])"), "[2]: 1,2");
  EXPECT_EQ(Enc(R"([{"a":1}])"), "[1]{a}:\n  1");
  EXPECT_EQ(Enc(R"({"e":{}})"), "e: {}");
}

TEST(ToonTest, QuotesAmbiguousStrings) {
  EXPECT_EQ(Enc(R"(["a,b","true","123","","  x","a\"b","-x","[y","{z","k:v","7up","x<y"])"),
            "[12]: \"a,b\",\"true\",\"123\",\"\",\"  x\",\"a\\\"b\",\"-x\",\"[y\",\"{z\",\"k:v\","
            "\"7up\",x<y");
  EXPECT_EQ(Enc(R"(["a\nb", "q<r\t"])"), "[2]: \"a\\nb\",\"q\\u003cr\\t\"");
}

TEST(ToonTest, DeclinesUnsupportedShapes) {
  EXPECT_EQ(Enc(R"({"a":1,"a":2})"), "<error>");
  EXPECT_EQ(Enc(R"({"a b":1})"), "<error>");
  EXPECT_EQ(Enc(R"([[1]])"), "<error>");
  EXPECT_EQ(Enc(R"([{"a":1},2])"), "<error>");
  EXPECT_EQ(Enc(R"([{"a":1},{"b":1}])"), "<error>");
  EXPECT_EQ(Enc(R"([{"a":{"x":1}}])"), "<error>");
  EXPECT_EQ(Enc(R"([{}])"), "<error>");
  EXPECT_EQ(Enc(R"({"a":1} x)"), "<error>");
  EXPECT_EQ(Enc(R"({"r":[{"id":1,"m":{"n":true}}],"s":"u"})"), "<error>");
}

TEST(ToonTest, DecoderIsStrict) {
  EXPECT_EQ(Dec("a: 1\nb:\n  c: x y"), R"({"a":1,"b":{"c":"x y"}})");
  EXPECT_EQ(Dec("a: 1\n\n"), R"({"a":1})");
  EXPECT_EQ(Dec(""), "<error>");
  EXPECT_EQ(Dec("\n\n"), "<error>");
  EXPECT_EQ(Dec("a: 1\n\nb: 2"), "<error>");  // blank line
  EXPECT_EQ(Dec(" a: 1"), "<error>");         // odd indentation / indented first
  EXPECT_EQ(Dec("a: 1\n  b: 2"), "<error>");  // deeper line without an opener
  EXPECT_EQ(Dec("a:"), "<error>");            // opener without child
  EXPECT_EQ(Dec("a: 1\na: 2"), "<error>");    // duplicate key
  EXPECT_EQ(Dec("a[2]: 1"), "<error>");       // count mismatch
  EXPECT_EQ(Dec("a[0]: x"), "<error>");
  EXPECT_EQ(Dec("a[0]: []"), R"({"a":[]})");
  EXPECT_EQ(Dec("a[2]{x,y}:\n  1,2"), "<error>");  // too few rows
  EXPECT_EQ(Dec("a[1]{x,x}:\n  1,2"), "<error>");  // duplicate fields
  EXPECT_EQ(Dec("a[1]{x,y}:\n  1"), "<error>");    // cell count
  EXPECT_EQ(Dec("a[1]{x,y}:\n  \"p,q\",2"), R"({"a":[{"x":"p,q","y":2}]})");
  EXPECT_EQ(Dec("a:  x"), "<error>");  // surrounding whitespace
  EXPECT_EQ(Dec("\"a\\u003cb\""), R"("a\u003cb")");
  EXPECT_EQ(Dec("[3]: 1,\"a\\\",b\",c"), R"([1,"a\",b","c"])");
  EXPECT_EQ(Dec("hello"), R"("hello")");
  EXPECT_EQ(Dec("hello\nworld"), "<error>");
  EXPECT_EQ(Dec("{}"), "{}");
  EXPECT_EQ(Dec("[]"), "[]");
}

// Random JSON that TOON can express (plus some it cannot, which must fail to encode).
class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  std::string Value(int depth) {
    switch (Pick(depth > 3 ? 2 : 5)) {
      case 0:
      case 1: return Scalar();
      case 2: return Object(depth);
      case 3: return ScalarArray();
      default: return Table();
    }
  }
  std::string Object(int depth) {
    int n = Pick(5);
    std::string s = "{";
    for (int i = 0; i < n; ++i) {
      if (i) s += ",";
      s += internal::CjString(Key()) + ":" + Value(depth + 1);
    }
    return s + "}";
  }

 private:
  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  std::string Key() {
    static const char* kKeys[] = {"a", "b", "id", "name", "x.y", "k-1", "_z", "B", "é", "a b"};
    return kKeys[Pick(Pick(10) == 0 ? 10 : 8)];
  }
  std::string Scalar() {
    static const char* kStrings[] = {"",      "plain",     "two words",   " lead",  "trail ", "a,b",  "a:b",
                                     "true",  "null",      "123",         "-1",     "1e5",    "[x",   "{y",
                                     "\"q\"", "tab\there", "line\nbreak", "<tag>&", "ünï",    "x\\y", "#",
                                     "0x10",  "Infinity",  "\u2028",      "1.5x"};
    switch (Pick(6)) {
      case 0: return "null";
      case 1: return Pick(2) ? "true" : "false";
      case 2: {
        static const char* kNums[] = {"0", "-0", "12", "-3.25", "1e10", "2E-3", "1.0"};
        return kNums[Pick(7)];
      }
      default: return internal::CjString(kStrings[Pick(25)]);
    }
  }
  std::string ScalarArray() {
    int n = Pick(4);
    std::string s = "[";
    for (int i = 0; i < n; ++i) s += (i ? "," : "") + Scalar();
    return s + "]";
  }
  std::string Table() {
    int rows = 1 + Pick(3), cols = 1 + Pick(3);
    std::vector<std::string> keys;
    for (int c = 0; c < cols; ++c) keys.push_back("c" + std::to_string(c));
    std::string s = "[";
    for (int r = 0; r < rows; ++r) {
      s += r ? ",{" : "{";
      for (int c = 0; c < cols; ++c) {
        int k = (c + r) % cols;  // rows may list the fields in other orders
        s += (c ? "," : "") + internal::CjString(keys[k]) + ":" + Scalar();
      }
      s += "}";
    }
    return s + "]";
  }
  std::mt19937_64 rng_;
};

TEST(ToonTest, PropertyDecodeOfEncodeIsCanonicalJson) {
  Gen gen(42);
  int encodable = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string json = i % 3 == 0 ? gen.Value(0) : gen.Object(0);
    Result<std::string> toon = EncodeToon(json);
    if (!toon.ok()) continue;
    ++encodable;
    Result<std::string> back = DecodeToon(toon.value());
    ASSERT_TRUE(back.ok()) << json << "\n--\n" << toon.value();
    ASSERT_EQ(back.value(), CjOf(json)) << toon.value();
  }
  EXPECT_GT(encodable, 1500);
}

TEST(ToonTest, CompressorReportsToonMethodAndIsIdempotent) {
  auto c = NewToonCompressor();
  TransformMeta meta;
  std::optional<std::string> out = RunOnString(*c, R"({"rows":[{"id":1,"v":"a"},{"id":2,"v":"b"}]})", {}, &meta);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, "rows[2]{id,v}:\n  1,a\n  2,b");
  EXPECT_EQ(meta.method, "toon");
  EXPECT_EQ(meta.lossless_to_model, std::optional<bool>(true));
  EXPECT_FALSE(RunOnString(*c, *out).has_value());
}

TEST(ToonTest, GoldenFixtures) {
  for (std::string name : {"catalog", "tricky"}) {
    std::string in = testing::ReadFile("fixtures/toon/" + name + ".in");
    std::string expected = testing::ReadFile("fixtures/toon/" + name + ".expected");
    auto c = NewToonCompressor();
    std::optional<std::string> out = RunOnString(*c, in);
    ASSERT_TRUE(out.has_value()) << name;
    EXPECT_EQ(*out + "\n", expected) << name;
    EXPECT_EQ(Dec(*out), CjOf(in)) << name;
  }
}

// Behaviour on the third-party reference fixtures (§13), read in place, never copied.
double Ratio(std::string_view before, std::string_view after) {
  const TokenCounter& tc = DefaultTokenCounter();
  double b = static_cast<double>(tc.Count(before));
  return (b - static_cast<double>(tc.Count(after))) / b;
}

TEST(ToonTest, ReferenceFixtures) {
  const std::string ref_dir = testing::ReferenceDir();
  if (ref_dir.empty()) GTEST_SKIP() << "reference fixtures absent";
  std::string tabular = testing::ReadAbsolute(ref_dir + "toon_tabular.json");
  auto c = NewToonCompressor();
  std::optional<std::string> out = RunOnString(*c, tabular);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("hikes[4]{id,name,distanceKm,sunny}:"), std::string::npos);
  EXPECT_EQ(Dec(*out), CjOf(tabular));
  double ratio = Ratio(tabular, *out);
  EXPECT_GE(ratio, 0.15);
  EXPECT_LE(ratio, 0.80);
  std::printf("toon-tabular ratio %.3f\n", ratio);

  EXPECT_FALSE(RunOnString(*c, testing::ReadAbsolute(ref_dir + "toon_nested_passthrough.json")).has_value());

  std::string strings = testing::ReadAbsolute(ref_dir + "toon_strings.json");
  out = RunOnString(*c, strings);
  ASSERT_TRUE(out.has_value());
  for (std::string_view want : {R"("a,b")", R"("true")", R"("123")", R"("a\"b")"}) {
    EXPECT_NE(out->find(want), std::string::npos) << want;
  }
  EXPECT_EQ(Dec(*out), CjOf(strings));
  EXPECT_LT(DefaultTokenCounter().Count(*out), DefaultTokenCounter().Count(strings));
}

}  // namespace
}  // namespace caveman
