#include "compressors/toolschema_annotations.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compressors/cj.h"

namespace caveman {
namespace {

using internal::JsonMember;
using internal::JsonValue;
using Kind = internal::JsonValue::Kind;
using Span = std::pair<size_t, size_t>;  // [begin, end) byte range to delete

bool In(std::string_view k, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), k) != set.end();
}

void Schema(const JsonValue& v, std::vector<Span>* spans);

void SchemaOrList(const JsonValue& v, std::vector<Span>* spans) {
  if (v.kind == Kind::kArray) {
    for (const JsonValue& e : v.items) Schema(e, spans);
  } else {
    Schema(v, spans);
  }
}

void Schema(const JsonValue& v, std::vector<Span>* spans) {
  if (v.kind != Kind::kObject) return;
  bool kept_before = false;
  const size_t n = v.members.size();
  for (size_t i = 0; i < n; ++i) {
    const JsonMember& m = v.members[i];
    if (In(m.key, {"$schema", "title", "examples", "deprecated"})) {
      if (kept_before) {
        // From the end of the previous member's value through the deleted value: removes the
        // comma that separated them.
        spans->push_back({v.members[i - 1].value.end, m.value.end});
      } else {
        // From the deleted key to the next member's key (or the closing brace): removes the
        // comma that followed it.
        size_t stop = i + 1 < n ? v.members[i + 1].key_begin : v.end - 1;
        spans->push_back({m.key_begin, stop});
      }
      continue;
    }
    kept_before = true;
    if (In(m.key, {"items", "prefixItems", "additionalItems", "unevaluatedItems", "additionalProperties",
                   "unevaluatedProperties", "propertyNames", "contains", "not", "if", "then", "else", "allOf", "anyOf",
                   "oneOf"})) {
      SchemaOrList(m.value, spans);
    } else if (In(m.key, {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})) {
      if (m.value.kind == Kind::kObject) {
        for (const JsonMember& child : m.value.members) Schema(child.value, spans);
      }
    }
  }
}

void Envelope(const JsonValue& v, std::vector<Span>* spans) {
  if (v.kind != Kind::kObject) return;
  for (const JsonMember& m : v.members) {
    if (m.key == "input_schema" || m.key == "inputSchema" || m.key == "parameters") {
      Schema(m.value, spans);
    } else if (m.key == "function") {
      if (m.value.kind == Kind::kArray) {
        for (const JsonValue& e : m.value.items) Envelope(e, spans);
      } else {
        Envelope(m.value, spans);
      }
    }
  }
}

class ToolschemaAnnotationsCompressor final : public InMemoryCompressor {
 public:
  std::string_view content_type() const override { return "toolschema-annotations"; }
  // Working set (issue 15 ceiling; scripts/memory_table.py --shapes): a JSON tree: ~5.5 B per pretty-printed byte, doubled for minified input.
  MemoryModel memory_model() const override { return {.per_byte = 11, .per_line = 0}; }

 protected:
  std::optional<std::string> TransformText(std::string_view body, std::string_view, TransformMeta*) const override {
    std::optional<JsonValue> doc = internal::ParseJson(body);
    if (!doc) return std::nullopt;
    std::vector<Span> spans;
    if (doc->kind == Kind::kArray) {
      for (const JsonValue& e : doc->items) Envelope(e, &spans);
    } else {
      Envelope(*doc, &spans);
    }
    if (spans.empty()) return std::string(body);
    std::sort(spans.begin(), spans.end());
    std::string out;
    out.reserve(body.size());
    size_t at = 0;
    for (const Span& s : spans) {
      if (s.first < at) continue;  // cannot happen (deleted members are not descended)
      out.append(body.substr(at, s.first - at));
      at = s.second;
    }
    out.append(body.substr(at));
    if (!internal::IsJson(out)) return std::nullopt;
    return out;
  }
};

}  // namespace

std::unique_ptr<Compressor> NewToolschemaAnnotationsCompressor() {
  return std::make_unique<ToolschemaAnnotationsCompressor>();
}

}  // namespace caveman
