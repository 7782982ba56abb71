#include "cli/internal/mcp_server.h"

#include <simdjson.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "cli/internal/config.h"
#include "cli/internal/report_format.h"
#include "compressors/json.h"
#include "compressors/slice.h"
#include "caveman/engine/engine.h"
#include "caveman/stream/byte_io.h"
#include "stream/chunk_buffer.h"
#include "stream/json_writer.h"

namespace caveman::internal {
namespace {

namespace od = simdjson::ondemand;

constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
// Text a tool returns in one result (original or slice); over it the tool asks for a slice.
constexpr uint64_t kMaxToolOutputBytes = 16 * 1024 * 1024;

bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

std::string Base64(std::string_view in) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    uint32_t v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                 static_cast<unsigned char>(in[i + 2]);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back(kAlphabet[v & 63]);
  }
  if (i < in.size()) {
    uint32_t v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

// POSIX shell single quoting, only when needed.
std::string ShellQuote(std::string_view s) {
  bool plain = !s.empty();
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_-./:=@%+,", c) != nullptr)) plain = false;
  }
  if (plain) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  return out + "'";
}

// `id_json` is the request's id as JSON text (a quoted string, an integer or null).
std::string ErrorResponse(std::string_view id_json, int code, std::string_view message) {
  JsonWriter w;
  w.BeginObject().Key("jsonrpc").String("2.0").Key("id").Raw(id_json);
  w.Key("error").BeginObject().Key("code").Int(code).Key("message").String(message).EndObject();
  w.EndObject();
  return w.Take();
}

std::string ResultResponse(std::string_view id_json, std::string_view result_json) {
  JsonWriter w;
  w.BeginObject().Key("jsonrpc").String("2.0").Key("id").Raw(id_json).Key("result").Raw(result_json).EndObject();
  return w.Take();
}

// How a model asks for the whole original: the tool name and its arguments as JSON.
std::string RetrieveToolCall(std::string_view handle) {
  JsonWriter w;
  w.BeginObject().Key("handle").String(handle).EndObject();
  return "caveman_retrieve " + w.Take();
}

// One argument of a tool call.
struct Arg {
  enum class Kind : uint8_t { kString, kInteger, kOther };
  Kind kind = Kind::kOther;
  std::string text;
  uint64_t number = 0;
  std::string type_name;  // JSON type, for messages
};

struct ToolContent {
  std::string text;
  bool binary = false;  // not UTF-8: sent as an embedded resource blob
  std::string uri;
};

struct ToolResult {
  bool is_error = false;
  std::vector<ToolContent> content;
  std::string structured;  // JSON object, or empty

  std::string ToJson() const {
    JsonWriter w;
    w.BeginObject().Key("content").BeginArray();
    for (const ToolContent& c : content) {
      if (c.binary) {
        w.BeginObject().Key("type").String("resource").Key("resource").BeginObject().Key("uri").String(c.uri);
        w.Key("mimeType").String("application/octet-stream").Key("blob").String(Base64(c.text)).EndObject();
        w.EndObject();
      } else {
        w.BeginObject().Key("type").String("text").Key("text").String(c.text).EndObject();
      }
    }
    w.EndArray();
    if (!structured.empty()) w.Key("structuredContent").Raw(structured);
    w.Key("isError").Bool(is_error).EndObject();
    return w.Take();
  }
};

ToolResult ToolError(std::string message) {
  ToolResult r;
  r.is_error = true;
  r.content.push_back({.text = std::move(message)});
  return r;
}

// Text or, when it is not UTF-8 (binary originals), a blob with a note first.
void AddPayload(ToolResult& r, std::string text, std::string_view uri) {
  if (ValidUtf8(text)) {
    r.content.push_back({.text = std::move(text)});
    return;
  }
  r.content.push_back({.text = "caveman: the bytes are not UTF-8 text; they follow as a base64 resource blob"});
  r.content.push_back({.text = std::move(text), .binary = true, .uri = std::string(uri)});
}

class BoundedSink final : public ByteSink {
 public:
  explicit BoundedSink(uint64_t limit) : limit_(limit) {}
  Status Write(std::string_view d) override {
    if (d.size() > limit_ - data_.size()) {
      over_ = true;
      return Status::ResourceExhausted("over the tool output limit");
    }
    data_.append(d);
    return Status::OK();
  }
  std::string& data() { return data_; }
  bool over() const { return over_; }

