// Follow mode end to end below the CLI: FollowSession with a simulated clock and a real
// (in-memory or on-disk) SQLite store, and CompressFollowFd over a real pipe fed slowly.
// Checks: output independent of chunking (1-byte chunks included), the round trip through the
// final record (same handle as batch mode), no marker written before the partial record covers
// the lines it replaces, the store ceiling (markers covered, the rest verbatim, error reported),
// batch compress of the follow view passes it through, a kept line arrives before the input
// ends, and the hand-over of other types to the batch path.
#include "caveman/engine/engine.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include "engine/internal/follow_session.h"
#include "stream/sha256.h"

namespace caveman {
namespace {

using internal::FollowClock;
using internal::FollowConfig;
using internal::FollowSession;

std::unique_ptr<RecoveryStore> MemoryStore(uint64_t capacity = kDefaultStoreCapacity) {
  StoreOptions so;
  so.max_bytes = capacity;
  return std::move(OpenMemoryStore(so)).value();
}

std::string GenerateLog(uint64_t seed, int lines) {
  std::mt19937_64 rng(seed);
  std::string s;
  for (int i = 0; i < lines; ++i) {
    switch (rng() % 19) {
      case 0: s += "2026-12-03T10:00:00Z ERROR request failed id=" + std::to_string(rng() % 10000) + "\n"; break;
      case 1: s += "    at handler (server.js:" + std::to_string(rng() % 300) + ":7)\n"; break;
      case 2:
        for (int k = 0; k < 5; ++k) s += "WARN retrying upstream\n";
        break;
      default:
        s += "2026-12-03T10:00:00Z INFO [ci] step " + std::to_string(i) +
             " ok duration_ms=" + std::to_string(rng() % 500) + " worker=" + std::to_string(rng() % 4) + "\n";
    }
  }
  return s;
}

// Sums the input lines the output accounts for: verbatim lines 1 each, markers N each.
uint64_t AccountedLines(std::string_view output) {
  static const RE2 kRun("^\xE2\x80\xA6 (\\d+) lines elided \\(caveman\\).*");
  static const RE2 kRepeat("^\xE2\x80\xA6 caveman: (\\d+) identical lines elided.*");
  uint64_t total = 0;
  size_t pos = 0;
  while (pos < output.size()) {
    size_t nl = output.find('\n', pos);
    if (nl == std::string_view::npos) nl = output.size();
    std::string_view line = output.substr(pos, nl - pos);
    uint64_t n = 0;
    if (RE2::FullMatch(line, kRun, &n) || RE2::FullMatch(line, kRepeat, &n)) {
      total += n;
    } else if (line.rfind("\xE2\x80\xA6 caveman: elided ", 0) != 0) {
      total += 1;
    }
    pos = nl + 1;
  }
  return total;
}

bool HasMarker(std::string_view s) {
  return s.find("lines elided (caveman)") != std::string_view::npos ||
         s.find("identical lines elided") != std::string_view::npos;
}

// Bytes of the first `lines` lines of `input`.
uint64_t PrefixBytes(std::string_view input, uint64_t lines) {
  size_t pos = 0;
  for (uint64_t k = 0; k < lines && pos < input.size(); ++k) {
    size_t nl = input.find('\n', pos);
    pos = nl == std::string_view::npos ? input.size() : nl + 1;
  }
  return pos;
}

// Records every write; when the output so far holds a marker, checks that the store covers
// every input line accounted for up to the last marker (the follow-mode recovery contract).
class CheckingSink final : public ByteSink {
 public:
  CheckingSink(RecoveryStore* store, std::string_view input) : store_(store), input_(input) {}
  Status Write(std::string_view d) override {
    data_.append(d);
    if (store_ != nullptr && HasMarker(d)) {
      // Lines accounted for up to the end of the last marker line written so far.
      size_t last_marker_end = 0;
      for (std::string_view m : {"lines elided (caveman)", "identical lines elided"}) {
        size_t at = data_.rfind(m);
        if (at == std::string::npos) continue;
        size_t nl = data_.find('\n', at);
        last_marker_end = std::max(last_marker_end, nl == std::string::npos ? data_.size() : nl + 1);
      }
      const uint64_t need = PrefixBytes(input_, AccountedLines(std::string_view(data_).substr(0, last_marker_end)));
      uint64_t have = 0;
      auto partials = store_->ListPartials();
      if (partials.ok()) {
        for (const PartialInfo& p : *partials) have = std::max(have, p.original_bytes);
      }
      if (store_->Stats().ok() && store_->Stats()->totals.count > 0) have = input_.size();
      if (have < need) violations_++;
    }
    return Status::OK();
  }
  Status Flush() override {
    ++flushes_;
    return Status::OK();
  }
  const std::string& data() const { return data_; }
  int violations() const { return violations_; }
  int flushes() const { return flushes_; }

