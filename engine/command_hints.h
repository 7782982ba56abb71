// Detection hints from the command that produced the output (`caveman-engine run`, issue 13).
//
// HowTo:
//   caveman::CompressOptions o;
//   o.command = caveman::FormatCommandLine(argv);    // "kubectl logs -f 'my pod'"
//   o.type_hint = caveman::HintForCommand(argv);     // "log"
//   engine.CompressFollowFd(pipe_fd, o, sink);
//
// The hint is a content type that wins over detection unless detection finds a structural
// type (json, html, diff, test-report); see CompressOptions::type_hint. It comes from a fixed
// table (CommandHintTable(), documented in docs/DECISIONS.md and `caveman-engine run --help`)
// looked up by the program's basename after wrappers such as `env`, `sudo`, `time`, `nice`,
// `timeout`, `npx`, `uv run`, `python -m` and a single simple command under `sh -c` are
// skipped. Commands whose output is JSON or of no typical shape get no hint ("").
//
// Thread-safety: pure functions over constant tables.
#ifndef CAVEMAN_ENGINE_COMMAND_HINTS_H_
#define CAVEMAN_ENGINE_COMMAND_HINTS_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace caveman {

// One row of the hint table. A row matches when the program is `program` (basename, version
// suffix such as "-12" or "3.11" ignored), its first positional words (options and their
// values skipped) start with `words` (space-separated; empty = any), and, when `flags` is not
// empty, one of its space-separated flags is among the arguments (`--flag` or `--flag=...`).
// The first matching row wins; a program without a matching row gets no hint.
struct CommandHint {
  std::string_view program;
  std::string_view words;
  std::string_view flags;
  std::string_view hint;  // a content type, or "" = no hint (detection decides)
};

// The table, in match order.
std::span<const CommandHint> CommandHintTable();

// The hint for the command `argv` (argv[0] = program): "log", "diff", "terminal", or "".
std::string HintForCommand(const std::vector<std::string>& argv);

// The program `argv` runs after the wrappers HintForCommand looks through, as its basename
// without a version suffix: {"sudo", "make", "-j8"} -> "make". "" when there is none. The
// CLI's configuration file keys its [run.PROGRAM] tables by it.
std::string CommandProgram(const std::vector<std::string>& argv);

// The words joined with spaces, each quoted for a POSIX shell when it needs it
// ({"sh", "-c", "echo a; b"} → "sh -c 'echo a; b'"), so the line can be pasted back.
std::string FormatCommandLine(const std::vector<std::string>& argv);

}  // namespace caveman

#endif  // CAVEMAN_ENGINE_COMMAND_HINTS_H_