 private:
  uint64_t limit_;
  std::string data_;
  bool over_ = false;
};

constexpr std::string_view kToolsList =
    R"json({"tools":[{"name":"caveman_compress","title":"Compress tool output","description":"Compress long tool output (build/CI logs, test reports, JSON API dumps, diffs, tables, code, HTML) so it costs fewer tokens, keeping errors, failures, anomalies and counts. The exact original is stored: the result names its recovery handle (ccr_...), and caveman_retrieve with that handle gives back the original or any slice of it. If the view is not smaller, the text comes back unchanged and nothing is stored.","inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"The tool output to compress, verbatim (at most 16 MiB per message)."},"type":{"type":"string","description":"Force a content type instead of detecting it: json, log, test-report, diff, code, html, tabular, config, search-result, terminal, repetition, text, toon, toolschema, a11y. Omit (or 'auto') to detect."},"query":{"type":"string","description":"What you are looking for (words, ids, error names); parts that match are kept in the view."}},"required":["text"],"additionalProperties":false}},{"name":"caveman_retrieve","title":"Retrieve an original","description":"Get back the exact original stored under a recovery handle from caveman_compress (or the CLI report), whole or a slice. Use a slice when you need only part of it: lines (\"120:180\"), bytes (\"0:4096\"), grep (a regex, with context lines), json_pointer (\"/orders/17\"), or query (broad words: the parts of the original that match them). One slice kind at a time; query can be combined with lines, bytes or grep.","inputSchema":{"type":"object","properties":{"handle":{"type":"string","description":"The recovery handle: ccr_ followed by 32 hex digits (or part_<32 hex> for a partial record of a live run)."},"query":{"type":"string","description":"Broad words to narrow the original to the parts that match them (the same narrowing as the compressed view's query)."},"lines":{"type":"string","description":"Line range A:B, 1-based and inclusive like sed -n A,Bp; A: runs to the end, :B starts at line 1, N is one line."},"bytes":{"type":"string","description":"Byte range A:B, 0-based offsets, B exclusive; A: to the end, :B from the start."},"json_pointer":{"type":"string","description":"RFC 6901 JSON pointer into a JSON original, e.g. /items/3/status; returns that value's exact original bytes. Empty string = the whole document."},"grep":{"type":"string","description":"Regular expression (PCRE syntax as Hyperscan supports it; no backreferences). Output is grep -n: 'N:line' for matches, 'N-line' for context, '--' between groups."},"context":{"type":"integer","minimum":0,"description":"With grep: lines of context before and after each match (grep -C)."},"marker":{"type":"integer","minimum":1,"description":"Marker number K: the K-th elision marker of the compressed view, counting from 1 in view order; returns exactly the original bytes that marker replaced. Use it alone (no other slice)."}},"required":["handle"],"additionalProperties":false}},{"name":"caveman_stats","title":"Recovery store statistics","description":"Records in the recovery store, tokens saved per content type, and store usage.","inputSchema":{"type":"object","properties":{},"additionalProperties":false}}]})json";

}  // namespace

struct McpServer::Impl {
  McpServerOptions options;
  od::parser parser;
  bool store_tried = false;
  std::unique_ptr<RecoveryStore> store;
  std::string store_error;

  RecoveryStore* Store() {
    if (!store_tried) {
      store_tried = true;
      if (options.open_store) {
        auto s = options.open_store();
        if (s.ok()) {
          store = std::move(*s);
        } else {
          store_error = s.status().message();
        }
      } else {
        store_error = "no recovery store configured";
      }
    }
    return store.get();
  }

