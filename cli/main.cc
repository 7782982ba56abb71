// caveman-engine: the command-line surface of §9.
//
// Exit codes: 0 success (pass-through and store-failure pass-through included), 1 fatal error
// (message on stderr, stdout empty), 2 unknown subcommand. See README.md for the table.
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <optional>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "compressors/manifest.h"
#include "compressors/toon.h"
#include "engine/engine.h"
#include "store/store.h"
#include "stream/byte_io.h"

#ifndef CAVEMAN_VERSION_STRING
#define CAVEMAN_VERSION_STRING "dev"
#endif

namespace caveman {
namespace {

constexpr uint64_t kStdinLimit = 67108864;  // 64 MiB (§10)
constexpr const char* kUsage =
    "caveman-engine compress [--type T|auto] [--query Q] | detect | retrieve <handle> [query] | "
    "stats | registry | toon encode|decode | version [--json] | gc [--older-than D] [--dry-run]";

int Fail(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  return 1;
}

// Remembers whether a failure came from stdin or stdout, so the CLI can say which.
class TrackedSource final : public ByteSource {
 public:
  explicit TrackedSource(ByteSource& s) : s_(s) {}
  Result<size_t> Read(char* buf, size_t cap) override {
    auto r = s_.Read(buf, cap);
    if (!r.ok()) failed = true;
    return r;
  }
  bool failed = false;

 private:
  ByteSource& s_;
};

class TrackedSink final : public ByteSink {
 public:
  explicit TrackedSink(ByteSink& s) : s_(s) {}
  Status Write(std::string_view d) override {
    Status st = s_.Write(d);
    if (!st.ok()) failed = true;
    return st;
  }
  bool failed = false;

 private:
  ByteSink& s_;
};

// Stands in for a store that could not be opened during `compress`: the pipeline still runs,
// and a lossy result passes through with error cave_ccr_unavailable (see docs/DECISIONS.md).
class UnavailableStore final : public RecoveryStore {
 public:
  explicit UnavailableStore(Status why) : why_(std::move(why)) {}
  Result<std::unique_ptr<RecordWriter>> BeginRecord() override { return why_; }
  Status Get(std::string_view, ByteSink&) override { return why_; }
  Result<std::string> GetMetadata(std::string_view) override { return why_; }
  Result<StoreStats> Stats() override { return why_; }
  Result<GcResult> Gc(std::optional<uint64_t>, bool) override { return why_; }

 private:
  Status why_;
};

// Reads stdin up to the 64 MiB limit. Returns false after printing the error.
bool ReadStdin(std::string* out, int* exit_code) {
  auto in = NewFdSource(STDIN_FILENO);
  Status st = ReadAll(*in, out, kStdinLimit);
  if (st.ok()) return true;
  if (st.code() == StatusCode::kResourceExhausted) {
    *exit_code = Fail("read stdin: cave_input_too_large: stdin exceeds 67108864 bytes");
  } else {
    *exit_code = Fail("read stdin: " + st.message());
  }
  return false;
}

Status WriteStdout(std::string_view data) { return NewFdSink(STDOUT_FILENO)->Write(data); }

Result<std::unique_ptr<RecoveryStore>> OpenStoreFromEnv() {
  CAVEMAN_ASSIGN_OR_RETURN(StoreOptions so, StoreOptions::FromEnv());
  return OpenSqliteStore(so);
}

int CmdCompress(const std::vector<std::string>& args) {
  CompressOptions o;
  o.mode = Mode::kCompress;
  o.max_input_bytes = kStdinLimit;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--type" || a == "--query") {
      if (i + 1 >= args.size()) {
        return Fail("usage: caveman-engine compress [--type <content-type>] [--query <text>]");
      }
      (a == "--type" ? o.type : o.query) = args[++i];
    } else if (a.rfind("--type=", 0) == 0) {
      o.type = a.substr(7);
    } else if (a.rfind("--query=", 0) == 0) {
      o.query = a.substr(8);
    } else {
      return Fail("unknown compress flag: " + a);
    }
  }
  if (o.type == "auto") o.type.clear();

  auto options = StoreOptions::FromEnv();
  if (!options.ok()) return Fail(options.status().message());
  std::unique_ptr<RecoveryStore> store;
  auto opened = OpenSqliteStore(*options);
  if (opened.ok()) {
    store = std::move(opened).value();
  } else {
    store = std::make_unique<UnavailableStore>(opened.status());
  }

