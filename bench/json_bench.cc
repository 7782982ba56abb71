// json compressor (§5.1) throughput on a generated 64 MiB `kubectl get pods -o json`-like dump
// (deterministic: fixed-seed generator, pretty-printed like kubectl, unique names and uids,
// a few CrashLoopBackOff pods). Before timing, the output is checked once: it parses as JSON,
// holds markers, and keeps every failing pod. Reports bytes/s and peak RSS relative to input.
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "compressors/internal/json_tree.h"
#include "compressors/json.h"

namespace {

constexpr size_t kTargetBytes = 64u << 20;

std::string Hex(std::mt19937_64& rng, int digits) {
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < digits; ++i) s.push_back(kHex[rng() & 15]);
  return s;
}

// One pod, kubectl layout (2-space indentation, keys in kubectl's order).
void AppendPod(std::mt19937_64& rng, int i, bool fail, std::string* s, std::string* name_out) {
  static const char* kApps[] = {"web",   "api-gateway", "billing-worker", "search-indexer",
                                "redis", "payments",    "notifications",  "ingest"};
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  std::string app = kApps[pick(0, 7)];
  std::string hash = Hex(rng, 10);
  std::string name = app + "-" + hash + "-" + Hex(rng, 5);
  *name_out = name;
  std::string& o = *s;
  o += "    {\n      \"apiVersion\": \"v1\",\n      \"kind\": \"Pod\",\n      \"metadata\": {\n";
  o += "        \"creationTimestamp\": \"2024-05-" + std::to_string(pick(10, 28)) + "T0" + std::to_string(pick(0, 9)) +
       ":" + std::to_string(pick(10, 59)) + ":00Z\",\n";
  o += "        \"generateName\": \"" + app + "-" + hash + "-\",\n";
  o += "        \"labels\": {\n          \"app\": \"" + app + "\",\n          \"pod-template-hash\": \"" + hash +
       "\"\n        },\n";
  o += "        \"name\": \"" + name + "\",\n        \"namespace\": \"prod\",\n";
  o += "        \"ownerReferences\": [\n          {\n            \"apiVersion\": \"apps/v1\",\n"
       "            \"blockOwnerDeletion\": true,\n            \"controller\": true,\n"
       "            \"kind\": \"ReplicaSet\",\n            \"name\": \"" +
       app + "-" + hash + "\",\n            \"uid\": \"" + Hex(rng, 8) + "-" + Hex(rng, 4) + "-" + Hex(rng, 4) + "-" +
       Hex(rng, 4) + "-" + Hex(rng, 12) + "\"\n          }\n        ],\n";
  o += "        \"resourceVersion\": \"" + std::to_string(pick(100000, 999999)) + "\",\n";
  o += "        \"uid\": \"" + Hex(rng, 8) + "-" + Hex(rng, 4) + "-" + Hex(rng, 4) + "-" + Hex(rng, 4) + "-" +
       Hex(rng, 12) + "\"\n      },\n";
  o += "      \"spec\": {\n        \"containers\": [\n          {\n            \"image\": \"registry.example.com/" +
       app + ":1." + std::to_string(pick(0, 30)) + "." + std::to_string(pick(0, 9)) + "\",\n";
  o += "            \"imagePullPolicy\": \"IfNotPresent\",\n            \"name\": \"" + app + "\",\n";
  o += "            \"ports\": [\n              {\n                \"containerPort\": 8080,\n"
       "                \"protocol\": \"TCP\"\n              }\n            ],\n";
  o += "            \"resources\": {\n              \"limits\": {\n                \"cpu\": \"" +
       std::to_string(pick(1, 4) * 250) + "m\",\n                \"memory\": \"" + std::to_string(pick(1, 8) * 256) +
       "Mi\"\n              }\n            },\n";
  o += "            \"terminationMessagePath\": \"/dev/termination-log\"\n          }\n        ],\n";
  o += "        \"dnsPolicy\": \"ClusterFirst\",\n        \"nodeName\": \"ip-10-0-" + std::to_string(pick(0, 255)) +
       "-" + std::to_string(pick(1, 254)) +
       ".ec2.internal\",\n        \"restartPolicy\": \"Always\",\n        \"schedulerName\": "
       "\"default-scheduler\",\n        \"serviceAccountName\": \"default\"\n      },\n";
  o +=
      "      \"status\": {\n        \"containerStatuses\": [\n          {\n            \"containerID\": \"containerd://" +
      Hex(rng, 64) + "\",\n            \"name\": \"" + app +
      "\",\n            \"ready\": " + (fail ? "false" : "true") +
      ",\n            \"restartCount\": " + std::to_string(fail ? 57 : pick(0, 3)) + ",\n            \"state\": {\n";
  if (fail) {
    o += "              \"waiting\": {\n                \"message\": \"back-off 5m0s restarting failed container\",\n"
         "                \"reason\": \"CrashLoopBackOff\"\n              }\n";
  } else {
    o += "              \"running\": {\n                \"startedAt\": \"2024-05-20T1" + std::to_string(pick(0, 9)) +
         ":00:00Z\"\n              }\n";
  }
  o += "            }\n          }\n        ],\n        \"hostIP\": \"10.0." + std::to_string(pick(0, 255)) + "." +
       std::to_string(pick(1, 254)) + "\",\n        \"phase\": \"" + (fail ? "Failed" : "Running") +
       "\",\n        \"podIP\": \"10.1." + std::to_string(pick(0, 255)) + "." + std::to_string(pick(1, 254)) +
       "\",\n        \"qosClass\": \"Burstable\"\n      }\n    }";
  (void)i;
}

