// Text rules of §0.2/§0.3 shared by every compressor: UTF-8 validity and decoding, TRIM,
// FIELDS, LOWER, White_Space, NUMBER. Unicode properties come from ICU (Unicode 15).
#ifndef CAVEMAN_COMPRESSORS_TEXT_UTIL_H_
#define CAVEMAN_COMPRESSORS_TEXT_UTIL_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace caveman::internal {

// Well-formed UTF-8 (no overlongs, surrogates, or code points above U+10FFFF).
bool IsValidUtf8(std::string_view s);

// Incremental validator for chunked input: Feed pieces in order, then Finish().
class Utf8Validator {
 public:
  void Feed(std::string_view piece);
  // True iff everything fed was valid UTF-8 and no sequence is left incomplete.
  bool Finish() const { return valid_ && need_ == 0; }
  bool valid_so_far() const { return valid_; }

 private:
  bool valid_ = true;
  int need_ = 0;      // continuation bytes still expected
  uint32_t cp_ = 0;   // code point being assembled
  uint32_t min_ = 0;  // smallest code point allowed for this length (overlong check)
};

// Decodes one code point at s[i]; invalid bytes decode as U+FFFD with length 1.
// Returns the code point and advances i.
uint32_t DecodeUtf8(std::string_view s, size_t* i);
void AppendUtf8(uint32_t cp, std::string* out);

// Unicode White_Space property (the list of §0.3).
bool IsWhiteSpace(uint32_t cp);
std::string_view Trim(std::string_view s);
std::string_view TrimLeft(std::string_view s);
std::string_view TrimRight(std::string_view s);
// Splits on runs of White_Space, drops empty pieces.
std::vector<std::string_view> Fields(std::string_view s);
// Simple lowercase mapping per code point; invalid bytes become U+FFFD.
std::string Lower(std::string_view s);
std::string AsciiLower(std::string_view s);
// ASCII case-insensitive equality (other bytes compare exactly); no allocation.
bool EqualsAsciiIgnoreCase(std::string_view a, std::string_view b);

// Unicode general-category helpers (ICU).
bool IsLetter(uint32_t cp);        // L*
bool IsDecimalDigit(uint32_t cp);  // Nd
bool IsNumberChar(uint32_t cp);    // N*
bool IsControl(uint32_t cp);       // Cc

// NUMBER(s) of §0.3: the value if `s` parses as a number, else nullopt.
std::optional<double> ParseNumber(std::string_view s);

// Inline: detection calls them several times per line with short constant prefixes.
inline bool StartsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && (p.empty() || std::memcmp(s.data(), p.data(), p.size()) == 0);
}
inline bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && (p.empty() || std::memcmp(s.data() + s.size() - p.size(), p.data(), p.size()) == 0);
}
bool Contains(std::string_view s, std::string_view p);

// A set of bytes, for std::string_view::find_first_of's job on hot paths: libstdc++ answers
// find_first_of(set) with one search of the set per byte of the text (a memchr call per byte
// of every detected line; issue 19), this with one table lookup per byte.
class ByteSet {
 public:
  constexpr explicit ByteSet(std::string_view bytes) {
    for (char c : bytes) {
      const auto b = static_cast<unsigned char>(c);
      bits_[b >> 6] |= uint64_t{1} << (b & 63);
    }
  }
  constexpr bool Has(char c) const {
    const auto b = static_cast<unsigned char>(c);
    return ((bits_[b >> 6] >> (b & 63)) & 1) != 0;
  }
  // Same result as s.find_first_of(bytes, pos).
  size_t FindIn(std::string_view s, size_t pos = 0) const {
    for (size_t i = pos; i < s.size(); ++i) {
      if (Has(s[i])) return i;
    }
    return std::string_view::npos;
  }
  bool AnyIn(std::string_view s) const { return FindIn(s) != std::string_view::npos; }

 private:
  uint64_t bits_[4] = {};
};

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_TEXT_UTIL_H_
