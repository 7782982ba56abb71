#include "compressors/internal/json_validity.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <simdjson.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "compressors/internal/json_skeleton.h"
#include "stream/utf8_scan.h"

namespace caveman::internal {
namespace {

namespace od = simdjson::ondemand;

constexpr int kMaxDepth = 10000;
// Inputs up to this size reuse a per-thread parser; larger ones get a parser per call so a
// thread does not keep hundreds of MiB of structural indexes alive after one huge payload.
constexpr size_t kReuseParserLimit = 4u << 20;

bool IsJsonWs(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view TrimJsonWsRight(std::string_view s) {
  while (!s.empty() && IsJsonWs(s.back())) s.remove_suffix(1);
  return s;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// RFC 8259 number grammar: -?(0|[1-9]D*)(.D+)?([eE][+-]?D+)?  (any magnitude is valid JSON;
// simdjson's own number parser rejects 1e400, so it is not used).
bool IsNumberToken(std::string_view s) {
  size_t i = 0, n = s.size();
  if (i < n && s[i] == '-') ++i;
  if (i >= n) return false;
  if (s[i] == '0') {
    ++i;
  } else if (s[i] >= '1' && s[i] <= '9') {
    while (i < n && IsDigit(s[i])) ++i;
  } else {
    return false;
  }
  if (i < n && s[i] == '.') {
    size_t start = ++i;
    while (i < n && IsDigit(s[i])) ++i;
    if (i == start) return false;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    size_t start = i;
    while (i < n && IsDigit(s[i])) ++i;
    if (i == start) return false;
  }
  return i == n;
}

int HexValue(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads 4 hex digits at p; -1 if any is not hex.
int32_t Hex4(const uint8_t* p) {
  int32_t v = 0;
  for (int k = 0; k < 4; ++k) {
    int h = HexValue(p[k]);
    if (h < 0) return -1;
    v = (v << 4) | h;
  }
  return v;
}

// Validates the escapes of a string whose content starts at `p` (just after the opening
// quote). Stage 1 has already checked UTF-8, unescaped control characters and that the
// closing quote exists. Sets *end to the closing quote.
bool ValidateStringBody(const uint8_t* p, const uint8_t** end) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  for (;;) {
    // Most strings are short: look at up to 16 bytes one by one, then skip 8 bytes at a time
    // while none is '"' or '\\'. Reading past the closing quote is safe: the buffer is padded
    // (or the padding is on a mapped page, see PaddingIsReadable).
    int k = 0;
    while (k < 16 && p[k] != '"' && p[k] != '\\') ++k;
    p += k;
    if (k == 16)
      for (;;) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        uint64_t q = w ^ (kOnes * '"');
        uint64_t b = w ^ (kOnes * '\\');
        uint64_t hit = ((q - kOnes) & ~q & kHigh) | ((b - kOnes) & ~b & kHigh);
        if (hit != 0) break;
        p += 8;
      }
    uint8_t c = *p;
    if (c == '"') {
      *end = p;
      return true;
    }
    if (c != '\\') {
      ++p;
      continue;
    }
    uint8_t e = p[1];
    switch (e) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't': p += 2; continue;
      case 'u': {
        int32_t cp = Hex4(p + 2);
        if (cp < 0) return false;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          // A high surrogate must be followed by an escaped low surrogate.
          if (p[6] != '\\' || p[7] != 'u') return false;
          int32_t lo = Hex4(p + 8);
          if (lo < 0xDC00 || lo > 0xDFFF) return false;
          p += 12;
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return false;
        } else {
          p += 6;
        }
        continue;
      }
      default: return false;
    }
  }
}

bool AtomIs(std::string_view raw, std::string_view lit) { return TrimJsonWsRight(raw) == lit; }

// Key text after unescaping, for the few keys the test-report rule looks at. Keys with
// escapes are decoded the slow way; plain keys are compared raw.
std::string DecodeKey(const uint8_t* p, const uint8_t* end) {
  std::string out;
  while (p < end) {
    if (*p != '\\') {
      out.push_back(static_cast<char>(*p++));
      continue;
    }
    uint8_t e = p[1];
    switch (e) {
      case 'b':
        out.push_back('\b');
        p += 2;
        continue;
      case 'f':
        out.push_back('\f');
        p += 2;
        continue;
      case 'n':
        out.push_back('\n');
        p += 2;
        continue;
      case 'r':
        out.push_back('\r');
        p += 2;
        continue;
      case 't':
        out.push_back('\t');
        p += 2;
        continue;
      case 'u': break;
      default:
        out.push_back(static_cast<char>(e));
        p += 2;
        continue;
    }
    uint32_t cp = static_cast<uint32_t>(Hex4(p + 2));
    p += 6;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      uint32_t lo = static_cast<uint32_t>(Hex4(p + 2));
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      p += 6;
    }
    // UTF-8 encode (the keys of interest are ASCII; exactness here only matters for them).
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else {
      out.push_back('\x01');  // never equal to an ASCII key
    }
  }
  return out;
}

