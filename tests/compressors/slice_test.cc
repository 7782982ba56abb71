// Slicers of compressors/slice: the output does not depend on how the original is cut into
// pieces (random piece sizes down to 1 byte), and matches a whole-input reference computed
// here by splitting lines independently.
#include "compressors/slice.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace caveman {
namespace {

std::string Feed(SliceSink& s, std::string_view in, uint64_t seed, size_t max_piece) {
  std::mt19937_64 rng(seed);
  size_t at = 0;
  while (at < in.size() && !s.done()) {
    size_t n = std::min<size_t>(in.size() - at, 1 + rng() % max_piece);
    EXPECT_TRUE(s.Write(in.substr(at, n)).ok());
    at += n;
  }
  EXPECT_TRUE(s.Finish().ok());
  return {};
}

std::vector<std::string> Lines(std::string_view in) {  // with their LF (last may lack it)
  std::vector<std::string> out;
  size_t at = 0;
  while (at < in.size()) {
    size_t nl = in.find('\n', at);
    size_t end = nl == std::string_view::npos ? in.size() : nl + 1;
    out.emplace_back(in.substr(at, end - at));
    at = end;
  }
  return out;
}

std::string Sample(bool final_lf) {
  std::string s;
  for (int i = 1; i <= 300; ++i) {
    s += i % 17 == 0 ? "ERROR failed " + std::to_string(i) : "info line " + std::to_string(i);
    if (i % 50 == 0) s += "";  // empty-ish variety
    s += "\n";
    if (i % 41 == 0) s += "\n";  // empty lines
  }
  if (!final_lf) s.pop_back();
  return s;
}

TEST(SliceTest, LinesAnyChunking) {
  for (bool lf : {true, false}) {
    std::string in = Sample(lf);
    auto lines = Lines(in);
    for (auto [a, b] :
         std::vector<std::pair<uint64_t, uint64_t>>{{1, 1}, {5, 40}, {300, UINT64_MAX}, {1, UINT64_MAX}, {400, 500}}) {
      std::string want;
      for (uint64_t n = a; n <= std::min<uint64_t>(b, lines.size()); ++n) want += lines[n - 1];
      for (size_t piece : {1, 2, 7, 4096}) {
        StringSink out;
        auto s = NewLineSlice(a, b, out);
        Feed(*s, in, a * 31 + piece, piece);
        EXPECT_EQ(out.data(), want) << a << ":" << b << " piece " << piece;
      }
    }
  }
}

TEST(SliceTest, BytesAnyChunking) {
  std::string in = Sample(false);
  for (auto [a, b] : std::vector<std::pair<uint64_t, uint64_t>>{
           {0, 1}, {10, 999}, {in.size() - 3, UINT64_MAX}, {in.size() + 5, UINT64_MAX}, {7, 7}}) {
    std::string want = a < in.size() ? in.substr(a, b == UINT64_MAX ? std::string::npos : b - a) : "";
    for (size_t piece : {1, 3, 64, 100000}) {
      StringSink out;
      auto s = NewByteSlice(a, b, out);
      Feed(*s, in, b + piece, piece);
      EXPECT_EQ(out.data(), want) << a << ":" << b;
    }
  }
}

TEST(SliceTest, GrepContextAndSeparatorsAnyChunking) {
  std::string in = Sample(false) + "\nERROR at the very end";
  auto lines = Lines(in);
  for (std::optional<uint64_t> ctx :
       {std::optional<uint64_t>(), std::optional<uint64_t>(0), std::optional<uint64_t>(2)}) {
    // Reference: mark matches, expand by context, print with grep -n conventions.
    uint64_t c = ctx.value_or(0);
    std::vector<int> show(lines.size(), 0);  // 0 no, 1 context, 2 match
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].find("ERROR") == std::string::npos) continue;
      show[i] = 2;
      for (size_t j = i >= c ? i - c : 0; j <= std::min(lines.size() - 1, i + c); ++j) show[j] = std::max(show[j], 1);
    }
    std::string want;
    long last = -10;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (!show[i]) continue;
      if (ctx && last >= 0 && static_cast<long>(i) > last + 1) want += "--\n";
      std::string text = lines[i];
      if (!text.empty() && text.back() == '\n') text.pop_back();
      want += std::to_string(i + 1) + (show[i] == 2 ? ":" : "-") + text + "\n";
      last = static_cast<long>(i);
    }
    for (size_t piece : {1, 5, 8192}) {
      StringSink out;
      auto s = NewGrepSlice("ERROR", ctx, out);
      ASSERT_TRUE(s.ok());
      Feed(**s, in, piece, piece);
      EXPECT_EQ(out.data(), want) << "context " << c << " piece " << piece;
    }
  }
}

TEST(SliceTest, GrepBadPatternIsAnError) {
  StringSink out;
  auto s = NewGrepSlice("(", std::nullopt, out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
}

std::string V(std::string_view doc, std::string_view pointer) {
  auto r = JsonPointerSlice(doc, pointer);
  return r.ok() ? std::string(*r) : "error: " + r.status().message();
}

TEST(SliceTest, JsonPointerExactBytes) {
  std::string doc =
      R"({"a/b": {"x~y": [1, 2.50, "s\u0041"]}, "orders": [ {"id": 1} , {"id" : 2, "t": true} ], "n": null } )";
  EXPECT_EQ(V(doc, "/a~1b/x~0y/1"), "2.50");
  EXPECT_EQ(V(doc, "/a~1b/x~0y/2"), R"("s\u0041")");
  EXPECT_EQ(V(doc, "/orders/1"), R"({"id" : 2, "t": true})");
  EXPECT_EQ(V(doc, "/orders"), R"([ {"id": 1} , {"id" : 2, "t": true} ])");
  EXPECT_EQ(V(doc, "/n"), "null");
  EXPECT_EQ(V(doc, ""), doc.substr(0, doc.size() - 1));
  EXPECT_EQ(JsonPointerSlice(doc, "/orders/2").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(JsonPointerSlice(doc, "/missing").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(JsonPointerSlice(doc, "orders").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(JsonPointerSlice(doc, "/a~2b").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(JsonPointerSlice("{\"a\":", "/a").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace caveman
