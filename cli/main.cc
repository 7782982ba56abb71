// caveman-engine: the command-line surface of §9, with the issue 9 additions (per-subcommand
// --help, --report / --format, --version).
//
// Arguments are parsed by CLI11, one parser per subcommand, so that each parse error can be
// mapped to the exact message of its subcommand. Every error is one "caveman-engine: ..." line
// on stderr (issue 17). Exit codes: 0 success (pass-through and store-failure pass-through
// included), 1 fatal error (stdout empty), 2 usage error (bad arguments, unknown subcommand,
// bad configuration file), 3 no marker map, 126/127 and the command's own for `run`.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/internal/config.h"
#include "cli/internal/gain.h"
#include "cli/internal/help_text.h"
#include "cli/internal/marker_format.h"
#include "cli/internal/mcp_server.h"
#include "cli/internal/report_format.h"
#include "cli/internal/run_command.h"
#include "cli/internal/store_migrate.h"
#include "cli/internal/store_command.h"
#include "caveman/version.h"
#include "compressors/manifest.h"
#include "compressors/registry.h"
#include "compressors/toon.h"
#include "engine/command_hints.h"
#include "caveman/engine/engine.h"
#include "store/background_store.h"
#include "store/ledger.h"
#include "caveman/store/store.h"
#include "caveman/stream/byte_io.h"
#include "stream/interval_marks.h"
#include "stream/json_writer.h"

namespace caveman {
namespace {

using internal::ReportFormat;

constexpr uint64_t kStdinLimit = 67108864;  // 64 MiB (§10)
constexpr int kExitUsage = 2;

// The configuration file, loaded by Main before a subcommand that uses it (config.h).
internal::Config g_config;

// A fatal error: "caveman-engine: MESSAGE" on stderr, exit 1.
int Fail(const std::string& message) {
  std::fprintf(stderr, "caveman-engine: %s\n", message.c_str());
  return 1;
}

// A usage error (bad arguments): as Fail, exit 2 (zstd, ripgrep and GNU tools use 2).
int Usage(const std::string& message) {
  Fail(message);
  return kExitUsage;
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

// The input of compress/detect/toon: FILE, or stdin for none or "-" (issue 17).
struct Input {
  int fd = STDIN_FILENO;
  std::string name = "stdin";  // for messages: "read stdin: E", "read build.log: E"
  ~Input() {
    if (fd != STDIN_FILENO) close(fd);
  }
};

// Opens `path` for reading. Returns false after printing the error (exit 1).
bool OpenInput(const std::string& path, Input* in, int* exit_code) {
  if (path.empty() || path == "-") return true;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *exit_code = Fail("cannot open " + path + ": " + std::strerror(errno));
    return false;
  }
  in->fd = fd;
  in->name = path;
  return true;
}

// -o/--output FILE: the output goes to a temporary file beside FILE, renamed over it only
// when the subcommand succeeds, so FILE is never left truncated or half-written; on failure
// the temporary file is removed and FILE is untouched. The file gets 0666 minus the umask,
// as a shell redirection would.
class OutputFile {
 public:
  ~OutputFile() { Discard(); }
  // Returns false after printing the error.
  bool Open(const std::string& path, int* exit_code) {
    path_ = path;
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    std::string tmpl = dir + "." + base + ".caveman-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    fd_ = mkostemp(buf.data(), O_CLOEXEC);
    if (fd_ < 0) {
      *exit_code = Fail("cannot create " + path + ": " + std::strerror(errno));
      return false;
    }
    temp_.assign(buf.data());
    const mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd_, 0666 & ~mask);
    return true;
  }
  int fd() const { return fd_; }
  // Renames the temporary file over FILE. Returns false after printing the error.
  bool Commit() {
    if (fd_ < 0) return true;
    const int fd = fd_;
    fd_ = -1;
    if (fsync(fd) != 0 || close(fd) != 0 || rename(temp_.c_str(), path_.c_str()) != 0) {
      Fail("write " + path_ + ": " + std::strerror(errno));
      unlink(temp_.c_str());
      return false;
    }
    return true;
  }
  void Discard() {
    if (fd_ < 0) return;
    close(fd_);
    fd_ = -1;
    unlink(temp_.c_str());
  }

