// caveman-engine: the command-line surface of §9, with the issue 9 additions (per-subcommand
// --help, --report / --format, --version).
//
// Arguments are parsed by CLI11, one parser per subcommand, so that each parse error can be
// mapped to the exact §9 message of its subcommand. Exit codes: 0 success (pass-through and
// store-failure pass-through included), 1 fatal error (message on stderr, stdout empty), 2
// unknown subcommand.
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/internal/help_text.h"
#include "cli/internal/marker_format.h"
#include "cli/internal/mcp_server.h"
#include "cli/internal/report_format.h"
#include "cli/internal/run_command.h"
#include "cli/internal/store_migrate.h"
#include "cli/internal/store_command.h"
#include "compressors/manifest.h"
#include "compressors/toon.h"
#include "engine/command_hints.h"
#include "engine/engine.h"
#include "store/store.h"
#include "stream/byte_io.h"

#ifndef CAVEMAN_VERSION_STRING
#define CAVEMAN_VERSION_STRING "dev"
#endif

namespace caveman {
namespace {

using internal::ReportFormat;

constexpr uint64_t kStdinLimit = 67108864;  // 64 MiB (§10)

int Fail(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  return 1;
}

bool IsTerminal(int fd);

// A failed write to stdout. A reader that went away (EPIPE: `| head`) ends the program
// quietly with exit 1, as ripgrep, zstd and jq do (no "Broken pipe" line); any other write
// error is reported.
int FailWrite(const Status& st) {
  if (st.message() == std::strerror(EPIPE)) return 1;
  return Fail("write stdout: " + st.message());
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
    if (!d.empty()) last = d.back();
    return st;
  }
  // Follow mode flushes after every emission; the fd sink writes through (write(2) per
  // Write), so this only passes the call on.
  Status Flush() override {
    Status st = s_.Flush();
    if (!st.ok()) failed = true;
    return st;
  }
  bool failed = false;
  char last = '\n';  // last byte written (LF before anything)

 private:
  ByteSink& s_;
};

// When the view went to a terminal, the line that tells its reader (a person, or a model
// driving a pty) where the original is: the exact retrieve command (docs/DECISIONS.md,
// "Where the model finds the handle"). Nothing for a pass-through.
void WriteTerminalHandleLine(const CompressResult& r, TrackedSink& out) {
  if (!IsTerminal(STDOUT_FILENO) || out.failed) return;
  std::string line = internal::TerminalHandleLine(r);
  if (line.empty()) return;
  if (out.last != '\n') line.insert(line.begin(), '\n');
  (void)out.Write(line);
}

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

Result<std::unique_ptr<RecoveryStore>> OpenStoreFromEnv(bool read_only = false) {
  CAVEMAN_ASSIGN_OR_RETURN(StoreOptions so, StoreOptions::FromEnv());
  so.read_only = read_only;
  return OpenRecoveryStore(so);
}

Status WriteHelp(std::string_view name) {
  return WriteStdout(internal::FindSubcommand(name)->help);
}

// What ParseArgs leaves for the subcommand: stop with `exit_code`, or go on with the
// arguments CLI11 did not recognise.
struct Parsed {
  std::optional<int> exit_code;
  std::vector<std::string> extras;
};

// Runs CLI11 over the arguments after the subcommand name. -h/--help prints the subcommand's
// help on stdout (exit 0); any other CLI11 error goes to `on_error`, which prints the §9
// message and returns the exit code.
Parsed ParseArgs(CLI::App& app, std::string_view name, const std::vector<std::string>& args,
                 const std::function<int()>& on_error) {
  app.set_help_flag("-h,--help");
  // Unknown flags and surplus words become extras, so that each subcommand words the error
  // the way §9 wants (e.g. "unknown compress flag: X") instead of CLI11's message.
  app.allow_extras();
  // CLI11 wants the words in reverse order. It also rejects an empty inline value
  // ("--query="), which §9 gives a meaning (empty query = no query), so it is split into the
  // flag and an empty word.
  std::vector<std::string> reversed;
  for (auto it = args.rbegin(); it != args.rend(); ++it) {
    if (it->size() > 3 && it->starts_with("--") && it->find('=') == it->size() - 1) {
      reversed.emplace_back();
      reversed.push_back(it->substr(0, it->size() - 1));
    } else {
      reversed.push_back(*it);
    }
  }
  Parsed p;
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    Status st = WriteHelp(name);
    p.exit_code = st.ok() ? 0 : FailWrite(st);
    return p;
  } catch (const CLI::ParseError&) {
    p.exit_code = on_error();
    return p;
  }
  // "--" only ends the options; it is not an argument of its own.
  for (std::string& e : app.remaining()) {
    if (e != "--") p.extras.push_back(std::move(e));
  }
  return p;
}