  std::string InitializeResult() const {
    JsonWriter w;
    w.BeginObject().Key("protocolVersion").String(kMcpProtocolVersion);
    w.Key("capabilities")
        .BeginObject()
        .Key("tools")
        .BeginObject()
        .Key("listChanged")
        .Bool(false)
        .EndObject()
        .EndObject();
    w.Key("serverInfo").BeginObject().Key("name").String("caveman-engine").Key("title").String("caveman-engine");
    w.Key("version").String(options.version).EndObject();
    w.Key("instructions")
        .String(
            "Pass long tool output to caveman_compress instead of reading it raw; its result holds the "
            "compressed view and the recovery handle. When the view is not enough, call caveman_retrieve with "
            "the handle and a slice (lines, grep, json_pointer) or a broad query; without a slice it returns the "
            "whole original.");
    w.EndObject();
    return w.Take();
  }

  ToolResult Compress(const std::map<std::string, Arg>& args);
  ToolResult Retrieve(const std::map<std::string, Arg>& args);
  ToolResult Stats(const std::map<std::string, Arg>& args);
  std::string ToolsCall(std::string_view id_json, od::value params);
};

namespace {

// Checks the arguments against the allowed names and string/integer types. Returns the
// tool-error message, or empty.
std::string CheckArgs(std::string_view tool, const std::map<std::string, Arg>& args,
                      const std::map<std::string, Arg::Kind>& allowed) {
  for (const auto& [name, arg] : args) {
    auto it = allowed.find(name);
    if (it == allowed.end()) {
      std::string names;
      for (const auto& [n, k] : allowed) names += (names.empty() ? "" : ", ") + n;
      return std::string(tool) + ": unknown argument '" + name + "' (arguments: " + names + ")";
    }
    if (arg.kind != it->second) {
      return std::string(tool) + ": argument '" + name + "' must be " +
             (it->second == Arg::Kind::kString ? "a string" : "a non-negative integer") + ", got " + arg.type_name;
    }
  }
  return "";
}

const std::string* StringArg(const std::map<std::string, Arg>& args, const char* name) {
  auto it = args.find(name);
  return it == args.end() ? nullptr : &it->second.text;
}

}  // namespace

ToolResult McpServer::Impl::Compress(const std::map<std::string, Arg>& args) {
  using K = Arg::Kind;
  std::string bad =
      CheckArgs("caveman_compress", args, {{"text", K::kString}, {"type", K::kString}, {"query", K::kString}});
  if (!bad.empty()) return ToolError(bad);
  const std::string* text = StringArg(args, "text");
  if (text == nullptr)
    return ToolError("caveman_compress: the argument 'text' (the tool output to compress) is required");
  RecoveryStore* st = Store();
  if (st == nullptr) {
    return ToolError("caveman_compress: the recovery store cannot be opened (" + store_error +
                     "); nothing can be compressed without a place for the original");
  }
  CompressOptions o;
  o.mode = Mode::kCompress;
  if (const std::string* t = StringArg(args, "type"); t != nullptr && *t != "auto") o.type = *t;
  if (const std::string* q = StringArg(args, "query"); q != nullptr) o.query = *q;
  Engine engine(CliEngineOptions(st));
  std::string view;
  auto r = engine.Compress(*text, o, &view);
  if (!r.ok()) return ToolError("caveman_compress: " + r.status().message());
  ToolResult out;
  AddPayload(out, std::move(view), r->recovery_handle.empty() ? "caveman://view" : "caveman://" + r->recovery_handle);
  std::string report = r->ReportJson();
  std::string note;
  // The report line with, when there is a handle, how to get the original back.
  JsonWriter structured;
  structured.BeginObjectFrom(report);
  if (!r->recovery_handle.empty()) {
    const std::string& h = r->recovery_handle;
    std::string tool_call = RetrieveToolCall(h);
    std::string command = "caveman-engine retrieve " + h;
    note = "caveman: recovery handle " + h + " (" + r->content_type + ", " + std::to_string(r->tokens_before) + " -> " +
           std::to_string(r->tokens_after) + " tokens, " +
           (r->lossless_to_model.value_or(false) ? "lossless" : "lossy") + "). The exact original: " + tool_call +
           "; a slice: add lines \"A:B\", grep, json_pointer or a broad query. Shell: " + command + "\n";
    structured.Key("retrieve_tool_call").String(tool_call).Key("retrieve_command").String(command);
  } else {
    note = std::string("caveman: passed through unchanged (") + PassThroughReasonText(r->pass_through_reason) +
           (r->error.empty() ? "" : ", " + r->error) + "); nothing was stored, so there is no recovery handle.\n";
  }
  out.content.push_back({.text = note + report});
  out.structured = structured.EndObject().Take();
  return out;
}

