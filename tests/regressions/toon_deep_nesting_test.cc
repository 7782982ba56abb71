// Regression (reliability, found by hostile input): TOON indentation is quadratic in the
// nesting depth, so a 60 KB document of 9,999-deep objects encoded to ~100 MB, and through
// `compress --type toon` (or the best-of json slot) the engine then spent minutes counting
// the tokens of an output the size gate rejects anyway (5 such chains: 300 KB in, 500 MB
// TOON, 314 s). The compressors now stop encoding past kMaxTokenBytes × the body's bytes.
#include <string>

#include <gtest/gtest.h>

#include "compressors/registry.h"
#include "compressors/toon.h"
#include "caveman/engine/engine.h"
#include "caveman/store/store.h"

namespace caveman {
namespace {

std::string DeepChains(int chains, int depth) {
  std::string chain;
  for (int i = 0; i < depth; ++i) chain += "{\"a\":";
  chain += "1";
  chain.append(static_cast<size_t>(depth), '}');
  std::string s = "{";
  for (int c = 0; c < chains; ++c) {
    if (c) s += ",";
    s += "\"k" + std::to_string(c) + "\":" + chain;
  }
  return s + "}";
}

TEST(ToonDeepNesting, BoundedEncoderGivesUp) {
  // 1,500 levels already exceed the bound (~2.2 MB of TOON for 9 KB) and stay shallow
  // enough for the recursive cj parser on a sanitizer build's stack.
  const std::string in = DeepChains(1, 1500);
  auto bounded = EncodeToon(in, kMaxTokenBytes * in.size());
  ASSERT_FALSE(bounded.ok());
  EXPECT_EQ(bounded.status().code(), StatusCode::kResourceExhausted);
  // The unbounded encoder (CLI `toon encode`) still encodes it losslessly.
  auto full = EncodeToon(in);
  ASSERT_TRUE(full.ok());
  EXPECT_GT(full->size(), kMaxTokenBytes * in.size());
  auto back = DecodeToon(*full);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, in);  // CJ of this document is the document itself
}

TEST(ToonDeepNesting, CompressorsDeclineAndEnginePassesThrough) {
  const std::string in = DeepChains(3, 1500);
  auto store = OpenMemoryStore();
  ASSERT_TRUE(store.ok());
  for (bool best_of : {false, true}) {
    Engine engine(EngineOptions{.store = store->get(), .json_best_of = best_of});
    CompressOptions o;
    o.mode = Mode::kCompress;
    o.type = best_of ? "json" : "toon";
    std::string out;
    auto r = engine.Compress(in, o, &out);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->passed_through()) << o.type;
    EXPECT_EQ(out, in);
  }
}

TEST(ToonDeepNesting, BoundDoesNotChangeOrdinaryResults) {
  const std::string in = "{\"items\":[{\"id\":1,\"name\":\"a\"},{\"id\":2,\"name\":\"b\"}],\"meta\":{\"page\":1}}";
  auto bounded = EncodeToon(in, kMaxTokenBytes * in.size());
  auto full = EncodeToon(in);
  ASSERT_TRUE(bounded.ok());
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(*bounded, *full);
}

}  // namespace
}  // namespace caveman