 private:
  RecoveryStore* store_;
  std::string_view input_;
  std::string data_;
  int violations_ = 0;
  int flushes_ = 0;
};

struct FollowOutcome {
  std::string view;
  CompressResult result;
  int violations = 0;
};

// Feeds `input` in random chunks (1..max_chunk bytes) with time advancing `step` per chunk.
FollowOutcome RunFollow(const std::string& input, RecoveryStore* store, uint64_t seed, size_t max_chunk,
                        std::chrono::milliseconds step, std::string type = "") {
  FollowConfig config;
  config.counter = &DefaultTokenCounter();
  config.store = store;
  config.type = std::move(type);
  CheckingSink sink(store, input);
  FollowSession session(config, sink);
  std::mt19937_64 rng(seed);
  auto now = FollowClock::time_point{} + std::chrono::hours(1);
  size_t pos = 0;
  while (pos < input.size()) {
    const size_t n = std::min(input.size() - pos, 1 + static_cast<size_t>(rng() % max_chunk));
    EXPECT_TRUE(session.Push(std::string_view(input).substr(pos, n), now).ok());
    now += step;
    EXPECT_TRUE(session.Tick(now).ok());
    pos += n;
  }
  EXPECT_TRUE(session.EndOfInput(now).ok());
  EXPECT_FALSE(session.wants_batch());
  FollowOutcome o;
  o.result = session.Finish();
  o.view = sink.data();
  o.violations = sink.violations();
  return o;
}

std::string Retrieve(RecoveryStore& store, const std::string& handle) {
  StringSink s;
  EXPECT_TRUE(store.Get(handle, s).ok());
  return s.data();
}

TEST(Follow, OutputDoesNotDependOnChunkingAndRoundTrips) {
  const std::string input = GenerateLog(5, 3000);
  auto store0 = MemoryStore();
  // Time does not advance: no idle ticks, so only chunking could change the view.
  FollowOutcome whole = RunFollow(input, store0.get(), 1, input.size(), std::chrono::milliseconds(0), "log");
  ASSERT_FALSE(whole.result.recovery_handle.empty());
  EXPECT_EQ(whole.result.recovery_handle, HandleFromDigest(Sha256::Digest(input)));
  EXPECT_TRUE(whole.result.follow);
  EXPECT_LT(whole.result.tokens_after, whole.result.tokens_before / 3);
  EXPECT_EQ(Retrieve(*store0, whole.result.recovery_handle), input);
  EXPECT_EQ(whole.violations, 0);
  for (size_t max_chunk : {1, 2, 7, 300, 70000}) {
    auto store = MemoryStore();
    FollowOutcome o = RunFollow(input, store.get(), max_chunk, max_chunk, std::chrono::milliseconds(0), "log");
    ASSERT_EQ(o.view, whole.view) << "max chunk " << max_chunk;
    EXPECT_EQ(o.result.recovery_handle, whole.result.recovery_handle);
    EXPECT_EQ(o.result.tokens_after, whole.result.tokens_after);
    EXPECT_EQ(o.violations, 0);
    EXPECT_TRUE(store->ListPartials()->empty());
  }
}

TEST(Follow, DetectsTheTypeAndHandsOtherTypesToBatch) {
  auto store = MemoryStore();
  const std::string input = GenerateLog(9, 2000);
  FollowOutcome o = RunFollow(input, store.get(), 3, 4096, std::chrono::milliseconds(1));
  EXPECT_EQ(o.result.content_type, "log");
  EXPECT_EQ(AccountedLines(o.view), static_cast<uint64_t>(std::count(input.begin(), input.end(), '\n')));
  EXPECT_FALSE(o.result.recovery_handle.empty());

  FollowConfig config;
  config.counter = &DefaultTokenCounter();
  config.store = store.get();
  StringSink sink;
  FollowSession session(config, sink);
  const std::string json = R"([{"id":1,"name":"a"},{"id":2,"name":"b"}])";
  ASSERT_TRUE(session.Push(json, FollowClock::now()).ok());
  ASSERT_TRUE(session.EndOfInput(FollowClock::now()).ok());
  EXPECT_TRUE(session.wants_batch());
  EXPECT_EQ(session.sample(), json);
  EXPECT_TRUE(sink.data().empty());
}

TEST(Follow, IdleTimeWritesPendingMarkersAndMarkersWaitForTheStore) {
  auto store = MemoryStore();
  FollowConfig config;
  config.counter = &DefaultTokenCounter();
  config.store = store.get();
  config.type = "log";
  CheckingSink sink(store.get(), "");
  FollowSession session(config, sink);
  auto t = FollowClock::time_point{} + std::chrono::hours(1);
  std::string in = "header one\nheader two\n";
  for (int i = 0; i < 40; ++i) in += "INFO step " + std::to_string(i) + " ok\n";
  ASSERT_TRUE(session.Push(in, t).ok());
  // Head and the first line of its kind are written; the run of similar lines is pending.
  EXPECT_EQ(sink.data(), "header one\nheader two\nINFO step 0 ok\n");
  ASSERT_TRUE(session.Tick(t + std::chrono::milliseconds(500)).ok());
  EXPECT_EQ(sink.data().find("lines elided"), std::string::npos);
  ASSERT_TRUE(session.Tick(t + std::chrono::milliseconds(1001)).ok());
  // 39 similar lines, the last 2 held back as possible tail lines.
  EXPECT_NE(sink.data().find("\xE2\x80\xA6 37 lines elided (caveman)"), std::string::npos) << sink.data();
  // The marker was written only after the partial record covered its lines.
  auto partials = store->ListPartials().value();
  ASSERT_EQ(partials.size(), 1u);
  EXPECT_EQ(partials[0].original_bytes, in.size());
  // A kept line after the marker is written at once (the store already covers the input).
  const auto t2 = t + std::chrono::milliseconds(1200);
  ASSERT_TRUE(session.Push("2026 ERROR disk full\n", t2).ok());
  EXPECT_NE(sink.data().find("ERROR disk full\n"), std::string::npos);
  ASSERT_TRUE(session.EndOfInput(t2).ok());
  CompressResult r = session.Finish();
  EXPECT_FALSE(r.recovery_handle.empty());
  EXPECT_TRUE(store->ListPartials()->empty());
  EXPECT_EQ(Retrieve(*store, r.recovery_handle), in + "2026 ERROR disk full\n");
}

TEST(Follow, CeilingKeepsEveryWrittenMarkerCoveredAndPassesTheRestThrough) {
  // Random ids make the frame large enough to hit a small capacity midway.
  std::string input;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 20000; ++i) {
    input += (i % 997 == 0)
                 ? "ERROR boom " + std::to_string(i) + "\n"
                 : "INFO request " + std::to_string(rng()) + " served in " + std::to_string(rng() % 1000) + "ms\n";
  }
  auto store = MemoryStore(/*capacity=*/96 * 1024);
  FollowConfig config;
  config.counter = &DefaultTokenCounter();
  config.store = store.get();
  config.type = "log";
  config.max_unsynced = 16 * 1024;  // sync often so the ceiling is met midway
  CheckingSink sink(store.get(), input);
  FollowSession session(config, sink);
  auto t = FollowClock::time_point{} + std::chrono::hours(1);
  for (size_t pos = 0; pos < input.size(); pos += 4096) {
    ASSERT_TRUE(session.Push(std::string_view(input).substr(pos, 4096), t).ok());
    t += std::chrono::milliseconds(100);
    ASSERT_TRUE(session.Tick(t).ok());
  }
  ASSERT_TRUE(session.EndOfInput(t).ok());
  CompressResult r = session.Finish();
  EXPECT_EQ(r.error, "cave_ccr_budget_exceeded");
  EXPECT_TRUE(r.recovery_handle.empty());
  ASSERT_FALSE(r.partial_record.empty());
  EXPECT_EQ(sink.violations(), 0);
  // Every input line is accounted for; past the ceiling the input is written as it came.
  EXPECT_EQ(AccountedLines(sink.data()), 20000u);
  StringSink partial;
  ASSERT_TRUE(store->GetPartial(r.partial_record, partial).ok());
  ASSERT_LT(partial.data().size(), input.size());
  EXPECT_EQ(input.substr(0, partial.data().size()), partial.data());
  const std::string tail = input.substr(input.size() - 100000);
  EXPECT_NE(sink.data().find(tail), std::string::npos);  // the end passed through verbatim
}

TEST(Follow, NoStoreMeansNothingIsElided) {
  const std::string input = GenerateLog(2, 500);
  FollowOutcome o = RunFollow(input, nullptr, 4, 1000, std::chrono::milliseconds(1), "log");
  EXPECT_EQ(o.view, input);
  EXPECT_TRUE(o.result.passed_through());
  EXPECT_EQ(o.result.pass_through_reason, PassThroughReason::kNoStore);
}

TEST(Follow, BatchCompressOfTheFollowViewPassesItThrough) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const std::string input = GenerateLog(seed, 1500);
    auto store = MemoryStore();
    FollowOutcome o = RunFollow(input, store.get(), seed, 5000, std::chrono::milliseconds(3), "");
    ASSERT_FALSE(o.result.passed_through());
    Engine engine(EngineOptions{.store = store.get()});
    CompressOptions opts;
    opts.mode = Mode::kCompress;
    std::string again;
    auto r = engine.Compress(o.view, opts, &again);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->passed_through()) << "seed " << seed << ": " << r->ReportJson();
    EXPECT_EQ(again, o.view);
  }
}

