// Bit counting without a library call (issue 19). The build targets baseline x86-64, which
// has no POPCNT instruction, so std::popcount compiles to a call of libgcc's __popcountdi2
// through the PLT: ≈ 0.8 % of the samples of the 64 MiB JSON dump, where the JSON selection
// counts one 64-byte block's blanks with it. The SWAR sum below is a dozen inline operations.
#ifndef CAVEMAN_STREAM_BITS_H_
#define CAVEMAN_STREAM_BITS_H_

#include <cstdint>
#include <string>

namespace caveman::internal {

// The number of bits set in x (std::popcount).
inline int PopCount64(uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555ULL;
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
}

// Appends v as 8 little-endian bytes (the layout of the build-time database blob and of the
// log compressor's kept-element records).
inline void AppendLe64(uint64_t v, std::string* out) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// The 8 little-endian bytes at p, as AppendLe64 wrote them.
inline uint64_t LoadLe64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

}  // namespace caveman::internal

#endif  // CAVEMAN_STREAM_BITS_H_
