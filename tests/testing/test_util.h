// Helpers shared by the test binaries.
#ifndef CAVEMAN_TESTS_TESTING_TEST_UTIL_H_
#define CAVEMAN_TESTS_TESTING_TEST_UTIL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace caveman::testing {

// Repository root (CAVEMAN_SOURCE_DIR set by ctest, else the working directory).
std::string SourceDir();
// Build directory (CAVEMAN_BINARY_DIR, else SourceDir()/build).
std::string BinaryDir();
// Directory of the third-party reference fixtures (../shared/fixtures/reference/ next to the
// repository, or $CAVEMAN_SHARED_DIR/fixtures/reference/), with a trailing slash; "" when
// absent (tests then GTEST_SKIP: the files are never copied into the repository).
std::string ReferenceDir();

// Contents of SourceDir()/relpath; fails the test (ADD_FAILURE) and returns "" if missing.
std::string ReadFile(const std::string& relpath);
std::string ReadAbsolute(const std::string& path);

// `open` repeated `depth` times, then `leaf`, then `close` repeated `depth` times: deeply
// nested JSON for depth-limit tests, e.g. Nested(10001, "[", "]").
std::string Nested(size_t depth, std::string_view open, std::string_view close, std::string_view leaf = "1");

// `n` pseudo-random bytes (mt19937_64 from `seed`, little-endian words): incompressible data.
std::string RandomBytes(size_t n, uint64_t seed);

// Deterministic random split of `data` into pieces of 1..max_piece bytes.
std::vector<std::string_view> RandomSplit(std::string_view data, uint64_t seed, size_t max_piece);

// Runs `run(pieces)` on the whole input, on several random splits with pieces down to 1 byte,
// and on an all-1-byte split, and EXPECTs every result to equal the whole-input one.
void ExpectChunkingInvariant(std::string_view input,
                             const std::function<std::string(const std::vector<std::string_view>&)>& run,
                             uint64_t seed = 1);

}  // namespace caveman::testing

#endif  // CAVEMAN_TESTS_TESTING_TEST_UTIL_H_
