#include "tests/testing/test_util.h"

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

namespace caveman::testing {

std::string SourceDir() {
  const char* d = std::getenv("CAVEMAN_SOURCE_DIR");
  return d != nullptr ? d : ".";
}

std::string BinaryDir() {
  const char* d = std::getenv("CAVEMAN_BINARY_DIR");
  return d != nullptr ? d : SourceDir() + "/build";
}

std::string ReferenceDir() {
  std::vector<std::string> candidates;
  if (const char* d = std::getenv("CAVEMAN_SHARED_DIR")) candidates.push_back(std::string(d) + "/fixtures/reference/");
  candidates.push_back(SourceDir() + "/../shared/fixtures/reference/");
  candidates.push_back("/work/shared/fixtures/reference/");
  for (const auto& c : candidates) {
    std::ifstream probe(c + "manifest.yaml");
    if (probe) return c;
  }
  return "";
}

std::string Nested(size_t depth, std::string_view open, std::string_view close, std::string_view leaf) {
  std::string s;
  s.reserve(depth * (open.size() + close.size()) + leaf.size());
  for (size_t i = 0; i < depth; ++i) s += open;
  s += leaf;
  for (size_t i = 0; i < depth; ++i) s += close;
  return s;
}

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = rng();
    for (size_t j = 0; j < 8 && i + j < n; ++j) s[i + j] = static_cast<char>(v >> (8 * j));
  }
  return s;
}

std::string ReadAbsolute(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return "";
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ReadFile(const std::string& relpath) { return ReadAbsolute(SourceDir() + "/" + relpath); }

std::vector<std::string_view> RandomSplit(std::string_view data, uint64_t seed, size_t max_piece) {
  std::vector<std::string_view> out;
  uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
  size_t pos = 0;
  while (pos < data.size()) {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    size_t n = 1 + static_cast<size_t>((s * 2685821657736338717ULL) % max_piece);
    n = std::min(n, data.size() - pos);
    out.push_back(data.substr(pos, n));
    pos += n;
  }
  return out;
}

void ExpectChunkingInvariant(std::string_view input,
                             const std::function<std::string(const std::vector<std::string_view>&)>& run,
                             uint64_t seed) {
  std::vector<std::string_view> whole;
  if (!input.empty()) whole.push_back(input);
  const std::string expected = run(whole);
  const size_t kMaxPieces[] = {1, 2, 3, 7, 64, 4096};
  for (size_t max_piece : kMaxPieces) {
    for (uint64_t k = 0; k < 3; ++k) {
      std::string got = run(RandomSplit(input, seed + k * 31 + max_piece, max_piece));
      EXPECT_EQ(got, expected) << "max_piece=" << max_piece << " seed=" << seed + k;
      if (max_piece == 1) break;  // all 1-byte split is deterministic
    }
  }
}

}  // namespace caveman::testing
