// UTF-8 validation and decoding for token counting (§7.2): a byte that is not part of a
// well-formed sequence (Unicode Table 3-7: no overlongs, no surrogates, nothing above
// U+10FFFF) decodes as U+FFFD, one per byte. Shared with compressors/ (the JSON validity
// check), hence outside stream/internal/.
//
// Thread-safety: stateless functions.
#ifndef CAVEMAN_STREAM_UTF8_SCAN_H_
#define CAVEMAN_STREAM_UTF8_SCAN_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "stream/check.h"

namespace caveman::internal {

inline constexpr uint32_t kReplacementChar = 0xFFFD;

// Outcome of looking at the sequence that starts at a byte.
enum class Utf8Seq : int8_t {
  kInvalid = 0,     // the byte is not the start of a well-formed sequence: one U+FFFD
  kTruncated = -1,  // the bytes present are a well-formed prefix, but the sequence is cut off
};

// Length (1–4) of the well-formed sequence starting at p, or a Utf8Seq value (<= 0).
// REQUIRES: avail >= 1.
inline int Utf8SeqLen(const uint8_t* p, size_t avail) {
  CAVEMAN_DCHECK(avail >= 1);
  const uint8_t b0 = p[0];
  if (b0 < 0x80) return 1;
  int len;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte (Table 3-7)
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return static_cast<int>(Utf8Seq::kInvalid);
  }
  for (int k = 1; k < len; ++k) {
    if (static_cast<size_t>(k) >= avail) return static_cast<int>(Utf8Seq::kTruncated);
    const uint8_t b = p[k];
    if (k == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80) {
      return static_cast<int>(Utf8Seq::kInvalid);
    }
  }
  return len;
}

// Code point of a well-formed sequence of length len (from Utf8SeqLen).
inline uint32_t DecodeWellFormed(const uint8_t* p, int len) {
  switch (len) {
    case 1: return p[0];
    case 2: return (uint32_t{p[0] & 0x1Fu} << 6) | (p[1] & 0x3Fu);
    case 3: return (uint32_t{p[0] & 0x0Fu} << 12) | (uint32_t{p[1] & 0x3Fu} << 6) | (p[2] & 0x3Fu);
    default:
      return (uint32_t{p[0] & 0x07u} << 18) | (uint32_t{p[1] & 0x3Fu} << 12) | (uint32_t{p[2] & 0x3Fu} << 6) |
             (p[3] & 0x3Fu);
  }
}

// Whether the eight bytes at p[i..i+8) exist and are all ASCII: the word step of the scans below
// (logs, code and JSON are mostly ASCII).
inline bool EightAsciiAt(const uint8_t* p, size_t i, size_t n) {
  if (i + 8 > n) return false;
  uint64_t w;
  std::memcpy(&w, p + i, 8);
  return (w & 0x8080808080808080ULL) == 0;
}

// Offset of the first byte that is not part of a well-formed sequence (a truncated sequence
// at the end counts as ill-formed), or text.size() if the whole text is well-formed UTF-8.
inline size_t FirstInvalidUtf8(std::string_view text) {
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    if (p[i] < 0x80) {
      // An ASCII run: 32 bytes, then 8, then single bytes up to the next non-ASCII byte.
      while (i + 32 <= n) {
        uint64_t w[4];
        std::memcpy(w, p + i, sizeof w);
        if (((w[0] | w[1] | w[2] | w[3]) & 0x8080808080808080ULL) != 0) break;
        i += 32;
      }
      while (EightAsciiAt(p, i, n)) i += 8;
      while (i < n && p[i] < 0x80) ++i;
      continue;
    }
    const int len = Utf8SeqLen(p + i, n - i);
    if (len <= 0) return i;
    i += static_cast<size_t>(len);
  }
  return n;
}

// Kind of a byte at the start of a sequence: 0 ASCII, 1 never starts a well-formed sequence
// (continuation bytes, C0, C1, F5..FF), 2 to 4 a lead byte of that length.
struct Utf8LeadTable {
  uint8_t kind[256];
  constexpr Utf8LeadTable() : kind() {
    for (int b = 0; b < 256; ++b) {
      kind[b] =
          b < 0x80 ? 0 : (b >= 0xC2 && b <= 0xDF ? 2 : (b >= 0xE0 && b <= 0xEF ? 3 : (b >= 0xF0 && b <= 0xF4 ? 4 : 1)));
    }
  }
};
inline constexpr Utf8LeadTable kUtf8Lead;

