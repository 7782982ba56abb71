#include "compressors/cj.h"

#include <algorithm>
#include <numeric>

#include "compressors/internal/json_tree.h"
#include "compressors/text_util.h"

namespace caveman::internal {
namespace {

bool IsWs(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// True if brackets outside strings nest deeper than `limit`. The parser below recurses once
// per level, so over-deep input (100,000 levels overflowed an ASan build's 8 MiB stack) is
// rejected by this flat scan first; malformed strings are left to the parser.
bool NestsDeeperThan(std::string_view s, int limit) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Length of the JSON number at s[i], or 0 when none starts there.
size_t NumberLength(std::string_view s, size_t i) {
  const size_t start = i, n = s.size();
  if (i < n && s[i] == '-') ++i;
  if (i >= n || !IsDigit(s[i])) return 0;
  if (s[i] == '0') {
    ++i;
  } else {
    while (i < n && IsDigit(s[i])) ++i;
  }
  if (i < n && s[i] == '.') {
    ++i;
    if (i >= n || !IsDigit(s[i])) return 0;
    while (i < n && IsDigit(s[i])) ++i;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    if (i >= n || !IsDigit(s[i])) return 0;
    while (i < n && IsDigit(s[i])) ++i;
  }
  return i - start;
}

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  bool ParseDocument(JsonValue* out) {
    if (!IsValidUtf8(s_)) return false;
    if (NestsDeeperThan(s_, kMaxJsonDepth)) return false;
    SkipWs();
    if (!ParseValue(out, 1)) return false;
    SkipWs();
    return i_ == s_.size();
  }

 private:
  void SkipWs() {
    while (i_ < s_.size() && IsWs(s_[i_])) ++i_;
  }

  bool Literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  // Parses the string token at s_[i_] (which is '"') into *out.
  bool ParseString(std::string* out) {
    ++i_;
    out->clear();
    while (true) {
      if (i_ >= s_.size()) return false;
      // Copy the run of plain bytes in one go.
      size_t run = i_;
      while (run < s_.size() && s_[run] != '"' && s_[run] != '\\' && static_cast<unsigned char>(s_[run]) >= 0x20) {
        ++run;
      }
      out->append(s_.data() + i_, run - i_);
      i_ = run;
      if (i_ >= s_.size()) return false;
      char c = s_[i_];
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c != '\\') return false;  // control character
      if (++i_ >= s_.size()) return false;
      char e = s_[i_++];
      switch (e) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          int cp = Hex4();
          if (cp < 0) return false;
          uint32_t code = static_cast<uint32_t>(cp);
          if (code >= 0xD800 && code <= 0xDBFF) {
            // A high surrogate must pair with an immediately following low-surrogate escape;
            // a lone surrogate cannot be decoded to UTF-8, so the text is not JSON (§0.3).
            if (s_.substr(i_, 2) != "\\u") return false;
            i_ += 2;
            int lo = Hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) return false;
            code = 0x10000 + ((code - 0xD800) << 10) + (static_cast<uint32_t>(lo) - 0xDC00);
          } else if (code >= 0xDC00 && code <= 0xDFFF) {
            return false;
          }
          AppendUtf8(code, out);
          break;
        }
        default: return false;
      }
    }
  }

  int Hex4() {
    if (i_ + 4 > s_.size()) return -1;
    int v = 0;
    for (int k = 0; k < 4; ++k) {
      int h = HexVal(s_[i_ + k]);
      if (h < 0) return -1;
      v = v * 16 + h;
    }
    i_ += 4;
    return v;
  }

  bool ParseValue(JsonValue* v, int depth) {
    if (i_ >= s_.size()) return false;
    v->begin = i_;
    char c = s_[i_];
    switch (c) {
      case '{': {
        if (depth > kMaxJsonDepth) return false;
        v->kind = JsonValue::Kind::kObject;
        ++i_;
        SkipWs();
        if (i_ < s_.size() && s_[i_] == '}') {
          ++i_;
          break;
        }
        while (true) {
          SkipWs();
          if (i_ >= s_.size() || s_[i_] != '"') return false;
          JsonMember m;
          m.key_begin = i_;
          if (!ParseString(&m.key)) return false;
          SkipWs();
          if (i_ >= s_.size() || s_[i_] != ':') return false;
          ++i_;
          SkipWs();
          if (!ParseValue(&m.value, depth + 1)) return false;
          v->members.push_back(std::move(m));
          SkipWs();
          if (i_ >= s_.size()) return false;
          if (s_[i_] == ',') {
            ++i_;
            continue;
          }
          if (s_[i_] != '}') return false;
          ++i_;
          break;
        }
        break;
      }
      case '[': {
        if (depth > kMaxJsonDepth) return false;
        v->kind = JsonValue::Kind::kArray;
        ++i_;
        SkipWs();
        if (i_ < s_.size() && s_[i_] == ']') {
          ++i_;
          break;
        }
        while (true) {
          SkipWs();
          v->items.emplace_back();
          if (!ParseValue(&v->items.back(), depth + 1)) return false;
          SkipWs();
          if (i_ >= s_.size()) return false;
          if (s_[i_] == ',') {
            ++i_;
            continue;
          }
          if (s_[i_] != ']') return false;
          ++i_;
          break;
        }
        break;
      }
      case '"':
        v->kind = JsonValue::Kind::kString;
        if (!ParseString(&v->text)) return false;
        break;
      case 't':
        if (!Literal("true")) return false;
        v->kind = JsonValue::Kind::kBool;
        v->boolean = true;
        break;
      case 'f':
        if (!Literal("false")) return false;
        v->kind = JsonValue::Kind::kBool;
        break;
      case 'n':
        if (!Literal("null")) return false;
        v->kind = JsonValue::Kind::kNull;
        break;
      default: {
        size_t len = NumberLength(s_, i_);
        if (len == 0) return false;
        v->kind = JsonValue::Kind::kNumber;
        v->text.assign(s_.substr(i_, len));
        i_ += len;
        break;
      }
    }
    v->end = i_;
    return true;
  }

  std::string_view s_;
  size_t i_ = 0;
};

