#include "compressors/internal/large_stack.h"

#include <pthread.h>

#include <algorithm>

namespace caveman::internal {
namespace {

void* Trampoline(void* arg) {
  (*static_cast<const std::function<void()>*>(arg))();
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
  bool started = pthread_attr_setstacksize(&attr, std::max<size_t>(stack_bytes, PTHREAD_STACK_MIN)) == 0 &&
                 pthread_create(&thread, &attr, &Trampoline, const_cast<std::function<void()>*>(&fn)) == 0;
  pthread_attr_destroy(&attr);
  if (!started) {
    fn();
    return;
  }
  pthread_join(thread, nullptr);
}

}  // namespace caveman::internal
