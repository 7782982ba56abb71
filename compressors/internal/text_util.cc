#include "compressors/text_util.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <unicode/uchar.h>

namespace caveman::internal {

void Utf8Validator::Feed(std::string_view piece) {
  if (!valid_) return;
  for (size_t i = 0; i < piece.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(piece[i]);
    if (need_ == 0) {
      if (c < 0x80) {
        // ASCII fast path (added for the log compressor's streaming pass): skip whole words.
        while (i + 9 <= piece.size()) {
          uint64_t w;
          std::memcpy(&w, piece.data() + i + 1, 8);
          if (w & 0x8080808080808080ULL) break;
          i += 8;
        }
        continue;
      }
      if (c >= 0xC2 && c <= 0xDF) {
        need_ = 1;
        cp_ = c & 0x1F;
        min_ = 0x80;
      } else if (c >= 0xE0 && c <= 0xEF) {
        need_ = 2;
        cp_ = c & 0x0F;
        min_ = 0x800;
      } else if (c >= 0xF0 && c <= 0xF4) {
        need_ = 3;
        cp_ = c & 0x07;
        min_ = 0x10000;
      } else {
        valid_ = false;
        return;
      }
    } else {
      if ((c & 0xC0) != 0x80) {
        valid_ = false;
        return;
      }
      cp_ = (cp_ << 6) | (c & 0x3F);
      if (--need_ == 0) {
        if (cp_ < min_ || cp_ > 0x10FFFF || (cp_ >= 0xD800 && cp_ <= 0xDFFF)) {
          valid_ = false;
          return;
        }
      }
    }
  }
}

bool IsValidUtf8(std::string_view s) {
  // Fast path: ASCII runs.
  size_t i = 0;
  while (i + 8 <= s.size()) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if (w & 0x8080808080808080ULL) break;
    i += 8;
  }
  Utf8Validator v;
  v.Feed(s.substr(i));
  return v.Finish();
}

uint32_t DecodeUtf8(std::string_view s, size_t* pi) {
  size_t i = *pi;
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    *pi = i + 1;
    return c;
  }
  int need;
  uint32_t cp, min;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
    cp = c & 0x1F;
    min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    cp = c & 0x0F;
    min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    cp = c & 0x07;
    min = 0x10000;
  } else {
    *pi = i + 1;
    return 0xFFFD;
  }
  for (int k = 1; k <= need; ++k) {
    if (i + k >= s.size()) {
      *pi = i + 1;
      return 0xFFFD;
    }
    unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) {
      *pi = i + 1;
      return 0xFFFD;
    }
    cp = (cp << 6) | (d & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    *pi = i + 1;
    return 0xFFFD;
  }
  *pi = i + 1 + need;
  return cp;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80)
    out->push_back(static_cast<char>(cp));
  else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool IsWhiteSpace(uint32_t cp) {
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
  switch (cp) {
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000: return true;
    default: return cp >= 0x2000 && cp <= 0x200A;
  }
}

namespace {

// White_Space among the ASCII code points (IsWhiteSpace's first line): TAB, LF, VT, FF, CR
// and SPACE. Trimming tests these bytes inline and decodes only from the first non-ASCII one.
inline bool IsAsciiWhiteSpace(unsigned char c) { return c == 0x20 || (c >= 0x09 && c <= 0x0D); }

}  // namespace

std::string_view TrimLeft(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (!IsAsciiWhiteSpace(c)) break;
      ++i;
      continue;
    }
    size_t j = i;
    uint32_t cp = DecodeUtf8(s, &j);
    if (!IsWhiteSpace(cp)) break;
    i = j;
  }
  return s.substr(i);
}

std::string_view TrimRight(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    const auto c = static_cast<unsigned char>(s[end - 1]);
    if (c < 0x80) {  // an ASCII byte is a code point of its own
      if (!IsAsciiWhiteSpace(c)) break;
      --end;
      continue;
    }
    // Step back to the start of the last code point (at most 4 bytes).
    size_t start = end - 1;
    while (start > 0 && end - start < 4 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    size_t j = start;
    uint32_t cp = DecodeUtf8(s, &j);
    if (j != end) {  // not a clean code point ending here: the last byte stands alone
      cp = 0xFFFD;
      start = end - 1;
    }
    if (!IsWhiteSpace(cp)) break;
    end = start;
  }
  return s.substr(0, end);
}

std::string_view Trim(std::string_view s) { return TrimRight(TrimLeft(s)); }