 private:
  std::string path_, temp_;
  int fd_ = -1;
};

// The content types --type accepts: auto and every registered one (issue 17: an unknown type
// is a usage error, not a silent pass-through). Empty when `type` is valid, else the message.
std::string CheckType(std::string_view subcommand, const std::string& type) {
  if (type.empty() || type == "auto") return "";
  Registry registry;
  std::vector<std::string_view> types = registry.content_types();
  if (std::find(types.begin(), types.end(), type) != types.end()) return "";
  std::sort(types.begin(), types.end());
  std::string list = "auto";
  for (std::string_view t : types) list += ", " + std::string(t);
  return std::string(subcommand) + ": --type: unknown content type \"" + type + "\" (valid: " + list + ")";
}

// One ledger row for this invocation (issue 17). Never changes the outcome: a ledger that
// cannot be opened or written is ignored.
void RecordInLedger(RecoveryStore& store, const CompressResult& r, const std::string& command) {
  // On the store's own connection when it is SQLite (no second open); else by path.
  auto ledger = OpenLedgerOn(store);
  if (!ledger.ok()) {
    auto options = StoreOptions::FromEnv();
    if (!options.ok()) return;
    ledger = OpenLedger(options->path, /*read_only=*/false);
  }
  if (!ledger.ok()) return;
  LedgerEntry e;
  e.unix_time = static_cast<int64_t>(std::time(nullptr));
  e.content_type = r.content_type;
  e.command = command;
  e.tokens_before = r.tokens_before;
  e.tokens_after = r.passed_through() ? r.tokens_before : r.tokens_after;
  e.handle = !r.recovery_handle.empty() ? r.recovery_handle : r.partial_record;
  (void)(*ledger)->Append(e);
}

// When the view went to a terminal, the line that tells its reader (a person, or a model
// driving a pty) where the original is: the exact retrieve command (docs/DECISIONS.md,
// "Where the model finds the handle"). Nothing for a pass-through.
void WriteTerminalHandleLine(const CompressResult& r, TrackedSink& out, int out_fd = STDOUT_FILENO) {
  if (out_fd != STDOUT_FILENO || !IsTerminal(STDOUT_FILENO) || out.failed) return;
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

// Reads the input up to the 64 MiB limit. Returns false after printing the error.
bool ReadInput(const Input& input, std::string* out, int* exit_code) {
  auto in = NewFdSource(input.fd);
  Status st = ReadAll(*in, out, kStdinLimit);
  if (st.ok()) return true;
  if (st.code() == StatusCode::kResourceExhausted) {
    *exit_code = Fail("read " + input.name + ": cave_input_too_large: " + input.name + " exceeds 67108864 bytes");
  } else {
    *exit_code = Fail("read " + input.name + ": " + st.message());
  }
  return false;
}

Status WriteStdout(std::string_view data) { return NewFdSink(STDOUT_FILENO)->Write(data); }

Result<std::unique_ptr<RecoveryStore>> OpenStoreFromEnv(bool read_only = false) {
  CAVEMAN_ASSIGN_OR_RETURN(StoreOptions so, StoreOptions::FromEnv());
  so.read_only = read_only;
  return OpenRecoveryStore(so);
}

Status WriteHelp(std::string_view name) { return WriteStdout(internal::FindSubcommand(name)->help); }

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

// A share of tokens in [0, 1) ("0.2"); nullopt otherwise.
std::optional<double> ParseShare(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (*end != '\0' || errno != 0 || !(v >= 0 && v < 1)) return std::nullopt;
  return v;
}

// Applies the minimum savings and the never-compress list (issue 17), precedence flag >
// environment > file > default. Returns the exit status of an error (after printing it):
// a bad flag is a usage error (2), a bad CAVEMAN_MIN_SAVINGS a fatal one (1), as for
// --report and CAVEMAN_REPORT.
std::optional<int> ApplyCompressConfig(std::string_view subcommand, const CLI::Option* min_opt,
                                       const std::string& min_flag, CompressOptions* o) {
  const std::string sub(subcommand);
  o->never_types = g_config.never_types;
  if (min_opt->count() > 0) {
    std::optional<double> v = ParseShare(min_flag);
    if (!v) return Usage(sub + ": --min-savings: expected a number from 0 to below 1, got '" + min_flag + "'");
    o->min_savings = *v;
  } else if (std::string env(Env("CAVEMAN_MIN_SAVINGS")); !env.empty()) {
    std::optional<double> v = ParseShare(env);
    if (!v) return Fail(sub + ": CAVEMAN_MIN_SAVINGS: expected a number from 0 to below 1, got '" + env + "'");
    o->min_savings = *v;
  } else if (g_config.min_savings) {
    o->min_savings = *g_config.min_savings;
  }
  return std::nullopt;
}

int CmdCompress(const std::vector<std::string>& args) {
  constexpr const char* kCompressUsage =
      "usage: caveman-engine compress [--type <content-type>] [--query <text>] [-o FILE] [-q] [FILE]";
  CompressOptions o;
  o.mode = Mode::kCompress;
  o.max_input_bytes = kStdinLimit;
  std::string report_flag, output_path, min_flag;
  std::vector<std::string> files;
  bool follow = false, quiet = false;
  CLI::App app;
  app.add_option("file", files);
  app.add_option("--type", o.type)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--query", o.query)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  CLI::Option* report_opt =
      app.add_option("--report", report_flag)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  CLI::Option* output_opt =
      app.add_option("-o,--output", output_path)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  CLI::Option* min_opt =
      app.add_option("--min-savings", min_flag)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_flag("--follow", follow)->disable_flag_override();
  app.add_flag("-q,--quiet", quiet)->disable_flag_override();
  // CLI11 takes the word after an option as its value whatever it looks like, so a value can
  // only be missing when the option is the last argument.
  Parsed p = ParseArgs(app, "compress", args, [&] {
    if (!args.empty() && args.back() == "--report") {
      return Usage("compress: --report: missing format (use json or pretty)");
    }
    if (!args.empty() && (args.back() == "-o" || args.back() == "--output")) {
      return Usage("compress: " + args.back() + ": missing file name");
    }
    return Usage(kCompressUsage);
  });
  if (p.exit_code) return *p.exit_code;
  if (!p.extras.empty()) {
    return p.extras.front().starts_with("-") && p.extras.front() != "-"
               ? Usage("unknown compress flag: " + p.extras.front())
               : Usage(kCompressUsage);
  }
  if (files.size() > 1) return Usage("compress: one FILE at most (got " + std::to_string(files.size()) + ")");
  if (output_opt->count() > 0 && output_path.empty()) return Usage("compress: -o/--output: empty file name");
  if (std::string bad = CheckType("compress", o.type); !bad.empty()) return Usage(bad);
  if (o.type == "auto") o.type.clear();
  if (auto code = ApplyCompressConfig("compress", min_opt, min_flag, &o)) return *code;

  auto format = CompressReportFormat(report_opt, report_flag);
  if (!format.ok()) {
    return report_opt->count() > 0 ? Usage("compress: " + format.status().message())
                                   : Fail("compress: " + format.status().message());
  }
  Input input;
  int code = 0;
  if (!OpenInput(files.empty() ? "" : files.front(), &input, &code)) return code;
  CAVEMAN_MARK("arguments");
  // The store opens on a thread of its own while the input is read and compressed (issue 19:
  // ≈ 1.9 ms of a 4 KiB run); the record is framed meanwhile and stored at the commit. A store
  // that cannot be opened fails the commit, so a lossy result passes through with
  // cave_ccr_unavailable, as when the open failed first (UnavailableStore).
  auto store_options = StoreOptions::FromEnv();
  if (!store_options.ok()) return Fail(store_options.status().message());
  // -o's file first: OutputFile::Open reads the umask by setting it, which must not overlap
  // the store's files being created on the other thread.
  OutputFile file;
  const bool to_file = output_opt->count() > 0 && output_path != "-";
  if (to_file && !file.Open(output_path, &code)) return code;
  std::unique_ptr<OpeningStore> store = OpenRecoveryStoreInBackground(*std::move(store_options));
  CAVEMAN_MARK("store-open");
  const int out_fd = to_file ? file.fd() : STDOUT_FILENO;
  // A write error on the output file is reported with its name (stdout keeps FailWrite).
  auto fail_write = [&](const Status& st) {
    return to_file ? Fail("write " + output_path + ": " + st.message()) : FailWrite(st);
  };
  // -q: no report; errors still go to stderr.
  auto report = [&](const CompressResult& r) { return quiet || WriteReport(r, *format, "compress"); };
  // The exit status; with -o the file replaces FILE only on success.
  auto finish = [&](int status) {
    if (status != 0) return status;
    return !to_file || file.Commit() ? 0 : 1;
  };

  Engine engine(internal::CliEngineOptions(store.get()));
  auto raw_out = NewFdSink(out_fd);
  TrackedSink out(*raw_out);
  if (follow) {
    // No stdin limit on the line types; max_input_bytes bounds the batch fallback of the
    // others (they then pass through with cave_input_too_large).
    auto r = engine.CompressFollowFd(input.fd, o, out);
    if (!r.ok()) {
      if (out.failed) return fail_write(r.status());
      if (r.status().code() == StatusCode::kIoError) return Fail("read " + input.name + ": " + r.status().message());
      return Fail("compress: " + r.status().message());
    }
    if (RecoveryStore* st = store->Wait()) RecordInLedger(*st, *r, "");  // nullptr: not opened
    WriteTerminalHandleLine(*r, out, out_fd);
    // Lossy lines are already out: a report that cannot be written loses the handle, exit 1.
    if (!report(*r) && !r->passed_through()) return 1;
    return finish(FollowExitCode(*r));
  }
  auto raw_in = NewFdSource(input.fd);
  TrackedSource in(*raw_in);
  // The report (with the handle) is written before the view; if it cannot be, the original
  // passes through instead of a view nobody could undo (issue 15).
  bool reported = false;
  o.before_view = [&](const CompressResult& result) {
    CAVEMAN_MARK("report");
    reported = true;
    return report(result);
  };
  auto r = engine.Compress(in, o, out);
  if (!r.ok()) {
    const Status& st = r.status();
    if (st.code() == StatusCode::kResourceExhausted && !out.failed)
      return Fail("read " + input.name + ": " + st.message());
    if (in.failed) return Fail("read " + input.name + ": " + st.message());
    if (out.failed) return fail_write(st);
    return Fail("compress: " + st.message());
  }
  CAVEMAN_MARK("view");
  if (RecoveryStore* st = store->Wait()) RecordInLedger(*st, *r, "");  // nullptr: not opened
  CAVEMAN_MARK("ledger");
  WriteTerminalHandleLine(*r, out, out_fd);
  if (!reported) {
    // A streamed (over 64 MiB) view is already out: a lost report loses its handle, exit 1.
    if (!report(*r) && r->follow && !r->passed_through()) return 1;
  }
  // Over 64 MiB a line type streams like --follow, with the same exit rule.
  return finish(r->follow ? FollowExitCode(*r) : 0);
}

// `run [--type T] [--query Q] [--report json|pretty] -- CMD ARGS...`: CMD's stdout and stderr
// through one pipe into follow mode, the view on stdout, the report on stderr. Exit status:
// CMD's (128 + N when signal N killed it); 127/126 when it cannot be started; 2 for bad
// arguments; 1 when caveman-engine itself failed (see the run help).
int CmdRun(const std::vector<std::string>& args) {
  constexpr const char* kRunUsage =
      "usage: caveman-engine run [--type T|auto] [--query Q] [--report json|pretty] [-q] -- CMD...";
  auto usage_error = [](const std::string& message) { return Usage(message); };
  // Everything after the first "--" is the command, whatever it looks like.
  auto dashes = std::find(args.begin(), args.end(), "--");
  std::vector<std::string> flags(args.begin(), dashes);
  std::vector<std::string> command(dashes == args.end() ? dashes : dashes + 1, args.end());

  CompressOptions o;
  o.mode = Mode::kCompress;
  o.max_input_bytes = kStdinLimit;
  std::string report_flag, min_flag;
  bool quiet = false;
  CLI::App app;
  CLI::Option* type_opt = app.add_option("--type", o.type)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  CLI::Option* query_opt = app.add_option("--query", o.query)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  CLI::Option* report_opt =
      app.add_option("--report", report_flag)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  CLI::Option* min_opt =
      app.add_option("--min-savings", min_flag)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_flag("-q,--quiet", quiet)->disable_flag_override();
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
  if (std::string bad = CheckType("run", o.type); !bad.empty()) return usage_error(bad);
  if (auto code = ApplyCompressConfig("run", min_opt, min_flag, &o)) return *code;
  // The file's [run.PROGRAM] table, for the program the command runs (wrappers looked
  // through as for the type hint); --type and --query win over it.
  if (auto it = g_config.run.find(CommandProgram(command)); it != g_config.run.end()) {
    const internal::RunCommandConfig& rc = it->second;
    if (type_opt->count() == 0 && rc.type) {
      if (std::string bad = CheckType("run", *rc.type); !bad.empty()) {
        Fail("config " + g_config.file + ": [run." + it->first + "] type: " + bad.substr(bad.find("unknown")));
        return internal::kExitBadConfig;
      }
      o.type = *rc.type;
    }
    if (query_opt->count() == 0 && rc.query) o.query = *rc.query;
    if (rc.never) o.never_types = {"*"};
  }
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
  const bool stored = dynamic_cast<UnavailableStore*>(store->get()) == nullptr;

  // Started before the engine exists, so that no thread runs at fork time.
  auto child = internal::StartCommand(command);
  if (!child.ok()) {
    Fail("run: " + child.status().message());
    return internal::StartFailureExitCode(child.status());
  }
  Engine engine(internal::CliEngineOptions(store->get()));
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
  if (stored) RecordInLedger(**store, *r, o.command);
  WriteTerminalHandleLine(*r, out);
  const bool reported = quiet || WriteReport(*r, *format, "run");
  int own = !reported && !r->passed_through() ? 1 : FollowExitCode(*r);
  return own != 0 ? own : child_code;
}

// detect and registry take no arguments besides --help.
std::optional<int> NoArguments(std::string_view name, const std::vector<std::string>& args) {
  std::string usage = "usage: caveman-engine " + std::string(name);
  CLI::App app;
  Parsed p = ParseArgs(app, name, args, [&] { return Usage(usage); });
  if (p.exit_code) return p.exit_code;
  if (!p.extras.empty()) return Usage(usage);
  return std::nullopt;
}

// `detect [FILE]`: FILE or stdin ("-" or none), as compress.
int CmdDetect(const std::vector<std::string>& args) {
  constexpr const char* kDetectUsage = "usage: caveman-engine detect [FILE]";
  std::vector<std::string> files;
  CLI::App app;
  app.add_option("file", files);
  Parsed p = ParseArgs(app, "detect", args, [&] { return Usage(kDetectUsage); });
  if (p.exit_code) return *p.exit_code;
  if (!p.extras.empty() || files.size() > 1) return Usage(kDetectUsage);
  Input in;
  int code = 0;
  if (!OpenInput(files.empty() ? "" : files.front(), &in, &code)) return code;
  std::string input;
  if (!ReadInput(in, &input, &code)) return code;
  Engine engine(internal::CliEngineOptions(nullptr));
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
  if (!format.ok()) return Usage("retrieve: " + format.status().message());
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
  int kinds =
      (lines_opt->count() > 0) + (bytes_opt->count() > 0) + (pointer_opt->count() > 0) + (grep_opt->count() > 0);
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
    if (!args.empty() && args.back() == "--format")
      return Usage("retrieve: --format: missing format (use json or table)");
    for (const char* flag : {"--lines", "--bytes", "--json-pointer", "--grep", "-C", "--context"}) {
      if (!args.empty() && args.back() == flag) return Usage(std::string("retrieve: ") + flag + ": missing value");
    }
    return Usage(kRetrieveUsage);
  });
  if (p.exit_code) return *p.exit_code;
  RetrieveSliceOptions slice;
  std::string slice_error = SliceFromFlags(lines_opt, lines_flag, bytes_opt, bytes_flag, pointer_opt, pointer_flag,
                                           grep_opt, grep_flag, context_opt, context_flag, &slice);
  const bool sliced = slice.kind != RetrieveSliceOptions::Kind::kWhole;
  if (partials) {
    if (!p.extras.empty() || !words.empty() || sliced || !slice_error.empty()) return Usage(kRetrieveUsage);
    return ListPartials(format_opt, format_flag);
  }
  if (map || marker_opt->count() > 0) {
    if (!p.extras.empty() || words.size() != 1 || (map && marker_opt->count() > 0) ||
        (!map && format_opt->count() > 0) || sliced || !slice_error.empty()) {
      return Usage(kRetrieveMarkerUsage);
    }
    auto format = TableFormat(format_opt, format_flag);
    if (!format.ok()) return Usage("retrieve: " + format.status().message());
    if (words[0].starts_with("part_")) {
      Fail("retrieve: ccr: no marker map: a partial record has none (it is stored when the run completes)");
      return internal::kExitNoMarkerMap;
    }
    auto store = OpenStoreFromEnv();
    if (!store.ok()) return Fail(store.status().message());
    Engine engine(internal::CliEngineOptions(store->get()));
    auto raw_out = NewFdSink(STDOUT_FILENO);
    TrackedSink out(*raw_out);
    internal::MarkerCommandOutcome o = internal::RunMarkerCommand(
        engine, words[0], map ? std::nullopt : std::optional<uint64_t>(marker), *format, out);
    if (o.exit_code == 0) return 0;
    if (out.failed) return FailWrite(Status::IoError(o.error));  // quiet on EPIPE, as below
    Fail("retrieve: " + o.error);
    return o.exit_code;
  }
  if (!p.extras.empty() || words.empty() || words.size() > 2 || format_opt->count() > 0) return Usage(kRetrieveUsage);
  if (!slice_error.empty()) return Usage(slice_error);
  bool partial_id = words[0].starts_with("part_");
  if (partial_id && words.size() == 2) return Usage("retrieve: a partial record cannot be narrowed by a query");
  if (partial_id && !IsWellFormedPartialId(words[0])) return Fail("retrieve: ccr: partial record not found");
  auto store = OpenStoreFromEnv(/*read_only=*/true);
  if (!store.ok()) return Fail(store.status().message());
  Engine engine(internal::CliEngineOptions(store->get()));
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
    if (!args.empty() && args.back() == "--format") return Usage("stats: --format: missing format (use json or table)");
    return Usage(kStatsUsage);
  });
  if (p.exit_code) return *p.exit_code;
  if (!p.extras.empty()) return Usage(kStatsUsage);
  auto format = TableFormat(format_opt, format_flag);
  if (!format.ok()) return Usage("stats: " + format.status().message());

  auto store = OpenStoreFromEnv(/*read_only=*/true);
  if (!store.ok()) return Fail("stats: " + store.status().message());
  auto stats = (*store)->Stats();
  if (!stats.ok()) return Fail("stats: " + stats.status().message());
  Status st =
      WriteStdout(*format == ReportFormat::kPretty ? internal::StatsTable(*stats) : internal::StatsJson(*stats));
  return st.ok() ? 0 : FailWrite(st);
}