  Engine engine(EngineOptions{.store = store.get()});
  auto raw_in = NewFdSource(STDIN_FILENO);
  auto raw_out = NewFdSink(STDOUT_FILENO);
  TrackedSource in(*raw_in);
  TrackedSink out(*raw_out);
  auto r = engine.Compress(in, o, out);
  if (!r.ok()) {
    const Status& st = r.status();
    if (st.code() == StatusCode::kResourceExhausted && !out.failed) return Fail("read stdin: " + st.message());
    if (in.failed) return Fail("read stdin: " + st.message());
    if (out.failed) return Fail("write stdout: " + st.message());
    return Fail("compress: " + st.message());
  }
  std::string report = r->ReportJson() + "\n";
  std::fwrite(report.data(), 1, report.size(), stderr);
  return 0;
}

int CmdDetect() {
  std::string input;
  int code = 0;
  if (!ReadStdin(&input, &code)) return code;
  Engine engine;
  Status st = WriteStdout(engine.Detect(input) + "\n");
  return st.ok() ? 0 : Fail("write stdout: " + st.message());
}

int CmdRetrieve(const std::vector<std::string>& args) {
  if (args.empty() || args.size() > 2) return Fail("usage: caveman-engine retrieve <handle> [query]");
  auto store = OpenStoreFromEnv();
  if (!store.ok()) return Fail(store.status().message());
  Engine engine(EngineOptions{.store = store->get()});
  auto raw_out = NewFdSink(STDOUT_FILENO);
  TrackedSink out(*raw_out);
  Status st = args.size() == 2 ? engine.RetrieveQuery(args[0], args[1], out) : engine.Retrieve(args[0], out);
  if (st.ok()) return 0;
  if (out.failed) return Fail("write stdout: " + st.message());
  return Fail("retrieve: " + st.message());
}

std::string TotalsJson(const ContentTypeTotals& t, const std::string& indent) {
  double ratio = t.tokens_before > 0 ? (static_cast<double>(t.tokens_before) - static_cast<double>(t.tokens_after)) /
                                           static_cast<double>(t.tokens_before)
                                     : 0.0;
  std::string in2 = indent + "  ";
  return "{\n" + in2 + "\"count\": " + std::to_string(t.count) + ",\n" + in2 +
         "\"tokens_before\": " + std::to_string(t.tokens_before) + ",\n" + in2 +
         "\"tokens_after\": " + std::to_string(t.tokens_after) + ",\n" + in2 + "\"ratio\": " + FormatRatio(ratio) +
         "\n" + indent + "}";
}

int CmdStats() {
  auto store = OpenStoreFromEnv();
  if (!store.ok()) return Fail("stats: " + store.status().message());
  auto stats = (*store)->Stats();
  if (!stats.ok()) return Fail("stats: " + stats.status().message());
  const StoreStats& s = *stats;
  std::string j = "{\n  \"totals\": " + TotalsJson(s.totals, "  ") + ",\n  \"by_content_type\": ";
  if (s.by_content_type.empty()) {
    j += "{}";
  } else {
    j += "{\n";
    size_t i = 0;
    for (const auto& [type, t] : s.by_content_type) {
      j += "    " + JsonQuote(type) + ": " + TotalsJson(t, "    ");
      j += ++i < s.by_content_type.size() ? ",\n" : "\n";
    }
    j += "  }";
  }
  j += ",\n  \"basis\": \"inferred\"";
  if (s.storage_bytes > 0) j += ",\n  \"storage_bytes\": " + std::to_string(s.storage_bytes);
  if (s.max_storage_bytes > 0) j += ",\n  \"max_storage_bytes\": " + std::to_string(s.max_storage_bytes);
  if (s.max_storage_bytes > 0 && s.storage_bytes >= s.max_storage_bytes) j += ",\n  \"storage_full\": true";
  j += "\n}\n";
  Status st = WriteStdout(j);
  return st.ok() ? 0 : Fail("write stdout: " + st.message());
}