ToolResult McpServer::Impl::Retrieve(const std::map<std::string, Arg>& args) {
  using K = Arg::Kind;
  using Kind = RetrieveSliceOptions::Kind;
  std::string bad = CheckArgs("caveman_retrieve", args,
                              {{"handle", K::kString},
                               {"query", K::kString},
                               {"lines", K::kString},
                               {"bytes", K::kString},
                               {"json_pointer", K::kString},
                               {"grep", K::kString},
                               {"context", K::kInteger},
                               {"marker", K::kInteger}});
  if (!bad.empty()) return ToolError(bad);
  const std::string* handle = StringArg(args, "handle");
  if (handle == nullptr || handle->empty()) {
    return ToolError(
        "caveman_retrieve: the argument 'handle' is required: the recovery handle (ccr_ + 32 hex digits) "
        "from the caveman_compress result");
  }
  if (auto m = args.find("marker"); m != args.end()) {
    if (args.size() > 2) return ToolError("caveman_retrieve: marker takes no other slice or query");
    if (m->second.number < 1)
      return ToolError("caveman_retrieve: marker is 1-based: the first marker of the view is 1");
    RecoveryStore* st = Store();
    if (st == nullptr) return ToolError("caveman_retrieve: the recovery store cannot be opened (" + store_error + ")");
    Engine engine(CliEngineOptions(st));
    BoundedSink sink(kMaxToolOutputBytes);
    const uint64_t k = static_cast<uint64_t>(m->second.number);
    Status s = engine.RetrieveMarker(*handle, k, sink);
    if (sink.over()) {
      return ToolError("caveman_retrieve: what marker " + std::to_string(k) +
                       " replaced is over 16 MiB, too large for one tool result; ask for lines or grep instead");
    }
    if (!s.ok()) return ToolError("caveman_retrieve: marker " + std::to_string(k) + ": " + s.message());
    const std::string command = "caveman-engine retrieve " + ShellQuote(*handle) + " --marker " + std::to_string(k);
    const uint64_t size = sink.data().size();
    ToolResult out;
    AddPayload(out, std::move(sink.data()), "caveman://" + *handle);
    out.content.push_back({.text = "caveman: what marker " + std::to_string(k) + " of " + *handle + " replaced, " +
                                   std::to_string(size) + " bytes. Shell: " + command + "\n"});
    JsonWriter structured;
    structured.BeginObject().Key("handle").String(*handle).Key("marker").Uint(k).Key("bytes").Uint(size);
    structured.Key("retrieve_command").String(command).EndObject();
    out.structured = structured.Take();
    return out;
  }
  int kinds =
      static_cast<int>(args.count("lines") + args.count("bytes") + args.count("json_pointer") + args.count("grep"));
  if (kinds > 1) return ToolError("caveman_retrieve: use only one of lines, bytes, json_pointer, grep per call");
  if (args.count("context") > 0 && args.count("grep") == 0) return ToolError("caveman_retrieve: context needs grep");
  RetrieveSliceOptions slice;
  std::string flags;  // the same slice as CLI flags
  if (const std::string* v = StringArg(args, "lines")) {
    Status s = ParseSliceRange(*v, Kind::kLines, &slice);
    if (!s.ok()) return ToolError("caveman_retrieve: lines: " + s.message());
    flags = " --lines " + ShellQuote(*v);
  } else if (const std::string* v = StringArg(args, "bytes")) {
    Status s = ParseSliceRange(*v, Kind::kBytes, &slice);
    if (!s.ok()) return ToolError("caveman_retrieve: bytes: " + s.message());
    flags = " --bytes " + ShellQuote(*v);
  } else if (const std::string* v = StringArg(args, "json_pointer")) {
    slice.kind = Kind::kJsonPointer;
    slice.json_pointer = *v;
    flags = " --json-pointer " + (v->empty() ? std::string("''") : ShellQuote(*v));
  } else if (const std::string* v = StringArg(args, "grep")) {
    slice.kind = Kind::kGrep;
    slice.grep = *v;
    flags = " --grep " + (v->empty() ? std::string("''") : ShellQuote(*v));
    if (auto it = args.find("context"); it != args.end()) {
      slice.context = it->second.number;
      flags += " -C " + std::to_string(it->second.number);
    }
  }
  std::string query_word;
  if (const std::string* q = StringArg(args, "query"); q != nullptr && !q->empty()) {
    slice.query = *q;
    query_word = " " + ShellQuote(*q);
  }
  RecoveryStore* st = Store();
  if (st == nullptr) return ToolError("caveman_retrieve: the recovery store cannot be opened (" + store_error + ")");
  Engine engine(CliEngineOptions(st));
  BoundedSink sink(kMaxToolOutputBytes);
  Status s = engine.RetrieveSlice(*handle, slice, sink);
  if (sink.over()) {
    return ToolError(
        "caveman_retrieve: the result is over 16 MiB, too large for one tool result; ask for a slice: "
        "lines \"1:2000\", grep with context, json_pointer, or a query");
  }
  if (!s.ok()) {
    if (s.code() == StatusCode::kNotFound && s.message().starts_with("ccr:")) {
      return ToolError("caveman_retrieve: " + s.message() + ": " + *handle +
                       " (use the handle from a caveman_compress result: ccr_ + 32 hex digits; it may have been "
                       "removed by gc)");
    }
    return ToolError("caveman_retrieve: " + s.message());
  }
  std::string command = "caveman-engine retrieve " + ShellQuote(*handle) + query_word + flags;
  std::string what = flags.empty() && query_word.empty() ? "the original" : "a slice";
  uint64_t size = sink.data().size();
  ToolResult out;
  AddPayload(out, std::move(sink.data()), "caveman://" + *handle);
  std::string tool_call = RetrieveToolCall(*handle);
  out.content.push_back({.text = "caveman: " + what + " of " + *handle + ", " + std::to_string(size) + " bytes" +
                                 (size == 0 ? " (nothing in that range or nothing matched)" : "") +
                                 ". Whole original: " + tool_call + ". Shell: " + command + "\n"});
  JsonWriter structured;
  structured.BeginObject().Key("handle").String(*handle).Key("bytes").Uint(size);
  structured.Key("retrieve_command").String(command).Key("retrieve_tool_call").String(tool_call).EndObject();
  out.structured = structured.Take();
  return out;
}