int CmdToon(const std::vector<std::string>& args) {
  constexpr const char* kToonUsage = "usage: caveman-engine toon encode|decode [FILE]";
  std::vector<std::string> words;  // verb [FILE]
  CLI::App app;
  app.add_option("words", words);
  Parsed p = ParseArgs(app, "toon", args, [&] { return Usage(kToonUsage); });
  if (p.exit_code) return *p.exit_code;
  const std::string verb = words.empty() ? "" : words[0];
  if (!p.extras.empty() || words.size() > 2 || (verb != "encode" && verb != "decode")) return Usage(kToonUsage);
  Input in;
  int code = 0;
  if (!OpenInput(words.size() == 2 ? words[1] : "", &in, &code)) return code;
  std::string input;
  if (!ReadInput(in, &input, &code)) return code;
  bool encode = verb == "encode";
  auto r = encode ? EncodeToon(input) : DecodeToon(input);
  if (!r.ok()) {
    return Fail(
        encode ? "toon encode: not losslessly TOON-encodable (invalid JSON, or nested/non-uniform shape); keep JSON"
               : "toon decode: not valid TOON");
  }
  Status st = WriteStdout(*r);
  return st.ok() ? 0 : FailWrite(st);
}

int PrintVersion(bool json) {
  std::string v = CAVEMAN_VERSION_STRING;
  std::string line = v + "\n";
  if (json) {
    JsonWriter w;
    w.BeginObject().Key("capabilities").BeginArray();
    for (const char* c : {"compress", "detect", "retrieve", "stats", "registry", "toon", "gc"}) w.String(c);
    w.EndArray().Key("schema").String("caveman.engine.version.v1").Key("version").String(v).EndObject();
    line = w.Take() + "\n";
  }
  Status st = WriteStdout(line);
  return st.ok() ? 0 : FailWrite(st);
}