// Member indices in CJ order: sorted by key, only the last of each duplicate group.
std::vector<size_t> CjOrder(const JsonValue& v) {
  std::vector<size_t> idx(v.members.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v.members[a].key < v.members[b].key; });
  std::vector<size_t> out;
  for (size_t k = 0; k < idx.size(); ++k) {
    if (k + 1 < idx.size() && v.members[idx[k + 1]].key == v.members[idx[k]].key) continue;
    out.push_back(idx[k]);
  }
  return out;
}

void AppendCji(const JsonValue& v, int depth, std::string* out) {
  auto indent = [&](int d) { out->append(static_cast<size_t>(d) * 2, ' '); };
  switch (v.kind) {
    case JsonValue::Kind::kArray:
      if (v.items.empty()) {
        out->append("[]");
        return;
      }
      out->append("[\n");
      for (size_t k = 0; k < v.items.size(); ++k) {
        indent(depth + 1);
        AppendCji(v.items[k], depth + 1, out);
        if (k + 1 < v.items.size()) out->push_back(',');
        out->push_back('\n');
      }
      indent(depth);
      out->push_back(']');
      return;
    case JsonValue::Kind::kObject: {
      if (v.members.empty()) {
        out->append("{}");
        return;
      }
      out->append("{\n");
      std::vector<size_t> order = CjOrder(v);
      for (size_t k = 0; k < order.size(); ++k) {
        indent(depth + 1);
        AppendCjString(v.members[order[k]].key, out);
        out->append(": ");
        AppendCji(v.members[order[k]].value, depth + 1, out);
        if (k + 1 < order.size()) out->push_back(',');
        out->push_back('\n');
      }
      indent(depth);
      out->push_back('}');
      return;
    }
    default: AppendCj(v, out);
  }
}

}  // namespace

const JsonValue* JsonValue::Find(std::string_view key) const {
  for (size_t k = members.size(); k-- > 0;) {
    if (members[k].key == key) return &members[k].value;
  }
  return nullptr;
}

JsonValue* JsonValue::Find(std::string_view key) {
  return const_cast<JsonValue*>(static_cast<const JsonValue*>(this)->Find(key));
}

bool JsonValue::HasDuplicateKeys() const {
  std::vector<std::string_view> keys;
  keys.reserve(members.size());
  for (const JsonMember& m : members) keys.push_back(m.key);
  std::sort(keys.begin(), keys.end());
  return std::adjacent_find(keys.begin(), keys.end()) != keys.end();
}

std::optional<JsonValue> ParseJson(std::string_view text) {
  JsonValue v;
  Parser p(text);
  if (!p.ParseDocument(&v)) return std::nullopt;
  return v;
}

bool IsJson(std::string_view text) { return ParseJson(text).has_value(); }

// One CJ escaper for both JSON models: the JSON tree's (tests/compressors/
// shared_machinery_test.cc checks it byte by byte against §0.3).
void AppendCjString(std::string_view s, std::string* out) { AppendJsonString(s, out); }

std::string CjString(std::string_view s) {
  std::string out;
  AppendCjString(s, &out);
  return out;
}

void AppendCj(const JsonValue& v, std::string* out) {
  switch (v.kind) {
    case JsonValue::Kind::kNull: out->append("null"); return;
    case JsonValue::Kind::kBool: out->append(v.boolean ? "true" : "false"); return;
    case JsonValue::Kind::kNumber: out->append(v.text); return;
    case JsonValue::Kind::kString: AppendCjString(v.text, out); return;
    case JsonValue::Kind::kArray:
      out->push_back('[');
      for (size_t k = 0; k < v.items.size(); ++k) {
        if (k) out->push_back(',');
        AppendCj(v.items[k], out);
      }
      out->push_back(']');
      return;
    case JsonValue::Kind::kObject: {
      out->push_back('{');
      bool first = true;
      for (size_t k : CjOrder(v)) {
        if (!first) out->push_back(',');
        first = false;
        AppendCjString(v.members[k].key, out);
        out->push_back(':');
        AppendCj(v.members[k].value, out);
      }
      out->push_back('}');
      return;
    }
  }
}

std::string Cj(const JsonValue& v) {
  std::string out;
  AppendCj(v, &out);
  return out;
}

std::string Cji(const JsonValue& v) {
  std::string out;
  AppendCji(v, 0, &out);
  return out;
}

bool IsJsonNumber(std::string_view s) { return !s.empty() && NumberLength(s, 0) == s.size(); }

std::optional<std::string> DecodeJsonString(std::string_view token) {
  if (token.size() < 2 || token.front() != '"') return std::nullopt;
  std::optional<JsonValue> v = ParseJson(token);
  if (!v || v->kind != JsonValue::Kind::kString || v->end != token.size()) return std::nullopt;
  return std::move(v->text);
}

JsonValue JsonString(std::string s) {
  JsonValue v;
  v.kind = JsonValue::Kind::kString;
  v.text = std::move(s);
  return v;
}

JsonValue JsonObject() {
  JsonValue v;
  v.kind = JsonValue::Kind::kObject;
  return v;
}

}  // namespace caveman::internal
