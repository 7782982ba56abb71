// The command → content-type hints of `caveman-engine run` (engine/command_hints.h).
#include "engine/command_hints.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compressors/registry.h"

namespace caveman {
namespace {

// Splits on spaces (the test commands need no quoting).
std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string HintOf(const std::string& line) { return HintForCommand(Words(line)); }

TEST(CommandHintsTest, LogsOfRunningThings) {
  EXPECT_EQ(HintOf("kubectl logs -f deploy/api"), "log");
  EXPECT_EQ(HintOf("kubectl -n prod logs api-0"), "log");
  EXPECT_EQ(HintOf("kubectl --context=staging logs api-0"), "log");
  EXPECT_EQ(HintOf("docker logs web"), "log");
  EXPECT_EQ(HintOf("docker compose logs -f"), "log");
  EXPECT_EQ(HintOf("docker compose -f ci.yml logs"), "log");
  EXPECT_EQ(HintOf("docker-compose logs"), "log");
  EXPECT_EQ(HintOf("journalctl -u nginx --since today"), "log");
  EXPECT_EQ(HintOf("tail -f /var/log/syslog"), "log");
  EXPECT_EQ(HintOf("tail -n 100 -F app.log"), "log");
  EXPECT_EQ(HintOf("tail -qf a.log b.log"), "log");
  EXPECT_EQ(HintOf("tail --follow=name app.log"), "log");
  EXPECT_EQ(HintOf("gh run view 123 --log-failed"), "log");
}

TEST(CommandHintsTest, BuildsAndTests) {
  for (const char* line : {"make -j8",
                           "ninja -C build",
                           "cmake --build build -j 2",
                           "cargo build --release",
                           "cargo +nightly test",
                           "go build ./...",
                           "go test ./...",
                           "npm test",
                           "npm run build",
                           "yarn lint",
                           "pnpm run test",
                           "mvn -q package",
                           "./gradlew check",
                           "gradle build",
                           "pytest -q tests/",
                           "tox -e py311",
                           "ctest --output-on-failure",
                           "gcc -c x.c",
                           "g++ -O2 x.cc",
                           "clang -c x.c",
                           "clang++ x.cc",
                           "/usr/bin/g++-12 x.cc",
                           "gcc-12 -c x.c",
                           "x86_64-linux-gnu-gcc-12 x.c"}) {
    // The cross compiler's basename is not in the table: no hint.
    std::string want = std::string(line).starts_with("x86_64") ? "" : "log";
    EXPECT_EQ(HintOf(line), want) << line;
  }
  EXPECT_EQ(HintOf("cmake -S . -B build"), "");  // configure, not --build
}

TEST(CommandHintsTest, DiffsAndGit) {
  EXPECT_EQ(HintOf("git diff HEAD~1"), "diff");
  EXPECT_EQ(HintOf("git -C repo show abc123"), "diff");
  EXPECT_EQ(HintOf("git log -p -3"), "diff");
  EXPECT_EQ(HintOf("git log --patch"), "diff");
  EXPECT_EQ(HintOf("git log --oneline"), "");
  EXPECT_EQ(HintOf("git status"), "");
  EXPECT_EQ(HintOf("git clone https://example.com/r.git"), "terminal");
  EXPECT_EQ(HintOf("diff -u a b"), "diff");
}

TEST(CommandHintsTest, InstallersAreTerminal) {
  EXPECT_EQ(HintOf("pip install -r requirements.txt"), "terminal");
  EXPECT_EQ(HintOf("pip3 install requests"), "terminal");
  EXPECT_EQ(HintOf("python3 -m pip install requests"), "terminal");
  EXPECT_EQ(HintOf("uv pip install ruff"), "terminal");
  EXPECT_EQ(HintOf("apt-get install -y jq"), "terminal");
  EXPECT_EQ(HintOf("npm install"), "terminal");
  EXPECT_EQ(HintOf("npm ci"), "terminal");
  EXPECT_EQ(HintOf("cargo install ripgrep"), "terminal");
  EXPECT_EQ(HintOf("docker pull debian:12"), "terminal");
  EXPECT_EQ(HintOf("pip list --format=json"), "");
}

TEST(CommandHintsTest, JsonEmittersGetNoHint) {
  EXPECT_EQ(HintOf("kubectl get pods -A -o json"), "");
  EXPECT_EQ(HintOf("kubectl describe pod api-0"), "");
  EXPECT_EQ(HintOf("aws ec2 describe-instances"), "");
  EXPECT_EQ(HintOf("gh pr list --json number,title"), "");
  EXPECT_EQ(HintOf("npm ls --json"), "");
  EXPECT_EQ(HintOf("go test -json ./..."), "");
  EXPECT_EQ(HintOf("cargo metadata"), "");
  EXPECT_EQ(HintOf("docker inspect web"), "");
  EXPECT_EQ(HintOf("curl -s https://example.com/api"), "");
}

TEST(CommandHintsTest, UnknownAndEmpty) {
  EXPECT_EQ(HintForCommand({}), "");
  EXPECT_EQ(HintOf("cat build.log"), "");
  EXPECT_EQ(HintOf("./my-script --verbose"), "");
  EXPECT_EQ(HintOf("tail app.log"), "");  // not following: could be anything
  EXPECT_EQ(HintOf("python script.py"), "");
  EXPECT_EQ(HintOf("python -c print(1)"), "");
  EXPECT_EQ(HintOf("env"), "");
  EXPECT_EQ(HintOf("sudo"), "");
}

// The program behind the wrappers (issue 17: the CLI's [run.PROGRAM] tables use it).
TEST(CommandHintsTest, CommandProgramLooksThroughTheSameWrappers) {
  EXPECT_EQ(CommandProgram(Words("make -j8")), "make");
  EXPECT_EQ(CommandProgram(Words("/usr/bin/gcc-12 -c x.c")), "gcc");
  EXPECT_EQ(CommandProgram(Words("sudo env FOO=1 nice make")), "make");
  EXPECT_EQ(CommandProgram(Words("uv run pytest -x")), "pytest");
  EXPECT_EQ(CommandProgram(Words("python3.11 -u -m pytest")), "pytest");
  EXPECT_EQ(CommandProgram({"sh", "-c", "cargo build --release"}), "cargo");
  EXPECT_EQ(CommandProgram(Words("jq .")), "jq");  // no hint, still a program
  EXPECT_EQ(CommandProgram(Words("sudo")), "");
}

TEST(CommandHintsTest, WrappersAreSkipped) {
  EXPECT_EQ(HintOf("CC=clang CFLAGS=-O2 make"), "log");
  EXPECT_EQ(HintOf("env -u HOME FOO=1 make"), "log");
  EXPECT_EQ(HintOf("env -- make"), "log");
  EXPECT_EQ(HintOf("sudo -u root journalctl -b"), "log");
  EXPECT_EQ(HintOf("sudo -E apt-get upgrade"), "terminal");
  EXPECT_EQ(HintOf("time -p make"), "log");
  EXPECT_EQ(HintOf("nice -n 10 cargo build"), "log");
  EXPECT_EQ(HintOf("nohup make"), "log");
  EXPECT_EQ(HintOf("timeout 10m pytest"), "log");
  EXPECT_EQ(HintOf("timeout -s KILL 5 go test ./..."), "log");
  EXPECT_EQ(HintOf("stdbuf -oL make"), "log");
  EXPECT_EQ(HintOf("npx --yes jest"), "log");
  EXPECT_EQ(HintOf("npx -p typescript tsc"), "log");
  EXPECT_EQ(HintOf("uv run pytest -x"), "log");
  EXPECT_EQ(HintOf("uv run --with ruff ruff check"), "log");
  EXPECT_EQ(HintOf("uv sync"), "terminal");
  EXPECT_EQ(HintOf("poetry run pytest"), "log");
  EXPECT_EQ(HintOf("bundle exec rspec"), "log");
  EXPECT_EQ(HintOf("python3.11 -u -m pytest"), "log");
  EXPECT_EQ(HintOf("python -m unittest discover"), "log");
  EXPECT_EQ(HintOf("sudo env FOO=1 nice make"), "log");
  EXPECT_EQ(HintOf("sudo kubectl logs api"), "log");
}

TEST(CommandHintsTest, ShellScriptsWithOneSimpleCommand) {
  EXPECT_EQ(HintForCommand({"sh", "-c", "make -j4"}), "log");
  EXPECT_EQ(HintForCommand({"bash", "-lc", "make 2>&1"}), "log");
  EXPECT_EQ(HintForCommand({"bash", "-o", "pipefail", "-c", "exec git diff > /dev/stdout"}), "diff");
  EXPECT_EQ(HintForCommand({"sh", "-c", "sudo sh -c 'make'"}), "");  // quotes: not simple
  EXPECT_EQ(HintForCommand({"sh", "-c", "make | tee log"}), "");     // a pipeline's output is tee's
  EXPECT_EQ(HintForCommand({"sh", "-c", "echo ok; make"}), "");
  EXPECT_EQ(HintForCommand({"sh", "-c", "cd src && make"}), "");
  EXPECT_EQ(HintForCommand({"sh", "-c", "make $TARGET"}), "");
  EXPECT_EQ(HintForCommand({"sh", "-c", "cat build.log"}), "");
  EXPECT_EQ(HintForCommand({"sh", "script.sh"}), "");
  EXPECT_EQ(HintForCommand({"sh", "-c"}), "");
  EXPECT_EQ(HintForCommand({"sh", "-c", ""}), "");
}

// Every hint is a registered content type (or none), and every catch-all row comes after the
// specific rows of its program (otherwise those could never match).
TEST(CommandHintsTest, TableIsConsistent) {
  Registry registry;
  std::set<std::string> types;
  for (std::string_view t : registry.content_types()) types.emplace(t);
  std::set<std::string> closed;  // programs whose catch-all row was seen
  for (const CommandHint& row : CommandHintTable()) {
    if (!row.hint.empty()) {
      EXPECT_EQ(types.count(std::string(row.hint)), 1u) << row.program << " " << row.hint;
    }
    EXPECT_EQ(closed.count(std::string(row.program)), 0u)
        << "row after the catch-all: " << row.program << " " << row.words << " " << row.flags;
    if (row.words.empty() && row.flags.empty()) closed.emplace(row.program);
  }
}

TEST(FormatCommandLineTest, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(FormatCommandLine({"make", "-j8", "CC=gcc", "all"}), "make -j8 CC=gcc all");
  EXPECT_EQ(FormatCommandLine({"sh", "-c", "echo ok; exit 3"}), "sh -c 'echo ok; exit 3'");
  EXPECT_EQ(FormatCommandLine({"echo", "it's", ""}), "echo 'it'\\''s' ''");
  EXPECT_EQ(FormatCommandLine({"grep", "a*b", "$HOME", "x\ny"}), "grep 'a*b' '$HOME' 'x\ny'");
  EXPECT_EQ(FormatCommandLine({}), "");
}

}  // namespace
}  // namespace caveman