std::vector<std::string_view> Fields(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0, start = std::string_view::npos;
  while (i < s.size()) {
    size_t j = i;
    uint32_t cp = DecodeUtf8(s, &j);
    if (IsWhiteSpace(cp)) {
      if (start != std::string_view::npos) out.push_back(s.substr(start, i - start));
      start = std::string_view::npos;
    } else if (start == std::string_view::npos) {
      start = i;
    }
    i = j;
  }
  if (start != std::string_view::npos) out.push_back(s.substr(start));
  return out;
}

std::string Lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c));
      ++i;
      continue;
    }
    uint32_t cp = DecodeUtf8(s, &i);
    AppendUtf8(static_cast<uint32_t>(u_tolower(static_cast<UChar32>(cp))), &out);
  }
  return out;
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return out;
}

bool EqualsAsciiIgnoreCase(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

bool IsLetter(uint32_t cp) {
  if (cp < 0x80) return (cp | 32) >= 'a' && (cp | 32) <= 'z';
  return u_isalpha(static_cast<UChar32>(cp)) && (U_GET_GC_MASK(static_cast<UChar32>(cp)) & U_GC_L_MASK) != 0;
}
bool IsDecimalDigit(uint32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return u_charType(static_cast<UChar32>(cp)) == U_DECIMAL_DIGIT_NUMBER;
}
bool IsNumberChar(uint32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return (U_GET_GC_MASK(static_cast<UChar32>(cp)) & U_GC_N_MASK) != 0;
}
bool IsControl(uint32_t cp) { return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F); }

namespace {
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || ((c | 32) >= 'a' && (c | 32) <= 'f'); }
}  // namespace

std::optional<double> ParseNumber(std::string_view s) {
  if (s.empty()) return std::nullopt;
  size_t i = 0;
  std::string buf;
  if (s[0] == '+' || s[0] == '-') ++i;
  std::string_view rest = s.substr(i);
  std::string lower = AsciiLower(rest);
  if (lower == "inf" || lower == "infinity") return s[0] == '-' ? -INFINITY : INFINITY;
  if (lower == "nan") return NAN;
  if (rest.size() >= 2 && rest[0] == '0' && (rest[1] | 32) == 'x') {
    // [+-]?0[xX]H*(\.H*)?[pP][+-]?D+ with >= 1 hex digit; '_' only between digits.
    size_t j = 2, hex_digits = 0;
    buf.assign(s.substr(0, i));
    buf += "0x";
    auto hex_run = [&]() {
      char prev = 0;
      while (j < rest.size() && (IsHex(rest[j]) || rest[j] == '_')) {
        if (rest[j] == '_') {
          if (!IsHex(prev) || j + 1 >= rest.size() || !IsHex(rest[j + 1])) return false;
        } else {
          buf.push_back(rest[j]);
          ++hex_digits;
        }
        prev = rest[j];
        ++j;
      }
      return true;
    };
    if (!hex_run()) return std::nullopt;
    if (j < rest.size() && rest[j] == '.') {
      buf.push_back('.');
      ++j;
      if (!hex_run()) return std::nullopt;
    }
    if (hex_digits == 0 || j >= rest.size() || (rest[j] | 32) != 'p') return std::nullopt;
    buf.push_back('p');
    ++j;
    if (j < rest.size() && (rest[j] == '+' || rest[j] == '-')) buf.push_back(rest[j++]);
    size_t d0 = j;
    while (j < rest.size() && IsDigit(rest[j])) buf.push_back(rest[j++]);
    if (j == d0 || j != rest.size()) return std::nullopt;
  } else {
    size_t j = 0, int_digits = 0, frac_digits = 0;
    while (j < rest.size() && IsDigit(rest[j])) {
      ++j;
      ++int_digits;
    }
    if (j < rest.size() && rest[j] == '.') {
      ++j;
      while (j < rest.size() && IsDigit(rest[j])) {
        ++j;
        ++frac_digits;
      }
    }
    if (int_digits == 0 && frac_digits == 0) return std::nullopt;
    if (j < rest.size() && (rest[j] | 32) == 'e') {
      ++j;
      if (j < rest.size() && (rest[j] == '+' || rest[j] == '-')) ++j;
      size_t d0 = j;
      while (j < rest.size() && IsDigit(rest[j])) ++j;
      if (j == d0) return std::nullopt;
    }
    if (j != rest.size()) return std::nullopt;
    buf.assign(s);
  }
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(buf.c_str(), &end);
  if (std::isinf(v)) return std::nullopt;  // overflow: 1e400 is not a number
  return v;
}

bool Contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

}  // namespace caveman::internal
