// Throughput of the line compressors. BM_LogTransform runs on the generated CI log
// (python3 scripts/gen_ci_log.py 16, or $CAVEMAN_CI_LOG) and checks the output once
// against the invariants it must satisfy before timing.
#include <benchmark/benchmark.h>

#include "bench/bench_util.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>

#include "compressors/compressor.h"
#include "compressors/config.h"
#include "compressors/diff.h"
#include "compressors/log.h"
#include "compressors/search_result.h"
#include "compressors/tabular.h"
#include "compressors/terminal.h"
#include "compressors/text.h"
#include "stream/spool.h"

namespace caveman {
namespace {

// The generated CI log (scripts/gen_ci_log.py via bench/bench_util.h; $CAVEMAN_CI_LOG overrides).
const std::string& CiLog() { return caveman::bench::GeneratedCiLog(16); }

// Output checks: accepted, smaller, every ERROR line present.
bool CheckLogOutput(const std::string& in, const std::string& out) {
  if (out.size() >= in.size()) return false;
  size_t pos = 0;
  while ((pos = in.find(" ERROR [", pos)) != std::string::npos) {
    size_t start = in.rfind('\n', pos);
    start = start == std::string::npos ? 0 : start + 1;
    size_t end = in.find('\n', pos);
    if (out.find(in.substr(start, end - start)) == std::string::npos) return false;
    pos = end;
  }
  return true;
}

void BM_LogTransform(benchmark::State& state) {
  const std::string& in = CiLog();
  if (in.empty()) {
    state.SkipWithError("no CI log");
    return;
  }
  auto c = NewLogCompressor(LogCompressorOptions{static_cast<size_t>(state.range(0)), state.range(1) != 0});
  auto out = RunOnString(*c, in);
  if (!out || !CheckLogOutput(in, *out)) {
    state.SkipWithError("log output check failed");
    return;
  }
  for (auto _ : state) {
    CountingSink sink;
    TransformMeta meta;
    auto r = c->Transform(Body::FromView(in), "", sink, &meta);
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<int64_t>(in.size()) * state.iterations());
  state.counters["ratio"] = static_cast<double>(out->size()) / static_cast<double>(in.size());
}
// chunk = read size; grouping = template grouping (1, the default) or exactly §5.2 (0).
BENCHMARK(BM_LogTransform)
    ->ArgNames({"chunk", "grouping"})
    ->ArgsProduct({{64 << 10, 256 << 10, 1 << 20}, {1, 0}})
    ->Unit(benchmark::kMillisecond);

// The in-memory line compressors on generated inputs of ~4 MiB; each output is checked once
// (accepted, smaller than the input) before timing.
std::string Repeat(const std::function<std::string(int)>& line, size_t bytes) {
  std::string s;
  for (int i = 0; s.size() < bytes; ++i) s += line(i);
  return s;
}

void RunInMemory(benchmark::State& state, const Compressor& c, const std::string& in) {
  auto out = RunOnString(c, in);
  if (!out || out->size() >= in.size()) {
    state.SkipWithError("output check failed");
    return;
  }
  for (auto _ : state) {
    auto r = RunOnString(c, in);
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<int64_t>(in.size()) * state.iterations());
  state.counters["ratio"] = static_cast<double>(out->size()) / static_cast<double>(in.size());
}

constexpr size_t kBenchBytes = 4 << 20;

void BM_TerminalTransform(benchmark::State& state) {
  static const std::string in = Repeat(
      [](int i) {
        return "\x1b[32mok\x1b[0m tests/test_mod.py::test_case_" + std::to_string(i) +
               (i % 997 == 0 ? " FAILED\n" : " PASSED\n");
      },
      kBenchBytes);
  RunInMemory(state, *NewTerminalCompressor(), in);
}
BENCHMARK(BM_TerminalTransform)->Unit(benchmark::kMillisecond);

void BM_DiffTransform(benchmark::State& state) {
  static const std::string in =
      "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n" +
      Repeat([](int i) { return (i % 50 == 0 ? "+added " : " context ") + std::to_string(i) + "\n"; }, kBenchBytes);
  RunInMemory(state, *NewDiffCompressor(), in);
}
BENCHMARK(BM_DiffTransform)->Unit(benchmark::kMillisecond);

void BM_SearchResultTransform(benchmark::State& state) {
  static const std::string in = Repeat(
      [](int i) {
        return "src/pkg" + std::to_string(i % 7) + "/file.go:" + std::to_string(i) + ":\treturn compute(value)\n";
      },
      kBenchBytes);
  RunInMemory(state, *NewSearchResultCompressor(), in);
}
BENCHMARK(BM_SearchResultTransform)->Unit(benchmark::kMillisecond);

void BM_TabularTransform(benchmark::State& state) {
  static const std::string in =
      "id,host,region,latency,status\n" + Repeat(
                                              [](int i) {
                                                return std::to_string(i) + ",web-" + std::to_string(i % 90) +
                                                       (i % 2 ? ",eu," : ",us,") + std::to_string(i % 500) + ",ok\n";
                                              },
                                              kBenchBytes);
  RunInMemory(state, *NewTabularCompressor(), in);
}
BENCHMARK(BM_TabularTransform)->Unit(benchmark::kMillisecond);

void BM_ConfigTransform(benchmark::State& state) {
  static const std::string in =
      "service:\n  name: api\n" + Repeat(
                                      [](int i) {
                                        return "  feature_" + std::to_string(i) +
                                               ":\n    enabled: true\n    rollout: " + std::to_string(i % 100) + "\n";
                                      },
                                      kBenchBytes / 8);
  RunInMemory(state, *NewConfigCompressor(), in);
}
BENCHMARK(BM_ConfigTransform)->Unit(benchmark::kMillisecond);

void BM_TextTransform(benchmark::State& state) {
  static const std::string in =
      "# Report\n\n" +
      Repeat(
          [](int i) { return "The job processed batch " + std::to_string(i) + " of the archive without retries.\n\n"; },
          kBenchBytes);
  RunInMemory(state, *NewTextCompressor(), in);
}
BENCHMARK(BM_TextTransform)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace caveman

BENCHMARK_MAIN();
