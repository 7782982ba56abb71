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

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// One step of SanitizeUtf8To at p[*i] (REQUIRES: *i + 4 <= n): the sequence's bytes, or U+FFFD
// for an ill-formed byte, decided with table lookups and selects, no branch (random bytes make
// every branch on them a coin toss); eight ASCII bytes are copied whole.
// EF BF BD 00 as a 32-bit word in memory order.
inline uint32_t FffdWord() {
  constexpr uint8_t kFffd[4] = {0xEF, 0xBF, 0xBD, 0};
  uint32_t w;
  std::memcpy(&w, kFffd, 4);
  return w;
}

inline void SanitizeStep(const uint8_t* p, size_t n, size_t* i, char** o) {
  if (EightAsciiAt(p, *i, n)) {
    std::memcpy(*o, p + *i, 8);
    *o += 8;
    *i += 8;
    return;
  }
  const uint8_t b0 = p[*i], b1 = p[*i + 1], b2 = p[*i + 2], b3 = p[*i + 3];
  const unsigned ok = static_cast<unsigned>(b1 >= kUtf8Step.lo[b0] && b1 <= kUtf8Step.hi[b0]) |
                      (static_cast<unsigned>((b2 & 0xC0) == 0x80) << 1) |
                      (static_cast<unsigned>((b3 & 0xC0) == 0x80) << 2);
  const unsigned need = kUtf8Step.need[b0];
  const bool valid = (ok & need) == need;
  uint32_t word;
  std::memcpy(&word, p + *i, 4);
  word = valid ? word : FffdWord();
  std::memcpy(*o, &word, 4);
  const size_t len = kUtf8Step.len[b0];
  *o += valid ? len : 3;
  *i += valid ? len : 1;
}

#if defined(__SSE2__)
// For each of the 16 positions p[0, 16): the length of the well-formed sequence that starts
// there (1-4), or 0 when none does. Reads p[0, 19). Table 3-7 of Unicode: lead bytes C2-DF,
// E0-EF, F0-F4; the second byte in 80-BF except after E0 (A0-BF), ED (80-9F), F0 (90-BF) and
// F4 (80-8F); third and fourth bytes continuation bytes.
inline __m128i SequenceLengths16(const uint8_t* p) {
  const auto at = [p](int k) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + k)); };
  const auto byte = [](int v) { return _mm_set1_epi8(static_cast<char>(v)); };
  // x in [lo, hi], unsigned
  const auto in = [](__m128i x, __m128i lo, __m128i hi) {
    return _mm_cmpeq_epi8(_mm_min_epu8(_mm_max_epu8(x, lo), hi), x);
  };
  const __m128i b0 = at(0), b1 = at(1), b2 = at(2), b3 = at(3);
  const __m128i ascii = _mm_cmpgt_epi8(b0, byte(-1));
  const __m128i lead2 = in(b0, byte(0xC2), byte(0xDF));
  const __m128i lead3 = in(b0, byte(0xE0), byte(0xEF));
  const __m128i lead4 = in(b0, byte(0xF0), byte(0xF4));
  const __m128i lo = _mm_or_si128(byte(0x80), _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(b0, byte(0xE0)), byte(0x20)),
                                                           _mm_and_si128(_mm_cmpeq_epi8(b0, byte(0xF0)), byte(0x10))));
  const __m128i hi = _mm_sub_epi8(_mm_sub_epi8(byte(0xBF), _mm_and_si128(_mm_cmpeq_epi8(b0, byte(0xED)), byte(0x20))),
                                  _mm_and_si128(_mm_cmpeq_epi8(b0, byte(0xF4)), byte(0x30)));
  const __m128i second = in(b1, lo, hi);
  const __m128i third = _mm_cmpeq_epi8(_mm_and_si128(b2, byte(0xC0)), byte(0x80));
  const __m128i fourth = _mm_cmpeq_epi8(_mm_and_si128(b3, byte(0xC0)), byte(0x80));
  const __m128i v2 = _mm_and_si128(lead2, second);
  const __m128i v3 = _mm_and_si128(_mm_and_si128(lead3, second), third);
  const __m128i v4 = _mm_and_si128(_mm_and_si128(_mm_and_si128(lead4, second), third), fourth);
  return _mm_or_si128(_mm_or_si128(_mm_and_si128(ascii, byte(1)), _mm_and_si128(v2, byte(2))),
                      _mm_or_si128(_mm_and_si128(v3, byte(3)), _mm_and_si128(v4, byte(4))));
}
#endif

// Writes `text` with every ill-formed byte replaced by EF BF BD (U+FFFD), one per byte, to
// out[0, returned size). REQUIRES: out has room for 3 × text.size() + 1 bytes (a step may
// store four bytes of which it keeps fewer).
inline size_t SanitizeUtf8To(std::string_view text, char* out) {
  // One pass written through a pointer: appending code point by code point (and regrowing
  // past the input's size, as random bytes do) cost ≈ 17 ns per byte (issue 15 item 11).
  char* o = out;
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  constexpr uint8_t kFffd[4] = {0xEF, 0xBF, 0xBD, 0};
  size_t i = 0;
#if defined(__SSE2__)
  // 64 positions at a time. All ASCII: copied. A few bytes that are not: SanitizeStep, which
  // steps over ASCII runs. Dense non-ASCII (binary data, most scripts): the sequence length at
  // every position is computed first, 16 at once, so the walk from one sequence to the next
  // waits on one load and an add (SanitizeStep's chain of table lookups made random bytes
  // ≈ 7.6 ns per byte, a quarter of counting them).
  alignas(16) uint8_t adv[64], olen[64];
  while (n - i >= 64 + 3) {
    const uint8_t* q = p + i;
    // Non-ASCII bytes among the 64, counted by SAD (std::popcount is a libgcc call here).
    __m128i high = _mm_setzero_si128();
    for (int k = 0; k < 4; ++k) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * k));
      high =
          _mm_add_epi64(high, _mm_sad_epu8(_mm_srli_epi16(_mm_and_si128(x, _mm_set1_epi8(static_cast<char>(0x80))), 7),
                                           _mm_setzero_si128()));
    }
    const int non_ascii = _mm_cvtsi128_si32(high) + _mm_extract_epi16(high, 4);
    if (non_ascii == 0) {
      std::memcpy(o, q, 64);
      o += 64;
      i += 64;
      continue;
    }
    if (non_ascii < 24) {
      const size_t end = i + 64;
      while (i < end) SanitizeStep(p, n, &i, &o);
      continue;
    }
    for (int k = 0; k < 4; ++k) {
      const __m128i len = SequenceLengths16(q + 16 * k);
      const __m128i bad = _mm_cmpeq_epi8(len, _mm_setzero_si128());
      // An ill-formed byte: one byte on, three bytes (U+FFFD) out.
      _mm_store_si128(reinterpret_cast<__m128i*>(adv + 16 * k), _mm_sub_epi8(len, bad));
      _mm_store_si128(reinterpret_cast<__m128i*>(olen + 16 * k),
                      _mm_or_si128(len, _mm_and_si128(bad, _mm_set1_epi8(3))));
    }
    const uint32_t fffd = FffdWord();
    size_t j = 0;
    while (j < 64) {
      uint32_t word;
      std::memcpy(&word, q + j, 4);
      word = olen[j] != adv[j] ? fffd : word;  // they differ only for an ill-formed byte
      std::memcpy(o, &word, 4);
      o += olen[j];
      j += adv[j];
    }
    i += j;
  }
#endif
  while (i + 4 <= n) SanitizeStep(p, n, &i, &o);
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
