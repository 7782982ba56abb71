#include "compressors/internal/json_tree.h"

#include "stream/huge_pages.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <utility>

#include <simdjson.h>

namespace caveman::internal {
namespace {

namespace od = simdjson::ondemand;

static_assert(kJsonParsePadding >= simdjson::SIMDJSON_PADDING);

// Texts up to this size reuse a per-thread parser (log lines parse one JSON object each);
// larger ones get a parser per call, so no thread keeps a big structural index alive.
constexpr size_t kReuseParserLimit = size_t{1} << 20;
// simdjson only uses its depth bound for bookkeeping; the walk below enforces §0.3's 10,000.
constexpr size_t kSimdjsonDepth = kJsonTreeMaxDepth + 2;
// Objects with at most this many members are sorted by insertion (stable, no allocation).
constexpr std::ptrdiff_t kInsertionSortMembers = 16;

inline bool IsJsonSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && IsJsonSpace(s.back())) s.remove_suffix(1);
  return s;
}

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// RFC 8259 number grammar -?(0|[1-9]D*)(.D+)?([eE][+-]?D+)? over a whole token. simdjson's
// number parser is not used: it rejects valid literals that overflow binary64 (1e400).
bool IsNumberLiteral(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  if (i < n && s[i] == '-') ++i;
  if (i >= n || !IsDigit(s[i])) return false;
  if (s[i] == '0') {
    ++i;
  } else {
    while (i < n && IsDigit(s[i])) ++i;
  }
  if (i < n && s[i] == '.') {
    const size_t first = ++i;
    while (i < n && IsDigit(s[i])) ++i;
    if (i == first) return false;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    const size_t first = i;
    while (i < n && IsDigit(s[i])) ++i;
    if (i == first) return false;
  }
  return i == n;
}

// True when simdjson may read `text` in place: the caller vouches for the padding, or the
// padding lies on the page of the last byte (mapped, so readable; simdjson ignores the
// values). Not under AddressSanitizer, which would flag the read. A ',' right after the end
// is refused: On-Demand peeks at that byte when an unbalanced array or object runs off the
// end of its tokens, and only a ',' would send it on.
bool CanReadInPlace(std::string_view text, size_t readable_padding) {
  bool readable = readable_padding >= simdjson::SIMDJSON_PADDING;
#if defined(__SANITIZE_ADDRESS__)
  constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  constexpr bool kAsan = true;
#else
  constexpr bool kAsan = false;
#endif
#else
  constexpr bool kAsan = false;
#endif
  if (!readable && !kAsan) {
    const uintptr_t last = reinterpret_cast<uintptr_t>(text.data() + text.size() - 1);
    readable = (last >> 12) == ((last + simdjson::SIMDJSON_PADDING) >> 12);
  }
  return readable && text.data()[text.size()] != ',';
}

// Readies a per-thread parser for a text of `n` ≤ kReuseParserLimit bytes: sized to the text
// (a power of two, ≥ 64 KiB) and grown when needed — sized to the limit up front, it kept
// megabytes of buffers alive after parsing small texts. False when it cannot be allocated.
bool ReadyReusedParser(od::parser& parser, size_t n) {
  if (parser.max_depth() == kSimdjsonDepth && parser.capacity() >= n) return true;
  return parser.allocate(std::max<size_t>(size_t{64} << 10, std::bit_ceil(n)), kSimdjsonDepth) == simdjson::SUCCESS;
}

// The token of the current value, from its first byte to the next token.
bool RawToken(od::value& v, std::string_view* out) {
  *out = v.raw_json_token();
  return true;
}
bool RawToken(od::document& d, std::string_view* out) { return !d.raw_json_token().get(*out); }

}  // namespace

// The On-Demand walk: an explicit stack of array/object iterators, one per open container.
// The On-Demand cursor only moves forward, so each child is consumed completely (its frame
// popped) before its parent's iterator advances.
struct JsonTree::Builder {
  struct Frame {
    NodeId node;
    bool object;
    bool started;    // the iterator has yielded its first child
    uint32_t start;  // first pending member/item of this container
    od::array_iterator items;
    od::object_iterator members;
  };