ToolResult McpServer::Impl::Stats(const std::map<std::string, Arg>& args) {
  std::string bad = CheckArgs("caveman_stats", args, {});
  if (!bad.empty()) return ToolError(bad);
  RecoveryStore* st = Store();
  if (st == nullptr) return ToolError("caveman_stats: the recovery store cannot be opened (" + store_error + ")");
  auto stats = st->Stats();
  if (!stats.ok()) return ToolError("caveman_stats: " + stats.status().message());
  std::string json = StatsJson(*stats);
  while (!json.empty() && (json.back() == '\n' || json.back() == ' ')) json.pop_back();
  ToolResult out;
  out.content.push_back({.text = json});
  out.structured = MinifyJson(json);  // a raw newline would end the message
  return out;
}

std::string McpServer::Impl::ToolsCall(std::string_view id_json, od::value params_value) {
  od::object params;
  if (params_value.get_object().get(params) != simdjson::SUCCESS) {
    return ErrorResponse(id_json, kInvalidParams, "Invalid params: tools/call params must be an object");
  }
  std::optional<std::string> name;
  std::map<std::string, Arg> args;
  bool arguments_bad = false;
  for (auto field : params) {
    std::string_view key_view;
    if (field.unescaped_key().get(key_view) != simdjson::SUCCESS)
      return ErrorResponse(id_json, kInvalidParams, "Invalid params");
    std::string key(key_view);
    od::value v;
    if (field.value().get(v) != simdjson::SUCCESS) return ErrorResponse(id_json, kInvalidParams, "Invalid params");
    if (key == "name") {
      std::string_view s;
      if (v.get_string().get(s) != simdjson::SUCCESS) {
        return ErrorResponse(id_json, kInvalidParams, "Invalid params: tools/call 'name' must be a string");
      }
      name = std::string(s);
    } else if (key == "arguments") {
      od::json_type t;
      if (v.type().get(t) != simdjson::SUCCESS) return ErrorResponse(id_json, kInvalidParams, "Invalid params");
      if (t == od::json_type::null) continue;
      od::object a;
      if (t != od::json_type::object || v.get_object().get(a) != simdjson::SUCCESS) {
        arguments_bad = true;
        continue;
      }
      for (auto af : a) {
        std::string_view ak;
        od::value av;
        if (af.unescaped_key().get(ak) != simdjson::SUCCESS || af.value().get(av) != simdjson::SUCCESS) {
          return ErrorResponse(id_json, kInvalidParams, "Invalid params");
        }
        Arg arg;
        od::json_type at;
        if (av.type().get(at) != simdjson::SUCCESS) return ErrorResponse(id_json, kInvalidParams, "Invalid params");
        switch (at) {
          case od::json_type::string: {
            std::string_view sv;
            if (av.get_string().get(sv) != simdjson::SUCCESS)
              return ErrorResponse(id_json, kInvalidParams, "Invalid params");
            arg.kind = Arg::Kind::kString;
            arg.text = std::string(sv);
            arg.type_name = "a string";
            break;
          }
          case od::json_type::number: {
            uint64_t u;
            if (av.get_uint64().get(u) == simdjson::SUCCESS) {
              arg.kind = Arg::Kind::kInteger;
              arg.number = u;
            }
            arg.type_name = "a number that is not a non-negative integer";
            break;
          }
          case od::json_type::boolean: arg.type_name = "a boolean"; break;
          case od::json_type::null: arg.type_name = "null"; break;
          case od::json_type::array: arg.type_name = "an array"; break;
          case od::json_type::object: arg.type_name = "an object"; break;
        }
        args[std::string(ak)] = std::move(arg);
      }
    }
  }
  if (!name) return ErrorResponse(id_json, kInvalidParams, "Invalid params: tools/call needs 'name' (the tool)");
  if (arguments_bad)
    return ErrorResponse(id_json, kInvalidParams, "Invalid params: tools/call 'arguments' must be an object");
  ToolResult r;
  if (*name == "caveman_compress") {
    r = Compress(args);
  } else if (*name == "caveman_retrieve") {
    r = Retrieve(args);
  } else if (*name == "caveman_stats") {
    r = Stats(args);
  } else {
    return ErrorResponse(id_json, kInvalidParams,
                         "Unknown tool: " + *name + " (tools: caveman_compress, caveman_retrieve, caveman_stats)");
  }
  return ResultResponse(id_json, r.ToJson());
}

