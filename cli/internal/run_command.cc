// fork/exec of the `run` command with its output on one pipe, and the SIGINT/SIGTERM
// forwarding described in run_command.h.
#include "cli/internal/run_command.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

namespace caveman::internal {
namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM};

// The child that forwarded signals go to; 0 = none (before start, after it exited).
std::atomic<pid_t> g_child{0};
static_assert(std::atomic<pid_t>::is_always_lock_free, "used from a signal handler");

// The dispositions found at start, restored in the child before exec and in the parent when
// the child is gone.
struct sigaction g_saved[std::size(kForwarded)];
bool g_installed[std::size(kForwarded)];

void ForwardSignal(int sig, siginfo_t* info, void*) {
  // si_code > 0: sent by the kernel, i.e. by the terminal to the whole foreground process
  // group, which the child is part of: it has its copy already.
  if (info != nullptr && info->si_code > 0) return;
  int saved_errno = errno;
  pid_t pid = g_child.load();
  if (pid > 0) ::kill(pid, sig);
  errno = saved_errno;
}

// Blocks the forwarded signals; returns the previous mask in `old`.
void BlockForwarded(sigset_t* old) {
  sigset_t block;
  sigemptyset(&block);
  for (int sig : kForwarded) sigaddset(&block, sig);
  pthread_sigmask(SIG_BLOCK, &block, old);
}

// Installs ForwardSignal for every forwarded signal that is not ignored.
void InstallForwarding() {
  for (size_t i = 0; i < std::size(kForwarded); ++i) {
    g_installed[i] = false;
    if (sigaction(kForwarded[i], nullptr, &g_saved[i]) != 0) continue;
    if (!(g_saved[i].sa_flags & SA_SIGINFO) && g_saved[i].sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_sigaction = ForwardSignal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    g_installed[i] = sigaction(kForwarded[i], &sa, nullptr) == 0;
  }
}

void RestoreDispositions() {
  for (size_t i = 0; i < std::size(kForwarded); ++i) {
    if (g_installed[i]) sigaction(kForwarded[i], &g_saved[i], nullptr);
    g_installed[i] = false;
  }
}

void CloseFd(int fd) {
  if (fd >= 0) ::close(fd);
}

// In the child, between fork and exec: only async-signal-safe calls. Reports a failed exec
// through `err_fd` (O_CLOEXEC, so a successful exec closes it with nothing written).
[[noreturn]] void ExecChild(char* const argv[], int out_fd, int err_fd, const sigset_t& old_mask) {
  for (size_t i = 0; i < std::size(kForwarded); ++i) {
    if (g_installed[i]) sigaction(kForwarded[i], &g_saved[i], nullptr);
  }
  // main() ignores SIGPIPE for its own writes; the command gets the default (`| head` ends it).
  signal(SIGPIPE, SIG_DFL);
  // If stdout or stderr were closed when caveman-engine started, the pipe may sit on fd 1 or
  // 2; move it up so the dup2s below create descriptors without O_CLOEXEC.
  if (out_fd <= STDERR_FILENO) out_fd = fcntl(out_fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  if (out_fd < 0 || dup2(out_fd, STDOUT_FILENO) < 0 || dup2(out_fd, STDERR_FILENO) < 0) {
    int e = errno;
    (void)!write(err_fd, &e, sizeof(e));
    _exit(kExitNotExecutable);
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  execvp(argv[0], argv);
  int e = errno;
  (void)!write(err_fd, &e, sizeof(e));
  _exit(e == ENOENT || e == ENOTDIR ? kExitNotFound : kExitNotExecutable);
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

RunningCommand::RunningCommand(RunningCommand&& other) noexcept
    : pid_(other.pid_), output_fd_(other.output_fd_), finished_(other.finished_) {
  other.finished_ = true;
  other.output_fd_ = -1;
}

RunningCommand::~RunningCommand() {
  if (!finished_) Finish();
}

int RunningCommand::Finish() {
  finished_ = true;
  CloseFd(output_fd_);
  output_fd_ = -1;
  // Wait without reaping first: until the child is reaped its pid cannot be reused, so a
  // signal forwarded meanwhile cannot hit another process.
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
  }
  g_child.store(0);
  int status = 0;
  pid_t r;
  while ((r = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  RestoreDispositions();
  return r == pid_ ? ExitCodeOf(status) : 1;
}

int StartFailureExitCode(const Status& failure) {
  switch (failure.code()) {
    case StatusCode::kNotFound: return kExitNotFound;
    case StatusCode::kInvalidArgument: return kExitNotExecutable;
    default: return 1;
  }
}

Result<RunningCommand> StartCommand(const std::vector<std::string>& argv) {
  if (argv.empty()) return Status::InvalidArgument("no command");
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  int out[2];
  int err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Status::IoError(std::string("pipe: ") + std::strerror(errno));
  if (pipe2(err, O_CLOEXEC) != 0) {
    int e = errno;
    CloseFd(out[0]);
    CloseFd(out[1]);
    return Status::IoError(std::string("pipe: ") + std::strerror(e));
  }

  // Signals stay blocked from before the fork until the child's pid is known (parent) or the
  // inherited dispositions are back (child), so none is lost or handled in the wrong process.
  sigset_t old_mask;
  BlockForwarded(&old_mask);
  InstallForwarding();
  pid_t pid = fork();
  if (pid == 0) ExecChild(cargv.data(), out[1], err[1], old_mask);
  int fork_errno = errno;
  if (pid > 0) g_child.store(pid);
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  CloseFd(out[1]);
  CloseFd(err[1]);
  if (pid < 0) {
    RestoreDispositions();
    CloseFd(out[0]);
    CloseFd(err[0]);
    return Status::IoError(std::string("fork: ") + std::strerror(fork_errno));
  }

  int exec_errno = 0;
  ssize_t n;
  while ((n = read(err[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR) {
  }
  CloseFd(err[0]);
  RunningCommand child(pid, out[0]);
  if (n == static_cast<ssize_t>(sizeof(exec_errno))) {
    child.Finish();
    std::string message = argv[0] + ": " + std::strerror(exec_errno);
    if (exec_errno == ENOENT || exec_errno == ENOTDIR) return Status::NotFound(message);
    return Status::InvalidArgument(message);
  }
  return child;
}

}  // namespace caveman::internal
