// Detection throughput (§3.3) on 64 MiB inputs.
//   BM_Detect           the synthetic CI log: $CAVEMAN_CI_LOG if set, else
//                       `python3 scripts/gen_ci_log.py 64` run once.
//   BM_DetectJson       a generated 64 MiB JSON array of objects (validated whole).
//   BM_DetectLargeSpool the CI log spilled to a temporary file, detected via DetectLarge.
//   BM_Unwrap           MayHavePresentationLayer + Unwrap on a 64 MiB guttered log.
// Each benchmark checks the detected type once before timing.
#include <benchmark/benchmark.h>

#include "bench/bench_util.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "compressors/detect.h"
#include "stream/spool.h"

namespace {

constexpr int kMiB = 64;

// The generated CI log (scripts/gen_ci_log.py via bench/bench_util.h; $CAVEMAN_CI_LOG overrides).
const std::string& CiLog() { return caveman::bench::GeneratedCiLog(kMiB); }

const std::string& BigJson() {
  static const std::string* const json = [] {
    auto* s = new std::string();
    s->reserve((kMiB << 20) + 4096);
    s->push_back('[');
    for (uint64_t i = 0; s->size() < (static_cast<size_t>(kMiB) << 20) - 512; ++i) {
      if (i > 0) s->append(",\n");
      s->append("{\"id\":").append(std::to_string(i));
      s->append(",\"name\":\"user_").append(std::to_string(i % 9973));
      s->append("\",\"email\":\"u").append(std::to_string(i % 99991)).append("@example.com\"");
      s->append(",\"score\":").append(std::to_string((i * 7919) % 10000)).append(".25");
      s->append(",\"active\":").append(i % 3 ? "true" : "false");
      s->append(",\"tags\":[\"a\",\"b\\u00e9\",\"c\"],\"addr\":{\"city\":\"Z\xC3\xBCrich\",\"zip\":\"80");
      s->append(std::to_string(i % 100)).append("\"},\"note\":null}");
    }
    s->append("]\n");
    return s;
  }();
  return *json;
}

void BM_Detect(benchmark::State& state) {
  const std::string& log = CiLog();
  if (log.empty()) {
    state.SkipWithError("could not generate the CI log");
    return;
  }
  if (caveman::DetectBody(log) != "log") {
    state.SkipWithError("CI log not detected as log");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(caveman::DetectBody(log));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(log.size()));
}
BENCHMARK(BM_Detect)->Unit(benchmark::kMillisecond);

void BM_DetectJson(benchmark::State& state) {
  const std::string& json = BigJson();
  if (caveman::DetectBody(json) != "json") {
    state.SkipWithError("JSON not detected as json");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(caveman::DetectBody(json));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(json.size()));
}
BENCHMARK(BM_DetectJson)->Unit(benchmark::kMillisecond);

void BM_DetectLargeSpool(benchmark::State& state) {
  const std::string& log = CiLog();
  if (log.empty()) {
    state.SkipWithError("could not generate the CI log");
    return;
  }
  caveman::SpoolOptions opts;
  opts.memory_limit = 1 << 20;
  caveman::Spool spool(opts);
  if (!spool.Write(log).ok() || spool.in_memory()) {
    state.SkipWithError("spool did not spill");
    return;
  }
  caveman::Body body = caveman::Body::FromSpool(spool);
  auto check = caveman::DetectLarge(body);
  if (!check.ok() || *check != "log") {
    state.SkipWithError("spooled CI log not detected as log");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(caveman::DetectLarge(body));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(log.size()));
}
BENCHMARK(BM_DetectLargeSpool)->Unit(benchmark::kMillisecond);

void BM_Unwrap(benchmark::State& state) {
  const std::string& log = CiLog();
  if (log.empty()) {
    state.SkipWithError("could not generate the CI log");
    return;
  }
  std::string guttered;
  guttered.reserve(log.size() + log.size() / 8);
  size_t n = 1, start = 0;
  while (start < log.size() && guttered.size() < (static_cast<size_t>(kMiB) << 20)) {
    size_t nl = log.find('\n', start);
    if (nl == std::string::npos) break;
    guttered.append(std::to_string(n++)).push_back('\t');
    guttered.append(log, start, nl - start + 1);
    start = nl + 1;
  }
  if (!caveman::MayHavePresentationLayer(std::string_view(guttered).substr(0, 65536)) ||
      caveman::Unwrap(guttered).layers.empty()) {
    state.SkipWithError("gutter not recognised");
    return;
  }
  for (auto _ : state) {
    caveman::Unwrapped u = caveman::Unwrap(guttered);
    benchmark::DoNotOptimize(u.body.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(guttered.size()));
}
BENCHMARK(BM_Unwrap)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