int CmdVersion(const std::vector<std::string>& args) {
  constexpr const char* kVersionUsage = "usage: caveman-engine version [--json]";
  bool json = false;
  CLI::App app;
  app.add_flag("--json", json)->disable_flag_override();
  Parsed p = ParseArgs(app, "version", args, [&] { return Usage(kVersionUsage); });
  if (p.exit_code) return *p.exit_code;
  if (!p.extras.empty()) return Usage(kVersionUsage);
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
  Parsed p = ParseArgs(app, "gc", args, [&] { return Usage(kGcUsage); });
  if (p.exit_code) return *p.exit_code;
  if (!p.extras.empty()) return Usage(kGcUsage);
  std::optional<uint64_t> age;
  if (age_opt->count() > 0) {
    age = ParseDuration(older_than);
    if (!age) return Usage(kGcUsage);
  }
  auto store = OpenStoreFromEnv();
  if (!store.ok()) return Fail("gc: " + store.status().message());
  auto r = (*store)->Gc(age, dry_run);
  if (!r.ok()) return Fail("gc: " + r.status().message());
  // The savings ledger (issue 17) is pruned by the same age; the §9 output line is unchanged.
  if (age) {
    auto so = StoreOptions::FromEnv();
    auto ledger = so.ok() ? OpenLedger(so->path, /*read_only=*/false) : Result<std::unique_ptr<Ledger>>(so.status());
    if (ledger.ok()) {
      const int64_t now = static_cast<int64_t>(std::time(nullptr));
      const int64_t cutoff = *age > static_cast<uint64_t>(now) ? 0 : now - static_cast<int64_t>(*age);
      auto pruned = (*ledger)->Prune(cutoff, dry_run);
      if (!pruned.ok()) return Fail("gc: ledger: " + pruned.status().message());
    }
  }
  JsonWriter w;
  w.BeginObject().Key("removed").Uint(r->removed).Key("freed_bytes").Uint(r->freed_bytes);
  w.Key("orphan_chunks").Uint(r->orphan_chunks).Key("storage_bytes").Uint(r->storage_bytes);
  w.Key("max_storage_bytes").Uint(r->max_storage_bytes).EndObject();
  std::string line = w.Take() + "\n";
  Status st = WriteStdout(line);
  return st.ok() ? 0 : FailWrite(st);
}