McpServer::McpServer(McpServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}
McpServer::~McpServer() = default;

std::string McpServer::HandleMessage(std::string_view message) {
  while (!message.empty() && (message.back() == '\r' || message.back() == ' ' || message.back() == '\t')) {
    message.remove_suffix(1);
  }
  size_t first = message.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return "";
  if (char c = message[first]; c != '{' && c != '[') {
    // A scalar document: valid JSON (checked inside an array) but not a request.
    if (message.size() < 4096 && IsJsonDocument("[" + std::string(message) + "]")) {
      return ErrorResponse("null", kInvalidRequest, "Invalid Request: a message must be a JSON object");
    }
    return ErrorResponse("null", kParseError, "Parse error: the message is not one JSON value in UTF-8");
  }
  if (!IsJsonDocument(message)) {
    return ErrorResponse("null", kParseError, "Parse error: the message is not one JSON value in UTF-8");
  }
  std::string buf(message);
  buf.reserve(buf.size() + simdjson::SIMDJSON_PADDING);
  simdjson::padded_string_view input(buf.data(), buf.size(), buf.capacity());
  od::document doc;
  if (impl_->parser.iterate(input).get(doc) != simdjson::SUCCESS) {
    return ErrorResponse("null", kParseError, "Parse error");
  }
  od::json_type top;
  if (doc.type().get(top) != simdjson::SUCCESS) return ErrorResponse("null", kParseError, "Parse error");
  if (top == od::json_type::array) {
    return ErrorResponse(
        "null", kInvalidRequest,
        "Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18); send one message per line");
  }
  if (top != od::json_type::object)
    return ErrorResponse("null", kInvalidRequest, "Invalid Request: a message must be a JSON object");

  std::string id_json = "null";
  bool has_id = false, id_bad = false, has_method = false, method_bad = false, has_response = false;
  bool has_params = false, params_object = false;
  std::optional<std::string> jsonrpc;
  std::string method;
  {
    od::object obj;
    if (doc.get_object().get(obj) != simdjson::SUCCESS) return ErrorResponse("null", kParseError, "Parse error");
    for (auto field : obj) {
      std::string_view key;
      od::value v;
      od::json_type t;
      if (field.unescaped_key().get(key) != simdjson::SUCCESS || field.value().get(v) != simdjson::SUCCESS ||
          v.type().get(t) != simdjson::SUCCESS) {
        return ErrorResponse("null", kParseError, "Parse error");
      }
      if (key == "jsonrpc") {
        std::string_view s;
        jsonrpc = t == od::json_type::string && v.get_string().get(s) == simdjson::SUCCESS ? std::string(s)
                                                                                           : std::string("?");
      } else if (key == "id") {
        has_id = true;
        if (t == od::json_type::string) {
          std::string_view s;
          if (v.get_string().get(s) != simdjson::SUCCESS) return ErrorResponse("null", kParseError, "Parse error");
          id_json = JsonQuote(s);
        } else if (t == od::json_type::number) {
          int64_t n;
          if (v.get_int64().get(n) == simdjson::SUCCESS) {
            id_json = std::to_string(n);
          } else {
            id_bad = true;  // MCP: ids are strings or integers
          }
        } else {
          id_bad = true;
        }
      } else if (key == "method") {
        has_method = true;
        std::string_view s;
        if (t == od::json_type::string && v.get_string().get(s) == simdjson::SUCCESS) {
          method = std::string(s);
        } else {
          method_bad = true;
        }
      } else if (key == "params") {
        has_params = true;
        params_object = t == od::json_type::object;
      } else if (key == "result" || key == "error") {
        has_response = true;
      }
    }
  }
  if (id_bad) {
    id_json = "null";
    return ErrorResponse("null", kInvalidRequest, "Invalid Request: id must be a string or an integer");
  }
  if (!has_method) {
    if (has_response) return "";  // a response to a request we never send: ignore
    return ErrorResponse(id_json, kInvalidRequest, "Invalid Request: no method");
  }
  if (!jsonrpc || *jsonrpc != "2.0")
    return ErrorResponse(id_json, kInvalidRequest, "Invalid Request: jsonrpc must be \"2.0\"");
  if (method_bad) return ErrorResponse(id_json, kInvalidRequest, "Invalid Request: method must be a string");
  if (!has_id) return "";  // notifications (notifications/initialized and any other): no answer
  if (has_params && !params_object)
    return ErrorResponse(id_json, kInvalidParams, "Invalid params: params must be an object");

  if (method == "initialize") return ResultResponse(id_json, impl_->InitializeResult());
  if (method == "ping") return ResultResponse(id_json, "{}");
  if (method == "tools/list") return ResultResponse(id_json, kToolsList);
  if (method == "tools/call") {
    if (!has_params)
      return ErrorResponse(id_json, kInvalidParams, "Invalid params: tools/call needs params {name, arguments}");
    doc.rewind();
    od::value params;
    if (doc.find_field_unordered("params").get(params) != simdjson::SUCCESS) {
      return ErrorResponse(id_json, kInvalidParams, "Invalid params");
    }
    return impl_->ToolsCall(id_json, params);
  }
  return ErrorResponse(id_json, kMethodNotFound, "Method not found: " + method);
}

