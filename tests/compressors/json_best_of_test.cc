#include "compressors/json_best_of.h"

#include <string>

#include <gtest/gtest.h>

#include "compressors/compressor.h"
#include "compressors/json.h"
#include "compressors/registry.h"
#include "compressors/toon.h"

namespace caveman {
namespace {

std::string Rows(int n, bool nested) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) {
    if (i) s += ",";
    s += R"({"id":)" + std::to_string(i) + R"(,"status":"ok","region":"eu-west","owner":"team-a")";
    if (nested) s += R"(,"meta":{"shard":3})";
    s += "}";
  }
  return s + "]";
}

TEST(JsonBestOfTest, PrefersToonWhenItIsSmaller) {
  auto c = NewJsonBestOfCompressor();
  EXPECT_EQ(c->content_type(), "json");
  std::string in = Rows(5, false);  // too short for elision, tabular for TOON
  TransformMeta meta;
  std::optional<std::string> out = RunOnString(*c, in, {}, &meta);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, EncodeToon(in).value());
  EXPECT_EQ(meta.method, "toon");
  EXPECT_EQ(meta.lossless_to_model, std::optional<bool>(true));
}

TEST(JsonBestOfTest, FallsBackToElisionWhenToonCannotEncode) {
  auto c = NewJsonBestOfCompressor();
  std::string in = Rows(200, true);  // nested objects in rows: not TOON-encodable
  ASSERT_FALSE(EncodeToon(in).ok());
  TransformMeta meta;
  std::optional<std::string> out = RunOnString(*c, in, {}, &meta);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, ElideJson(in, {}).value());
  EXPECT_EQ(meta.method, "elision");
  EXPECT_EQ(meta.lossless_to_model, std::optional<bool>(false));
}

TEST(JsonBestOfTest, ElisionWinsOnlyWithStrictlyFewerTokens) {
  auto c = NewJsonBestOfCompressor();
  std::string in = Rows(400, false);  // both apply; dropping 390 rows beats re-encoding them
  TransformMeta meta;
  std::optional<std::string> out = RunOnString(*c, in, {}, &meta);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(meta.method, "elision");
}

TEST(JsonBestOfTest, DeclinesWhenNeitherHelps) {
  auto c = NewJsonBestOfCompressor();
  EXPECT_FALSE(RunOnString(*c, R"([{"a":{"b":1}}])").has_value());
  EXPECT_FALSE(RunOnString(*c, "not json").has_value());
}

TEST(JsonBestOfTest, RegistryUsesItOnlyWhenAsked) {
  std::string in = Rows(5, false);
  RegistryOptions best_of;
  best_of.toon_best_of = true;
  Registry with(best_of), without;
  TransformMeta meta;
  ASSERT_NE(with.Find("json"), nullptr);
  EXPECT_TRUE(RunOnString(*with.Find("json"), in, {}, &meta).has_value());
  EXPECT_EQ(meta.method, "toon");
  ASSERT_NE(without.Find("json"), nullptr);
  // The default json compressor: nothing to collapse, so a lossless form (issue 16).
  TransformMeta plain;
  EXPECT_TRUE(RunOnString(*without.Find("json"), in, {}, &plain).has_value());
  EXPECT_NE(plain.method, "elision");
  EXPECT_EQ(plain.lossless_to_model, std::optional<bool>(true));
}

}  // namespace
}  // namespace caveman