// Validates one scalar value.
bool ValidScalar(od::value& v, od::json_type type) {
  switch (type) {
    case od::json_type::string: {
      // The token runs from the opening quote to the next structural character; stage 1
      // has checked its UTF-8 and control characters, so only escapes need a look.
      std::string_view token = v.raw_json_token();
      if (std::memchr(token.data(), '\\', token.size()) == nullptr) return true;
      const uint8_t* end;
      return ValidateStringBody(reinterpret_cast<const uint8_t*>(token.data()) + 1, &end);
    }
    case od::json_type::number: return IsNumberToken(TrimJsonWsRight(v.raw_json_token()));
    case od::json_type::boolean: {
      std::string_view raw = v.raw_json_token();
      return AtomIs(raw, "true") || AtomIs(raw, "false");
    }
    case od::json_type::null: return AtomIs(v.raw_json_token(), "null");
    default: return false;
  }
}

void RecordTopKey(const uint8_t* kbeg, const uint8_t* kend, JsonShape* shape) {
  std::string_view k(reinterpret_cast<const char*>(kbeg), kend - kbeg);
  std::string decoded;
  if (k.find('\\') != std::string_view::npos) {
    decoded = DecodeKey(kbeg, kend);
    k = decoded;
  }
  if (k == "exitcode")
    shape->has_exitcode = true;
  else if (k == "tests")
    shape->has_tests = true;
  else if (k == "numFailedTests")
    shape->has_num_failed_tests = true;
  else if (k == "testResults")
    shape->has_test_results = true;
}

// One open container of the walk. The walk keeps its own stack instead of recursing: 10,000
// levels of recursion overflow small thread stacks (and any stack under ASan).
struct Frame {
  bool is_array = false;
  bool started = false;  // a child has been handed out: advance before the next one
  od::array_iterator array_it;
  od::object_iterator object_it;
};

template <typename Container>
bool PushFrame(Container c, std::vector<Frame>* stack) {
  Frame f;
  if constexpr (std::is_same_v<Container, od::array>) {
    f.is_array = true;
    if (c.begin().get(f.array_it)) return false;
  } else {
    if (c.begin().get(f.object_it)) return false;
  }
  stack->push_back(std::move(f));
  return true;
}

// Walks every value under the top container already pushed on `stack`, in document order
// (On-Demand requires it). Records the top-level keys into `shape` when it is set.
bool WalkAll(std::vector<Frame>* stack, JsonShape* shape) {
  while (!stack->empty()) {
    Frame& fr = stack->back();
    if (fr.started) {
      if (fr.is_array)
        ++fr.array_it;
      else
        ++fr.object_it;
    }
    fr.started = true;
    // operator!= only asks whether the container is still open.
    bool open = fr.is_array ? (fr.array_it != fr.array_it) : (fr.object_it != fr.object_it);
    if (!open) {
      stack->pop_back();
      continue;
    }
    od::value child;
    if (fr.is_array) {
      if ((*fr.array_it).get(child)) return false;
    } else {
      od::field field;
      if ((*fr.object_it).get(field)) return false;
      const uint8_t* kbeg = reinterpret_cast<const uint8_t*>(field.key().raw());
      const uint8_t* kend;
      if (!ValidateStringBody(kbeg, &kend)) return false;
      if (shape != nullptr && stack->size() == 1) RecordTopKey(kbeg, kend, shape);
      child = std::move(field.value());
    }
    od::json_type type;
    if (child.type().get(type)) return false;
    if (type == od::json_type::array || type == od::json_type::object) {
      if (stack->size() + 1 > static_cast<size_t>(kMaxDepth)) return false;
      bool ok;
      if (type == od::json_type::array) {
        od::array a;
        ok = !child.get_array().get(a) && PushFrame(std::move(a), stack);
      } else {
        od::object o;
        ok = !child.get_object().get(o) && PushFrame(std::move(o), stack);
      }
      if (!ok) return false;
      continue;
    }
    if (!ValidScalar(child, type)) return false;
  }
  return true;
}