// `store <verb>`: maintenance of the recovery store itself. One word picks the verb; each
// verb parses its own arguments (cli/internal/store_command.h, store_migrate.h).
int CmdStore(const std::vector<std::string>& args) {
  constexpr const char* kStoreUsage =
      "usage: caveman-engine store check | store salvage --to PATH | store migrate --from SRC --to DST";
  if (args.empty()) return Usage(kStoreUsage);
  if (args[0] == "-h" || args[0] == "--help") {
    Status st = WriteHelp("store");
    return st.ok() ? 0 : FailWrite(st);
  }
  // `store migrate` (issue 18) takes its source and destination from its arguments, not the
  // environment: cli/internal/store_migrate.h.
  if (args[0] == "migrate") return internal::RunStoreMigrate(std::vector<std::string>(args.begin() + 1, args.end()));
  using Verb = internal::StoreCommandOutcome (*)(const std::vector<std::string>&, const std::string&);
  Verb verb = args[0] == "check" ? internal::RunStoreCheck : args[0] == "salvage" ? internal::RunStoreSalvage : nullptr;
  if (verb == nullptr) return Usage(kStoreUsage);
  auto options = StoreOptions::FromEnv();
  if (!options.ok()) return Fail("store " + args[0] + ": " + options.status().message());
  internal::StoreCommandOutcome o = verb(std::vector<std::string>(args.begin() + 1, args.end()), options->path);
  if (!o.error.empty()) {
    Fail(o.error);
    return o.exit_code;
  }
  Status st = WriteStdout(o.out);
  return st.ok() ? o.exit_code : FailWrite(st);
}

