// Recovery store write/read throughput on a temporary on-disk store (WAL). Input: 8 MiB of
// CI-like text, or the file $CAVEMAN_STORE_INPUT (e.g. the 64 MiB JSON dump of
// scripts/gen_json_dump.py) for BM_StoreWrite.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_util.h"
#include "caveman/store/store.h"
#include "stream/sha256.h"

namespace caveman {
namespace {

constexpr size_t kInputBytes = 8 << 20;
constexpr size_t kAppendPiece = 256 * 1024;

// CI-like text: timestamps, test names, progress and a few failures.
std::string CiLog(size_t n) {
  std::string s;
  for (uint64_t i = 0; s.size() < n; ++i) {
    s += "2024-05-01T12:" + std::to_string(10 + i % 50) + ":" + std::to_string(10 + i % 47) +
         ".123Z ##[group] tests/unit/test_module_" + std::to_string(i % 97) + ".py::test_case_" + std::to_string(i) +
         (i % 13 == 0 ? " FAILED AssertionError: expected 3, got 4\n" : " PASSED [" + std::to_string(i % 100) + "%]\n");
  }
  s.resize(n);
  return s;
}

std::string TempDbPath() {
  const char* t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t && *t ? t : "/tmp") + "/caveman-store-bench-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  char* p = ::mkdtemp(buf.data());
  return p ? std::string(p) + "/ccr.db" : "";
}

// `last`: the whole original in one AppendLast (compressed in place) instead of Append in
// pieces of kAppendPiece.
Status Write(RecoveryStore& store, std::string_view data, const std::string& handle, bool last) {
  auto w = store.BeginRecord();
  if (!w.ok()) return w.status();
  if (last) {
    CAVEMAN_RETURN_IF_ERROR((*w)->AppendLast(data));
  } else {
    for (size_t off = 0; off < data.size(); off += kAppendPiece) {
      CAVEMAN_RETURN_IF_ERROR((*w)->Append(data.substr(off, kAppendPiece)));
    }
  }
  return (*w)->Commit(handle, RecordInfo{"log", "log", 1000, 100, ""});
}

// Arg: 0 = Append in 256 KiB pieces, 1 = one AppendLast.
void BM_StoreWrite(benchmark::State& state) {
  const bool last = state.range(0) != 0;
  std::string path = TempDbPath();
  StoreOptions o;
  o.path = path;
  o.max_bytes = UINT64_MAX;
  auto store = OpenSqliteStore(o);
  if (!store.ok()) return state.SkipWithError(store.status().message().c_str());
  const char* input = std::getenv("CAVEMAN_STORE_INPUT");
  std::string text = input != nullptr ? bench::ReadWholeFile(input) : CiLog(kInputBytes);
  if (text.size() < 16) return state.SkipWithError("empty input");
  {  // Check once before timing: the stored original reads back byte for byte.
    std::string h = HandleFromDigest(Sha256::Digest(text));
    Status s = Write(**store, text, h, last);
    if (!s.ok()) return state.SkipWithError(s.message().c_str());
    StringSink out;
    if (!(*store)->Get(h, out).ok() || out.data() != text) {
      return state.SkipWithError("retrieval differs from input");
    }
  }
  uint64_t iteration = 0;
  for (auto _ : state) {
    // A distinct first line per iteration: every commit is a new record with real chunk
    // inserts, not the cheap refresh of an existing one.
    std::string head = "run " + std::to_string(++iteration) + "\n";
    std::memcpy(text.data(), head.data(), head.size());
    std::string h = HandleFromDigest(Sha256::Digest(text));
    Status s = Write(**store, text, h, last);
    if (!s.ok()) return state.SkipWithError(s.message().c_str());
  }
  state.SetBytesProcessed(static_cast<int64_t>(text.size() * state.iterations()));
  auto stats = (*store)->Stats();
  if (stats.ok() && stats->totals.count > 0) {
    state.counters["ratio"] =
        static_cast<double>(stats->storage_bytes) / static_cast<double>(text.size() * stats->totals.count);
  }
  store->reset();
  std::system(("rm -rf '" + path.substr(0, path.rfind('/')) + "'").c_str());
}
BENCHMARK(BM_StoreWrite)->ArgName("last")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_StoreGet(benchmark::State& state) {
  std::string path = TempDbPath();
  StoreOptions o;
  o.path = path;
  auto store = OpenSqliteStore(o);
  if (!store.ok()) return state.SkipWithError(store.status().message().c_str());
  std::string text = CiLog(kInputBytes);
  std::string h = HandleFromDigest(Sha256::Digest(text));
  if (!Write(**store, text, h, /*last=*/false).ok()) return state.SkipWithError("write failed");
  {
    StringSink out;
    if (!(*store)->Get(h, out).ok() || out.data() != text) {
      return state.SkipWithError("retrieval differs from input");
    }
  }
  for (auto _ : state) {
    CountingSink out;
    Status s = (*store)->Get(h, out);
    if (!s.ok() || out.bytes() != text.size()) return state.SkipWithError("get failed");
  }
  state.SetBytesProcessed(static_cast<int64_t>(kInputBytes * state.iterations()));
  store->reset();
  std::system(("rm -rf '" + path.substr(0, path.rfind('/')) + "'").c_str());
}
BENCHMARK(BM_StoreGet)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace caveman

BENCHMARK_MAIN();
