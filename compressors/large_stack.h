// Runs a function on a stack sized for the input, so third-party parsers that
// recurse per nesting level (gumbo frees its tree recursively; our JSON walks recurse up to the
// 10,000-level limit) cannot overflow the caller's stack — a library user's worker thread may
// have 256 KiB, and the CLI's main thread whatever `ulimit -s` says.
#ifndef CAVEMAN_COMPRESSORS_LARGE_STACK_H_
#define CAVEMAN_COMPRESSORS_LARGE_STACK_H_

#include <cstddef>
#include <functional>

namespace caveman::internal {

// Stack for transforming `input_bytes` of text: 64 MiB plus 32 bytes per input byte (gumbo's
// recursive destroy uses < 48 bytes per level and a level costs at least 3 input bytes), capped
// at 8 GiB. Only the pages actually touched are committed.
size_t StackBytesForInput(size_t input_bytes);

// Runs `fn` on the calling thread, on a separate `stack_bytes` stack (at least 64 KiB; mapped
// with a guard page, pages committed as touched, unmapped afterwards), and returns when it
// returns; an exception `fn` throws is rethrown here. If the stack cannot be mapped
// (address-space limits), runs `fn` on the calling thread's own stack instead.
void RunWithStack(size_t stack_bytes, const std::function<void()>& fn);

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_LARGE_STACK_H_