// `gain [--since D] [--by type|command|day] [--format table|json]` (issue 17): the savings
// ledger, one row per compress/run invocation, summed.
int CmdGain(const std::vector<std::string>& args) {
  constexpr const char* kGainUsage =
      "usage: caveman-engine gain [--since <N>s|m|h|d] [--by type|command|day] [--format json|table]";
  std::string since_flag, by_flag, format_flag;
  CLI::App app;
  CLI::Option* since_opt = app.add_option("--since", since_flag)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  CLI::Option* by_opt = app.add_option("--by", by_flag)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  CLI::Option* format_opt =
      app.add_option("--format", format_flag)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  Parsed p = ParseArgs(app, "gain", args, [&] {
    if (!args.empty() && args.back() == "--format") return Usage("gain: --format: missing format (use json or table)");
    return Usage(kGainUsage);
  });
  if (p.exit_code) return *p.exit_code;
  if (!p.extras.empty()) return Usage(kGainUsage);
  std::optional<int64_t> since;
  if (since_opt->count() > 0) {
    std::optional<uint64_t> age = ParseDuration(since_flag);
    if (!age)
      return Usage("gain: --since: expected a positive integer followed by s, m, h or d, got '" + since_flag + "'");
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    since = *age > static_cast<uint64_t>(now) ? 0 : now - static_cast<int64_t>(*age);
  }
  internal::GainGroup group = internal::GainGroup::kNone;
  if (by_opt->count() > 0) {
    auto g = internal::ParseGainGroup(by_flag);
    if (!g) return Usage("gain: --by: unknown grouping \"" + by_flag + "\" (use type, command or day)");
    group = *g;
  }
  auto format = TableFormat(format_opt, format_flag);
  if (!format.ok()) return Usage("gain: " + format.status().message());

  // Opening the store creates or migrates the database, so the ledger table exists.
  auto store = OpenStoreFromEnv(/*read_only=*/true);
  if (!store.ok()) return Fail("gain: " + store.status().message());
  auto options = StoreOptions::FromEnv();
  if (!options.ok()) return Fail("gain: " + options.status().message());
  auto ledger = OpenLedger(options->path, /*read_only=*/true);
  if (!ledger.ok()) return Fail("gain: " + ledger.status().message());
  auto rows = (*ledger)->Since(since.value_or(0));
  if (!rows.ok()) return Fail("gain: " + rows.status().message());
  std::vector<internal::GainTotals> sums = internal::SumLedger(*rows, group);
  Status st = WriteStdout(*format == ReportFormat::kPretty ? internal::GainTable(sums, group)
                                                           : internal::GainJson(sums, group, since));
  return st.ok() ? 0 : FailWrite(st);
}

