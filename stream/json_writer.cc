// The escaper is table-driven and copies unescaped runs in one append: it writes every JSON
// view of the compressors (megabytes of strings), not just the short report fields.
#include "stream/json_writer.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <charconv>
#include <cmath>

#include "stream/check.h"

namespace caveman {
namespace {

// 0 = copied as is; 1 = escaped; 2 = 0xE2, which starts U+2028 / U+2029 (E2 80 A8/A9).
struct EscapeTable {
  uint8_t t[256];
  constexpr EscapeTable() : t() {
    for (int i = 0; i < 0x20; ++i) t[i] = 1;
    t[static_cast<int>('"')] = 1;
    t[static_cast<int>('\\')] = 1;
    t[static_cast<int>('<')] = 1;
    t[static_cast<int>('>')] = 1;
    t[static_cast<int>('&')] = 1;
    t[0xE2] = 2;
  }
};
constexpr EscapeTable kEscape;

// Steps i over whole 16-byte blocks in which the table maps every byte to 0; returns the start
// of the first block that has another byte, or of the tail shorter than 16 bytes.
size_t SkipPlainBlocks(const char* s, size_t i, size_t n) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i lt = _mm_set1_epi8('<');
  const __m128i gt = _mm_set1_epi8('>');
  const __m128i amp = _mm_set1_epi8('&');
  const __m128i e2 = _mm_set1_epi8(static_cast<char>(0xE2));
  const __m128i space = _mm_set1_epi8(0x20);
  while (i + 16 <= n) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i special =
        _mm_or_si128(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                                  _mm_or_si128(_mm_cmpeq_epi8(x, lt), _mm_cmpeq_epi8(x, gt))),
                     _mm_or_si128(_mm_cmpeq_epi8(x, amp), _mm_cmpeq_epi8(x, e2)));
    const __m128i printable = _mm_cmpeq_epi8(_mm_max_epu8(x, space), x);  // x >= 0x20
    if (_mm_movemask_epi8(special) != 0 || _mm_movemask_epi8(printable) != 0xFFFF) break;
    i += 16;
  }
#else
  (void)s;
  (void)n;
#endif
  return i;
}

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t run = 0;
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    // Blocks without a byte to escape are stepped over; the block after them (or the tail) is
    // read byte by byte.
    i = SkipPlainBlocks(s.data(), i, n);
    const size_t block_end = std::min(i + 16, n);
    for (; i < block_end; ++i) {
      unsigned char c = static_cast<unsigned char>(s[i]);
      uint8_t e = kEscape.t[c];
      if (e == 0) continue;
      if (e == 2) {
        if (i + 2 < n && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
            (static_cast<unsigned char>(s[i + 2]) == 0xA8 || static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
          out->append(s.data() + run, i - run);
          out->append(static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029");
          i += 2;
          run = i + 1;
        }
        continue;
      }
      out->append(s.data() + run, i - run);
      run = i + 1;
      switch (c) {
        case '"': out->append("\\\""); break;
        case '\\': out->append("\\\\"); break;
        case '\n': out->append("\\n"); break;
        case '\r': out->append("\\r"); break;
        case '\t': out->append("\\t"); break;
        case 0x08: out->append("\\b"); break;
        case 0x0C: out->append("\\f"); break;
        case '<': out->append("\\u003c"); break;
        case '>': out->append("\\u003e"); break;
        case '&': out->append("\\u0026"); break;
        default:
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
      }
    }
  }
  out->append(s.data() + run, n - run);
  out->push_back('"');
}

std::string JsonQuote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  AppendJsonString(s, &out);
  return out;
}

std::string FormatRatio(double r) {
  if (r == 0 || !std::isfinite(r)) return "0";
  char buf[64];
  std::to_chars_result res;
  if (std::fabs(r) < 1e-6) {
    res = std::to_chars(buf, buf + sizeof buf, r, std::chars_format::scientific);
  } else {
    res = std::to_chars(buf, buf + sizeof buf, r, std::chars_format::fixed);
  }
  std::string s(buf, res.ptr);
  // Exponent form without '+' or leading zeros: 1e-07 → 1e-7.
  size_t e = s.find('e');
  if (e != std::string::npos) {
    std::string mant = s.substr(0, e), exp = s.substr(e + 1);
    bool neg = !exp.empty() && exp[0] == '-';
    if (!exp.empty() && (exp[0] == '-' || exp[0] == '+')) exp.erase(0, 1);
    while (exp.size() > 1 && exp[0] == '0') exp.erase(0, 1);
    s = mant + "e" + (neg ? "-" : "") + exp;
  }
  return s;
}

void JsonWriter::NewLine(size_t depth) {
  out_.push_back('\n');
  out_.append(depth * static_cast<size_t>(indent_), ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_members_.empty()) {
    if (has_members_.back()) out_.push_back(',');
    has_members_.back() = true;
    if (indent_ > 0) NewLine(has_members_.size());
  }
}

void JsonWriter::Close(char bracket) {
  // Indented: the closing bracket goes on a line of its own unless the container is empty.
  if (indent_ > 0 && has_members_.back()) NewLine(has_members_.size() - 1);
  out_.push_back(bracket);
  has_members_.pop_back();
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_.push_back('{');
  has_members_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::BeginObjectFrom(std::string_view object) {
  CAVEMAN_DCHECK(indent_ == 0 && object.size() >= 2 && object.front() == '{' && object.back() == '}');
  BeforeValue();
  // Everything but the closing brace; "{}" has no member a comma would have to follow.
  out_.append(object.substr(0, object.size() - 1));
  has_members_.push_back(object.size() > 2);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  CAVEMAN_DCHECK(!has_members_.empty() && !after_key_);
  Close('}');
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_.push_back('[');
  has_members_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  CAVEMAN_DCHECK(!has_members_.empty() && !after_key_);
  Close(']');
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  CAVEMAN_DCHECK(!has_members_.empty() && !after_key_);  // inside a container, not after a key
  BeforeValue();
  AppendJsonString(key, &out_);
  out_.append(indent_ > 0 ? ": " : ":");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view v) {
  BeforeValue();
  AppendJsonString(v, &out_);
  return *this;
}

JsonWriter& JsonWriter::Uint(uint64_t v) {
  BeforeValue();
  char buf[24];
  out_.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t v) {
  BeforeValue();
  char buf[24];
  out_.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool v) {
  BeforeValue();
  out_.append(v ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_.append("null");
  return *this;
}

JsonWriter& JsonWriter::Ratio(double v) {
  BeforeValue();
  out_.append(FormatRatio(v));
  return *this;
}

JsonWriter& JsonWriter::Raw(std::string_view json) {
  BeforeValue();
  out_.append(json);
  return *this;
}

}  // namespace caveman