bool PaddingIsReadable(const char* data, size_t len) {
#if defined(__SANITIZE_ADDRESS__)
  return false;
#else
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  return false;
#endif
#endif
  // simdjson may read up to simdjson::SIMDJSON_PADDING bytes past the end. When those bytes lie on the
  // same (4 KiB, the smallest) page as the last byte they are mapped, so the copy into a
  // padded buffer can be skipped: this saves a full copy of a 64 MiB payload. The bytes'
  // values do not matter to the On-Demand parser.
  uintptr_t last = reinterpret_cast<uintptr_t>(data + len - 1);
  return (last >> 12) == ((last + simdjson::SIMDJSON_PADDING) >> 12);
#endif
}

JsonShape Validate(od::parser& parser, simdjson::padded_string_view json) {
  JsonShape shape;
  od::document doc;
  if (parser.iterate(json).get(doc)) return shape;
  od::json_type type;
  if (doc.type().get(type)) return shape;
  bool ok = false;
  std::vector<Frame> stack;
  switch (type) {
    case od::json_type::object: {
      od::object o;
      if (doc.get_object().get(o) || !PushFrame(std::move(o), &stack)) return shape;
      shape.top_is_object = true;
      ok = WalkAll(&stack, &shape);
      break;
    }
    case od::json_type::array: {
      od::array a;
      if (doc.get_array().get(a) || !PushFrame(std::move(a), &stack)) return shape;
      ok = WalkAll(&stack, nullptr);
      break;
    }
    case od::json_type::string: {
      od::raw_json_string raw;
      const uint8_t* end;
      ok = !doc.get_raw_json_string().get(raw) && ValidateStringBody(reinterpret_cast<const uint8_t*>(raw.raw()), &end);
      break;
    }
    default: {
      std::string_view raw;
      if (doc.raw_json_token().get(raw)) return shape;
      raw = TrimJsonWsRight(raw);
      ok = type == od::json_type::number    ? IsNumberToken(raw)
           : type == od::json_type::boolean ? (raw == "true" || raw == "false")
                                            : raw == "null";
      break;
    }
  }
  if (!ok) {
    shape.top_is_object = false;
    return shape;
  }
  // Exactly one value: nothing but whitespace may follow it.
  const char* loc;
  if (doc.current_location().get(loc) != simdjson::OUT_OF_BOUNDS) {
    shape = JsonShape{};
    return shape;
  }
  shape.valid = true;
  return shape;
}

}  // namespace

// Byte-level RFC 8259 validator for large texts (issue 15 item 8): no allocation beyond one
// bit per open container (≤ kMaxDepth), no reads past the end, no recursion. Same verdict
// and shape as the simdjson walk: UTF-8 checked once, control characters in strings refused,
// escapes and surrogate pairs as ValidateStringBody, numbers by IsNumberToken, depth ≤
// kMaxDepth. Used for every text over kReuseParserLimit and whenever a simdjson parser
// cannot be allocated, so detection depends on the bytes only, not on available memory.
//
// The walk reports the document's structure to an Observer (all calls inline): OnValue(begin)
// where a value starts, OnOpen(begin, is_array) / OnClose(end) around a container's
// children, OnEnd(end) after a value (a container's OnEnd follows its OnClose), and
// OnKey(quote) with the offset of a member key's opening quote before the member's value.
// NoObserver ignores them all; JsonSkeleton (json_skeleton.h) records the upper levels.
struct NoObserver {
  void OnValue(size_t) {}
  void OnOpen(size_t, bool) {}
  void OnClose(size_t) {}
  void OnEnd(size_t) {}
  void OnKey(size_t) {}
};

template <class Observer>
class ByteValidator {
 public:
  ByteValidator(std::string_view t, Observer& obs)
      : p_(reinterpret_cast<const uint8_t*>(t.data())), n_(t.size()), obs_(obs) {}

