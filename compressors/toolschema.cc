#include "compressors/toolschema.h"

#include <optional>
#include <vector>

#include <re2/re2.h>
#include <unicode/uchar.h>

#include "compressors/cj.h"
#include "compressors/text_util.h"

namespace caveman {
namespace {

using internal::JsonMember;
using internal::JsonValue;
using Kind = internal::JsonValue::Kind;

const RE2& ConstraintPattern() {
  static const RE2* re =
      new RE2(R"((?i)\b(?:must|must not|cannot|can't|shall|require\w*|reject\w*|disallow\w*|forbidden|)"
              R"(invalid|not allowed|not permitted|exactly one|only one of|one of|at least|at most|)"
              R"(mutually exclusive|only|unique|case[- ]?sensitive|max|min|maximum|minimum|range|)"
              R"(between|greater than|less than|more than|fewer than|no more than|no less than|over|)"
              R"(above|below|under|beyond|exceed\w*|format\w*|iso[- ]?\d*|rfc[- ]?\d*|absolute)\b)");
  return *re;
}

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The word before the dot at s[dot] is an abbreviation (§5.11).
bool IsAbbreviation(std::string_view s, size_t dot) {
  static constexpr std::string_view kAbbrev[] = {
      "e.g", "i.e", "eg",  "ie", "etc",  "vs", "cf", "al", "viz", "resp", "approx", "no", "fig",  "figs",
      "dr",  "mr",  "mrs", "ms", "prof", "sr", "jr", "st", "inc", "ltd",  "corp",   "co", "dept", "est"};
  size_t b = dot;
  while (b > 0 && (IsAsciiLetter(s[b - 1]) || s[b - 1] == '.')) --b;
  std::string_view w = s.substr(b, dot - b);
  while (!w.empty() && w.front() == '.') w.remove_prefix(1);
  while (!w.empty() && w.back() == '.') w.remove_suffix(1);
  if (w.empty()) return false;
  if (w.size() == 1 || w.find('.') != std::string_view::npos) return true;
  std::string lw = internal::AsciiLower(w);
  for (std::string_view a : kAbbrev) {
    if (lw == a) return true;
  }
  return false;
}

bool IsBoundarySpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

std::vector<std::string_view> SplitSentences(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '.') continue;
    size_t j = i + 1;
    while (j < s.size() && IsBoundarySpace(s[j])) ++j;
    if (j == i + 1 || j >= s.size()) continue;
    size_t k = j;
    uint32_t cp = internal::DecodeUtf8(s, &k);
    if (!u_hasBinaryProperty(static_cast<UChar32>(cp), UCHAR_UPPERCASE)) continue;
    if (IsAbbreviation(s, i)) continue;
    std::string_view sentence = internal::Trim(s.substr(start, i + 1 - start));
    if (!sentence.empty()) out.push_back(sentence);
    start = j;
    i = j - 1;
  }
  std::string_view last = internal::Trim(s.substr(start));
  if (!last.empty()) out.push_back(last);
  return out;
}

std::string Cap80(std::string_view s) {
  if (s.size() <= 80) return std::string(s);
  s = s.substr(0, 80);
  while (!s.empty() && !internal::IsValidUtf8(s)) s.remove_suffix(1);
  size_t sp = s.rfind(' ');
  if (sp != std::string_view::npos && sp > 40) s = s.substr(0, sp);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

void Schema(JsonValue* v);
void Envelope(JsonValue* v);

void CompressDescriptionValue(JsonValue* v) { v->text = CompressToolDescription(v->text); }

void NameMap(JsonValue* v) {
  if (v->kind == Kind::kObject) {
    for (JsonMember& m : v->members) Schema(&m.value);
  } else {
    Schema(v);
  }
}

void Schema(JsonValue* v) {
  if (v->kind == Kind::kArray) {
    for (JsonValue& e : v->items) Schema(&e);
    return;
  }
  if (v->kind != Kind::kObject) return;
  std::vector<JsonMember> kept;
  kept.reserve(v->members.size());
  for (JsonMember& m : v->members) {
    const std::string& k = m.key;
    if (k == "examples" || k == "example" || k == "$comment" || k == "title" || k == "$schema") {
      continue;
    }
    if (k == "description" && m.value.kind == Kind::kString) {
      CompressDescriptionValue(&m.value);
    } else if (k == "enum" || k == "required" || k == "default" || k == "const") {
      // verbatim
    } else if (k == "properties" || k == "$defs" || k == "definitions" || k == "patternProperties" ||
               k == "dependentSchemas" || k == "dependentRequired" || k == "dependencies") {
      NameMap(&m.value);
    } else {
      Schema(&m.value);
    }
    kept.push_back(std::move(m));
  }
  v->members = std::move(kept);
}

void Envelope(JsonValue* v) {
  if (v->kind == Kind::kArray) {
    for (JsonValue& e : v->items) Envelope(&e);
    return;
  }
  if (v->kind != Kind::kObject) return;
  for (JsonMember& m : v->members) {
    if (m.key == "input_schema" || m.key == "inputSchema" || m.key == "parameters") {
      Schema(&m.value);
    } else if (m.key == "function") {
      Envelope(&m.value);
    } else if (m.key == "description" && m.value.kind == Kind::kString) {
      CompressDescriptionValue(&m.value);
    }
  }
}

class ToolschemaCompressor final : public InMemoryCompressor {
 public:
  std::string_view content_type() const override { return "toolschema"; }
  // Working set (issue 15 ceiling; scripts/memory_table.py --shapes): a JSON tree plus the per-tool copies: ~10 B per pretty-printed byte, doubled for minified input.
  MemoryModel memory_model() const override { return {.per_byte = 20, .per_line = 0}; }

 protected:
  std::optional<std::string> TransformText(std::string_view body, std::string_view, TransformMeta*) const override {
    std::optional<JsonValue> doc = internal::ParseJson(body);
    if (!doc) return std::nullopt;
    if (doc->kind == Kind::kArray) {
      Envelope(&*doc);
    } else if (doc->kind == Kind::kObject) {
      if (JsonValue* tools = doc->Find("tools")) {
        // Every duplicate "tools" member is processed; CJ keeps the last one.
        for (JsonMember& m : doc->members) {
          if (m.key == "tools") Envelope(&m.value);
        }
        (void)tools;
      } else if (doc->Find("name") || doc->Find("input_schema") || doc->Find("inputSchema") ||
                 doc->Find("parameters") || doc->Find("function")) {
        Envelope(&*doc);
      } else {
        Schema(&*doc);
      }
    }
    return internal::Cj(*doc);
  }
};

}  // namespace

std::string CompressToolDescription(std::string_view s) {
  s = internal::Trim(s);
  if (s.size() <= 160) return std::string(s);
  std::string out;
  bool have_other = false;
  for (std::string_view sentence : SplitSentences(s)) {
    std::string piece;
    if (RE2::PartialMatch(sentence, ConstraintPattern())) {
      piece.assign(sentence);
    } else if (!have_other) {
      have_other = true;
      piece = Cap80(sentence);
    } else {
      continue;
    }
    if (piece.empty()) continue;
    if (!out.empty()) out.push_back(' ');
    out += piece;
  }
  return out;
}

std::unique_ptr<Compressor> NewToolschemaCompressor() { return std::make_unique<ToolschemaCompressor>(); }

}  // namespace caveman