bool IsTerminal(int fd) { return isatty(fd) == 1; }

std::string_view Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string_view() : std::string_view(v);
}

// --report, else CAVEMAN_REPORT, else pretty when stderr is a terminal (compress and run).
Result<ReportFormat> CompressReportFormat(const CLI::Option* report_opt, const std::string& report_flag) {
  return internal::ChooseReportFormat({
      .flag_name = "--report",
      .flag = report_opt->count() > 0 ? std::optional<std::string_view>(report_flag) : std::nullopt,
      .env_name = "CAVEMAN_REPORT",
      .env = Env("CAVEMAN_REPORT"),
      .is_terminal = IsTerminal(STDERR_FILENO),
      .pretty_name = "pretty",
  });
}

// --format json|table, else a table when stdout is a terminal (stats, retrieve --partials).
// CAVEMAN_REPORT is for the compress report only; these have no variable of their own.
Result<ReportFormat> TableFormat(const CLI::Option* format_opt, const std::string& format_flag) {
  return internal::ChooseReportFormat({
      .flag_name = "--format",
      .flag = format_opt->count() > 0 ? std::optional<std::string_view>(format_flag) : std::nullopt,
      .is_terminal = IsTerminal(STDOUT_FILENO),
      .pretty_name = "table",
  });
}

// The store compress writes to. Invalid settings are fatal; a store that cannot be opened is
// not: compress then passes lossy results through with cave_ccr_unavailable.
Result<std::unique_ptr<RecoveryStore>> OpenStoreForCompress() {
  CAVEMAN_ASSIGN_OR_RETURN(StoreOptions options, StoreOptions::FromEnv());
  auto opened = OpenRecoveryStore(options);
  if (opened.ok()) return opened;
  return std::unique_ptr<RecoveryStore>(std::make_unique<UnavailableStore>(opened.status()));
}

// Whether the whole report reached stderr (stderr is unbuffered; fflush catches the rest).
bool WriteReport(const CompressResult& r, ReportFormat format, std::string_view subcommand) {
  std::string report = format == ReportFormat::kPretty ? internal::PrettyReport(r, subcommand) : r.ReportJson() + "\n";
  const size_t n = std::fwrite(report.data(), 1, report.size(), stderr);
  return n == report.size() && std::fflush(stderr) == 0 && !std::ferror(stderr);
}

// Follow mode must fail visibly when lossy lines were emitted but the record holding their
// original could not be finalised (§1.4): the report's error says why, the partial record
// keeps what was stored.
int FollowExitCode(const CompressResult& r) { return !r.partial_record.empty() && !r.error.empty() ? 1 : 0; }

