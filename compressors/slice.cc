#include "compressors/slice.h"

#include <hs/hs.h>
#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <deque>

#include "compressors/internal/json_validity.h"

namespace caveman {
namespace {

class LineSlice final : public SliceSink {
 public:
  LineSlice(uint64_t first, uint64_t last, ByteSink& out) : first_(first), last_(last), out_(out) {}

  Status Write(std::string_view data) override {
    while (!data.empty() && !done()) {
      const void* nl = std::memchr(data.data(), '\n', data.size());
      size_t take = nl == nullptr ? data.size() : static_cast<size_t>(static_cast<const char*>(nl) - data.data()) + 1;
      if (line_ >= first_) CAVEMAN_RETURN_IF_ERROR(out_.Write(data.substr(0, take)));
      if (nl != nullptr) ++line_;
      data.remove_prefix(take);
    }
    return Status::OK();
  }
  bool done() const override { return line_ > last_; }

 private:
  uint64_t first_;
  uint64_t last_;
  uint64_t line_ = 1;  // the line the next byte belongs to
  ByteSink& out_;
};

class ByteSlice final : public SliceSink {
 public:
  ByteSlice(uint64_t first, uint64_t end, ByteSink& out) : first_(first), end_(end), out_(out) {}

  Status Write(std::string_view data) override {
    uint64_t start = offset_;
    offset_ += data.size();
    if (offset_ <= first_ || start >= end_) return Status::OK();
    uint64_t from = first_ > start ? first_ - start : 0;
    uint64_t to = std::min<uint64_t>(data.size(), end_ - start);
    if (to <= from) return Status::OK();
    return out_.Write(data.substr(from, to - from));
  }
  bool done() const override { return offset_ >= end_; }

 private:
  uint64_t first_;
  uint64_t end_;
  uint64_t offset_ = 0;
  ByteSink& out_;
};

struct HsDatabaseDeleter {
  void operator()(hs_database_t* db) const { hs_free_database(db); }
};
struct HsScratchDeleter {
  void operator()(hs_scratch_t* s) const { hs_free_scratch(s); }
};

int OnMatch(unsigned int, unsigned long long, unsigned long long, unsigned int, void* ctx) {
  *static_cast<bool*>(ctx) = true;
  return 1;  // stop scanning: one match decides the line
}

class GrepSlice final : public SliceSink {
 public:
  GrepSlice(hs_database_t* db, hs_scratch_t* scratch, uint64_t context, bool separators, ByteSink& out)
      : db_(db), scratch_(scratch), context_(context), separators_(separators), out_(out) {}

  Status Write(std::string_view data) override {
    while (!data.empty()) {
      const void* nl = std::memchr(data.data(), '\n', data.size());
      if (nl == nullptr) {
        line_.append(data);
        return Status::OK();
      }
      size_t len = static_cast<size_t>(static_cast<const char*>(nl) - data.data());
      line_.append(data.substr(0, len));
      CAVEMAN_RETURN_IF_ERROR(EndLine());
      data.remove_prefix(len + 1);
    }
    return Status::OK();
  }
  bool done() const override { return false; }
  Status Finish() override {
    if (line_.empty()) return Status::OK();  // the input ended with LF (or was empty)
    return EndLine();
  }

 private:
  Status EndLine() {
    ++number_;
    bool matched = false;
    static const char kEmpty = 0;
    hs_error_t err = hs_scan(db_.get(), line_.empty() ? &kEmpty : line_.data(), static_cast<unsigned int>(line_.size()),
                             0, scratch_.get(), OnMatch, &matched);
    if (err != HS_SUCCESS && err != HS_SCAN_TERMINATED) return Status::Internal("grep: hyperscan scan failed");
    if (matched) {
      for (auto& [n, text] : before_) CAVEMAN_RETURN_IF_ERROR(Emit(n, '-', text));
      before_.clear();
      CAVEMAN_RETURN_IF_ERROR(Emit(number_, ':', line_));
      after_left_ = context_;
    } else if (after_left_ > 0) {
      --after_left_;
      CAVEMAN_RETURN_IF_ERROR(Emit(number_, '-', line_));
    } else if (context_ > 0) {
      before_.emplace_back(number_, line_);
      if (before_.size() > context_) before_.pop_front();
    }
    line_.clear();
    return Status::OK();
  }

  Status Emit(uint64_t n, char sep, std::string_view text) {
    std::string head;
    if (separators_ && printed_ && n > last_printed_ + 1) head = "--\n";
    head += std::to_string(n);
    head.push_back(sep);
    printed_ = true;
    last_printed_ = n;
    CAVEMAN_RETURN_IF_ERROR(out_.Write(head));
    CAVEMAN_RETURN_IF_ERROR(out_.Write(text));
    return out_.Write("\n");
  }

