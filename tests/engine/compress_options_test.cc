// CompressOptions::never_types and ::min_savings (issue 17, the CLI's configuration file):
// the batch pipeline passes such inputs through with their own reasons; follow mode hands a
// never-compressed type to the batch path, which passes it through.
#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "caveman/engine/engine.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

std::unique_ptr<RecoveryStore> MemoryStore() {
  auto s = OpenMemoryStore();
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

CompressOptions Compress(std::string type = "") {
  CompressOptions o;
  o.mode = Mode::kCompress;
  o.type = std::move(type);
  return o;
}

TEST(CompressOptions, NeverTypesPassTheOriginalThrough) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  const std::string seed = testing::ReadFile("fixtures/seed/pytest.log");
  std::string out;
  auto baseline = engine.Compress(seed, Compress("repetition"), &out);
  ASSERT_TRUE(baseline.ok());
  ASSERT_FALSE(baseline->passed_through());

  CompressOptions never = Compress("repetition");
  never.never_types = {"json", "repetition"};
  out.clear();
  auto r = engine.Compress(seed, never, &out);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->pass_through_reason, PassThroughReason::kNeverCompress);
  EXPECT_EQ(r->content_type, "repetition");
  EXPECT_EQ(out, seed);
  EXPECT_TRUE(r->recovery_handle.empty());

  // "*" matches every type, detected ones too.
  CompressOptions all = Compress();
  all.never_types = {"*"};
  out.clear();
  r = engine.Compress(seed, all, &out);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->pass_through_reason, PassThroughReason::kNeverCompress);
  EXPECT_EQ(out, seed);

  // A list without the type changes nothing.
  CompressOptions other = Compress("repetition");
  other.never_types = {"json"};
  out.clear();
  r = engine.Compress(seed, other, &out);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->passed_through());
}

TEST(CompressOptions, MinSavingsHoldsBackViewsThatSaveLess) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  const std::string seed = testing::ReadFile("fixtures/seed/pytest.log");
  std::string out;
  auto plain = engine.Compress(seed, Compress("repetition"), &out);
  ASSERT_TRUE(plain.ok());
  ASSERT_FALSE(plain->passed_through());
  const double saved = 1.0 - static_cast<double>(plain->tokens_after) / static_cast<double>(plain->tokens_before);

  CompressOptions below = Compress("repetition");
  below.min_savings = saved - 0.01;  // the view saves more than this: emitted
  out.clear();
  auto r = engine.Compress(seed, below, &out);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->passed_through());

  CompressOptions above = Compress("repetition");
  above.min_savings = saved + 0.01;  // saves less than this: the original passes through
  out.clear();
  r = engine.Compress(seed, above, &out);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->pass_through_reason, PassThroughReason::kBelowMinSavings);
  EXPECT_EQ(out, seed);
  EXPECT_EQ(r->tokens_before, plain->tokens_before);
  EXPECT_STREQ(PassThroughReasonText(PassThroughReason::kBelowMinSavings),
               "the view would save less than the configured minimum");
}

TEST(CompressOptions, FollowModeSendsANeverTypeToTheBatchPassThrough) {
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  std::string log;
  for (int i = 0; i < 400; ++i) log += "2026-12-03 INFO [ci] step " + std::to_string(i % 7) + " ok\n";
  int in[2];
  ASSERT_EQ(pipe(in), 0);
  std::thread writer([&] {
    (void)!write(in[1], log.data(), log.size());
    close(in[1]);
  });
  CompressOptions o = Compress("log");
  o.never_types = {"log"};
  StringSink sink;
  auto r = engine.CompressFollowFd(in[0], o, sink);
  writer.join();
  close(in[0]);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->pass_through_reason, PassThroughReason::kNeverCompress);
  EXPECT_EQ(sink.data(), log);
}

}  // namespace
}  // namespace caveman