  JsonTree& t;
  od::parser& parser;
  std::vector<Frame> stack;
  std::vector<Member> pend_m;
  std::vector<NodeId> pend_i;

  uint32_t Offset(const char* p) const { return static_cast<uint32_t>(p - t.input_.data()); }

  // Decodes the escaped string `raw` (≤ raw_len bytes once decoded) straight into the arena:
  // simdjson checks the escapes and rejects lone surrogates.
  bool Decode(od::raw_json_string raw, size_t raw_len, uint32_t* off, uint32_t* len) {
    std::string& arena = t.arena_;
    const size_t base = arena.size();
    const size_t room = raw_len + simdjson::SIMDJSON_PADDING;  // unescape writes past the end
    if (base + room >= kArenaBit) return false;
    // Decoded text is never longer than the input: one reservation (untouched until used)
    // instead of doubling copies.
    if (arena.capacity() < base + room) {
      arena.reserve(std::max(base + room, t.input_.size() + simdjson::SIMDJSON_PADDING));
    }
    arena.resize(base + room);
    uint8_t* dst = reinterpret_cast<uint8_t*>(arena.data() + base);
    std::string_view decoded;
    const bool bad = parser.unescape(raw, dst).get(decoded) != simdjson::SUCCESS;
    arena.resize(bad ? base : base + decoded.size());
    if (bad) return false;
    *off = static_cast<uint32_t>(base) | kArenaBit;
    *len = static_cast<uint32_t>(decoded.size());
    return true;
  }

  // Node for a string whose token (quotes included, trailing whitespace trimmed) is `token`.
  // Unescaped strings point into the input; escaped ones are decoded into the arena.
  template <typename V>
  bool AddString(V& v, std::string_view token) {
    if (token.size() < 2 || token.front() != '"' || token.back() != '"') return false;
    std::string_view body = token.substr(1, token.size() - 2);
    // Consumed even when the token already holds the text: On-Demand skips an unconsumed
    // string followed by ':' as if it were a key, which would hide the error in ["b": 1].
    od::raw_json_string raw;
    if (v.get_raw_json_string().get(raw)) return false;
    uint32_t off, len;
    if (std::memchr(body.data(), '\\', body.size()) == nullptr) {
      off = Offset(body.data());
      len = static_cast<uint32_t>(body.size());
    } else if (!Decode(raw, body.size(), &off, &len)) {
      return false;
    }
    t.nodes_.push_back(MakeNode(JsonKind::kString, len, off));
    return true;
  }

  // Node for a scalar whose token is `token` (trailing whitespace trimmed).
  template <typename V>
  bool AddScalar(V& v, od::json_type type, std::string_view token) {
    switch (type) {
      case od::json_type::string: return AddString(v, token);
      case od::json_type::number:
        if (!IsNumberLiteral(token)) return false;
        t.nodes_.push_back(MakeNode(JsonKind::kNumber, static_cast<uint32_t>(token.size()), Offset(token.data())));
        return true;
      case od::json_type::boolean:
        if (token == "true") {
          t.nodes_.push_back(MakeNode(JsonKind::kTrue, 0, 0));
        } else if (token == "false") {
          t.nodes_.push_back(MakeNode(JsonKind::kFalse, 0, 0));
        } else {
          return false;
        }
        return true;
      case od::json_type::null:
        if (token != "null") return false;
        t.nodes_.push_back(MakeNode(JsonKind::kNull, 0, 0));
        return true;
      default: return false;
    }
  }

