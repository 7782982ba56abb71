#include "compressors/internal/json_tree.h"

#include <algorithm>
#include <cstring>

namespace caveman::internal {
namespace {

inline bool IsJsonSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// True if any byte of the 8-byte word is '"', '\\', < 0x20 or >= 0x80.
inline bool HasSpecialByte(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  uint64_t quote = w ^ (kOnes * '"');
  uint64_t bslash = w ^ (kOnes * '\\');
  uint64_t has_quote = (quote - kOnes) & ~quote;
  uint64_t has_bslash = (bslash - kOnes) & ~bslash;
  uint64_t has_ctrl = (w - kOnes * 0x20) & ~w;
  return ((has_quote | has_bslash | has_ctrl) & kHigh) != 0 || (w & kHigh) != 0;
}

// Length of the well-formed UTF-8 sequence at s[i] (first byte ≥ 0x80), or 0.
inline size_t Utf8SeqLen(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t need;
  uint32_t cp, min;
  if (c >= 0xC2 && c <= 0xDF) { need = 1; cp = c & 0x1F; min = 0x80; }
  else if (c >= 0xE0 && c <= 0xEF) { need = 2; cp = c & 0x0F; min = 0x800; }
  else if (c >= 0xF0 && c <= 0xF4) { need = 3; cp = c & 0x07; min = 0x10000; }
  else return 0;
  if (i + need >= s.size()) return 0;
  for (size_t k = 1; k <= need; ++k) {
    unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return need + 1;
}

inline int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool Read4Hex(std::string_view s, size_t i, uint32_t* v) {
  if (i + 4 > s.size()) return false;
  uint32_t r = 0;
  for (size_t k = 0; k < 4; ++k) {
    int h = HexVal(s[i + k]);
    if (h < 0) return false;
    r = (r << 4) | static_cast<uint32_t>(h);
  }
  *v = r;
  return true;
}

void AppendCp(uint32_t cp, std::string* out) {
  if (cp < 0x80) out->push_back(static_cast<char>(cp));
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

}  // namespace

bool JsonTree::ParseString(size_t* pos, uint32_t* off, uint32_t* len) {
  const std::string_view s = input_;
  const size_t n = s.size();
  size_t i = *pos;
  const size_t start = i;
  // Fast path: no escapes, the bytes are the decoded text.
  while (true) {
    while (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if (HasSpecialByte(w)) break;
      i += 8;
    }
    if (i >= n) return false;
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"') {
      *off = static_cast<uint32_t>(start);
      *len = static_cast<uint32_t>(i - start);
      *pos = i + 1;
      return true;
    }
    if (c == '\\') break;
    if (c < 0x20) return false;
    if (c >= 0x80) {
      size_t l = Utf8SeqLen(s, i);
      if (l == 0) return false;
      i += l;
    } else {
      ++i;
    }
  }
  // Slow path: decode into the arena.
  size_t arena_start = arena_.size();
  arena_.append(s.data() + start, i - start);
  while (true) {
    if (i >= n) return false;
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"') break;
    if (c < 0x20) return false;
    if (c >= 0x80) {
      size_t l = Utf8SeqLen(s, i);
      if (l == 0) return false;
      arena_.append(s.data() + i, l);
      i += l;
      continue;
    }
    if (c != '\\') {
      arena_.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    if (i + 1 >= n) return false;
    char e = s[i + 1];
    i += 2;
    switch (e) {
      case '"': arena_.push_back('"'); break;
      case '\\': arena_.push_back('\\'); break;
      case '/': arena_.push_back('/'); break;
      case 'b': arena_.push_back('\b'); break;
      case 'f': arena_.push_back('\f'); break;
      case 'n': arena_.push_back('\n'); break;
      case 'r': arena_.push_back('\r'); break;
      case 't': arena_.push_back('\t'); break;
      case 'u': {
        uint32_t u;
        if (!Read4Hex(s, i, &u)) return false;
        i += 4;
        if (u >= 0xD800 && u <= 0xDBFF) {
          uint32_t lo;
          if (i + 6 > n || s[i] != '\\' || s[i + 1] != 'u' || !Read4Hex(s, i + 2, &lo) ||
              lo < 0xDC00 || lo > 0xDFFF) {
            return false;  // lone high surrogate: not decodable to UTF-8
          }
          i += 6;
          u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
        } else if (u >= 0xDC00 && u <= 0xDFFF) {
          return false;  // lone low surrogate
        }
        AppendCp(u, &arena_);
        break;
      }
      default:
        return false;
    }
  }
  if (arena_.size() >= kArenaBit) return false;
  *off = static_cast<uint32_t>(arena_start) | kArenaBit;
  *len = static_cast<uint32_t>(arena_.size() - arena_start);
  *pos = i + 1;
  return true;
}

bool JsonTree::ParseNumber(size_t* pos) {
  const std::string_view s = input_;
  const size_t n = s.size();
  size_t i = *pos;
  auto digit = [&](size_t k) { return k < n && s[k] >= '0' && s[k] <= '9'; };
  if (i < n && s[i] == '-') ++i;
  if (!digit(i)) return false;
  if (s[i] == '0') {
    ++i;
  } else {
    while (digit(i)) ++i;
  }
  if (i < n && s[i] == '.') {
    ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  *pos = i;
  return true;
}

bool JsonTree::Parse(std::string_view text) {
  input_ = text;
  arena_.clear();
  nodes_.clear();
  members_.clear();
  items_.clear();
  static_assert(sizeof(Node) == 8);
  if (text.size() >= kMaxInput) return false;
  nodes_.reserve(text.size() / 16 + 16);

  struct Frame {
    NodeId node;
    bool object;
    size_t start;
  };
  std::vector<Frame> stack;
  std::vector<Member> pend_m;
  std::vector<NodeId> pend_i;
  const size_t n = text.size();
  size_t pos = 0;
  auto skip_ws = [&] {
    while (pos < n && IsJsonSpace(text[pos])) ++pos;
  };
  auto close = [&]() -> NodeId {
    Frame f = stack.back();
    stack.pop_back();
    Node& node = nodes_[f.node];
    if (f.object) {
      auto first = pend_m.begin() + static_cast<std::ptrdiff_t>(f.start);
      std::stable_sort(first, pend_m.end(), [&](const Member& a, const Member& b) {
        return Text(a.key_off, a.key_len) < Text(b.key_off, b.key_len);
      });
      node.off = static_cast<uint32_t>(members_.size());
      for (size_t k = f.start; k < pend_m.size(); ++k) {
        // Duplicate keys: the last occurrence (last in the stable order) wins.
        if (k + 1 < pend_m.size() && Text(pend_m[k].key_off, pend_m[k].key_len) ==
                                         Text(pend_m[k + 1].key_off, pend_m[k + 1].key_len)) {
          continue;
        }
        members_.push_back(pend_m[k]);
      }
      node.len = static_cast<uint32_t>(members_.size() - node.off);
      pend_m.resize(f.start);
    } else {
      node.off = static_cast<uint32_t>(items_.size());
      items_.insert(items_.end(), pend_i.begin() + static_cast<std::ptrdiff_t>(f.start),
                    pend_i.end());
      node.len = static_cast<uint32_t>(pend_i.size() - f.start);
      pend_i.resize(f.start);
    }
    return f.node;
  };

  NodeId value = 0;
  // States: parse a value; then attach it to its parent and continue.
  while (true) {
    // ---- parse one value (containers open a frame and continue with their first child)
    skip_ws();
    if (pos >= n) return false;
    char c = text[pos];
    value = static_cast<NodeId>(nodes_.size());
    bool opened = false;
    if (c == '{' || c == '[') {
      if (stack.size() >= kJsonTreeMaxDepth) return false;
      bool obj = c == '{';
      nodes_.push_back(MakeNode(obj ? JsonKind::kObject : JsonKind::kArray, 0, 0));
      stack.push_back({value, obj, obj ? pend_m.size() : pend_i.size()});
      ++pos;
      skip_ws();
      if (pos < n && text[pos] == (obj ? '}' : ']')) {
        ++pos;
        value = close();
      } else if (obj) {
        // first key
        if (pos >= n || text[pos] != '"') return false;
        ++pos;
        Member m{0, 0, 0};
        if (!ParseString(&pos, &m.key_off, &m.key_len)) return false;
        pend_m.push_back(m);
        skip_ws();
        if (pos >= n || text[pos] != ':') return false;
        ++pos;
        opened = true;
      } else {
        opened = true;
      }
    } else if (c == '"') {
      ++pos;
      uint32_t off, len;
      if (!ParseString(&pos, &off, &len)) return false;
      nodes_.push_back(MakeNode(JsonKind::kString, len, off));
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t start = pos;
      if (!ParseNumber(&pos)) return false;
      nodes_.push_back(MakeNode(JsonKind::kNumber, static_cast<uint32_t>(pos - start),
                        static_cast<uint32_t>(start)));
    } else if (text.substr(pos, 4) == "true") {
      pos += 4;
      nodes_.push_back(MakeNode(JsonKind::kTrue, 0, 0));
    } else if (text.substr(pos, 5) == "false") {
      pos += 5;
      nodes_.push_back(MakeNode(JsonKind::kFalse, 0, 0));
    } else if (text.substr(pos, 4) == "null") {
      pos += 4;
      nodes_.push_back(MakeNode(JsonKind::kNull, 0, 0));
    } else {
      return false;
    }
    if (opened) continue;

    // ---- attach `value` to its parent; close finished containers
    while (true) {
      if (stack.empty()) {
        skip_ws();
        return pos == n;
      }
      Frame& top = stack.back();
      if (top.object) {
        pend_m.back().value = value;
      } else {
        pend_i.push_back(value);
      }
      skip_ws();
      if (pos >= n) return false;
      char d = text[pos];
      if (d == ',') {
        ++pos;
        if (top.object) {
          skip_ws();
          if (pos >= n || text[pos] != '"') return false;
          ++pos;
          Member m{0, 0, 0};
          if (!ParseString(&pos, &m.key_off, &m.key_len)) return false;
          pend_m.push_back(m);
          skip_ws();
          if (pos >= n || text[pos] != ':') return false;
          ++pos;
        }
        break;  // parse the next value
      }
      if (d == (top.object ? '}' : ']')) {
        ++pos;
        value = close();
        continue;
      }
      return false;
    }
  }
}

int64_t JsonTree::Find(NodeId obj, std::string_view k) const {
  if (kind(obj) != JsonKind::kObject) return -1;
  uint32_t lo = 0, hi = size(obj);
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    std::string_view mk = key(obj, mid);
    if (mk < k) {
      lo = mid + 1;
    } else if (mk == k) {
      return member_value(obj, mid);
    } else {
      hi = mid;
    }
  }
  return -1;
}

size_t JsonTree::MemoryBytes() const {
  return nodes_.capacity() * sizeof(Node) + members_.capacity() * sizeof(Member) +
         items_.capacity() * sizeof(NodeId) + arena_.capacity();
}

namespace {

// 0 = raw; otherwise the escape kind.
struct EscapeTable {
  uint8_t t[256];
  constexpr EscapeTable() : t() {
    for (int i = 0; i < 0x20; ++i) t[i] = 1;
    t[static_cast<int>('"')] = 1;
    t[static_cast<int>('\\')] = 1;
    t[static_cast<int>('<')] = 1;
    t[static_cast<int>('>')] = 1;
    t[static_cast<int>('&')] = 1;
    t[0xE2] = 2;  // possibly U+2028 / U+2029
  }
};
constexpr EscapeTable kEscape;

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t run = 0;
  const size_t n = s.size();
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    uint8_t e = kEscape.t[c];
    if (e == 0) continue;
    if (e == 2) {
      if (i + 2 < n && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
          (static_cast<unsigned char>(s[i + 2]) == 0xA8 ||
           static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
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
  out->append(s.data() + run, n - run);
  out->push_back('"');
}

void AppendCanonicalJson(const JsonTree& tree, JsonTree::NodeId n, std::string* out) {
  struct Frame {
    JsonTree::NodeId node;
    uint32_t i;
  };
  thread_local std::vector<Frame> stack;
  stack.clear();
  auto open = [&](JsonTree::NodeId x) {
    switch (tree.kind(x)) {
      case JsonKind::kNull: out->append("null"); break;
      case JsonKind::kTrue: out->append("true"); break;
      case JsonKind::kFalse: out->append("false"); break;
      case JsonKind::kNumber: out->append(tree.text(x)); break;
      case JsonKind::kString: AppendJsonString(tree.text(x), out); break;
      case JsonKind::kArray:
        out->push_back('[');
        stack.push_back({x, 0});
        break;
      case JsonKind::kObject:
        out->push_back('{');
        stack.push_back({x, 0});
        break;
    }
  };
  open(n);
  while (!stack.empty()) {
    JsonTree::NodeId node = stack.back().node;
    uint32_t i = stack.back().i;
    bool obj = tree.kind(node) == JsonKind::kObject;
    if (i == tree.size(node)) {
      out->push_back(obj ? '}' : ']');
      stack.pop_back();
      continue;
    }
    stack.back().i = i + 1;
    if (i > 0) out->push_back(',');
    if (obj) {
      AppendJsonString(tree.key(node, i), out);
      out->push_back(':');
      open(tree.member_value(node, i));
    } else {
      open(tree.item(node, i));
    }
  }
}

}  // namespace caveman::internal
