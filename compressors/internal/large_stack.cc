#include "compressors/large_stack.h"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <exception>

#if defined(__SANITIZE_ADDRESS__)
#define CAVEMAN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CAVEMAN_ASAN 1
#endif
#endif
#ifdef CAVEMAN_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace caveman::internal {
namespace {

// One run of `fn` on its own stack. An exception (std::bad_alloc under a memory cap) must not
// unwind past the stack's first frame: it is carried back and rethrown on the caller's stack
// (issue 15).
struct Task {
  const std::function<void()>* fn = nullptr;
  std::exception_ptr error;
  ucontext_t caller;
  ucontext_t own;
#ifdef CAVEMAN_ASAN
  const void* caller_bottom = nullptr;  // the caller's stack, for AddressSanitizer
  size_t caller_size = 0;
  void* fake_stack = nullptr;
#endif
};

// makecontext passes int arguments only: the task goes through this slot, read once by the
// new stack's first frame before anything else can run on this thread.
thread_local Task* starting_task = nullptr;

void TaskMain() {
  Task* task = starting_task;
#ifdef CAVEMAN_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &task->caller_bottom, &task->caller_size);
#endif
  try {
    (*task->fn)();
  } catch (...) {
    task->error = std::current_exception();
  }
#ifdef CAVEMAN_ASAN
  // Returning resumes task->caller (uc_link); nullptr: this stack is done for good.
  __sanitizer_start_switch_fiber(nullptr, task->caller_bottom, task->caller_size);
#endif
}

}  // namespace

size_t StackBytesForInput(size_t input_bytes) {
  constexpr size_t kBase = size_t{64} << 20;
  constexpr size_t kCap = size_t{8} << 30;
  constexpr size_t kPerByte = 32;
  if (input_bytes > (kCap - kBase) / kPerByte) return kCap;
  return kBase + input_bytes * kPerByte;
}

void RunWithStack(size_t stack_bytes, const std::function<void()>& fn) {
  // The stack is mapped without reserving memory (only the pages touched are committed) and
  // entered with a context switch on this thread: no thread to create, schedule and join,
  // which cost a small `compress` about 0.5 ms of wall time on a 2-core VM (issue 19).
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t usable = (std::max<size_t>(stack_bytes, 64 << 10) + page - 1) / page * page;
  const size_t mapped = usable + page;  // + a guard page below the stack
  void* base =
      mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (base == MAP_FAILED) {  // address-space limits: the caller's own stack it is
    fn();
    return;
  }
  Task task;
  task.fn = &fn;
  if (mprotect(base, page, PROT_NONE) != 0 || getcontext(&task.own) != 0) {
    munmap(base, mapped);
    fn();
    return;
  }
  char* const stack = static_cast<char*>(base) + page;
  task.own.uc_stack.ss_sp = stack;
  task.own.uc_stack.ss_size = usable;
  task.own.uc_link = &task.caller;
  makecontext(&task.own, &TaskMain, 0);
  Task* const outer = starting_task;  // a RunWithStack inside fn starts a task of its own
  // getcontext returns a second time when fn has returned (uc_link). Not swapcontext: the
  // AddressSanitizer runtime warns on stderr at its first use, which the sanitizer build's CLI
  // tests would see; the switches are annotated for it below instead.
  volatile bool entered = false;
  volatile bool failed = getcontext(&task.caller) != 0;
  if (!entered && !failed) {
    entered = true;
    starting_task = &task;
#ifdef CAVEMAN_ASAN
    __sanitizer_start_switch_fiber(&task.fake_stack, stack, usable);
#endif
    setcontext(&task.own);  // returns only on failure
    failed = true;
  }
#ifdef CAVEMAN_ASAN
  if (entered) __sanitizer_finish_switch_fiber(task.fake_stack, nullptr, nullptr);
#endif
  starting_task = outer;
  munmap(base, mapped);
  if (failed) {  // fn never ran
    fn();
    return;
  }
  if (task.error) std::rethrow_exception(task.error);
}

}  // namespace caveman::internal