  // Adds the node of `v` (already attached to its parent by the caller); a container opens a
  // frame whose children the main loop visits next.
  template <typename V>
  bool Open(V& v) {
    od::json_type type;
    if (v.type().get(type)) return false;
    const NodeId id = static_cast<NodeId>(t.nodes_.size());
    if (type == od::json_type::array) {
      if (stack.size() >= kJsonTreeMaxDepth) return false;
      od::array a;
      od::array_iterator it;
      if (v.get_array().get(a) || a.begin().get(it)) return false;
      t.nodes_.push_back(MakeNode(JsonKind::kArray, 0, 0));
      stack.push_back({id, false, false, static_cast<uint32_t>(pend_i.size()), it, {}});
      return true;
    }
    if (type == od::json_type::object) {
      if (stack.size() >= kJsonTreeMaxDepth) return false;
      od::object o;
      od::object_iterator it;
      if (v.get_object().get(o) || o.begin().get(it)) return false;
      t.nodes_.push_back(MakeNode(JsonKind::kObject, 0, 0));
      stack.push_back({id, true, false, static_cast<uint32_t>(pend_m.size()), {}, it});
      return true;
    }
    std::string_view raw;
    if (!RawToken(v, &raw)) return false;
    return AddScalar(v, type, TrimRight(raw));
  }

  // Pops the top frame and stores its children (members sorted by key, last duplicate wins).
  void Close() {
    const Frame f = stack.back();
    stack.pop_back();
    Node& node = t.nodes_[f.node];
    if (f.object) {
      auto first = pend_m.begin() + static_cast<std::ptrdiff_t>(f.start);
      const auto less = [&](const Member& a, const Member& b) {
        return t.Text(a.key_off, a.key_len) < t.Text(b.key_off, b.key_len);
      };
      if (pend_m.end() - first <= kInsertionSortMembers) {
        // Most objects are small: a stable insertion sort, without the buffer stable_sort
        // allocates on every call (1.5 % of a 64 MiB dump's CPU).
        for (auto it = first + (first != pend_m.end()); it < pend_m.end(); ++it) {
          const Member m = *it;
          auto hole = it;
          for (; hole != first && less(m, *(hole - 1)); --hole) *hole = *(hole - 1);
          *hole = m;
        }
      } else {
        std::stable_sort(first, pend_m.end(), less);
      }
      node.off = static_cast<uint32_t>(t.members_.size());
      for (size_t k = f.start; k < pend_m.size(); ++k) {
        // Duplicate keys: the last occurrence (last in the stable order) wins.
        if (k + 1 < pend_m.size() &&
            t.Text(pend_m[k].key_off, pend_m[k].key_len) == t.Text(pend_m[k + 1].key_off, pend_m[k + 1].key_len)) {
          t.dropped_duplicate_key_ = true;
          continue;
        }
        t.members_.push_back(pend_m[k]);
      }
      node.len = static_cast<uint32_t>(t.members_.size() - node.off);
      pend_m.resize(f.start);
    } else {
      node.off = static_cast<uint32_t>(t.items_.size());
      t.items_.insert(t.items_.end(), pend_i.begin() + static_cast<std::ptrdiff_t>(f.start), pend_i.end());
      node.len = static_cast<uint32_t>(pend_i.size() - f.start);
      pend_i.resize(f.start);
    }
  }

  // Visits the next child of the top frame, or closes it.
  bool Step() {
    Frame& f = stack.back();
    if (!f.object) {
      if (f.started) {
        ++f.items;
      } else {
        f.started = true;
      }
      if (!(f.items != od::array_iterator())) {
        Close();
        return true;
      }
      od::value v;
      if ((*f.items).get(v)) return false;
      pend_i.push_back(static_cast<NodeId>(t.nodes_.size()));
      return Open(v);  // may push a frame (invalidates f)
    }
    if (f.started) {
      ++f.members;
    } else {
      f.started = true;
    }
    if (!(f.members != od::object_iterator())) {
      Close();
      return true;
    }
    od::field field;
    if ((*f.members).get(field)) return false;
    od::value& v = field.value();
    // The key's closing quote is the last '"' before the value: only whitespace and the ':'
    // (checked by simdjson) lie between them.
    const std::string_view vraw = v.raw_json_token();
    const char* kbeg = field.key().raw();
    const char* kend = vraw.data() - 1;
    while (kend > kbeg && *kend != '"') --kend;
    if (kend < kbeg) return false;
    std::string_view key(kbeg, static_cast<size_t>(kend - kbeg));
    Member m{0, 0, static_cast<NodeId>(t.nodes_.size())};
    if (std::memchr(key.data(), '\\', key.size()) == nullptr) {
      m.key_off = Offset(key.data());
      m.key_len = static_cast<uint32_t>(key.size());
    } else if (!Decode(field.key(), key.size(), &m.key_off, &m.key_len)) {
      return false;
    }
    pend_m.push_back(m);
    return Open(v);
  }

