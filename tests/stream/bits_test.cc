#include "stream/bits.h"

#include <gtest/gtest.h>

#include <bit>
#include <random>

namespace caveman::internal {
namespace {

// PopCount64 stands in for std::popcount (a libgcc call on baseline x86-64): equal on every
// single bit, every run of low and high bits, and random words of every density.
TEST(Bits, PopCount64EqualsStdPopcount) {
  EXPECT_EQ(PopCount64(0), 0);
  EXPECT_EQ(PopCount64(~uint64_t{0}), 64);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(PopCount64(uint64_t{1} << i), 1) << i;
    const uint64_t low = i == 0 ? 0 : ~uint64_t{0} >> (64 - i);
    EXPECT_EQ(PopCount64(low), i) << i;
    EXPECT_EQ(PopCount64(~low), 64 - i) << i;
  }
  std::mt19937_64 rng(19);
  for (int round = 0; round < 100000; ++round) {
    uint64_t x = rng();
    switch (round % 4) {
      case 1: x &= rng(); break;          // sparse
      case 2: x |= rng(); break;          // dense
      case 3: x &= rng() & rng(); break;  // sparser
      default: break;
    }
    ASSERT_EQ(PopCount64(x), std::popcount(x)) << std::hex << x;
  }
}

}  // namespace
}  // namespace caveman::internal
