// JSON text output (issue 17): the one string escaper, number formats and a small writer,
// shared by the report (§8.1/§8.2), the CLI (stats, gain, markers, version, MCP), the
// manifest and the compressors' JSON views. Not installed; usable by every folder.
//
// Escaping is the CJ escaping of §0.3: `"` `\` and the C0 controls escaped (\n \r \t \b \f by
// name, the rest as \u00XX), `<` `>` `&` as \u003c \u003e \u0026, U+2028/U+2029 as \u2028 and
// \u2029; every other byte (UTF-8 included, invalid UTF-8 too) is copied as is. The output
// is therefore always the same bytes for the same string, whichever module writes it.
//
// HowTo:
//   JsonWriter w;
//   w.BeginObject().Key("content_type").String(ct).Key("tokens").Uint(n).EndObject();
//   std::string line = w.Take();   // {"content_type":"log","tokens":12}
// Compact (no whitespace) by default; JsonWriter(2) indents for the human-facing documents
// (`stats`). Thread-safety: a writer is a plain value; the free functions are pure.
#ifndef CAVEMAN_STREAM_JSON_WRITER_H_
#define CAVEMAN_STREAM_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace caveman {

// Appends `s` to `out` as a JSON string, quotes included.
void AppendJsonString(std::string_view s, std::string* out);
// `s` as a JSON string, quotes included.
std::string JsonQuote(std::string_view s);
// §8.1 format of a ratio: "0" for 0 and non-finite values, fixed notation in the shortest
// form that reads back to the same double, scientific below 1e-6 written without '+' or
// leading exponent zeros (1e-7).
std::string FormatRatio(double r);

class JsonWriter {
 public:
  JsonWriter() = default;
  // Indented output when `indent` > 0: every member or element on a line of its own,
  // `indent` blanks per level, `"key": value`, an empty container as {} or []; no newline
  // after the top-level value. 0 = compact.
  explicit JsonWriter(int indent) : indent_(indent) {}

  // Containers. REQUIRES: properly nested; EndObject/EndArray close the innermost one.
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  // Starts an object holding the members of `object`, an object already written as compact
  // JSON (e.g. a report line another writer made), so members can be added after them;
  // close it with EndObject. REQUIRES: `object` is compact JSON text of an object; a compact
  // writer (indented, the added members would not line up with the copied ones).
  JsonWriter& BeginObjectFrom(std::string_view object);
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  // An object member's key; the next call writes its value. REQUIRES: inside an object.
  JsonWriter& Key(std::string_view key);
  // Values (after Key in an object, or as array elements / the top-level value).
  JsonWriter& String(std::string_view v);
  JsonWriter& Uint(uint64_t v);
  JsonWriter& Int(int64_t v);
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  JsonWriter& Ratio(double v);  // FormatRatio
  // A value that is already JSON text (e.g. a stored document), written unchanged.
  JsonWriter& Raw(std::string_view json);

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void BeforeValue();
  void Close(char bracket);
  void NewLine(size_t depth);
  std::string out_;
  std::vector<bool> has_members_;  // per open container: something written already
  bool after_key_ = false;
  int indent_ = 0;
};

}  // namespace caveman

#endif  // CAVEMAN_STREAM_JSON_WRITER_H_