  bool Run(od::document& doc) {
    od::json_type type;
    if (doc.type().get(type)) return false;
    if (type != od::json_type::array && type != od::json_type::object) {
      // A scalar document: its token must run to the end of the text.
      std::string_view raw;
      if (!RawToken(doc, &raw)) return false;
      if (raw.data() + raw.size() != t.input_.data() + t.input_.size()) return false;
      return AddScalar(doc, type, TrimRight(raw));
    }
    if (!Open(doc)) return false;
    while (!stack.empty()) {
      if (!Step()) return false;
    }
    // Exactly one value: no token may follow it.
    return doc.current_location().error() == simdjson::OUT_OF_BOUNDS;
  }
};

bool JsonTree::Parse(std::string_view text, size_t readable_padding) {
  input_ = {};
  dropped_duplicate_key_ = false;
  arena_.clear();
  nodes_.clear();
  members_.clear();
  items_.clear();
  static_assert(sizeof(Node) == 8);
  if (text.size() >= kMaxInput) return false;
  // Fast reject (also spares simdjson empty and whitespace-only texts).
  const size_t first = text.find_first_not_of(" \t\n\r");
  if (first == std::string_view::npos) return false;
  const char c = text[first];
  if (!(c == '{' || c == '[' || c == '"' || c == '-' || IsDigit(c) || c == 't' || c == 'f' || c == 'n')) {
    return false;
  }

  if (CanReadInPlace(text, readable_padding)) {
    padded_.clear();
    input_ = text;
  } else {
    padded_.clear();
    padded_.reserve(text.size() + simdjson::SIMDJSON_PADDING);
    padded_.assign(text);
    input_ = padded_;
  }
  const simdjson::padded_string_view view(input_.data(), input_.size(), input_.size() + simdjson::SIMDJSON_PADDING);
  // Upper bounds, so the vectors never grow by copying (a copy would briefly hold both
  // buffers); the pages of a large reservation stay untouched, so RSS follows what is used.
  // Every value takes ≥ 1 byte plus a separator, every member ≥ 4 (`"":0`) plus one.
  nodes_.reserve(text.size() / 2 + 1);
  items_.reserve(text.size() / 2 + 1);
  members_.reserve(text.size() / 5 + 1);
  AdviseHugePages(nodes_.data(), nodes_.capacity() * sizeof(Node));
  AdviseHugePages(items_.data(), items_.capacity() * sizeof(NodeId));
  AdviseHugePages(members_.data(), members_.capacity() * sizeof(Member));

  std::unique_ptr<od::parser> own_parser;
  od::parser* parser;
  if (text.size() <= kReuseParserLimit) {
    thread_local od::parser reused;
    if (!ReadyReusedParser(reused, text.size())) return false;
    parser = &reused;
  } else {
    own_parser = std::make_unique<od::parser>();
    if (own_parser->allocate(text.size(), kSimdjsonDepth) != simdjson::SUCCESS) return false;
    parser = own_parser.get();
  }
  od::document doc;
  if (parser->iterate(view).get(doc)) return false;
  Builder builder{*this, *parser, {}, {}, {}};
  return builder.Run(doc);
}