// A real pipe, fed slowly by a thread: the ERROR line in the middle is on the output before
// the input ends. (No timing threshold: the writer waits for it, up to a 30 s hang guard.)
TEST(Follow, KeptLineArrivesBeforeTheInputEnds) {
  int in[2];
  int out[2];
  ASSERT_EQ(::pipe(in), 0);
  ASSERT_EQ(::pipe(out), 0);
  auto store = MemoryStore();
  std::atomic<bool> seen_before_end{false};
  std::atomic<bool> done{false};
  std::string collected;
  std::mutex mu;
  std::thread reader([&] {
    char buf[4096];
    for (;;) {
      ssize_t n = ::read(out[0], buf, sizeof buf);
      if (n <= 0) break;
      std::lock_guard<std::mutex> lock(mu);
      collected.append(buf, static_cast<size_t>(n));
    }
  });
  std::thread writer([&] {
    auto put = [&](const std::string& s) {
      ASSERT_EQ(::write(in[1], s.data(), s.size()), static_cast<ssize_t>(s.size()));
    };
    for (int i = 0; i < 300; ++i) put("2026-12-03 INFO [ci] step " + std::to_string(i) + " ok\n");
    put("2026-12-03 ERROR [ci] linker failed: undefined reference to `main'\n");
    const auto guard = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < guard) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (collected.find("linker failed") != std::string::npos) {
          seen_before_end = true;
          break;
        }
      }
      put("2026-12-03 INFO [ci] waiting\n");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (int i = 0; i < 100; ++i) put("2026-12-03 INFO [ci] step " + std::to_string(i) + " ok\n");
    ::close(in[1]);
    done = true;
  });
  Engine engine(EngineOptions{.store = store.get()});
  CompressOptions o;
  o.mode = Mode::kCompress;
  auto sink = NewFdSink(out[1]);
  auto r = engine.CompressFollowFd(in[0], o, *sink);
  ::close(out[1]);
  writer.join();
  reader.join();
  ::close(in[0]);
  ::close(out[0]);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(seen_before_end.load());
  EXPECT_TRUE(done.load());
  EXPECT_EQ(r->content_type, "log");
  EXPECT_FALSE(r->recovery_handle.empty());
  EXPECT_NE(collected.find("undefined reference"), std::string::npos);
}

