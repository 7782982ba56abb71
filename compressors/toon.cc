#include "compressors/toon.h"

#include "compressors/large_stack.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <optional>
#include <unordered_set>
#include <vector>

#include "compressors/cj.h"
#include "compressors/text_util.h"

namespace caveman {
namespace {

using internal::JsonMember;
using internal::JsonValue;
using Kind = internal::JsonValue::Kind;

// ^[A-Za-z_][A-Za-z0-9_.-]*$
bool IsKeyStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool IsKeyChar(char c) { return IsKeyStart(c) || (c >= '0' && c <= '9') || c == '.' || c == '-'; }
bool KeySafe(std::string_view k) {
  if (k.empty() || !IsKeyStart(k[0])) return false;
  for (char c : k) {
    if (!IsKeyChar(c)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// Encoder

bool StringNeedsQuotes(std::string_view s) {
  if (s.empty() || internal::Trim(s) != s) return true;
  for (char c : s) {
    if (c == '\n' || c == '\r' || c == '\t' || c == '"' || c == ':' || c == ',') return true;
  }
  char f = s[0];
  if (f == '[' || f == '{' || f == '"' || f == '-' || (f >= '0' && f <= '9')) return true;
  if (s == "true" || s == "false" || s == "null") return true;
  return internal::IsJsonNumber(s);
}

void AppendScalar(const JsonValue& v, std::string* out) {
  switch (v.kind) {
    case Kind::kNull: out->append("null"); return;
    case Kind::kBool: out->append(v.boolean ? "true" : "false"); return;
    case Kind::kNumber: out->append(v.text); return;
    case Kind::kString:
      if (StringNeedsQuotes(v.text)) {
        internal::AppendCjString(v.text, out);
      } else {
        out->append(v.text);
      }
      return;
    default: return;  // containers never reach here
  }
}

bool AnyDuplicateKeys(const JsonValue& v) {
  if (v.kind == Kind::kObject) {
    if (v.HasDuplicateKeys()) return true;
    for (const JsonMember& m : v.members) {
      if (AnyDuplicateKeys(m.value)) return true;
    }
  } else if (v.kind == Kind::kArray) {
    for (const JsonValue& e : v.items) {
      if (AnyDuplicateKeys(e)) return true;
    }
  }
  return false;
}

class Encoder {
 public:
  std::string out;
  size_t limit = SIZE_MAX;  // give up once out.size() exceeds this

  bool Root(const JsonValue& v) {
    if (v.is_scalar()) {
      AppendScalar(v, &out);
      out.push_back('\n');
      return true;
    }
    if (v.kind == Kind::kObject) {
      if (v.members.empty()) {
        out.append("{}\n");
        return true;
      }
      return Members(v, 0);
    }
    if (v.items.empty()) {
      out.append("[]\n");
      return true;
    }
    return Array(v, "", 0);
  }

 private:
  void Indent(int level) { out.append(static_cast<size_t>(level) * 2, ' '); }

  bool Members(const JsonValue& obj, int level) {
    std::vector<const JsonMember*> sorted;
    for (const JsonMember& m : obj.members) {
      if (!KeySafe(m.key)) return false;
      sorted.push_back(&m);
    }
    std::sort(sorted.begin(), sorted.end(), [](const JsonMember* a, const JsonMember* b) { return a->key < b->key; });
    for (const JsonMember* m : sorted) {
      if (out.size() > limit) return false;
      const JsonValue& v = m->value;
      if (v.is_scalar()) {
        Indent(level);
        out.append(m->key);
        out.append(": ");
        AppendScalar(v, &out);
        out.push_back('\n');
      } else if (v.kind == Kind::kObject) {
        Indent(level);
        out.append(m->key);
        if (v.members.empty()) {
          out.append(": {}\n");
        } else {
          out.append(":\n");
          if (!Members(v, level + 1)) return false;
        }
      } else if (v.items.empty()) {
        Indent(level);
        out.append(m->key);
        out.append("[0]: []\n");
      } else if (!Array(v, m->key, level)) {
        return false;
      }
    }
    return true;
  }

  // A non-empty array under `key` ("" at the root) at `level`.
  bool Array(const JsonValue& arr, std::string_view key, int level) {
    bool all_scalar = true;
    for (const JsonValue& e : arr.items) all_scalar = all_scalar && e.is_scalar();
    if (all_scalar) {
      Indent(level);
      out.append(key);
      out.append("[" + std::to_string(arr.items.size()) + "]: ");
      for (size_t k = 0; k < arr.items.size(); ++k) {
        if (k) out.push_back(',');
        AppendScalar(arr.items[k], &out);
      }
      out.push_back('\n');
      return true;
    }
    // Tabular: every element an object with the first element's (non-empty) key set, all
    // values scalar; columns in the first element's document order.
    const JsonValue& first = arr.items[0];
    if (first.kind != Kind::kObject || first.members.empty()) return false;
    std::vector<std::string_view> fields;
    for (const JsonMember& m : first.members) {
      if (!KeySafe(m.key)) return false;
      fields.push_back(m.key);
    }
    for (const JsonValue& e : arr.items) {
      if (e.kind != Kind::kObject || e.members.size() != fields.size()) return false;
      for (const JsonMember& m : e.members) {
        if (!m.value.is_scalar() || first.Find(m.key) == nullptr) return false;
      }
    }
    Indent(level);
    out.append(key);
    out.append("[" + std::to_string(arr.items.size()) + "]{");
    for (size_t k = 0; k < fields.size(); ++k) {
      if (k) out.push_back(',');
      out.append(fields[k]);
    }
    out.append("}:\n");
    for (const JsonValue& e : arr.items) {
      if (out.size() > limit) return false;
      Indent(level + 1);
      for (size_t k = 0; k < fields.size(); ++k) {
        if (k) out.push_back(',');
        AppendScalar(*e.Find(fields[k]), &out);
      }
      out.push_back('\n');
    }
    return true;
  }
};

// ---------------------------------------------------------------------------------------
// Decoder

struct Line {
  int level;
  std::string_view text;  // without indentation
};

class Decoder {
 public:
  explicit Decoder(std::vector<Line> lines) : lines_(std::move(lines)) {}

  bool Root(JsonValue* out) {
    const std::string_view t = lines_[0].text;
    if (t == "{}" || t == "[]") {
      *out = internal::JsonObject();
      if (t == "[]") out->kind = Kind::kArray;
      pos_ = 1;
    } else if (t[0] == '"') {
      if (!Scalar(t, out)) return false;
      pos_ = 1;
    } else if (t[0] == '[') {
      if (!ArrayLine(t, 0, out)) return false;
    } else if (t.find(':') == std::string_view::npos) {
      if (!Scalar(t, out)) return false;
      pos_ = 1;
    } else {
      *out = internal::JsonObject();
      if (!Object(0, out)) return false;
    }
    return pos_ == lines_.size();
  }

 private:
  // Scalar cell / value text.
  static bool Scalar(std::string_view t, JsonValue* out) {
    *out = JsonValue();
    if (!t.empty() && t[0] == '"') {
      std::optional<std::string> s = internal::DecodeJsonString(t);
      if (!s) return false;
      *out = internal::JsonString(std::move(*s));
      return true;
    }
    if (t == "null") return true;
    if (t == "true" || t == "false") {
      out->kind = Kind::kBool;
      out->boolean = t == "true";
      return true;
    }
    if (internal::IsJsonNumber(t)) {
      out->kind = Kind::kNumber;
      out->text.assign(t);
      return true;
    }
    if (t.empty() || internal::Trim(t) != t) return false;
    for (char c : t) {
      if (c == '\n' || c == '\r' || c == '\t') return false;
    }
    *out = internal::JsonString(std::string(t));
    return true;
  }

  // Splits on ',' outside quotes (backslash escapes inside quotes).
  static std::vector<std::string_view> SplitCells(std::string_view s) {
    std::vector<std::string_view> cells;
    bool quoted = false;
    size_t start = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (quoted) {
        if (c == '\\') {
          ++i;
        } else if (c == '"') {
          quoted = false;
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',') {
        cells.push_back(s.substr(start, i - start));
        start = i + 1;
      }
    }
    cells.push_back(s.substr(start));
    return cells;
  }

  // `t` starts with "[N]..." (after the key); consumes the line (and tabular rows).
  bool ArrayLine(std::string_view t, int level, JsonValue* out) {
    ++pos_;
    *out = JsonValue();
    out->kind = Kind::kArray;
    if (t.empty() || t[0] != '[') return false;
    size_t close = t.find(']');
    if (close == std::string_view::npos) return false;
    std::string_view digits = t.substr(1, close - 1);
    if (digits.empty() || digits.size() > 9 || (digits.size() > 1 && digits[0] == '0')) {
      return false;
    }
    size_t n = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
      n = n * 10 + static_cast<size_t>(c - '0');
    }
    std::string_view rest = t.substr(close + 1);
    if (!rest.empty() && rest[0] == '{') {
      if (n == 0 || rest.size() < 3 || rest.substr(rest.size() - 2) != "}:") return false;
      std::vector<std::string_view> fields = SplitCells(rest.substr(1, rest.size() - 3));
      for (size_t a = 0; a < fields.size(); ++a) {
        if (!KeySafe(fields[a])) return false;
        for (size_t b = 0; b < a; ++b) {
          if (fields[a] == fields[b]) return false;
        }
      }
      for (size_t r = 0; r < n; ++r) {
        if (pos_ >= lines_.size() || lines_[pos_].level != level + 1) return false;
        std::vector<std::string_view> cells = SplitCells(lines_[pos_].text);
        ++pos_;
        if (cells.size() != fields.size()) return false;
        JsonValue row = internal::JsonObject();
        for (size_t k = 0; k < cells.size(); ++k) {
          JsonMember m;
          m.key.assign(fields[k]);
          if (!Scalar(cells[k], &m.value)) return false;
          row.members.push_back(std::move(m));
        }
        out->items.push_back(std::move(row));
      }
      return true;
    }
    if (rest.substr(0, 2) != ": ") return false;
    rest.remove_prefix(2);
    if (n == 0) return rest == "[]";
    std::vector<std::string_view> cells = SplitCells(rest);
    if (cells.size() != n) return false;
    for (std::string_view c : cells) {
      out->items.emplace_back();
      if (!Scalar(c, &out->items.back())) return false;
    }
    return true;
  }

  // Members at `level` until a shallower line or the end.
  bool Object(int level, JsonValue* obj) {
    if (level > internal::kMaxJsonDepth) return false;
    std::unordered_set<std::string_view> seen;
    while (pos_ < lines_.size()) {
      const Line& line = lines_[pos_];
      if (line.level < level) break;
      if (line.level > level) return false;  // deeper line without an opener
      std::string_view t = line.text;
      size_t k = 0;
      if (t.empty() || !IsKeyStart(t[0])) return false;
      while (k < t.size() && IsKeyChar(t[k])) ++k;
      JsonMember m;
      m.key.assign(t.substr(0, k));
      if (!seen.insert(t.substr(0, k)).second) return false;  // duplicate key
      std::string_view rest = t.substr(k);
      if (!rest.empty() && rest[0] == '[') {
        if (!ArrayLine(rest, level, &m.value)) return false;
      } else if (rest == ":") {
        ++pos_;
        if (pos_ >= lines_.size() || lines_[pos_].level != level + 1) return false;
        m.value = internal::JsonObject();
        if (!Object(level + 1, &m.value)) return false;
      } else if (rest == ": {}") {
        ++pos_;
        m.value = internal::JsonObject();
      } else if (rest.substr(0, 2) == ": ") {
        ++pos_;
        if (!Scalar(rest.substr(2), &m.value)) return false;
      } else {
        return false;
      }
      obj->members.push_back(std::move(m));
    }
    return true;
  }

  std::vector<Line> lines_;
  size_t pos_ = 0;
};

class ToonCompressor final : public InMemoryCompressor {
 public:
  std::string_view content_type() const override { return "toon"; }
  // Working set (issue 15 ceiling; scripts/memory_table.py --shapes): a JSON tree: ~4.6 B per pretty-printed byte, doubled for minified input.
  MemoryModel memory_model() const override { return {.per_byte = 9, .per_line = 0}; }

 protected:
  std::optional<std::string> TransformText(std::string_view body, std::string_view,
                                           TransformMeta* meta) const override {
    // Bounded: a longer TOON text has more tokens than the body has bytes (see toon.h).
    Result<std::string> r = EncodeToon(body, kMaxTokenBytes * body.size());
    if (!r.ok()) return std::nullopt;
    meta->method = "toon";
    meta->lossless_to_model = true;
    return std::move(r).value();
  }
};

}  // namespace

Result<std::string> EncodeToon(std::string_view json) { return EncodeToon(json, SIZE_MAX); }

namespace {

Result<std::string> EncodeToonHere(std::string_view json, size_t max_bytes) {
  std::optional<JsonValue> v = internal::ParseJson(json);
  if (!v) return Status::InvalidArgument("toon: input is not JSON");
  if (AnyDuplicateKeys(*v)) return Status::InvalidArgument("toon: duplicate keys");
  Encoder enc;
  enc.limit = max_bytes;
  if (!enc.Root(*v)) {
    if (enc.out.size() > max_bytes) {
      return Status::ResourceExhausted("toon: output exceeds " + std::to_string(max_bytes) + " bytes");
    }
    return Status::InvalidArgument("toon: shape not expressible in TOON");
  }
  if (enc.out.size() > max_bytes) {
    return Status::ResourceExhausted("toon: output exceeds " + std::to_string(max_bytes) + " bytes");
  }
  while (!enc.out.empty() && enc.out.back() == '\n') enc.out.pop_back();
  return std::move(enc.out);
}

Result<std::string> DecodeToonHere(std::string_view toon) {
  auto invalid = [](std::string_view why) { return Status::InvalidArgument("toon: " + std::string(why)); };
  if (!internal::IsValidUtf8(toon)) return invalid("not valid UTF-8");
  while (!toon.empty() && toon.back() == '\n') toon.remove_suffix(1);
  if (toon.empty()) return invalid("empty document");
  std::vector<Line> lines;
  size_t start = 0;
  while (start <= toon.size()) {
    size_t nl = toon.find('\n', start);
    if (nl == std::string_view::npos) nl = toon.size();
    std::string_view raw = toon.substr(start, nl - start);
    size_t spaces = 0;
    while (spaces < raw.size() && raw[spaces] == ' ') ++spaces;
    if (spaces == raw.size()) return invalid("blank line");
    if (spaces % 2 != 0) return invalid("odd indentation");
    lines.push_back({static_cast<int>(spaces / 2), raw.substr(spaces)});
    start = nl + 1;
  }
  if (lines[0].level != 0) return invalid("first line is indented");
  // Stated bound (issue 15): nesting as deep as JSON's limit, checked before parsing.
  for (const Line& l : lines) {
    if (l.level > internal::kMaxJsonDepth) return invalid("nested deeper than 10,000 levels");
  }
  JsonValue v;
  Decoder dec(std::move(lines));
  if (!dec.Root(&v)) return invalid("malformed document");
  return internal::Cj(v);
}

}  // namespace

// The parse, the encoder/decoder and the tree's destructor recurse once per nesting level
// (up to 10,000): they run on a thread whose stack is sized for the input, so neither a
// small `ulimit -s` nor a library caller's small thread stack can overflow (issue 15).
Result<std::string> EncodeToon(std::string_view json, size_t max_bytes) {
  Result<std::string> r = Status::Internal("toon: not run");
  internal::RunWithStack(internal::StackBytesForInput(json.size()), [&] { r = EncodeToonHere(json, max_bytes); });
  return r;
}

Result<std::string> DecodeToon(std::string_view toon) {
  Result<std::string> r = Status::Internal("toon: not run");
  internal::RunWithStack(internal::StackBytesForInput(toon.size()), [&] { r = DecodeToonHere(toon); });
  return r;
}

std::unique_ptr<Compressor> NewToonCompressor() { return std::make_unique<ToonCompressor>(); }

}  // namespace caveman
