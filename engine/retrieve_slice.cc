// Engine::RetrieveSlice and the --lines/--bytes range syntax (issue 14). The slicers live in
// compressors/slice (they need Hyperscan and simdjson); this file wires them to the store.
#include <charconv>
#include <memory>

#include "compressors/narrow.h"
#include "compressors/slice.h"
#include "caveman/engine/engine.h"
#include "engine/internal/engine_impl.h"
#include "stream/spool.h"

namespace caveman {
namespace {

// The JSON pointer slice parses the whole original; refuse to load more than this.
constexpr uint64_t kJsonPointerMaxBytes = 256ull * 1024 * 1024;

class LimitedStringSink final : public ByteSink {
 public:
  explicit LimitedStringSink(uint64_t limit) : limit_(limit) {}
  Status Write(std::string_view d) override {
    if (d.size() > limit_ - data_.size()) {
      return Status::ResourceExhausted("the original is larger than 268435456 bytes; --json-pointer cannot parse it");
    }
    data_.append(d);
    return Status::OK();
  }
  const std::string& data() const { return data_; }

 private:
  uint64_t limit_;
  std::string data_;
};

bool ParseNumber(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

Status ParseSliceRange(std::string_view spec, RetrieveSliceOptions::Kind kind, RetrieveSliceOptions* options) {
  const bool lines = kind == RetrieveSliceOptions::Kind::kLines;
  const std::string expected =
      lines ? "expected A:B, A:, :B or N (line numbers from 1, inclusive), got '" + std::string(spec) + "'"
            : "expected A:B, A: or :B (byte offsets from 0, B exclusive), got '" + std::string(spec) + "'";
  size_t colon = spec.find(':');
  uint64_t first = lines ? 1 : 0;
  uint64_t last = UINT64_MAX;
  if (colon == std::string_view::npos) {
    if (!lines || !ParseNumber(spec, &first)) return Status::InvalidArgument(expected);
    last = first;
  } else {
    std::string_view a = spec.substr(0, colon);
    std::string_view b = spec.substr(colon + 1);
    if (a.empty() && b.empty()) return Status::InvalidArgument(expected);
    if (!a.empty() && !ParseNumber(a, &first)) return Status::InvalidArgument(expected);
    if (!b.empty() && !ParseNumber(b, &last)) return Status::InvalidArgument(expected);
  }
  if (lines && (first == 0 || last == 0))
    return Status::InvalidArgument("line numbers start at 1, got '" + std::string(spec) + "'");
  if (last != UINT64_MAX && last < first) {
    return Status::InvalidArgument("the range ends before it starts: '" + std::string(spec) + "'");
  }
  options->kind = kind;
  options->first = first;
  options->last = last;
  return Status::OK();
}

Status Engine::RetrieveSlice(std::string_view handle, const RetrieveSliceOptions& slice, ByteSink& out) const {
  using Kind = RetrieveSliceOptions::Kind;
  if (impl_->options_.store == nullptr) return Status::NotSupported("no recovery store configured");
  const bool partial = handle.starts_with("part_");
  if (!slice.query.empty() && partial) return Status::InvalidArgument("a partial record cannot be narrowed by a query");
  if (!slice.query.empty() && slice.kind == Kind::kJsonPointer) {
    return Status::InvalidArgument("a JSON pointer applies to the whole original; it cannot be combined with a query");
  }
  if (slice.kind == Kind::kWhole) {
    if (!slice.query.empty()) return RetrieveQuery(handle, slice.query, out);
    return partial ? impl_->options_.store->GetPartial(handle, out) : Retrieve(handle, out);
  }

  if (slice.kind == Kind::kJsonPointer) {
    LimitedStringSink original(kJsonPointerMaxBytes);
    CAVEMAN_RETURN_IF_ERROR(partial ? impl_->options_.store->GetPartial(handle, original)
                                    : impl_->options_.store->Get(handle, original));
    CAVEMAN_ASSIGN_OR_RETURN(std::string value, JsonPointerSlice(original.data(), slice.json_pointer));
    return out.Write(value);
  }

  SpoolOptions spool_options;
  spool_options.memory_limit = impl_->options_.spool_memory_limit;
  if (!impl_->options_.temp_dir.empty()) spool_options.temp_dir = impl_->options_.temp_dir;
  Spool result(spool_options);
  std::unique_ptr<SliceSink> slicer;
  switch (slice.kind) {
    case Kind::kLines: slicer = NewLineSlice(slice.first, slice.last, result); break;
    case Kind::kBytes: slicer = NewByteSlice(slice.first, slice.last, result); break;
    case Kind::kGrep: {
      CAVEMAN_ASSIGN_OR_RETURN(slicer, NewGrepSlice(slice.grep, slice.context, result));
      break;
    }
    default: return Status::InvalidArgument("unknown slice");
  }
  if (!slice.query.empty()) {
    StringSink original;
    CAVEMAN_RETURN_IF_ERROR(impl_->options_.store->Get(handle, original));
    CAVEMAN_RETURN_IF_ERROR(slicer->Write(NarrowForQuery(original.data(), slice.query)));
  } else if (partial) {
    CAVEMAN_RETURN_IF_ERROR(impl_->options_.store->GetPartial(handle, *slicer));
  } else {
    bool stopped = false;
    SliceSink* s = slicer.get();
    CAVEMAN_RETURN_IF_ERROR(impl_->options_.store->GetStreaming(
        handle, *slicer, [s] { return s->done(); }, &stopped));
  }
  CAVEMAN_RETURN_IF_ERROR(slicer->Finish());
  return result.CopyTo(out);
}

}  // namespace caveman
