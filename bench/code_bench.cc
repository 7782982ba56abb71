// Code compressor (§5.4) throughput: sniff, tree-sitter parse, body elision and re-parse.
// Inputs: the project's fixtures/code/<case>.in (read from $CAVEMAN_SOURCE_DIR, else the
// working directory), each repeated to ~1 MiB where the language allows repetition without
// changing validity. Before timing, the single-copy output is checked against .expected.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "compressors/code.h"
#include "caveman/stream/tokens.h"

namespace {

constexpr size_t kTargetBytes = 1 << 20;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string FixturePath(const std::string& name) {
  const char* root = std::getenv("CAVEMAN_SOURCE_DIR");
  return std::string(root ? root : ".") + "/fixtures/code/" + name;
}

// The first `header_lines` lines (package clause, imports) appear once; the rest of the
// fixture is appended until the input reaches kTargetBytes. Repeated declarations only clash
// semantically, and tree-sitter checks syntax, so the big input still parses cleanly.
void RunCase(benchmark::State& state, const std::string& name, size_t header_lines) {
  const std::string in = ReadAll(FixturePath(name + ".in"));
  const std::string expected = ReadAll(FixturePath(name + ".expected"));
  if (in.empty() || expected.empty()) {
    state.SkipWithError("fixture missing (run from the repository root)");
    return;
  }
  auto compressor = caveman::NewCodeCompressor();
  auto once = caveman::RunOnString(*compressor, in);
  if (!once || *once != expected) {
    state.SkipWithError("output differs from .expected");
    return;
  }
  // Split off the header lines so the repeated part keeps the file valid.
  size_t cut = 0;
  for (size_t line = 0; line < header_lines && cut != std::string::npos; ++line) {
    cut = in.find('\n', cut);
    if (cut != std::string::npos) ++cut;
  }
  std::string big = in.substr(0, cut);
  const std::string rest = in.substr(cut);
  while (big.size() < kTargetBytes) big += rest;
  auto out = caveman::RunOnString(*compressor, big);
  if (!out) {
    state.SkipWithError("repeated input declined");
    return;
  }
  const auto& counter = caveman::DefaultTokenCounter();
  for (auto _ : state) {
    auto result = caveman::RunOnString(*compressor, big);
    benchmark::DoNotOptimize(result);
  }
  state.SetBytesProcessed(static_cast<int64_t>(big.size()) * state.iterations());
  state.counters["ratio"] = 1.0 - static_cast<double>(counter.Count(*out)) / static_cast<double>(counter.Count(big));
  state.counters["tokens_out"] = static_cast<double>(counter.Count(*out));
}

void BM_CodeCompressor_Go(benchmark::State& state) { RunCase(state, "go_service", 9); }
void BM_CodeCompressor_Python(benchmark::State& state) { RunCase(state, "python_models", 0); }
void BM_CodeCompressor_Cpp(benchmark::State& state) { RunCase(state, "cpp_matrix", 3); }
void BM_CodeCompressor_TypeScript(benchmark::State& state) { RunCase(state, "typescript_cache", 1); }

BENCHMARK(BM_CodeCompressor_Go)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CodeCompressor_Python)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CodeCompressor_Cpp)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CodeCompressor_TypeScript)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