  JsonShape Run() {
    JsonShape shape;
    if (FirstInvalidUtf8(std::string_view(reinterpret_cast<const char*>(p_), n_)) != n_) return shape;
    std::vector<bool> is_array;  // open containers
    is_array.reserve(64);
    Ws();
    if (i_ < n_ && p_[i_] == '{') shape.top_is_object = true;
    // State machine: expecting a value, or after a value inside a container.
    bool want_value = true;
    for (;;) {
      if (want_value) {
        Ws();
        if (i_ >= n_) return {};
        const uint8_t c = p_[i_];
        obs_.OnValue(i_);
        if (c == '{' || c == '[') {
          if (is_array.size() + 1 > static_cast<size_t>(kMaxDepth)) return {};
          obs_.OnOpen(i_, c == '[');
          ++i_;
          is_array.push_back(c == '[');
          Ws();
          if (i_ < n_ && p_[i_] == (c == '[' ? ']' : '}')) {
            ++i_;
            is_array.pop_back();
            obs_.OnClose(i_);
            obs_.OnEnd(i_);
            want_value = false;
          } else if (c == '{') {
            if (!Key(is_array.size() == 1 ? &shape : nullptr)) return {};
          }
          continue;
        }
        if (!Scalar()) return {};
        obs_.OnEnd(i_);
        want_value = false;
        continue;
      }
      if (is_array.empty()) break;
      Ws();
      if (i_ >= n_) return {};
      const uint8_t c = p_[i_++];
      if (c == ',') {
        if (!is_array.back() && !Key(is_array.size() == 1 ? &shape : nullptr)) return {};
        want_value = true;
      } else if (c == (is_array.back() ? ']' : '}')) {
        is_array.pop_back();
        obs_.OnClose(i_);
        obs_.OnEnd(i_);
      } else {
        return {};
      }
    }
    Ws();
    if (i_ != n_) return {};
    shape.valid = true;
    if (!shape.top_is_object) shape = JsonShape{.valid = true};
    return shape;
  }

 private:
  void Ws() {
    // Runs of spaces (indentation) a word at a time, up to their first other byte; newlines,
    // tabs and CRs one by one.
    while (i_ < n_) {
      if (i_ + 8 <= n_) {
        const uint64_t other = Word(i_) ^ kEightSpaces;  // nonzero bytes: not a space
        if (other == 0) {
          i_ += 8;
          continue;
        }
        if constexpr (std::endian::native == std::endian::little) {
          const size_t spaces = static_cast<size_t>(std::countr_zero(other)) >> 3;
          if (spaces > 0) {
            i_ += spaces;
            continue;
          }
        }
      }
      if (!IsJsonWs(static_cast<char>(p_[i_]))) return;
      ++i_;
    }
  }
  uint64_t Word(size_t at) const {
    uint64_t w;
    std::memcpy(&w, p_ + at, sizeof w);
    return w;
  }
  // The high bit of each of the eight bytes in w that is a quote, a backslash or a control
  // character, 0 if none is. A byte after one that is may be flagged too, but the lowest flag
  // is exact (borrows only run upwards). Bytes 0x80-0xFF are never flagged.
  static uint64_t StringRunEnds(uint64_t w) {
    constexpr uint64_t kOnes = 0x0101010101010101ULL;
    constexpr uint64_t kHigh = 0x8080808080808080ULL;
    auto has_zero = [](uint64_t x) { return (x - kOnes) & ~x & kHigh; };
    return has_zero(w ^ (kOnes * '"')) | has_zero(w ^ (kOnes * '\\')) | ((w - kOnes * 0x20) & ~w & kHigh);
  }
  static constexpr uint64_t kEightSpaces = 0x2020202020202020ULL;
  // `"key"` then ':'; records top-level keys.
  bool Key(JsonShape* shape) {
    Ws();
    if (i_ >= n_ || p_[i_] != '"') return false;
    const size_t begin = i_ + 1;
    obs_.OnKey(i_);
    if (!String()) return false;
    if (shape != nullptr) RecordTopKey(p_ + begin, p_ + i_ - 1, shape);
    Ws();
    if (i_ >= n_ || p_[i_] != ':') return false;
    ++i_;
    return true;
  }
  // A string starting at the quote at i_; leaves i_ after the closing quote.
  bool String() {
    ++i_;
    while (i_ < n_) {
      // Plain string bytes eight at a time (UTF-8 was checked before the walk), then straight
      // to the first byte that may end the run (most strings end within their first word).
      while (i_ + 8 <= n_) {
        const uint64_t ends = StringRunEnds(Word(i_));
        if (ends == 0) {
          i_ += 8;
          continue;
        }
        if constexpr (std::endian::native == std::endian::little)
          i_ += static_cast<size_t>(std::countr_zero(ends)) >> 3;
        break;
      }
      if (i_ >= n_) break;
      const uint8_t c = p_[i_];
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return false;
      if (c != '\\') {
        ++i_;
        continue;
      }
      if (i_ + 1 >= n_) return false;
      const uint8_t e = p_[i_ + 1];
      if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
        i_ += 2;
        continue;
      }
      if (e != 'u' || i_ + 6 > n_) return false;
      const int32_t cp = Hex4(p_ + i_ + 2);
      if (cp < 0) return false;
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (i_ + 12 > n_ || p_[i_ + 6] != '\\' || p_[i_ + 7] != 'u') return false;
        const int32_t lo = Hex4(p_ + i_ + 8);
        if (lo < 0xDC00 || lo > 0xDFFF) return false;
        i_ += 12;
      } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        return false;
      } else {
        i_ += 6;
      }
    }
    return false;
  }
  bool Literal(std::string_view lit) {
    if (n_ - i_ < lit.size() || std::memcmp(p_ + i_, lit.data(), lit.size()) != 0) return false;
    i_ += lit.size();
    return true;
  }
  bool Scalar() {
    const uint8_t c = p_[i_];
    if (c == '"') return String();
    if (c == 't') return Literal("true");
    if (c == 'f') return Literal("false");
    if (c == 'n') return Literal("null");
    const size_t b = i_;
    while (i_ < n_ && (IsDigit(static_cast<char>(p_[i_])) || p_[i_] == '-' || p_[i_] == '+' || p_[i_] == '.' ||
                       p_[i_] == 'e' || p_[i_] == 'E')) {
      ++i_;
    }
    return i_ > b && IsNumberToken(std::string_view(reinterpret_cast<const char*>(p_ + b), i_ - b));
  }

  const uint8_t* p_;
  size_t n_;
  size_t i_ = 0;
  Observer& obs_;
};