int CmdToon(const std::vector<std::string>& args) {
  if (args.size() != 1 || (args[0] != "encode" && args[0] != "decode")) {
    return Fail("usage: caveman-engine toon encode|decode");
  }
  std::string input;
  int code = 0;
  if (!ReadStdin(&input, &code)) return code;
  bool encode = args[0] == "encode";
  auto r = encode ? EncodeToon(input) : DecodeToon(input);
  if (!r.ok()) {
    return Fail(encode ? "toon encode: not losslessly TOON-encodable (invalid JSON, or nested/non-uniform shape); keep JSON"
                       : "toon decode: not valid TOON");
  }
  Status st = WriteStdout(*r);
  return st.ok() ? 0 : Fail("write stdout: " + st.message());
}

int CmdVersion(const std::vector<std::string>& args) {
  std::string v = CAVEMAN_VERSION_STRING;
  std::string line;
  if (args.size() == 1 && args[0] == "--json") {
    line = "{\"capabilities\":[\"compress\",\"detect\",\"retrieve\",\"stats\",\"registry\",\"toon\",\"gc\"],"
           "\"schema\":\"caveman.engine.version.v1\",\"version\":" + JsonQuote(v) + "}\n";
  } else if (args.empty()) {
    line = v + "\n";
  } else {
    return Fail("usage: caveman-engine version [--json]");
  }
  Status st = WriteStdout(line);
  return st.ok() ? 0 : Fail("write stdout: " + st.message());
}

// DURATION = positive integer + s|m|h|d.
std::optional<uint64_t> ParseDuration(const std::string& d) {
  if (d.size() < 2) return std::nullopt;
  uint64_t unit;
  switch (d.back()) {
    case 's': unit = 1; break;
    case 'm': unit = 60; break;
    case 'h': unit = 3600; break;
    case 'd': unit = 86400; break;
    default: return std::nullopt;
  }
  uint64_t n = 0;
  for (size_t i = 0; i + 1 < d.size(); ++i) {
    if (d[i] < '0' || d[i] > '9') return std::nullopt;
    if (n > UINT64_MAX / 10 / unit) return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(d[i] - '0');
  }
  if (n == 0) return std::nullopt;
  return n * unit;
}

int CmdGc(const std::vector<std::string>& args) {
  const char* kGcUsage = "usage: caveman-engine gc [--older-than <N>s|m|h|d] [--dry-run]";
  std::optional<uint64_t> age;
  bool dry_run = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--dry-run") {
      dry_run = true;
    } else if (args[i] == "--older-than" && i + 1 < args.size()) {
      age = ParseDuration(args[++i]);
      if (!age) return Fail(kGcUsage);
    } else if (args[i].rfind("--older-than=", 0) == 0) {
      age = ParseDuration(args[i].substr(13));
      if (!age) return Fail(kGcUsage);
    } else {
      return Fail(kGcUsage);
    }
  }
  auto store = OpenStoreFromEnv();
  if (!store.ok()) return Fail("gc: " + store.status().message());
  auto r = (*store)->Gc(age, dry_run);
  if (!r.ok()) return Fail("gc: " + r.status().message());
  std::string line = "{\"removed\":" + std::to_string(r->removed) + ",\"freed_bytes\":" + std::to_string(r->freed_bytes) +
                     ",\"orphan_chunks\":" + std::to_string(r->orphan_chunks) +
                     ",\"storage_bytes\":" + std::to_string(r->storage_bytes) +
                     ",\"max_storage_bytes\":" + std::to_string(r->max_storage_bytes) + "}\n";
  Status st = WriteStdout(line);
  return st.ok() ? 0 : Fail("write stdout: " + st.message());
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::fprintf(stderr, "usage: %s\n", kUsage);
    return 0;
  }
  std::string cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (cmd == "compress") return CmdCompress(rest);
  if (cmd == "detect") return CmdDetect();
  if (cmd == "retrieve") return CmdRetrieve(rest);
  if (cmd == "stats") return CmdStats();
  if (cmd == "registry") {
    Status st = WriteStdout(CapabilityManifest() + "\n");
    return st.ok() ? 0 : Fail("registry: " + st.message());
  }
  if (cmd == "toon") return CmdToon(rest);
  if (cmd == "version") return CmdVersion(rest);
  if (cmd == "gc") return CmdGc(rest);
  std::fprintf(stderr, "unknown caveman-engine subcommand: %s\n", cmd.c_str());
  return 2;
}

}  // namespace
}  // namespace caveman

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // EPIPE becomes a write error with a message
  return caveman::Main(argc, argv);
}
