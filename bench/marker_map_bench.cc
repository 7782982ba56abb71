// Cost of the marker map (issue 14) that batch compress computes before committing a record:
// the line aligner over the generated CI log (16 MiB, scripts/gen_ci_log.py via
// bench/bench_util.h) and its log view, both in spools as in the engine, beside the log
// transform itself. The map is checked once (mapped, one entry per marker line) before timing.
#include <benchmark/benchmark.h>

#include <string>

#include "bench/bench_util.h"
#include "compressors/compressor.h"
#include "compressors/log.h"
#include "engine/internal/marker_map.h"
#include "stream/spool.h"

namespace caveman {
namespace {

struct Inputs {
  Spool original, view;
  size_t marker_lines = 0;
  bool ok = false;
};

const Inputs& Get() {
  static Inputs* in = [] {
    auto* p = new Inputs;
    const std::string& log = bench::GeneratedCiLog(16);
    auto out = RunOnString(*NewLogCompressor(), log);
    if (log.empty() || !out) return p;
    p->ok = p->original.Write(log).ok() && p->view.Write(*out).ok();
    for (size_t at = out->find("elided"); at != std::string::npos; at = out->find("elided", at + 1)) {
      const size_t bol = out->rfind('\n', at);
      if (internal::ParseMarkerLine(out->substr(bol + 1, out->find('\n', at) - bol - 1))) ++p->marker_lines;
      at = out->find('\n', at);
      if (at == std::string::npos) break;
    }
    return p;
  }();
  return *in;
}

void BM_MarkerMapLines(benchmark::State& state) {
  const Inputs& in = Get();
  auto check = internal::BuildMarkerMap(in.original, in.view, {});
  if (!in.ok || !check.ok() || !check->mapped || check->markers.size() != in.marker_lines) {
    state.SkipWithError("marker map check failed");
    return;
  }
  for (auto _ : state) {
    auto map = internal::BuildMarkerMap(in.original, in.view, {});
    benchmark::DoNotOptimize(map);
  }
  state.SetBytesProcessed(static_cast<int64_t>(in.original.size()) * state.iterations());
  state.counters["markers"] = static_cast<double>(check->markers.size());
}
BENCHMARK(BM_MarkerMapLines)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace caveman

BENCHMARK_MAIN();