  std::unique_ptr<hs_database_t, HsDatabaseDeleter> db_;
  std::unique_ptr<hs_scratch_t, HsScratchDeleter> scratch_;
  uint64_t context_;
  bool separators_;
  ByteSink& out_;
  std::string line_;
  uint64_t number_ = 0;
  std::deque<std::pair<uint64_t, std::string>> before_;
  uint64_t after_left_ = 0;
  bool printed_ = false;
  uint64_t last_printed_ = 0;
};

std::string_view TrimJsonSpace(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::unique_ptr<SliceSink> NewLineSlice(uint64_t first, uint64_t last, ByteSink& out) {
  return std::make_unique<LineSlice>(first, last, out);
}

std::unique_ptr<SliceSink> NewByteSlice(uint64_t first, uint64_t end, ByteSink& out) {
  return std::make_unique<ByteSlice>(first, end, out);
}

Result<std::unique_ptr<SliceSink>> NewGrepSlice(std::string_view pattern, std::optional<uint64_t> context,
                                                ByteSink& out) {
  if (pattern.find('\0') != std::string_view::npos)
    return Status::InvalidArgument("grep: the pattern contains a NUL byte");
  std::string expr(pattern);
  hs_database_t* db = nullptr;
  hs_compile_error_t* err = nullptr;
  if (hs_compile(expr.c_str(), HS_FLAG_ALLOWEMPTY | HS_FLAG_SINGLEMATCH, HS_MODE_BLOCK, nullptr, &db, &err) !=
      HS_SUCCESS) {
    std::string why = err != nullptr && err->message != nullptr ? err->message : "unknown error";
    hs_free_compile_error(err);
    return Status::InvalidArgument("grep: unsupported pattern: " + why);
  }
  hs_scratch_t* scratch = nullptr;
  if (hs_alloc_scratch(db, &scratch) != HS_SUCCESS) {
    hs_free_database(db);
    return Status::Internal("grep: hyperscan scratch allocation failed");
  }
  return std::unique_ptr<SliceSink>(
      std::make_unique<GrepSlice>(db, scratch, context.value_or(0), context.has_value(), out));
}

bool IsJsonDocument(std::string_view text) { return internal::ValidateJson(text).valid; }

Result<std::string> JsonPointerSlice(std::string_view doc, std::string_view pointer) {
  if (!internal::ValidateJson(doc).valid) return Status::InvalidArgument("the original is not a JSON document");
  if (!pointer.empty() && pointer.front() != '/') {
    return Status::InvalidArgument("invalid JSON pointer (RFC 6901: empty, or starting with '/'): " +
                                   std::string(pointer));
  }
  if (pointer.empty()) return std::string(TrimJsonSpace(doc));
  // RFC 6901 escapes: '~' must be followed by 0 or 1.
  for (size_t i = 0; i < pointer.size(); ++i) {
    if (pointer[i] == '~' && (i + 1 == pointer.size() || (pointer[i + 1] != '0' && pointer[i + 1] != '1'))) {
      return Status::InvalidArgument("invalid JSON pointer ('~' must be followed by 0 or 1): " + std::string(pointer));
    }
  }
  simdjson::padded_string padded(doc);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document d;
  if (parser.iterate(padded).get(d) != simdjson::SUCCESS)
    return Status::InvalidArgument("the original is not a JSON document");
  simdjson::ondemand::value v;
  auto not_found = [&] { return Status::NotFound("no value at JSON pointer " + std::string(pointer)); };
  simdjson::error_code e = d.at_pointer(pointer).get(v);
  if (e == simdjson::INVALID_JSON_POINTER)
    return Status::InvalidArgument("invalid JSON pointer: " + std::string(pointer));
  if (e != simdjson::SUCCESS) return not_found();
  simdjson::ondemand::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS) return not_found();
  std::string_view raw;
  if (type == simdjson::ondemand::json_type::object) {
    simdjson::ondemand::object o;
    if (v.get_object().get(o) != simdjson::SUCCESS || o.raw_json().get(raw) != simdjson::SUCCESS) return not_found();
  } else if (type == simdjson::ondemand::json_type::array) {
    simdjson::ondemand::array a;
    if (v.get_array().get(a) != simdjson::SUCCESS || a.raw_json().get(raw) != simdjson::SUCCESS) return not_found();
  } else {
    raw = v.raw_json_token();
  }
  return std::string(TrimJsonSpace(raw));
}

}  // namespace caveman
