// CAVEMAN_DCHECK(cond): the REQUIRES contracts of the headers, checked where that is cheap.
//
// With checks on (CMake option CAVEMAN_DCHECK: on in developer mode and in Debug builds),
// a false `cond` writes "caveman: CAVEMAN_DCHECK failed: Internal: <file>:<line>: <cond>" to
// stderr and aborts (AbortOnContractViolation, caveman/stream/status.h): a broken contract is
// a bug in the caller, never an outcome. With checks off the condition is not evaluated and
// no code is emitted, but it is still compiled, so it cannot rot.
//
// A DCHECK condition must have no side effects. Not a public header (not installed).
#ifndef CAVEMAN_STREAM_CHECK_H_
#define CAVEMAN_STREAM_CHECK_H_

#include "caveman_dcheck_config.h"  // CAVEMAN_DCHECK_IS_ON (generated in the build tree)

namespace caveman::internal {

// Aborts through AbortOnContractViolation with the failed condition and its place.
[[noreturn]] void DcheckFailed(const char* condition, const char* file, int line);

}  // namespace caveman::internal

#if CAVEMAN_DCHECK_IS_ON
#define CAVEMAN_DCHECK(cond)                                        \
  do {                                                              \
    if (!(cond)) [[unlikely]]                                       \
      ::caveman::internal::DcheckFailed(#cond, __FILE__, __LINE__); \
  } while (false)
#else
#define CAVEMAN_DCHECK(cond)               \
  do {                                     \
    if (false) static_cast<void>(!(cond)); \
  } while (false)
#endif

#endif  // CAVEMAN_STREAM_CHECK_H_
