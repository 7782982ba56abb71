// The process side of `caveman-engine run -- CMD ARGS…` (issue 13): the command runs with its
// stdout and stderr on the write end of one pipe (so their interleaving is kept), stdin
// inherited, and caveman-engine reads the other end.
//
// HowTo:
//   auto child = internal::StartCommand(argv);        // before any thread is started
//   if (!child.ok()) return StartFailureExitCode(child.status());  // message: "CMD: <strerror>"
//   engine.CompressFollowFd(child->output_fd(), options, sink);
//   int code = child->Finish();                        // exit status, or 128 + signal
//
// Signals: while the child runs, SIGINT and SIGTERM sent to caveman-engine by a process
// (kill, timeout, a supervisor) are forwarded to the child, once. The child stays in
// caveman-engine's process group, so a Ctrl-C at the terminal reaches it directly from the
// terminal and is not forwarded a second time (kernel-sent signals, si_code > 0, are not
// forwarded). A signal ignored when caveman-engine started stays ignored for both, as in a
// shell. caveman-engine itself does not stop on these signals: it goes on reading until the
// pipe's end of file, so the record of what was output is completed.
//
// Thread-safety: one running command per process (the forwarding target is process-wide).
#ifndef CAVEMAN_CLI_INTERNAL_RUN_COMMAND_H_
#define CAVEMAN_CLI_INTERNAL_RUN_COMMAND_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "caveman/stream/status.h"

namespace caveman::internal {

// Shell conventions for a command that could not be started: 127 when it was not found,
// 126 when it was found but could not be executed.
inline constexpr int kExitNotFound = 127;
inline constexpr int kExitNotExecutable = 126;

class RunningCommand {
 public:
  RunningCommand(pid_t pid, int output_fd) : pid_(pid), output_fd_(output_fd) {}
  RunningCommand(RunningCommand&& other) noexcept;
  RunningCommand& operator=(RunningCommand&&) = delete;
  RunningCommand(const RunningCommand&) = delete;
  // Closes the pipe and waits for the child if Finish() was not called.
  ~RunningCommand();

  // Read end of the pipe that carries the child's stdout and stderr (O_CLOEXEC).
  int output_fd() const { return output_fd_; }

  // Closes the read end (a child still writing then gets SIGPIPE/EPIPE), waits for the child
  // (EINTR retried) and stops forwarding signals to it. Returns its exit status, or 128 + N
  // when signal N killed it. Call once.
  int Finish();

 private:
  pid_t pid_;
  int output_fd_;
  bool finished_ = false;
};

// Starts argv[0] (looked up in PATH like execvp) with argv (not empty). Errors, with the
// message "<argv[0]>: <strerror>" (or "pipe: E" / "fork: E"): kNotFound when the command was
// not found, kInvalidArgument when it was found but could not be executed, kIoError when the
// pipe or the process could not be made. StartFailureExitCode maps them to 127, 126 and 1.
Result<RunningCommand> StartCommand(const std::vector<std::string>& argv);
int StartFailureExitCode(const Status& failure);

}  // namespace caveman::internal

#endif  // CAVEMAN_CLI_INTERNAL_RUN_COMMAND_H_
