// Shared helpers of the libFuzzer targets: a check that aborts with a message (libFuzzer then
// saves the input as a crash artifact), and small input-splitting helpers.
#ifndef CAVEMAN_TESTS_FUZZ_FUZZ_UTIL_H_
#define CAVEMAN_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

// Aborts (a finding) when `cond` is false. Works in every build type, unlike assert().
#define FUZZ_CHECK(cond, ...)                                                                \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s\n  ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                                     \
      std::fprintf(stderr, "\n");                                                            \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)

namespace caveman::fuzz {

inline std::string_view AsView(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// Takes one control byte off the front (0 when empty).
inline uint8_t TakeByte(std::string_view* in) {
  if (in->empty()) return 0;
  uint8_t b = static_cast<uint8_t>((*in)[0]);
  in->remove_prefix(1);
  return b;
}

}  // namespace caveman::fuzz

#endif  // CAVEMAN_TESTS_FUZZ_FUZZ_UTIL_H_
