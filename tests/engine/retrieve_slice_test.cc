// Engine::RetrieveSlice and RecoveryStore::GetStreaming (issue 14): a line or byte slice near
// the start of a large record stops decoding early; a read to the end is complete; slices
// equal the same slice of the original; bad combinations are errors.
#include <gtest/gtest.h>

#include <string>

#include "caveman/engine/engine.h"

namespace caveman {
namespace {

class CountingStopSink final : public ByteSink {
 public:
  Status Write(std::string_view d) override {
    bytes += d.size();
    return Status::OK();
  }
  uint64_t bytes = 0;
};

std::string BigLog() {
  std::string s;
  for (int i = 0; s.size() < 12 * 1024 * 1024; ++i) {
    s += i % 1009 == 0
             ? "2026-01-01 ERROR job " + std::to_string(i) + " failed: disk full\n"
             : "2026-01-01 INFO worker " + std::to_string(i % 7) + " processed batch " + std::to_string(i % 13) + "\n";
  }
  return s;
}

TEST(RetrieveSliceTest, StreamingStopsEarlyAndSlicesMatch) {
  auto store = OpenMemoryStore();
  ASSERT_TRUE(store.ok());
  Engine engine(EngineOptions{.store = store->get()});
  std::string log = BigLog();
  CompressOptions o;
  o.mode = Mode::kCompress;
  std::string view;
  auto r = engine.Compress(log, o, &view);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->recovery_handle.empty());
  const std::string& h = r->recovery_handle;

  CountingStopSink partial;
  bool stopped = false;
  ASSERT_TRUE((*store)
                  ->GetStreaming(
                      h, partial, [&] { return partial.bytes > 1000; }, &stopped)
                  .ok());
  EXPECT_TRUE(stopped);
  EXPECT_GT(partial.bytes, 1000u);
  // One decoder output piece (ZSTD_DStreamOutSize, 128 KiB) past the stop at most.
  EXPECT_LT(partial.bytes, 1000u + 256 * 1024) << "decoding did not stop near the start";

  CountingStopSink all;
  ASSERT_TRUE((*store)
                  ->GetStreaming(
                      h, all, [] { return false; }, &stopped)
                  .ok());
  EXPECT_FALSE(stopped);
  EXPECT_EQ(all.bytes, log.size());

  RetrieveSliceOptions s;
  ASSERT_TRUE(ParseSliceRange("2:4", RetrieveSliceOptions::Kind::kLines, &s).ok());
  StringSink lines;
  ASSERT_TRUE(engine.RetrieveSlice(h, s, lines).ok());
  size_t a = log.find('\n') + 1, b = a;
  for (int i = 0; i < 3; ++i) b = log.find('\n', b) + 1;
  EXPECT_EQ(lines.data(), log.substr(a, b - a));

  RetrieveSliceOptions bytes;
  ASSERT_TRUE(ParseSliceRange("5000000:5000100", RetrieveSliceOptions::Kind::kBytes, &bytes).ok());
  StringSink mid;
  ASSERT_TRUE(engine.RetrieveSlice(h, bytes, mid).ok());
  EXPECT_EQ(mid.data(), log.substr(5000000, 100));

  RetrieveSliceOptions ptr;
  ptr.kind = RetrieveSliceOptions::Kind::kJsonPointer;
  ptr.query = "ERROR";
  StringSink none;
  EXPECT_EQ(engine.RetrieveSlice(h, ptr, none).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(none.data().empty());
  RetrieveSliceOptions missing;
  ASSERT_TRUE(ParseSliceRange("1:", RetrieveSliceOptions::Kind::kLines, &missing).ok());
  EXPECT_EQ(engine.RetrieveSlice("ccr_00000000000000000000000000000000", missing, none).code(), StatusCode::kNotFound);
}

TEST(RetrieveSliceTest, RangeSyntax) {
  using K = RetrieveSliceOptions::Kind;
  RetrieveSliceOptions s;
  ASSERT_TRUE(ParseSliceRange("7", K::kLines, &s).ok());
  EXPECT_EQ(s.first, 7u);
  EXPECT_EQ(s.last, 7u);
  ASSERT_TRUE(ParseSliceRange(":9", K::kLines, &s).ok());
  EXPECT_EQ(s.first, 1u);
  EXPECT_EQ(s.last, 9u);
  ASSERT_TRUE(ParseSliceRange("3:", K::kBytes, &s).ok());
  EXPECT_EQ(s.first, 3u);
  EXPECT_EQ(s.last, UINT64_MAX);
  for (const char* bad : {"", ":", "0:3", "4:2", "a:b", "1:2:3", "-1:2", "99999999999999999999:"}) {
    EXPECT_FALSE(ParseSliceRange(bad, K::kLines, &s).ok()) << bad;
  }
  EXPECT_FALSE(ParseSliceRange("7", K::kBytes, &s).ok());
  EXPECT_TRUE(ParseSliceRange("0:0", K::kBytes, &s).ok());
}

}  // namespace
}  // namespace caveman
