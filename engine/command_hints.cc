// The command → content-type hint table of `caveman-engine run` (issue 13). See
// engine/command_hints.h for the contract and docs/DECISIONS.md for why the rows are what they
// are. Everything here is data plus the few lines that walk it: wrappers are peeled off
// (kWrappers, `python -m`, one simple command under `sh -c`), then the first row of kHints
// that matches the program, its leading positional words and its flags gives the hint.
#include "engine/command_hints.h"

#include <algorithm>
#include <iterator>
#include <optional>

namespace caveman {
namespace {

constexpr std::string_view kLog = "log";
constexpr std::string_view kDiff = "diff";
constexpr std::string_view kTerminal = "terminal";
constexpr std::string_view kNone = "";

// Match order: the specific rows of a program before its catch-all row.
constexpr CommandHint kHints[] = {
    // Logs of running things.
    {"kubectl", "logs", "", kLog},
    {"kubectl", "", "", kNone},  // get/describe (-o json|yaml, tables): detection decides
    {"oc", "logs", "", kLog},
    {"oc", "", "", kNone},
    {"docker", "logs", "", kLog},
    {"docker", "compose logs", "", kLog},
    {"docker", "compose up", "", kLog},
    {"docker", "build", "", kLog},
    {"docker", "buildx build", "", kLog},
    {"docker", "pull", "", kTerminal},
    {"docker", "", "", kNone},  // inspect, ps --format json, ...
    {"docker-compose", "logs", "", kLog},
    {"docker-compose", "up", "", kLog},
    {"podman", "logs", "", kLog},
    {"journalctl", "", "", kLog},
    {"dmesg", "", "", kLog},
    {"tail", "", "-f -F --follow", kLog},
    {"gh", "run view", "--log --log-failed", kLog},
    {"gh", "", "", kNone},  // --json output, tables
    // Builds, tests, compilers, linters.
    {"make", "", "", kLog},
    {"gmake", "", "", kLog},
    {"ninja", "", "", kLog},
    {"meson", "", "", kLog},
    {"cmake", "", "--build", kLog},
    {"ctest", "", "", kLog},
    {"cargo", "install", "", kTerminal},
    {"cargo", "metadata", "", kNone},  // JSON
    {"cargo", "", "--message-format", kNone},
    {"cargo", "", "", kLog},
    {"go", "", "-json", kNone},  // JSON Lines
    {"go", "build", "", kLog},
    {"go", "test", "", kLog},
    {"go", "vet", "", kLog},
    {"go", "run", "", kLog},
    {"go", "generate", "", kLog},
    {"go", "install", "", kLog},
    {"go", "mod", "", kLog},
    {"npm", "", "--json", kNone},
    {"npm", "install", "", kTerminal},
    {"npm", "i", "", kTerminal},
    {"npm", "ci", "", kTerminal},
    {"npm", "add", "", kTerminal},
    {"npm", "update", "", kTerminal},
    {"npm", "", "", kLog},
    {"yarn", "", "--json", kNone},
    {"yarn", "install", "", kTerminal},
    {"yarn", "add", "", kTerminal},
    {"yarn", "upgrade", "", kTerminal},
    {"yarn", "", "", kLog},
    {"pnpm", "", "--json", kNone},
    {"pnpm", "install", "", kTerminal},
    {"pnpm", "i", "", kTerminal},
    {"pnpm", "add", "", kTerminal},
    {"pnpm", "update", "", kTerminal},
    {"pnpm", "", "", kLog},
    {"bun", "install", "", kTerminal},
    {"bun", "add", "", kTerminal},
    {"bun", "", "", kLog},
    {"mvn", "", "", kLog},
    {"mvnw", "", "", kLog},
    {"gradle", "", "", kLog},
    {"gradlew", "", "", kLog},
    {"ant", "", "", kLog},
    {"sbt", "", "", kLog},
    {"bazel", "", "", kLog},
    {"bazelisk", "", "", kLog},
    {"dotnet", "", "", kLog},
    {"xcodebuild", "", "", kLog},
    {"pytest", "", "", kLog},
    {"py.test", "", "", kLog},
    {"unittest", "", "", kLog},  // python -m unittest
    {"tox", "", "", kLog},
    {"nox", "", "", kLog},
    {"jest", "", "", kLog},
    {"vitest", "", "", kLog},
    {"mocha", "", "", kLog},
    {"rspec", "", "", kLog},
    {"phpunit", "", "", kLog},
    {"gcc", "", "", kLog},
    {"g++", "", "", kLog},
    {"cc", "", "", kLog},
    {"c++", "", "", kLog},
    {"clang", "", "", kLog},
    {"clang++", "", "", kLog},
    {"clang-tidy", "", "", kLog},
    {"rustc", "", "", kLog},
    {"javac", "", "", kLog},
    {"tsc", "", "", kLog},
    {"eslint", "", "", kLog},
    {"ruff", "", "", kLog},
    {"mypy", "", "", kLog},
    {"flake8", "", "", kLog},
    {"pylint", "", "", kLog},
    {"shellcheck", "", "", kLog},
    {"ansible-playbook", "", "", kLog},
    // Diffs.
    {"git", "diff", "", kDiff},
    {"git", "show", "", kDiff},
    {"git", "log", "-p --patch", kDiff},
    {"git", "stash show", "-p --patch", kDiff},
    {"git", "format-patch", "--stdout", kDiff},
    {"git", "clone", "", kTerminal},
    {"git", "fetch", "", kTerminal},
    {"git", "pull", "", kTerminal},
    {"git", "push", "", kTerminal},
    {"git", "", "", kNone},  // status, log, blame, ...
    {"diff", "", "", kDiff},
    // Installers: progress bars and carriage returns.
    {"pip", "install", "", kTerminal},
    {"pip", "download", "", kTerminal},
    {"pip", "", "", kNone},  // list --format=json, show, ...
    {"uv", "pip install", "", kTerminal},
    {"uv", "sync", "", kTerminal},
    {"uv", "add", "", kTerminal},
    {"uv", "", "", kNone},
    {"poetry", "install", "", kTerminal},
    {"poetry", "add", "", kTerminal},
    {"poetry", "update", "", kTerminal},
    {"conda", "install", "", kTerminal},
    {"conda", "create", "", kTerminal},
    {"conda", "update", "", kTerminal},
    {"mamba", "install", "", kTerminal},
    {"mamba", "create", "", kTerminal},
    {"apt-get", "", "", kTerminal},
    {"apt", "", "", kTerminal},
    {"dnf", "", "", kTerminal},
    {"yum", "", "", kTerminal},
    {"apk", "", "", kTerminal},
    {"pacman", "", "", kTerminal},
    {"zypper", "", "", kTerminal},
    {"brew", "install", "", kTerminal},
    {"brew", "upgrade", "", kTerminal},
    {"brew", "update", "", kTerminal},
    // JSON emitters and payload fetchers: detection decides.
    {"aws", "", "", kNone},
    {"gcloud", "", "", kNone},
    {"az", "", "", kNone},
    {"jq", "", "", kNone},
    {"yq", "", "", kNone},
    {"curl", "", "", kNone},
    {"wget", "", "", kNone},
};

// Options (of the program, before or between its subcommand words) that take the next word as
// their value, so that the value is not taken for a subcommand (`kubectl -n prod logs`).
struct ValueOptions {
  std::string_view program;
  std::string_view options;  // space-separated
};
constexpr ValueOptions kValueOptions[] = {
    {"kubectl", "-n --namespace --context --cluster --kubeconfig --user -s --server -l --selector -c --container"},
    {"oc", "-n --namespace --context --cluster --kubeconfig --user -s --server -l --selector -c --container"},
    {"docker",
     "-H --host --context -c --config -l --log-level -f --file -p --project-name --profile --env-file "
     "--project-directory"},
    {"docker-compose", "-f --file -p --project-name --profile --env-file --project-directory"},
    {"podman", "--connection --url --root --runroot"},
    {"gh", "-R --repo"},
    {"git", "-C -c --git-dir --work-tree --namespace"},
    {"go", "-C"},
    {"npm", "--prefix -w --workspace"},
    {"yarn", "--cwd"},
    {"pnpm", "-C --dir --filter -F"},
    {"pip", "--python --proxy --cache-dir --log --timeout --retries --cert --client-cert -i --index-url"},
    {"uv", "--directory --project --cache-dir --config-file"},
    {"conda", "-n --name -p --prefix"},
};

// Programs that run the rest of their arguments as a command: `sub` is a word that must follow
// them (`uv run`), `options` those of their options that take a value, `positionals` the
// words before the command (`timeout 5m make`). NAME=VALUE words and `--` are skipped too.
struct Wrapper {
  std::string_view name;
  std::string_view sub;
  std::string_view options;
  int positionals;
};
constexpr Wrapper kWrappers[] = {
    {"env", "", "-u --unset -C --chdir -S --split-string", 0},
    {"sudo", "",
     "-u --user -g --group -h --host -p --prompt -C --close-from -D --chdir -r --role -t --type "
     "-U --other-user -T --command-timeout",
     0},
    {"doas", "", "-u -C", 0},
    {"time", "", "-f --format -o --output", 0},
    {"nice", "", "-n --adjustment", 0},
    {"nohup", "", "", 0},
    {"ionice", "", "-c --class -n --classdata -p --pid -P --pgid -u --uid", 0},
    {"stdbuf", "", "-i --input -o --output -e --error", 0},
    {"timeout", "", "-s --signal -k --kill-after", 1},
    {"taskset", "", "", 1},
    {"command", "", "", 0},
    {"exec", "", "-a", 0},
    {"npx", "", "-p --package -c --call", 0},
    {"pnpx", "", "", 0},
    {"bunx", "", "-p --package", 0},
    {"uvx", "", "--from --with -p --python", 0},
    {"npm", "exec", "-p --package -c --call -w --workspace", 0},
    {"pnpm", "exec", "", 0},
    {"pnpm", "dlx", "", 0},
    {"yarn", "dlx", "", 0},
    {"yarn", "exec", "", 0},
    {"uv", "run",
     "--with -p --python --project --directory --extra --group --package --env-file "
     "--with-requirements --index",
     0},
    {"poetry", "run", "", 0},
    {"pipenv", "run", "", 0},
    {"pdm", "run", "", 0},
    {"hatch", "run", "", 0},
    {"rye", "run", "", 0},
    {"pipx", "run", "--spec", 0},
    {"conda", "run", "-n --name -p --prefix", 0},
    {"mamba", "run", "-n --name -p --prefix", 0},
    {"micromamba", "run", "-n --name -p --prefix", 0},
    {"bundle", "exec", "", 0},
    {"direnv", "exec", "", 1},
};

constexpr std::string_view kShells[] = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"};
constexpr std::string_view kPython = "python";
// Nesting bound for `sh -c 'sudo sh -c ...'`.
constexpr int kMaxDepth = 4;

using Args = std::span<const std::string>;

// Calls `f` on the space-separated words of `list` in order until it returns true; returns
// whether it did.
template <class F>
bool AnyWord(std::string_view list, F f) {
  while (!list.empty()) {
    size_t sp = list.find(' ');
    if (f(list.substr(0, sp))) return true;
    if (sp == std::string_view::npos) break;
    list.remove_prefix(sp + 1);
  }
  return false;
}

// Whether `word` is one of the space-separated words of `list`.
bool InList(std::string_view list, std::string_view word) {
  return AnyWord(list, [word](std::string_view w) { return w == word; });
}

bool IsKnown(std::string_view name) {
  auto same = [name](const auto& row) { return row.program == name; };
  if (std::any_of(std::begin(kHints), std::end(kHints), same)) return true;
  if (std::any_of(std::begin(kWrappers), std::end(kWrappers), [name](const Wrapper& w) { return w.name == name; })) {
    return true;
  }
  return name == kPython || std::find(std::begin(kShells), std::end(kShells), name) != std::end(kShells);
}

// Basename, without a version suffix when the name without it is known: gcc-12 → gcc,
// python3.11 → python, pip3 → pip, clang++-16 → clang++.
std::string_view ProgramName(std::string_view word) {
  size_t slash = word.rfind('/');
  if (slash != std::string_view::npos) word.remove_prefix(slash + 1);
  if (IsKnown(word)) return word;
  std::string_view base = word;
  while (!base.empty() && ((base.back() >= '0' && base.back() <= '9') || base.back() == '.')) base.remove_suffix(1);
  if (base.size() < word.size() && !base.empty() && base.back() == '-') base.remove_suffix(1);
  if (base.size() < word.size() && IsKnown(base)) return base;
  return word;
}

// NAME=VALUE (a shell or env assignment).
bool IsAssignment(std::string_view w) {
  size_t eq = w.find('=');
  if (eq == 0 || eq == std::string_view::npos) return false;
  for (size_t i = 0; i < eq; ++i) {
    char c = w[i];
    bool ok = c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool IsOption(std::string_view w) { return w.size() > 1 && w[0] == '-'; }

// An option word that takes the next word as its value ("-n", not "-n5" or "--ns=x").
bool TakesValue(std::string_view w, std::string_view value_options) {
  return w.find('=') == std::string_view::npos && InList(value_options, w);
}

std::string_view ValueOptionsOf(std::string_view program) {
  for (const ValueOptions& v : kValueOptions) {
    if (v.program == program) return v.options;
  }
  return {};
}

// The positional words of `args` (the words after the program), options and their values
// skipped, up to `--`. `+toolchain` words (cargo) count as options.
std::vector<std::string_view> Positionals(Args args, std::string_view value_options) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view w = args[i];
    if (w == "--") break;
    if (IsOption(w) || (w.size() > 1 && w[0] == '+')) {
      if (TakesValue(w, value_options)) ++i;
      continue;
    }
    out.push_back(w);
  }
  return out;
}

// Whether `flag` is among the arguments before `--`: `--long`, `--long=value`; a one-letter
// `-x` also inside a cluster of letters (`tail -qf`).
bool HasFlag(Args args, std::string_view flag) {
  bool is_short = flag.size() == 2 && flag[0] == '-' && flag[1] != '-';
  for (std::string_view w : args) {
    if (w == "--") break;
    if (w == flag) return true;
    if (!is_short && w.size() > flag.size() && w.starts_with(flag) && w[flag.size()] == '=') return true;
    if (is_short && w.size() > 2 && w[0] == '-' && w[1] != '-') {
      for (char c : w.substr(1)) {
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) break;
        if (c == flag[1]) return true;
      }
    }
  }
  return false;
}

// Whether the positional words start with the space-separated `words`.
bool WordsMatch(std::string_view words, const std::vector<std::string_view>& positionals) {
  size_t i = 0;
  return !AnyWord(words, [&](std::string_view w) { return i >= positionals.size() || positionals[i++] != w; });
}

// Whether one of the space-separated `flags` is present (no flags: always).
bool FlagsMatch(std::string_view flags, Args args) {
  return flags.empty() || AnyWord(flags, [args](std::string_view f) { return HasFlag(args, f); });
}

std::string_view Lookup(std::string_view program, Args rest) {
  std::vector<std::string_view> positionals = Positionals(rest, ValueOptionsOf(program));
  for (const CommandHint& row : kHints) {
    if (row.program == program && WordsMatch(row.words, positionals) && FlagsMatch(row.flags, rest)) return row.hint;
  }
  return kNone;
}

// Index of the wrapped command in `args` (args[0] is the wrapper), or nullopt when `args`
// does not have the wrapper's shape (`uv sync` is no `uv run`).
std::optional<size_t> SkipWrapper(const Wrapper& w, Args args) {
  size_t i = 1;
  auto skip_options = [&] {
    while (i < args.size() && (IsOption(args[i]) || IsAssignment(args[i]))) {
      if (args[i] == "--") return void(++i);
      if (TakesValue(args[i], w.options)) ++i;
      ++i;
    }
  };
  if (!w.sub.empty()) {
    skip_options();
    if (i >= args.size() || args[i] != w.sub) return std::nullopt;
    ++i;
  }
  skip_options();
  for (int n = 0; n < w.positionals && i < args.size(); ++n) ++i;
  if (i < args.size() && args[i] == "--") ++i;
  return i;
}

// `python [options] -m MODULE args`: the index of MODULE, or nullopt (a script, -c code).
std::optional<size_t> PythonModule(Args args) {
  for (size_t i = 1; i < args.size(); ++i) {
    std::string_view w = args[i];
    if (w == "-m") return i + 1 < args.size() ? std::optional<size_t>(i + 1) : std::nullopt;
    if (!IsOption(w)) return std::nullopt;
    if (w == "-X" || w == "-W") ++i;
  }
  return std::nullopt;
}

// The words of a shell script that is one simple command (redirections such as `2>&1`
// allowed), or nullopt when it has pipes, lists, substitutions, quotes or escapes: then the
// output is not one program's and there is no hint.
std::optional<std::vector<std::string>> SimpleCommand(std::string_view script) {
  std::vector<std::string> words;
  bool skip_target = false;
  size_t i = 0;
  while (i < script.size()) {
    if (script[i] == ' ' || script[i] == '\t') {
      ++i;
      continue;
    }
    size_t end = script.find_first_of(" \t", i);
    std::string_view w = script.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
    i = end == std::string_view::npos ? script.size() : end;
    if (skip_target) {
      skip_target = false;
      if (w.find_first_of("|;&()`$\\\"'<>\n") != std::string_view::npos) return std::nullopt;
      continue;
    }
    size_t d = w.find_first_not_of("0123456789");
    std::string_view op = w.substr(d == std::string_view::npos ? w.size() : d);
    if (op.starts_with('>') || op.starts_with('<') || op.starts_with("&>")) {
      size_t target = op.find_first_not_of("<>&");
      std::string_view rest = target == std::string_view::npos ? std::string_view() : op.substr(target);
      if (rest.empty()) {
        // `> file` (the target is the next word) or a complete `2>&1`-like duplication.
        if (!op.ends_with('&')) skip_target = true;
      } else if (rest.find_first_of("|;&()`$\\\"'<>\n") != std::string_view::npos) {
        return std::nullopt;
      }
      continue;
    }
    if (w.find_first_of("|;&()`$\\\"'<>\n") != std::string_view::npos) return std::nullopt;
    words.emplace_back(w);
  }
  if (words.empty()) return std::nullopt;
  return words;
}

// `sh [options] -c SCRIPT [name args]`: the script, or nullopt (a script file, stdin).
std::optional<std::string_view> ShellScript(Args args) {
  for (size_t i = 1; i < args.size(); ++i) {
    std::string_view w = args[i];
    if (w == "-o" || w == "+o" || w == "-O" || w == "+O") {
      ++i;
      continue;
    }
    if (!(IsOption(w) || (w.size() > 1 && w[0] == '+'))) return std::nullopt;
    if (w[0] == '-' && w[1] != '-' && w.find('c') != std::string_view::npos) {
      return i + 1 < args.size() ? std::optional<std::string_view>(args[i + 1]) : std::nullopt;
    }
  }
  return std::nullopt;
}

// Follows assignments, wrappers, python -m and a simple sh -c command to the program that
// runs, and returns at(program, its arguments) there; "" when none can be found.
template <class F>
std::string Resolve(Args args, int depth, const F& at) {
  while (!args.empty()) {
    if (IsAssignment(args[0])) {
      args = args.subspan(1);
      continue;
    }
    std::string_view program = ProgramName(args[0]);
    if (std::find(std::begin(kShells), std::end(kShells), program) != std::end(kShells)) {
      std::optional<std::string_view> script = ShellScript(args);
      if (!script || depth >= kMaxDepth) return "";
      std::optional<std::vector<std::string>> words = SimpleCommand(*script);
      return words ? Resolve(*words, depth + 1, at) : "";
    }
    if (program == kPython) {
      std::optional<size_t> module = PythonModule(args);
      if (!module) return "";
      args = args.subspan(*module);
      continue;
    }
    std::optional<size_t> next;
    for (const Wrapper& w : kWrappers) {
      if (w.name == program && (next = SkipWrapper(w, args))) break;
    }
    if (next) {
      args = args.subspan(*next);
      continue;
    }
    return at(program, args.subspan(1));
  }
  return "";
}

// Safe unquoted in every POSIX shell context we print: letters, digits and a few marks.
bool NeedsQuotes(std::string_view w) {
  if (w.empty()) return true;
  for (char c : w) {
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
    if (!safe) return true;
  }
  return false;
}

}  // namespace

std::span<const CommandHint> CommandHintTable() { return kHints; }

std::string HintForCommand(const std::vector<std::string>& argv) {
  return Resolve(argv, 0, [](std::string_view program, Args rest) { return std::string(Lookup(program, rest)); });
}

std::string CommandProgram(const std::vector<std::string>& argv) {
  return Resolve(argv, 0, [](std::string_view program, Args) { return std::string(program); });
}

std::string FormatCommandLine(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& w : argv) {
    if (!out.empty()) out += ' ';
    if (!NeedsQuotes(w)) {
      out += w;
      continue;
    }
    out += '\'';
    for (char c : w) {
      if (c == '\'') {
        out += "'\\''";
      } else {
        out += c;
      }
    }
    out += '\'';
  }
  return out;
}

}  // namespace caveman