JsonShape ValidateJsonBytes(std::string_view text) {
  NoObserver none;
  return ByteValidator<NoObserver>(text, none).Run();
}

JsonShape ValidateJsonBytes(std::string_view text, JsonSkeleton* skeleton) {
  return ByteValidator<JsonSkeleton>(text, *skeleton).Run();
}

JsonShape ValidateJson(std::string_view text) {
  // Fast reject: the value must start with one of these after JSON whitespace.
  size_t i = 0;
  while (i < text.size() && IsJsonWs(text[i])) ++i;
  if (i == text.size()) return {};
  char c = text[i];
  if (!(c == '{' || c == '[' || c == '"' || c == '-' || IsDigit(c) || c == 't' || c == 'f' || c == 'n')) {
    return {};
  }

  if (text.size() > kReuseParserLimit) return ValidateJsonBytes(text);
  simdjson::padded_string copy;
  simdjson::padded_string_view view;
  if (PaddingIsReadable(text.data(), text.size())) {
    view = simdjson::padded_string_view(text.data(), text.size(), text.size() + simdjson::SIMDJSON_PADDING);
  } else {
    copy = simdjson::padded_string(text);
    view = simdjson::padded_string_view(copy);
  }
  // simdjson's own depth limit is set above ours so that the walker's exact count decides.
  constexpr size_t kSimdjsonDepth = kMaxDepth + 2;
  thread_local od::parser parser;
  // Sized to the text (a power of two, ≥ 64 KiB) and grown when needed: sized for the largest
  // text up front, the parser kept ≈ 24 MB of buffers (some of it in huge pages) alive after
  // validating one small view.
  if ((parser.max_depth() != kSimdjsonDepth || parser.capacity() < text.size()) &&
      parser.allocate(std::max<size_t>(size_t{64} << 10, std::bit_ceil(text.size())), kSimdjsonDepth)) {
    return ValidateJsonBytes(text);  // no memory for the parser: same verdict, no allocation
  }
  return Validate(parser, view);
}

size_t JsonValueBound(std::string_view text) {
  const char* s = text.data();
  const size_t n = text.size();
  size_t values = 1;
  size_t i = 0;
#if defined(__SSE2__)
  // A byte at a time this was 6 % of a 64 MiB dump's CPU. '[' (0x5B) and '{' (0x7B) differ
  // only in bit 5, and no other byte does so from either.
  const __m128i comma = _mm_set1_epi8(',');
  const __m128i bracket = _mm_set1_epi8('[');
  const __m128i fold = _mm_set1_epi8(static_cast<char>(0xDF));
  const __m128i zero = _mm_setzero_si128();
  while (n - i >= 16) {
    // Per-byte counters (a hit is -1) for at most 255 blocks, then summed by SAD: no popcount,
    // which is a libgcc call without -mpopcnt.
    const size_t blocks = std::min<size_t>((n - i) / 16, 255);
    __m128i counts = zero;
    for (size_t b = 0; b < blocks; ++b, i += 16) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
      counts =
          _mm_sub_epi8(counts, _mm_or_si128(_mm_cmpeq_epi8(x, comma), _mm_cmpeq_epi8(_mm_and_si128(x, fold), bracket)));
    }
    const __m128i sums = _mm_sad_epu8(counts, zero);
    values += static_cast<size_t>(_mm_cvtsi128_si32(sums)) + static_cast<size_t>(_mm_extract_epi16(sums, 4));
  }
#endif
  for (; i < n; ++i) values += static_cast<size_t>((s[i] == ',') | (s[i] == '[') | (s[i] == '{'));
  return values;
}

}  // namespace caveman::internal
