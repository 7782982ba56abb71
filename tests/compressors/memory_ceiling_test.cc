// The memory ceiling of issue 15 (peak RSS <= 3 x input + 64 MiB): every in-memory compressor
// states a working-set model and declines, before parsing, a body the model says would break
// the ceiling; the decline says why, so the engine can stream a line type instead.
#include <gtest/gtest.h>

#include <string>

#include "compressors/compressor.h"
#include "compressors/registry.h"
#include "compressors/terminal.h"

namespace caveman {
namespace {

TEST(MemoryCeiling, AllowanceIsTwiceTheInputPlusTheFloor) {
  const MemoryModel model{.per_byte = 3, .per_line = 0};
  // 3b <= 2b + 24 MiB  <=>  b <= 24 MiB.
  EXPECT_TRUE(WithinMemoryCeiling(model, kWorkingSetFloor, 0));
  EXPECT_FALSE(WithinMemoryCeiling(model, kWorkingSetFloor + 1, 0));
  const MemoryModel lines{.per_byte = 0, .per_line = 100};
  EXPECT_TRUE(WithinMemoryCeiling(lines, 1000, 10));
  // 100 bytes per line on 2-byte lines: 50 b > 2 b + 24 MiB once b > 24 MiB / 48.
  const uint64_t b = (kWorkingSetFloor / 48) * 2;
  EXPECT_FALSE(WithinMemoryCeiling(lines, b, b / 2));
  EXPECT_TRUE(WithinMemoryCeiling(MemoryModel{}, uint64_t{1} << 40, uint64_t{1} << 39));
}

TEST(MemoryCeiling, EveryInMemoryCompressorStatesAModel) {
  Registry registry(RegistryOptions{});
  for (std::string_view type : registry.content_types()) {
    const Compressor* c = registry.Find(type);
    ASSERT_NE(c, nullptr) << type;
    if (dynamic_cast<const InMemoryCompressor*>(c) == nullptr) continue;  // streaming
    const MemoryModel m = c->memory_model();
    EXPECT_TRUE(m.per_byte > 0 || m.per_line > 0) << type << " states no working-set model";
  }
}

TEST(MemoryCeiling, TerminalDeclinesManyShortLinesAndSaysWhy) {
  auto terminal = NewTerminalCompressor();
  const MemoryModel m = terminal->memory_model();
  ASSERT_GT(m.per_line, 2 * kWorkingSetPerInputByte);
  // Enough 2-byte lines to pass the floor: per_line * L + per_byte * 2L > allowance * 2L + floor.
  const double per_line_excess = m.per_line + 2 * m.per_byte - 2 * kWorkingSetPerInputByte;
  const size_t lines = static_cast<size_t>(static_cast<double>(kWorkingSetFloor) / per_line_excess) + 1000;
  std::string body;
  body.reserve(2 * lines);
  for (size_t i = 0; i < lines; ++i) body += (i % 7 == 0) ? "b\n" : "a\n";
  TransformMeta meta;
  StringSink sink;
  Result<TransformOutcome> r = terminal->Transform(Body::FromView(body), {}, sink, &meta);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), TransformOutcome::kDeclined);
  EXPECT_TRUE(meta.over_memory_ceiling);
  EXPECT_TRUE(sink.data().empty()) << "nothing parsed or written before the decline";

  // A body of the same shape under the floor is compressed as usual, without the flag.
  const std::string small = body.substr(0, 20000);
  TransformMeta small_meta;
  StringSink small_sink;
  Result<TransformOutcome> s = terminal->Transform(Body::FromView(small), {}, small_sink, &small_meta);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.value(), TransformOutcome::kAccepted);
  EXPECT_FALSE(small_meta.over_memory_ceiling);
  EXPECT_LT(small_sink.data().size(), small.size());
}

}  // namespace
}  // namespace caveman
