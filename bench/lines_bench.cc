// Throughput of the line compressors. BM_LogTransform runs on the generated CI log
// (python3 /work/shared/tools/gen_ci_log.py 16, or $CAVEMAN_CI_LOG) and checks the output once
// against the invariants it must satisfy before timing.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "compressors/compressor.h"
#include "compressors/log.h"
#include "compressors/terminal.h"
#include "stream/spool.h"

namespace caveman {
namespace {

const std::string& CiLog() {
  static const std::string* data = [] {
    auto* s = new std::string;
    const char* path = std::getenv("CAVEMAN_CI_LOG");
    std::string p = path ? path : "/tmp/caveman_ci_log_16.txt";
    std::ifstream f(p, std::ios::binary);
    if (!f) {
      std::string cmd = "python3 /work/shared/tools/gen_ci_log.py 16 > " + p;
      if (std::system(cmd.c_str()) != 0) return s;
      f.open(p, std::ios::binary);
    }
    std::stringstream ss;
    ss << f.rdbuf();
    *s = ss.str();
    return s;
  }();
  return *data;
}

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
  auto c = NewLogCompressor(
      LogCompressorOptions{static_cast<size_t>(state.range(0)), state.range(1) != 0});
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

}  // namespace
}  // namespace caveman

BENCHMARK_MAIN();