// `mcp`: the MCP server over stdin/stdout until end of input (cli/internal/mcp_server.h).
int CmdMcp(const std::vector<std::string>& args) {
  if (auto code = NoArguments("mcp", args)) return *code;
  if (IsTerminal(STDIN_FILENO)) {
    std::fprintf(stderr,
                 "caveman-engine mcp: MCP server on stdin/stdout (JSON-RPC 2.0, one message per line); "
                 "an MCP client starts it. End with Ctrl-D.\n");
  }
  internal::McpServerOptions options;
  options.version = CAVEMAN_VERSION_STRING;
  options.open_store = [] { return OpenStoreFromEnv(); };
  internal::McpServer server(std::move(options));
  return server.Serve(STDIN_FILENO, STDOUT_FILENO);
}

// Subcommands that read the configuration file (those that open the store or compress).
bool UsesConfig(std::string_view cmd) {
  for (std::string_view c : {"compress", "retrieve", "stats", "gc", "run", "mcp", "gain"}) {
    if (cmd == c) return true;
  }
  return false;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // No arguments: a usage error (zstd and ripgrep exit 2 too), the usage on stderr.
  if (args.empty()) {
    std::fprintf(stderr, "usage: %s\nRun `caveman-engine --help` for the subcommands.\n",
                 std::string(internal::kUsageLine).c_str());
    return kExitUsage;
  }
  if (args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    // `help <subcommand>` is the same as `<subcommand> --help`; asked-for help goes to stdout.
    if (args.size() == 2 && args[0] == "help") {
      if (internal::FindSubcommand(args[1]) == nullptr) {
        return Usage("help: unknown subcommand: " + args[1] + " (see caveman-engine --help)");
      }
      Status st = WriteHelp(args[1]);
      return st.ok() ? 0 : FailWrite(st);
    }
    if (args.size() > 1) return Usage("usage: caveman-engine --help | help <subcommand>");
    Status st = WriteStdout(internal::TopLevelHelp());
    return st.ok() ? 0 : FailWrite(st);
  }
  // GNU convention (help2man relies on it): --version / -V print what `version` prints.
  if (args.size() == 1 && (args[0] == "--version" || args[0] == "-V")) return PrintVersion(false);
  const std::string& cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (UsesConfig(cmd)) {
    // A subcommand's --help works whatever the file says.
    const bool help = std::find(rest.begin(), rest.end(), "--help") != rest.end() ||
                      std::find(rest.begin(), rest.end(), "-h") != rest.end();
    auto config = internal::LoadConfig();
    if (!config.ok() && !help) {
      Fail(config.status().message());
      return internal::kExitBadConfig;
    }
    if (config.ok()) {
      g_config = std::move(config).value();
      internal::ApplyStoreEnvironment(g_config);
    }
  }
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
  if (cmd == "gain") return CmdGain(rest);
  return Usage("unknown subcommand: " + cmd + " (see caveman-engine --help)");
}

}  // namespace
}  // namespace caveman