// Per lead byte: the length of its sequence (0: never starts one), the allowed range of the
// second byte (Table 3-7) and which of the checks "second byte in range", "third byte a
// continuation", "fourth byte a continuation" (bits 0-2) the sequence needs (bit 3: an
// impossible check, for bytes that start no sequence).
struct Utf8StepTable {
  uint8_t len[256], lo[256], hi[256], need[256];
  constexpr Utf8StepTable() : len(), lo(), hi(), need() {
    for (int b = 0; b < 256; ++b) {
      const uint8_t kind = kUtf8Lead.kind[b];
      len[b] = kind == 0 ? 1 : (kind == 1 ? 0 : kind);
      need[b] = kind == 0 ? 0 : (kind == 1 ? 8 : (kind == 2 ? 1 : (kind == 3 ? 3 : 7)));
      lo[b] = b == 0xE0 ? 0xA0 : (b == 0xF0 ? 0x90 : 0x80);
      hi[b] = b == 0xED ? 0x9F : (b == 0xF4 ? 0x8F : 0xBF);
    }
  }
};
inline constexpr Utf8StepTable kUtf8Step;

// Writes `text` with every ill-formed byte replaced by EF BF BD (U+FFFD), one per byte, to
// out[0, returned size). REQUIRES: out has room for 3 × text.size() + 1 bytes (a step may
// store four bytes of which it keeps fewer).
inline size_t SanitizeUtf8To(std::string_view text, char* out) {
  // One pass written through a pointer: appending code point by code point (and regrowing
  // past the input's size, as random bytes do) cost ≈ 17 ns per byte (issue 15 item 11).
  // While four bytes remain, a step decides between the sequence's bytes and U+FFFD with
  // table lookups and selects, no branch: random bytes make every branch on them a coin
  // toss. Runs of eight ASCII bytes are copied whole.
  char* o = out;
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  constexpr uint8_t kFffd[4] = {0xEF, 0xBF, 0xBD, 0};
  uint32_t fffd;
  std::memcpy(&fffd, kFffd, 4);
  size_t i = 0;
  while (i + 4 <= n) {
    if (EightAsciiAt(p, i, n)) {
      std::memcpy(o, p + i, 8);
      o += 8;
      i += 8;
      continue;
    }
    const uint8_t b0 = p[i], b1 = p[i + 1], b2 = p[i + 2], b3 = p[i + 3];
    const unsigned ok = static_cast<unsigned>(b1 >= kUtf8Step.lo[b0] && b1 <= kUtf8Step.hi[b0]) |
                        (static_cast<unsigned>((b2 & 0xC0) == 0x80) << 1) |
                        (static_cast<unsigned>((b3 & 0xC0) == 0x80) << 2);
    const unsigned need = kUtf8Step.need[b0];
    const bool valid = (ok & need) == need;
    uint32_t word;
    std::memcpy(&word, p + i, 4);
    word = valid ? word : fffd;
    std::memcpy(o, &word, 4);
    const size_t len = kUtf8Step.len[b0];
    o += valid ? len : 3;
    i += valid ? len : 1;
  }
  while (i < n) {  // the last bytes: a sequence may be cut off by the end
    const int len = Utf8SeqLen(p + i, n - i);
    if (len > 0) {
      std::memcpy(o, p + i, static_cast<size_t>(len));
      o += len;
      i += static_cast<size_t>(len);
    } else {
      std::memcpy(o, kFffd, 3);
      o += 3;
      ++i;
    }
  }
  return static_cast<size_t>(o - out);
}

// `text` with every ill-formed byte replaced by EF BF BD (U+FFFD), one per byte.
inline std::string SanitizeUtf8(std::string_view text) {
  std::string out(text.size() * 3 + 1, '\0');  // the worst case: no regrowth
  out.resize(SanitizeUtf8To(text, out.data()));
  return out;
}

// Number of decoded code points, each ill-formed byte counting as one.
inline uint64_t CountCodePoints(std::string_view text) {
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  uint64_t count = 0;
  size_t i = 0;
  while (i < n) {
    if (EightAsciiAt(p, i, n)) {
      i += 8;
      count += 8;
      continue;
    }
    const int len = Utf8SeqLen(p + i, n - i);
    i += len > 0 ? static_cast<size_t>(len) : 1;
    ++count;
  }
  return count;
}

}  // namespace caveman::internal

#endif  // CAVEMAN_STREAM_UTF8_SCAN_H_