std::string KubectlDump(std::vector<std::string>* failing) {
  std::mt19937_64 rng(20240520);
  std::string s = "{\n  \"apiVersion\": \"v1\",\n  \"items\": [\n";
  s.reserve(kTargetBytes + 4096);
  std::string name;
  for (int i = 0; s.size() < kTargetBytes - 2048; ++i) {
    if (i > 0) s += ",\n";
    bool fail = i % 9973 == 4711;
    AppendPod(rng, i, fail, &s, &name);
    if (fail) failing->push_back(name);
  }
  s += "\n  ],\n  \"kind\": \"List\",\n  \"metadata\": {\n    \"resourceVersion\": \"\"\n  }\n}\n";
  return s;
}

long MaxRssKiB() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

void BM_JsonElideKubectl64MiB(benchmark::State& state) {
  std::vector<std::string> failing;
  const std::string input = KubectlDump(&failing);
  const long rss_before = MaxRssKiB();
  auto once = caveman::ElideJson(input, "");
  const long rss_after = MaxRssKiB();
  caveman::internal::JsonTree check;
  if (!once || !check.Parse(*once) || once->find("\"__caveman_elided__\"") == std::string::npos) {
    state.SkipWithError("output does not parse or holds no marker");
    return;
  }
  for (const std::string& f : failing) {
    if (once->find(f) == std::string::npos) {
      state.SkipWithError("a failing pod was elided");
      return;
    }
  }
  for (auto _ : state) {
    auto out = caveman::ElideJson(input, "");
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(input.size()));
  state.counters["input_MiB"] = static_cast<double>(input.size()) / (1 << 20);
  state.counters["output_bytes"] = static_cast<double>(once->size());
  state.counters["failing_pods"] = static_cast<double>(failing.size());
  // Peak RSS of the process (input included) relative to the input size; the first call ran
  // with only the input resident before it.
  state.counters["peak_rss_over_input"] = static_cast<double>(rss_after) * 1024.0 / static_cast<double>(input.size());
  state.counters["rss_growth_over_input"] =
      static_cast<double>(rss_after - rss_before) * 1024.0 / static_cast<double>(input.size());
}
BENCHMARK(BM_JsonElideKubectl64MiB)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
