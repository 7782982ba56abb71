#include "compressors/large_stack.h"

#include <pthread.h>

#include <algorithm>
#include <exception>

namespace caveman::internal {
namespace {

// An exception (std::bad_alloc under a memory cap) must not leave the thread (that would
// terminate the process): it is carried back and rethrown on the caller's thread (issue 15).
struct Task {
  const std::function<void()>* fn;
  std::exception_ptr error;
};

void* Trampoline(void* arg) {
  auto* task = static_cast<Task*>(arg);
  try {
    (*task->fn)();
  } catch (...) {
    task->error = std::current_exception();
  }
  return nullptr;
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
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) {
    fn();
    return;
  }
  pthread_t thread;
  Task task{&fn, nullptr};
  bool started = pthread_attr_setstacksize(&attr, std::max<size_t>(stack_bytes, PTHREAD_STACK_MIN)) == 0 &&
                 pthread_create(&thread, &attr, &Trampoline, &task) == 0;
  pthread_attr_destroy(&attr);
  if (!started) {
    fn();
    return;
  }
  pthread_join(thread, nullptr);
  if (task.error) std::rethrow_exception(task.error);
}

}  // namespace caveman::internal