int CmdCompress(const std::vector<std::string>& args) {
  constexpr const char* kCompressUsage = "usage: caveman-engine compress [--type <content-type>] [--query <text>]";
  CompressOptions o;
  o.mode = Mode::kCompress;
  o.max_input_bytes = kStdinLimit;
  std::string report_flag;
  bool follow = false;
  CLI::App app;
  app.add_option("--type", o.type)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--query", o.query)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  CLI::Option* report_opt =
      app.add_option("--report", report_flag)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_flag("--follow", follow)->disable_flag_override();
  // CLI11 takes the word after an option as its value whatever it looks like, so a value can
  // only be missing when the option is the last argument.
  Parsed p = ParseArgs(app, "compress", args, [&] {
    if (!args.empty() && args.back() == "--report") {
      return Fail("compress: --report: missing format (use json or pretty)");
    }
    return Fail(kCompressUsage);
  });
  if (p.exit_code) return *p.exit_code;
  if (!p.extras.empty()) return Fail("unknown compress flag: " + p.extras.front());
  if (o.type == "auto") o.type.clear();

  auto format = CompressReportFormat(report_opt, report_flag);
  if (!format.ok()) return Fail("compress: " + format.status().message());
  auto store = OpenStoreForCompress();
  if (!store.ok()) return Fail(store.status().message());

  Engine engine(EngineOptions{.store = store->get()});
  auto raw_out = NewFdSink(STDOUT_FILENO);
  TrackedSink out(*raw_out);
  if (follow) {
    // No stdin limit on the line types; max_input_bytes bounds the batch fallback of the
    // others (they then pass through with cave_input_too_large).
    auto r = engine.CompressFollowFd(STDIN_FILENO, o, out);
    if (!r.ok()) {
      if (out.failed) return FailWrite(r.status());
      if (r.status().code() == StatusCode::kIoError) return Fail("read stdin: " + r.status().message());
      return Fail("compress: " + r.status().message());
    }
    WriteTerminalHandleLine(*r, out);
    // Lossy lines are already out: a report that cannot be written loses the handle, exit 1.
    if (!WriteReport(*r, *format, "compress") && !r->passed_through()) return 1;
    return FollowExitCode(*r);
  }
  auto raw_in = NewFdSource(STDIN_FILENO);
  TrackedSource in(*raw_in);
  // The report (with the handle) is written before the view; if it cannot be, the original
  // passes through instead of a view nobody could undo (issue 15).
  bool reported = false;
  o.before_view = [&](const CompressResult& result) {
    reported = true;
    return WriteReport(result, *format, "compress");
  };
  auto r = engine.Compress(in, o, out);
  if (!r.ok()) {
    const Status& st = r.status();
    if (st.code() == StatusCode::kResourceExhausted && !out.failed) return Fail("read stdin: " + st.message());
    if (in.failed) return Fail("read stdin: " + st.message());
    if (out.failed) return FailWrite(st);
    return Fail("compress: " + st.message());
  }
  WriteTerminalHandleLine(*r, out);
  if (!reported) {
    // A streamed (over 64 MiB) view is already out: a lost report loses its handle, exit 1.
    if (!WriteReport(*r, *format, "compress") && r->follow && !r->passed_through()) return 1;
  }
  // Over 64 MiB a line type streams like --follow, with the same exit rule.
  return r->follow ? FollowExitCode(*r) : 0;
}

