// The memory ceiling of issue 15 (peak RSS <= 3 x input + 64 MiB): every in-memory compressor
// states a working-set model and declines, before parsing, a body the model says would break
// the ceiling; the decline says why, so the engine can stream a line type instead.
#include <gtest/gtest.h>

#include <string>

#include <tree_sitter/api.h>

#include "compressors/code.h"
#include "compressors/compressor.h"
#include "compressors/internal/grammars.h"
#include "compressors/internal/ts_budget.h"
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

// Dense Python: functions with bodies, no comments.
std::string DensePython(size_t bytes) {
  std::string s;
  for (size_t i = 0; s.size() < bytes; ++i) {
    s += "def f" + std::to_string(i) + "(a, b):\n    x = [a + b * " + std::to_string(i) +
         ", (a - b) / 2]\n    return {'k': x, 'n': len(x)}\n\n";
  }
  return s;
}

TEST(TreeSitterBudget, CancelsTheParseOnceTheTreeOutgrowsIt) {
  const std::string src = DensePython(256 * 1024);
  TSParser* parser = ts_parser_new();
  ASSERT_TRUE(ts_parser_set_language(parser, tree_sitter_python()));
  {
    internal::TreeSitterBudget budget(64 * 1024);
    ts_parser_set_cancellation_flag(parser, budget.flag());
    TSTree* tree = ts_parser_parse_string(parser, nullptr, src.data(), static_cast<uint32_t>(src.size()));
    EXPECT_EQ(tree, nullptr);
    EXPECT_TRUE(budget.exceeded());
    ts_parser_reset(parser);
  }
  {
    internal::TreeSitterBudget budget(uint64_t{1} << 30);
    ts_parser_set_cancellation_flag(parser, budget.flag());
    TSTree* tree = ts_parser_parse_string(parser, nullptr, src.data(), static_cast<uint32_t>(src.size()));
    ASSERT_NE(tree, nullptr);
    EXPECT_FALSE(budget.exceeded());
    // The metered bytes are the tree's real cost: several bytes per source byte.
    EXPECT_GT(budget.peak_bytes(), src.size());
    ts_tree_delete(tree);
  }
  ts_parser_delete(parser);
}

TEST(MemoryCeiling, CodeDeclinesADenseFileWhoseTreeWouldBreakTheCeiling) {
  auto code = NewCodeCompressor();
  const std::string big = DensePython(4 * 1024 * 1024);  // ~66 B/B of tree: far over 1x + 24 MiB
  TransformMeta meta;
  StringSink sink;
  Result<TransformOutcome> r = code->Transform(Body::FromView(big), {}, sink, &meta);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), TransformOutcome::kDeclined);
  EXPECT_TRUE(meta.over_memory_ceiling);

  const std::string small = DensePython(64 * 1024);
  TransformMeta small_meta;
  StringSink small_sink;
  Result<TransformOutcome> s = code->Transform(Body::FromView(small), {}, small_sink, &small_meta);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.value(), TransformOutcome::kAccepted);
  EXPECT_FALSE(small_meta.over_memory_ceiling);
}

}  // namespace
}  // namespace caveman
