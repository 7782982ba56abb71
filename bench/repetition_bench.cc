// Line splitting and the repetition transform on the generated CI log. Each benchmark checks
// its result once (line count / spec-shaped output) before timing.
#include <benchmark/benchmark.h>

#include <algorithm>

#include "bench/bench_util.h"
#include "compressors/repetition.h"
#include "stream/line_splitter.h"

namespace caveman {
namespace {

constexpr int kMiB = 16;

size_t CountLines(std::string_view text, size_t chunk) {
  LineSplitter s;
  size_t lines = 0;
  auto fn = [&](std::string_view, bool) { ++lines; };
  for (size_t pos = 0; pos < text.size(); pos += chunk) s.Push(text.substr(pos, chunk), fn);
  s.Finish(fn);
  return lines;
}

void BM_LineSplit(benchmark::State& state) {
  const std::string& log = bench::GeneratedCiLog(kMiB);
  if (log.empty()) return state.SkipWithError("no CI log (python3 missing?)");
  size_t chunk = static_cast<size_t>(state.range(0));
  size_t expected = static_cast<size_t>(std::count(log.begin(), log.end(), '\n')) + 1;
  if (CountLines(log, chunk) != expected) return state.SkipWithError("line count mismatch");
  for (auto _ : state) benchmark::DoNotOptimize(CountLines(log, chunk));
  state.SetBytesProcessed(static_cast<int64_t>(log.size()) * state.iterations());
}
BENCHMARK(BM_LineSplit)->ArgNames({"chunk"})->RangeMultiplier(16)->Range(256, 1 << 20);

void BM_Repetition(benchmark::State& state) {
  const std::string& log = bench::GeneratedCiLog(kMiB);
  if (log.empty()) return state.SkipWithError("no CI log (python3 missing?)");
  auto c = NewRepetitionCompressor();
  auto once = RunOnString(*c, log);
  if (!once || once->size() >= log.size() || once->find("\xE2\x80\xA6 caveman: ") == std::string::npos) {
    return state.SkipWithError("repetition did not collapse the CI log");
  }
  for (auto _ : state) {
    CountingSink sink;
    TransformMeta meta;
    auto r = c->Transform(Body::FromView(log), "", sink, &meta);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(sink.bytes());
  }
  state.SetBytesProcessed(static_cast<int64_t>(log.size()) * state.iterations());
  state.counters["ratio_bytes"] = 1.0 - static_cast<double>(once->size()) / static_cast<double>(log.size());
}
BENCHMARK(BM_Repetition)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace caveman

BENCHMARK_MAIN();