// `run [--type T] [--query Q] [--report json|pretty] -- CMD ARGS...`: CMD's stdout and stderr
// through one pipe into follow mode, the view on stdout, the report on stderr. Exit status:
// CMD's (128 + N when signal N killed it); 127/126 when it cannot be started; 2 for bad
// arguments; 1 when caveman-engine itself failed (see the run help).
int CmdRun(const std::vector<std::string>& args) {
  constexpr int kUsageError = 2;
  constexpr const char* kRunUsage = "usage: caveman-engine run [--type T|auto] [--query Q] [--report json|pretty] -- CMD...";
  auto usage_error = [](const std::string& message) {
    std::fprintf(stderr, "%s\n", message.c_str());
    return kUsageError;
  };
  // Everything after the first "--" is the command, whatever it looks like.
  auto dashes = std::find(args.begin(), args.end(), "--");
  std::vector<std::string> flags(args.begin(), dashes);
  std::vector<std::string> command(dashes == args.end() ? dashes : dashes + 1, args.end());

  CompressOptions o;
  o.mode = Mode::kCompress;
  o.max_input_bytes = kStdinLimit;
  std::string report_flag;
  CLI::App app;
  app.add_option("--type", o.type)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--query", o.query)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  CLI::Option* report_opt =
      app.add_option("--report", report_flag)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  Parsed p = ParseArgs(app, "run", flags, [&] {
    if (!flags.empty() && flags.back() == "--report") {
      return usage_error("run: --report: missing format (use json or pretty)");
    }
    return usage_error(kRunUsage);
  });
  if (p.exit_code) return *p.exit_code;
  if (!p.extras.empty()) {
    return usage_error(p.extras.front().starts_with("-") ? "unknown run flag: " + p.extras.front() : kRunUsage);
  }
  if (command.empty()) return usage_error(kRunUsage);
  if (o.type == "auto") o.type.clear();
  o.command = FormatCommandLine(command);
  if (o.type.empty()) o.type_hint = HintForCommand(command);

  auto format = CompressReportFormat(report_opt, report_flag);
  if (!format.ok()) {
    return report_opt->count() > 0 ? usage_error("run: " + format.status().message())
                                   : Fail("run: " + format.status().message());
  }
  auto store = OpenStoreForCompress();
  if (!store.ok()) return Fail(store.status().message());

  // Started before the engine exists, so that no thread runs at fork time.
  auto child = internal::StartCommand(command);
  if (!child.ok()) {
    std::fprintf(stderr, "caveman-engine run: %s\n", child.status().message().c_str());
    return internal::StartFailureExitCode(child.status());
  }
  Engine engine(EngineOptions{.store = store->get()});
  auto raw_out = NewFdSink(STDOUT_FILENO);
  TrackedSink out(*raw_out);
  auto r = engine.CompressFollowFd(child->output_fd(), o, out);
  // Finish closes our end first: if the engine stopped early (stdout gone), the command gets
  // EPIPE/SIGPIPE instead of blocking on a full pipe.
  int child_code = child->Finish();
  if (!r.ok()) {
    if (out.failed) return FailWrite(r.status());
    return Fail("run: " + r.status().message());
  }
  WriteTerminalHandleLine(*r, out);
  const bool reported = WriteReport(*r, *format, "run");
  int own = !reported && !r->passed_through() ? 1 : FollowExitCode(*r);
  return own != 0 ? own : child_code;
}

// detect and registry take no arguments besides --help.
std::optional<int> NoArguments(std::string_view name, const std::vector<std::string>& args) {
  std::string usage = "usage: caveman-engine " + std::string(name);
  CLI::App app;
  Parsed p = ParseArgs(app, name, args, [&] { return Fail(usage); });
  if (p.exit_code) return p.exit_code;
  if (!p.extras.empty()) return Fail(usage);
  return std::nullopt;
}

int CmdDetect(const std::vector<std::string>& args) {
  if (auto code = NoArguments("detect", args)) return *code;
  std::string input;
  int code = 0;
  if (!ReadStdin(&input, &code)) return code;
  Engine engine;
  Status st = WriteStdout(engine.Detect(input) + "\n");
  return st.ok() ? 0 : FailWrite(st);
}

int CmdRegistry(const std::vector<std::string>& args) {
  if (auto code = NoArguments("registry", args)) return *code;
  Status st = WriteStdout(CapabilityManifest() + "\n");
  return st.ok() ? 0 : Fail("registry: " + st.message());
}

