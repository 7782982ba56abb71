// o200k_base counting throughput on the synthetic CI log (§7).
// Input: $CAVEMAN_CI_LOG if set, else `python3 scripts/gen_ci_log.py 16` is run
// once into a temporary file. Before timing, Count(whole) is checked against the streaming
// count.
#include <benchmark/benchmark.h>

#include "bench/bench_util.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

#include "caveman/stream/tokens.h"

namespace {

constexpr int kLogMiB = 16;
constexpr size_t kCheckChunk = 64 * 1024;

// The generated CI log (scripts/gen_ci_log.py via bench/bench_util.h; $CAVEMAN_CI_LOG overrides).
const std::string& CiLog() { return caveman::bench::GeneratedCiLog(kLogMiB); }

uint64_t StreamingCount(const caveman::TokenCounter& counter, std::string_view text, size_t chunk) {
  caveman::StreamingTokenCount stream(counter);
  for (size_t pos = 0; pos < text.size(); pos += chunk) stream.Feed(text.substr(pos, chunk));
  return stream.Finish();
}

bool Prepare(benchmark::State& state, const caveman::TokenCounter** counter) {
  auto r = caveman::O200kCounter();
  if (!r.ok()) {
    state.SkipWithError("o200k_base vocabulary did not verify");
    return false;
  }
  *counter = *r;
  if (CiLog().empty()) {
    state.SkipWithError("no CI log (set CAVEMAN_CI_LOG or install python3)");
    return false;
  }
  return true;
}

void BM_CountTokens(benchmark::State& state) {
  const caveman::TokenCounter* counter = nullptr;
  if (!Prepare(state, &counter)) return;
  const std::string& log = CiLog();
  const uint64_t expected = counter->Count(log);
  if (expected != StreamingCount(*counter, log, kCheckChunk) || expected == 0) {
    state.SkipWithError("whole and streaming counts differ");
    return;
  }
  for (auto _ : state) {
    uint64_t n = counter->Count(log);
    benchmark::DoNotOptimize(n);
  }
  state.SetBytesProcessed(static_cast<int64_t>(log.size()) * state.iterations());
  state.counters["tokens_out"] = static_cast<double>(expected);
  state.counters["bytes_per_token"] = static_cast<double>(log.size()) / expected;
}
BENCHMARK(BM_CountTokens)->Unit(benchmark::kMillisecond);

// One count as `compress` makes it: on a thread that has not counted before, so its memos
// (merged pieces, runs, lines) start empty. CPU time is the process's (the count runs on that
// thread while this one waits).
void BM_CountTokensCold(benchmark::State& state) {
  const caveman::TokenCounter* counter = nullptr;
  if (!Prepare(state, &counter)) return;
  const std::string& log = CiLog();
  const uint64_t expected = counter->Count(log);
  for (auto _ : state) {
    uint64_t n = 0;
    std::thread([&] { n = counter->Count(log); }).join();
    if (n != expected) {
      state.SkipWithError("a cold count differs from a warm one");
      return;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(log.size()) * state.iterations());
  state.counters["tokens_out"] = static_cast<double>(expected);
}
BENCHMARK(BM_CountTokensCold)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

void BM_StreamingTokenCount(benchmark::State& state) {
  const caveman::TokenCounter* counter = nullptr;
  if (!Prepare(state, &counter)) return;
  const std::string& log = CiLog();
  const auto chunk = static_cast<size_t>(state.range(0));
  const uint64_t expected = counter->Count(log);
  if (StreamingCount(*counter, log, chunk) != expected) {
    state.SkipWithError("streaming count differs from whole count");
    return;
  }
  for (auto _ : state) {
    uint64_t n = StreamingCount(*counter, log, chunk);
    benchmark::DoNotOptimize(n);
  }
  state.SetBytesProcessed(static_cast<int64_t>(log.size()) * state.iterations());
}
BENCHMARK(BM_StreamingTokenCount)
    ->ArgNames({"chunk"})
    ->RangeMultiplier(16)
    ->Range(256, 1 << 20)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
