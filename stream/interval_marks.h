// CAVEMAN_MARK("name"): where one run's wall time goes, for profiling small runs (issue 19).
// Compiled in only with the CMake option CAVEMAN_INTERVAL_MARKS (a separate build; nothing is
// emitted otherwise); then, when CAVEMAN_INTERVAL_MARKS is set in the environment, each mark
// writes "TMARK name <CLOCK_MONOTONIC seconds>" to stderr. scripts/interval_marks runs a
// build many times and prints the median time between consecutive marks.
// Not a public header (not installed).
#ifndef CAVEMAN_STREAM_INTERVAL_MARKS_H_
#define CAVEMAN_STREAM_INTERVAL_MARKS_H_

#ifdef CAVEMAN_INTERVAL_MARKS
#include <time.h>

#include <cstdio>
#include <cstdlib>

namespace caveman::internal {

inline void IntervalMark(const char* name) {
  static const bool on = std::getenv("CAVEMAN_INTERVAL_MARKS") != nullptr;
  if (!on) return;
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  std::fprintf(stderr, "TMARK %s %ld.%09ld\n", name, static_cast<long>(t.tv_sec), t.tv_nsec);
}

}  // namespace caveman::internal

#define CAVEMAN_MARK(name) ::caveman::internal::IntervalMark(name)
#else
#define CAVEMAN_MARK(name) \
  do {                     \
  } while (false)
#endif

#endif  // CAVEMAN_STREAM_INTERVAL_MARKS_H_