// Random chunk sizes and random idle gaps (some over the 1 s idle tick): markers still account
// for every line, the record round trips, no marker precedes its stored original, and batch
// compress of the view passes it through.
TEST(Follow, RandomArrivalPatternsKeepTheContract) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const std::string input = GenerateLog(seed * 7, 1200);
    auto store = MemoryStore();
    FollowConfig config;
    config.counter = &DefaultTokenCounter();
    config.store = store.get();
    CheckingSink sink(store.get(), input);
    FollowSession session(config, sink);
    std::mt19937_64 rng(seed);
    auto now = FollowClock::time_point{} + std::chrono::hours(1);
    size_t pos = 0;
    while (pos < input.size()) {
      const size_t n = std::min(input.size() - pos, 1 + static_cast<size_t>(rng() % 3000));
      ASSERT_TRUE(session.Push(std::string_view(input).substr(pos, n), now).ok());
      pos += n;
      now += std::chrono::milliseconds(rng() % 4 == 0 ? 1500 : rng() % 80);
      ASSERT_TRUE(session.Tick(now).ok());
    }
    ASSERT_TRUE(session.EndOfInput(now).ok());
    CompressResult r = session.Finish();
    EXPECT_EQ(sink.violations(), 0) << "seed " << seed;
    EXPECT_EQ(AccountedLines(sink.data()), static_cast<uint64_t>(std::count(input.begin(), input.end(), '\n')))
        << "seed " << seed;
    ASSERT_FALSE(r.recovery_handle.empty());
    EXPECT_EQ(Retrieve(*store, r.recovery_handle), input);
    Engine engine(EngineOptions{.store = store.get()});
    CompressOptions opts;
    opts.mode = Mode::kCompress;
    std::string again;
    auto b = engine.Compress(sink.data(), opts, &again);
    ASSERT_TRUE(b.ok());
    EXPECT_TRUE(b->passed_through()) << "seed " << seed << ": " << b->ReportJson();
  }
}