std::string McpServer::OversizeResponse(std::string_view head, std::string_view tail) const {
  // Best effort: the id of a request too large to parse, so the client can match the error.
  // An unescaped "id": can only be a member name (inside a string the quotes are escaped).
  auto find_id = [](std::string_view s) -> std::string {
    size_t at = s.rfind("\"id\":");
    while (at != std::string_view::npos) {
      if (at == 0 || s[at - 1] != '\\') {
        std::string_view rest = s.substr(at + 5);
        size_t p = rest.find_first_not_of(" \t");
        if (p == std::string_view::npos) return "";
        rest.remove_prefix(p);
        size_t n = 0;
        if (!rest.empty() && (rest[0] == '-' || (rest[0] >= '0' && rest[0] <= '9'))) {
          n = 1;
          while (n < rest.size() && n < 20 && rest[n] >= '0' && rest[n] <= '9') ++n;
          return std::string(rest.substr(0, n));
        }
        if (!rest.empty() && rest[0] == '"') {
          size_t close = rest.find('"', 1);
          if (close == std::string_view::npos || close > 256) return "";
          std::string_view inner = rest.substr(1, close - 1);
          if (inner.find('\\') != std::string_view::npos) return "";
          return JsonQuote(inner);
        }
        return "";
      }
      if (at == 0) break;
      at = s.rfind("\"id\":", at - 1);
    }
    return "";
  };
  std::string id = find_id(tail);
  if (id.empty()) id = find_id(head);
  if (id.empty() || !ValidUtf8(id)) id = "null";
  return ErrorResponse(id, kInvalidRequest,
                       "Invalid Request: the message is over " + std::to_string(impl_->options.max_message_bytes) +
                           " bytes (the server's limit); send less text per call (for a large file or command output "
                           "use the shell: caveman-engine compress < FILE, or caveman-engine run -- CMD)");
}