bool ArrayElementMembers(std::string_view text, size_t readable_padding, std::vector<JsonTopMember>* out,
                         uint32_t* count) {
  out->clear();
  *count = 0;
  if (text.size() > kReuseParserLimit || !CanReadInPlace(text, readable_padding)) return false;
  thread_local od::parser parser;
  if (!ReadyReusedParser(parser, text.size())) return false;
  const simdjson::padded_string_view view(text.data(), text.size(), text.size() + simdjson::SIMDJSON_PADDING);
  od::document doc;
  od::array array;
  if (parser.iterate(view).get(doc) || doc.get_array().get(array)) return false;
  for (auto item : array) {
    od::value element;
    od::json_type type;
    if (item.get(element) || element.type().get(type)) return false;
    if (type == od::json_type::object) {
      od::object object;
      if (element.get_object().get(object)) return false;
      for (auto member : object) {
        od::field field;
        JsonTopMember m{*count, {}, JsonKind::kNull, {}};
        od::json_type vt;
        if (std::move(member).get(field) || field.unescaped_key().get(m.key) || field.value().type().get(vt))
          return false;
        switch (vt) {
          case od::json_type::string:
            m.kind = JsonKind::kString;
            if (field.value().get_string().get(m.value)) return false;
            break;
          case od::json_type::number:
            m.kind = JsonKind::kNumber;
            m.value = TrimRight(field.value().raw_json_token());
            break;
          case od::json_type::boolean: {
            bool b = false;
            if (field.value().get_bool().get(b)) return false;
            m.kind = b ? JsonKind::kTrue : JsonKind::kFalse;
            break;
          }
          case od::json_type::array: m.kind = JsonKind::kArray; break;
          case od::json_type::object: m.kind = JsonKind::kObject; break;
          default: break;  // null
        }
        out->push_back(m);
      }
    }
    ++*count;
  }
  return true;
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
  // Sizes, not capacities: Parse reserves upper bounds whose unused pages are never touched.
  return nodes_.size() * sizeof(Node) + members_.size() * sizeof(Member) + items_.size() * sizeof(NodeId) +
         arena_.size() + padded_.size();
}

namespace {

// The one iterative writer behind CJ and CJI (§0.3): they differ only in whitespace.
template <bool kIndented>
void AppendTreeJson(const JsonTree& tree, JsonTree::NodeId n, std::string* out) {
  struct Frame {
    JsonTree::NodeId node;
    uint32_t i;
  };
  // Explicit stack: values nest up to 10,000 levels, too deep for recursion. Kept per thread
  // (and per format) so its capacity is reused across calls.
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
      case JsonKind::kObject: {
        const bool obj = tree.kind(x) == JsonKind::kObject;
        if (kIndented && tree.size(x) == 0) {
          out->append(obj ? "{}" : "[]");  // CJI: an empty container stays on one line
          break;
        }
        out->push_back(obj ? '{' : '[');
        if constexpr (kIndented) out->push_back('\n');
        stack.push_back({x, 0});
        break;
      }
    }
  };
  open(n);
  while (!stack.empty()) {
    const JsonTree::NodeId node = stack.back().node;
    const uint32_t i = stack.back().i;
    const size_t depth = stack.size();  // children of the top frame sit at this depth
    const bool obj = tree.kind(node) == JsonKind::kObject;
    if (i == tree.size(node)) {
      if constexpr (kIndented) {
        out->push_back('\n');
        out->append((depth - 1) * 2, ' ');
      }
      out->push_back(obj ? '}' : ']');
      stack.pop_back();
      continue;
    }
    stack.back().i = i + 1;
    if constexpr (kIndented) {
      if (i > 0) out->append(",\n");
      out->append(depth * 2, ' ');
    } else {
      if (i > 0) out->push_back(',');
    }
    if (obj) {
      AppendJsonString(tree.key(node, i), out);
      out->append(kIndented ? ": " : ":");
      open(tree.member_value(node, i));
    } else {
      open(tree.item(node, i));
    }
  }
}

}  // namespace

void AppendCanonicalJson(const JsonTree& tree, JsonTree::NodeId n, std::string* out) {
  AppendTreeJson<false>(tree, n, out);
}

void AppendCanonicalJsonIndented(const JsonTree& tree, JsonTree::NodeId n, std::string* out) {
  AppendTreeJson<true>(tree, n, out);
}

}  // namespace caveman::internal