// Detection that ends with the one-second window (not with input) hands over to the batch
// path even while more input is still to come (regression: the next read then failed with
// "input after the batch hand-over").
TEST(Follow, WindowTimeoutHandsOverToBatchWithInputStillArriving) {
  int in[2];
  ASSERT_EQ(::pipe(in), 0);
  auto store = MemoryStore();
  const std::string first = "Dear reader, this is plain prose.\n";
  const std::string second = "It goes on after a pause, as prose does.\n";
  std::thread writer([&] {
    ASSERT_EQ(::write(in[1], first.data(), first.size()), static_cast<ssize_t>(first.size()));
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));
    ASSERT_EQ(::write(in[1], second.data(), second.size()), static_cast<ssize_t>(second.size()));
    ::close(in[1]);
  });
  Engine engine(EngineOptions{.store = store.get()});
  CompressOptions o;
  o.mode = Mode::kCompress;
  StringSink sink;
  auto r = engine.CompressFollowFd(in[0], o, sink);
  writer.join();
  ::close(in[0]);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content_type, "text");
  EXPECT_EQ(sink.data(), first + second);
}

// A pipe on stdin is grown to the read buffer (256 KiB; a 64 KiB pipe made a fast writer wait
// and every read return at most 64 KiB), and what comes through it is unchanged.
TEST(Follow, InputPipeIsGrownToTheReadBuffer) {
  constexpr int kReadBuffer = 256 * 1024;
  int probe[2];
  ASSERT_EQ(::pipe(probe), 0);
  const bool may_grow = ::fcntl(probe[0], F_SETPIPE_SZ, kReadBuffer) >= kReadBuffer;
  ::close(probe[0]);
  ::close(probe[1]);
  if (!may_grow) GTEST_SKIP() << "this user's pipe quota refuses 256 KiB pipes";
  int in[2];
  ASSERT_EQ(::pipe(in), 0);
  if (::fcntl(in[0], F_GETPIPE_SZ) >= kReadBuffer) {
    ::close(in[0]);
    ::close(in[1]);
    GTEST_SKIP() << "pipes are 256 KiB or more here already";
  }
  std::string log;
  for (int i = 0; i < 400; ++i) log += "2026-12-07 INFO [ci] step " + std::to_string(i) + " ok\n";
  log += "2026-12-07 ERROR [ci] linker failed: undefined reference to `main'\n";
  ASSERT_LT(log.size(), size_t{65536});
  ASSERT_EQ(::write(in[1], log.data(), log.size()), static_cast<ssize_t>(log.size()));
  ::close(in[1]);
  auto store = MemoryStore();
  Engine engine(EngineOptions{.store = store.get()});
  CompressOptions o;
  o.mode = Mode::kCompress;
  StringSink sink;
  auto r = engine.CompressFollowFd(in[0], o, sink);
  EXPECT_GE(::fcntl(in[0], F_GETPIPE_SZ), kReadBuffer);
  ::close(in[0]);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content_type, "log");
  EXPECT_NE(sink.data().find("linker failed"), std::string::npos);
  StringSink original;
  ASSERT_TRUE(store->Get(r->recovery_handle, original).ok());
  EXPECT_EQ(original.data(), log);
}

}  // namespace
}  // namespace caveman