namespace {

// Ends the process after Main without destroying static objects (issue 19): Main has closed
// the store and the output file and joined its threads by then; what is left (the tokenizer's
// tables, pattern databases, caches) is memory the kernel frees anyway, and destroying it cost
// ≈ 1 ms of a 4 KiB `compress` (docs/PERFORMANCE.md). stdio buffers are flushed first. The
// sanitizer and fuzzing builds (LeakSanitizer runs at exit; also a sanitizer added through
// CMAKE_CXX_FLAGS) and the interval-marks build (its `exit` mark) return from main as usual.
int Exit(int code) {
#if !defined(CAVEMAN_KEEP_DEFAULT_NEW) && !defined(CAVEMAN_INTERVAL_MARKS) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
  std::fflush(nullptr);
  std::_Exit(code);
#endif
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CAVEMAN_MARK("main");
#ifdef CAVEMAN_INTERVAL_MARKS
  std::atexit([] { CAVEMAN_MARK("exit"); });
#endif
  std::signal(SIGPIPE, SIG_IGN);  // EPIPE becomes a write error (quiet: see FailWrite)
  caveman::internal::TuneProcessAllocator();
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
    return Exit(caveman::Main(argc, argv));
  } catch (const std::bad_alloc&) {
    std::fputs("caveman-engine: out of memory\n", stderr);
    return 1;
  }
}