int McpServer::Serve(int in_fd, int out_fd) {
  constexpr size_t kKeep = 4096;
  auto out = NewFdSink(out_fd);
  auto send = [&](const std::string& response) -> bool {
    if (response.empty()) return true;
    Status st = out->Write(response + "\n");
    if (!st.ok()) {
      std::fprintf(stderr, "caveman-engine: mcp: write stdout: %s\n", st.message().c_str());
      return false;
    }
    return true;
  };
  std::string line;
  bool oversize = false;
  std::string head, tail;
  ChunkBuffer buf(256 * 1024);
  auto end_message = [&]() -> bool {
    bool ok;
    if (oversize) {
      ok = send(OversizeResponse(head, tail));
    } else {
      ok = send(HandleMessage(line));
    }
    line.clear();
    head.clear();
    tail.clear();
    oversize = false;
    return ok;
  };
  for (;;) {
    ssize_t n = ::read(in_fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "caveman-engine: mcp: read stdin: %s\n", std::strerror(errno));
      return 1;
    }
    if (n == 0) break;
    std::string_view data(buf.data(), static_cast<size_t>(n));
    while (!data.empty()) {
      size_t nl = data.find('\n');
      std::string_view piece = data.substr(0, nl);
      if (!oversize && line.size() + piece.size() > impl_->options.max_message_bytes) {
        oversize = true;
        head = line.substr(0, kKeep);
        if (head.size() < kKeep) head.append(piece.substr(0, kKeep - head.size()));
        line.clear();
        line.shrink_to_fit();
      }
      if (oversize) {
        tail.append(piece);
        if (tail.size() > 2 * kKeep) tail.erase(0, tail.size() - kKeep);
      } else {
        line.append(piece);
      }
      if (nl == std::string_view::npos) break;
      if (!end_message()) return 1;
      data.remove_prefix(nl + 1);
    }
  }
  // End of input: a last message without LF is still answered.
  if (oversize || line.find_first_not_of(" \t\r") != std::string::npos) {
    if (!end_message()) return 1;
  }
  return 0;
}

}  // namespace caveman::internal