// `retrieve --partials [--format json|table]`: the partial records (follow mode), oldest
// first; one JSON object per line, or a table (default on a terminal).
int ListPartials(const CLI::Option* format_opt, const std::string& format_flag) {
  auto format = TableFormat(format_opt, format_flag);
  if (!format.ok()) return Fail("retrieve: " + format.status().message());
  auto store = OpenStoreFromEnv(/*read_only=*/true);
  if (!store.ok()) return Fail(store.status().message());
  auto partials = (*store)->ListPartials();
  if (!partials.ok()) return Fail("retrieve: " + partials.status().message());
  std::string text;
  if (*format == ReportFormat::kPretty) {
    text = internal::PartialsTable(*partials);
  } else {
    for (const PartialInfo& info : *partials) text += internal::PartialJson(info) + "\n";
  }
  Status st = WriteStdout(text);
  return st.ok() ? 0 : FailWrite(st);
}

// Collects the slice flags of retrieve (issue 14) into RetrieveSliceOptions. Returns the
// error message, or empty.
std::string SliceFromFlags(const CLI::Option* lines_opt, const std::string& lines, const CLI::Option* bytes_opt,
                           const std::string& bytes, const CLI::Option* pointer_opt, const std::string& pointer,
                           const CLI::Option* grep_opt, const std::string& grep, const CLI::Option* context_opt,
                           const std::string& context, RetrieveSliceOptions* slice) {
  using Kind = RetrieveSliceOptions::Kind;
  int kinds = (lines_opt->count() > 0) + (bytes_opt->count() > 0) + (pointer_opt->count() > 0) + (grep_opt->count() > 0);
  if (kinds > 1) return "retrieve: use only one of --lines, --bytes, --json-pointer, --grep";
  if (context_opt->count() > 0 && grep_opt->count() == 0) return "retrieve: -C/--context needs --grep";
  if (lines_opt->count() > 0) {
    Status st = ParseSliceRange(lines, Kind::kLines, slice);
    if (!st.ok()) return "retrieve: --lines: " + st.message();
  } else if (bytes_opt->count() > 0) {
    Status st = ParseSliceRange(bytes, Kind::kBytes, slice);
    if (!st.ok()) return "retrieve: --bytes: " + st.message();
  } else if (pointer_opt->count() > 0) {
    slice->kind = Kind::kJsonPointer;
    slice->json_pointer = pointer;
  } else if (grep_opt->count() > 0) {
    slice->kind = Kind::kGrep;
    slice->grep = grep;
    if (context_opt->count() > 0) {
      uint64_t n = 0;
      bool ok = !context.empty() && context.size() <= 9 &&
                std::all_of(context.begin(), context.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (ok) n = std::stoull(context);
      if (!ok) return "retrieve: -C/--context: expected a number of lines (0-999999999), got '" + context + "'";
      slice->context = n;
    }
  }
  return "";
}

int CmdRetrieve(const std::vector<std::string>& args) {
  constexpr const char* kRetrieveUsage = "usage: caveman-engine retrieve <handle> [query]";
  constexpr const char* kRetrieveMarkerUsage =
      "usage: caveman-engine retrieve <handle> --marker K | --map [--format json|table]";
  std::vector<std::string> words;
  bool partials = false;
  std::string format_flag, lines_flag, bytes_flag, pointer_flag, grep_flag, context_flag;
  CLI::App app;
  app.add_option("words", words);
  app.add_flag("--partials", partials)->disable_flag_override();
  // Marker maps (issue 14): cli/internal/marker_format.
  bool map = false;
  uint64_t marker = 0;
  app.add_flag("--map", map)->disable_flag_override();
  CLI::Option* marker_opt = app.add_option("--marker", marker)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  CLI::Option* format_opt =
      app.add_option("--format", format_flag)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  CLI::Option* lines_opt = app.add_option("--lines", lines_flag)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  CLI::Option* bytes_opt = app.add_option("--bytes", bytes_flag)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  CLI::Option* pointer_opt =
      app.add_option("--json-pointer", pointer_flag)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  CLI::Option* grep_opt = app.add_option("--grep", grep_flag)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  CLI::Option* context_opt =
      app.add_option("-C,--context", context_flag)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  Parsed p = ParseArgs(app, "retrieve", args, [&] {
    if (!args.empty() && args.back() == "--format") return Fail("retrieve: --format: missing format (use json or table)");
    for (const char* flag : {"--lines", "--bytes", "--json-pointer", "--grep", "-C", "--context"}) {
      if (!args.empty() && args.back() == flag) return Fail(std::string("retrieve: ") + flag + ": missing value");
    }
    return Fail(kRetrieveUsage);
  });
  if (p.exit_code) return *p.exit_code;
  RetrieveSliceOptions slice;
  std::string slice_error = SliceFromFlags(lines_opt, lines_flag, bytes_opt, bytes_flag, pointer_opt, pointer_flag, grep_opt,
                                           grep_flag, context_opt, context_flag, &slice);
  const bool sliced = slice.kind != RetrieveSliceOptions::Kind::kWhole;
  if (partials) {
    if (!p.extras.empty() || !words.empty() || sliced || !slice_error.empty()) return Fail(kRetrieveUsage);
    return ListPartials(format_opt, format_flag);
  }
  if (map || marker_opt->count() > 0) {
    if (!p.extras.empty() || words.size() != 1 || (map && marker_opt->count() > 0) ||
        (!map && format_opt->count() > 0) || sliced || !slice_error.empty()) {
      return Fail(kRetrieveMarkerUsage);
    }
    auto format = TableFormat(format_opt, format_flag);
    if (!format.ok()) return Fail("retrieve: " + format.status().message());
    if (words[0].starts_with("part_")) {
      Fail("retrieve: ccr: no marker map: a partial record has none (it is stored when the run completes)");
      return internal::kExitNoMarkerMap;
    }
    auto store = OpenStoreFromEnv();
    if (!store.ok()) return Fail(store.status().message());
    Engine engine(EngineOptions{.store = store->get()});
    auto raw_out = NewFdSink(STDOUT_FILENO);
    TrackedSink out(*raw_out);
    internal::MarkerCommandOutcome o = internal::RunMarkerCommand(
        engine, words[0], map ? std::nullopt : std::optional<uint64_t>(marker), *format, out);
    if (o.exit_code == 0) return 0;
    Fail((out.failed ? "write stdout: " : "retrieve: ") + o.error);
    return out.failed ? 1 : o.exit_code;
  }
  if (!p.extras.empty() || words.empty() || words.size() > 2 || format_opt->count() > 0) return Fail(kRetrieveUsage);
  if (!slice_error.empty()) return Fail(slice_error);
  bool partial_id = words[0].starts_with("part_");
  if (partial_id && words.size() == 2) return Fail("retrieve: a partial record cannot be narrowed by a query");
  if (partial_id && !IsWellFormedPartialId(words[0])) return Fail("retrieve: ccr: partial record not found");
  auto store = OpenStoreFromEnv(/*read_only=*/true);
  if (!store.ok()) return Fail(store.status().message());
  Engine engine(EngineOptions{.store = store->get()});
  auto raw_out = NewFdSink(STDOUT_FILENO);
  TrackedSink out(*raw_out);
  if (words.size() == 2) slice.query = words[1];
  Status st = words.size() == 2 && !sliced ? engine.RetrieveQuery(words[0], words[1], out)
                                           : engine.RetrieveSlice(words[0], slice, out);
  if (st.ok()) return 0;
  if (out.failed) return FailWrite(st);
  return Fail("retrieve: " + st.message());
}

int CmdStats(const std::vector<std::string>& args) {
  constexpr const char* kStatsUsage = "usage: caveman-engine stats [--format json|table]";
  std::string format_flag;
  CLI::App app;
  CLI::Option* format_opt =
      app.add_option("--format", format_flag)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  Parsed p = ParseArgs(app, "stats", args, [&] {
    if (!args.empty() && args.back() == "--format") return Fail("stats: --format: missing format (use json or table)");
    return Fail(kStatsUsage);
  });
  if (p.exit_code) return *p.exit_code;
  if (!p.extras.empty()) return Fail(kStatsUsage);
  auto format = TableFormat(format_opt, format_flag);
  if (!format.ok()) return Fail("stats: " + format.status().message());

  auto store = OpenStoreFromEnv(/*read_only=*/true);
  if (!store.ok()) return Fail("stats: " + store.status().message());
  auto stats = (*store)->Stats();
  if (!stats.ok()) return Fail("stats: " + stats.status().message());
  Status st = WriteStdout(*format == ReportFormat::kPretty ? internal::StatsTable(*stats) : internal::StatsJson(*stats));
  return st.ok() ? 0 : FailWrite(st);
}

int CmdToon(const std::vector<std::string>& args) {
  constexpr const char* kToonUsage = "usage: caveman-engine toon encode|decode";
  std::string verb;
  CLI::App app;
  app.add_option("verb", verb);
  Parsed p = ParseArgs(app, "toon", args, [&] { return Fail(kToonUsage); });
  if (p.exit_code) return *p.exit_code;
  if (!p.extras.empty() || (verb != "encode" && verb != "decode")) return Fail(kToonUsage);
  std::string input;
  int code = 0;
  if (!ReadStdin(&input, &code)) return code;
  bool encode = verb == "encode";
  auto r = encode ? EncodeToon(input) : DecodeToon(input);
  if (!r.ok()) {
    return Fail(encode ? "toon encode: not losslessly TOON-encodable (invalid JSON, or nested/non-uniform shape); keep JSON"
                       : "toon decode: not valid TOON");
  }
  Status st = WriteStdout(*r);
  return st.ok() ? 0 : FailWrite(st);
}

int PrintVersion(bool json) {
  std::string v = CAVEMAN_VERSION_STRING;
  std::string line = v + "\n";
  if (json) {
    line = "{\"capabilities\":[\"compress\",\"detect\",\"retrieve\",\"stats\",\"registry\",\"toon\",\"gc\"],"
           "\"schema\":\"caveman.engine.version.v1\",\"version\":" + JsonQuote(v) + "}\n";
  }
  Status st = WriteStdout(line);
  return st.ok() ? 0 : FailWrite(st);
}

int CmdVersion(const std::vector<std::string>& args) {
  constexpr const char* kVersionUsage = "usage: caveman-engine version [--json]";
  bool json = false;
  CLI::App app;
  app.add_flag("--json", json)->disable_flag_override();
  Parsed p = ParseArgs(app, "version", args, [&] { return Fail(kVersionUsage); });
  if (p.exit_code) return *p.exit_code;
  if (!p.extras.empty()) return Fail(kVersionUsage);
  return PrintVersion(json);
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
  constexpr const char* kGcUsage = "usage: caveman-engine gc [--older-than <N>s|m|h|d] [--dry-run]";
  std::string older_than;
  bool dry_run = false;
  CLI::App app;
  CLI::Option* age_opt =
      app.add_option("--older-than", older_than)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_flag("--dry-run", dry_run)->disable_flag_override();
  Parsed p = ParseArgs(app, "gc", args, [&] { return Fail(kGcUsage); });
  if (p.exit_code) return *p.exit_code;
  if (!p.extras.empty()) return Fail(kGcUsage);
  std::optional<uint64_t> age;
  if (age_opt->count() > 0) {
    age = ParseDuration(older_than);
    if (!age) return Fail(kGcUsage);
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
  return st.ok() ? 0 : FailWrite(st);
}

// `store <verb>`: maintenance of the recovery store itself. One word picks the verb; each
// verb parses its own arguments (cli/internal/store_command.h, store_migrate.h).
int CmdStore(const std::vector<std::string>& args) {
  constexpr const char* kStoreUsage =
      "usage: caveman-engine store check | store salvage --to PATH | store migrate --from SRC --to DST";
  if (args.empty()) return Fail(kStoreUsage);
  if (args[0] == "-h" || args[0] == "--help") {
    Status st = WriteHelp("store");
    return st.ok() ? 0 : FailWrite(st);
  }
  // `store migrate` (issue 18) takes its source and destination from its arguments, not the
  // environment: cli/internal/store_migrate.h.
  if (args[0] == "migrate") return internal::RunStoreMigrate(std::vector<std::string>(args.begin() + 1, args.end()));
  using Verb = internal::StoreCommandOutcome (*)(const std::vector<std::string>&, const std::string&);
  Verb verb = args[0] == "check" ? internal::RunStoreCheck : args[0] == "salvage" ? internal::RunStoreSalvage : nullptr;
  if (verb == nullptr) return Fail(kStoreUsage);
  auto options = StoreOptions::FromEnv();
  if (!options.ok()) return Fail("store " + args[0] + ": " + options.status().message());
  internal::StoreCommandOutcome o = verb(std::vector<std::string>(args.begin() + 1, args.end()), options->path);
  if (!o.error.empty()) return Fail(o.error);
  Status st = WriteStdout(o.out);
  return st.ok() ? o.exit_code : FailWrite(st);
}

// `mcp`: the MCP server over stdin/stdout until end of input (cli/internal/mcp_server.h).
int CmdMcp(const std::vector<std::string>& args) {
  if (auto code = NoArguments("mcp", args)) return *code;
  if (IsTerminal(STDIN_FILENO)) {
    std::fprintf(stderr, "caveman-engine mcp: MCP server on stdin/stdout (JSON-RPC 2.0, one message per line); "
                         "an MCP client starts it. End with Ctrl-D.\n");
  }
  internal::McpServerOptions options;
  options.version = CAVEMAN_VERSION_STRING;
  options.open_store = [] { return OpenStoreFromEnv(); };
  internal::McpServer server(std::move(options));
  return server.Serve(STDIN_FILENO, STDOUT_FILENO);
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    // `help <subcommand>` is the same as `<subcommand> --help`.
    if (args.size() == 2 && args[0] == "help" && internal::FindSubcommand(args[1]) != nullptr) {
      Status st = WriteHelp(args[1]);
      return st.ok() ? 0 : FailWrite(st);
    }
    std::string usage = internal::TopLevelHelp();
    std::fwrite(usage.data(), 1, usage.size(), stderr);
    return 0;
  }
  // GNU convention (help2man relies on it): --version prints what `version` prints.
  if (args.size() == 1 && args[0] == "--version") return PrintVersion(false);
  const std::string& cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (cmd == "compress") return CmdCompress(rest);
  if (cmd == "detect") return CmdDetect(rest);
  if (cmd == "retrieve") return CmdRetrieve(rest);
  if (cmd == "stats") return CmdStats(rest);
  if (cmd == "registry") return CmdRegistry(rest);
  if (cmd == "toon") return CmdToon(rest);
  if (cmd == "version") return CmdVersion(rest);
  if (cmd == "gc") return CmdGc(rest);
  if (cmd == "run") return CmdRun(rest);
  if (cmd == "mcp") return CmdMcp(rest);
  if (cmd == "store") return CmdStore(rest);
  std::fprintf(stderr, "unknown caveman-engine subcommand: %s\n", cmd.c_str());
  return 2;
}

}  // namespace
}  // namespace caveman

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // EPIPE becomes a write error (quiet: see FailWrite)
  // A standard descriptor closed at start (`<&-`, `>&-`, `2>&-`) must not be taken by the
  // next open() (the store's database would become "stdin"). Each is filled with /dev/null
  // opened the wrong way round, so reading stdin / writing stdout fails with EBADF exactly as
  // on the closed descriptor: "read stdin: Bad file descriptor", exit 1 (issue 15).
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      const int got = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
      if (got != fd && got >= 0) close(got);
    }
  }
  // Out of memory outside the pipeline's own pass-through (issue 15): a clear error, exit 1,
  // never an abort.
  try {
    return caveman::Main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fputs("caveman-engine: out of memory\n", stderr);
    return 1;
  }
}
