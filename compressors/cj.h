// A small JSON document model for the compressors that re-serialise JSON (toolschema, toon,
// a11y): strict parsing per the JSON validity rule of §0.3 (RFC 8259, valid UTF-8 strings,
// depth ≤ 10,000), numbers kept as their literal text, members kept in document order with
// duplicates and byte spans, and the CJ / CJI writers of §0.3.
//
// Thread-safety: plain values and pure functions.
#ifndef CAVEMAN_COMPRESSORS_CJ_H_
#define CAVEMAN_COMPRESSORS_CJ_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace caveman::internal {

struct JsonMember;

struct JsonValue {
  enum class Kind : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  std::string text;                 // number literal, or decoded string
  std::vector<JsonValue> items;     // kArray
  std::vector<JsonMember> members;  // kObject, document order, duplicates kept
  size_t begin = 0, end = 0;        // byte span of the value in the parsed text

  bool is_scalar() const { return kind != Kind::kArray && kind != Kind::kObject; }
  bool is_container() const { return !is_scalar(); }
  // Last member named `key` (CJ semantics: the last duplicate wins), or nullptr.
  const JsonValue* Find(std::string_view key) const;
  JsonValue* Find(std::string_view key);
  bool HasDuplicateKeys() const;  // this object only, not recursive
};

struct JsonMember {
  std::string key;
  JsonValue value;
  size_t key_begin = 0;  // offset of the key's opening quote
};

inline constexpr int kMaxJsonDepth = 10000;

// Parses `text` as exactly one JSON value optionally surrounded by JSON whitespace (§0.3).
// nullopt when it is not JSON; an escaped lone surrogate (undecodable to UTF-8) is not JSON.
std::optional<JsonValue> ParseJson(std::string_view text);
// True iff ParseJson would succeed (no tree is built).
bool IsJson(std::string_view text);

// CJ(v) / CJI(v) of §0.3: members sorted byte-wise by key, the last duplicate kept.
std::string Cj(const JsonValue& v);
void AppendCj(const JsonValue& v, std::string* out);
std::string Cji(const JsonValue& v);
// A string in CJ escaping, with the surrounding quotes (the writer is AppendJsonString of
// stream/json_writer.h, shared by both JSON models and the reports).
void AppendCjString(std::string_view s, std::string* out);
std::string CjString(std::string_view s);

// RFC 8259 number grammar: -?(0|[1-9]D*)(.D+)?([eE][+-]?D+)?
bool IsJsonNumber(std::string_view s);
// Decodes one JSON string token (with quotes) that spans all of `token`; nullopt if invalid.
std::optional<std::string> DecodeJsonString(std::string_view token);

JsonValue JsonString(std::string s);
JsonValue JsonObject();

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_CJ_H_
