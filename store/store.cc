// RecoveryStore defaults shared by every backend.
#include "store/store.h"

#include "store/internal/range_sink.h"

#include <algorithm>

namespace caveman {

Result<std::unique_ptr<StreamRecordWriter>> RecoveryStore::BeginStreamRecord(std::string_view) {
  return Status::NotSupported("this recovery store cannot record streams");
}

Result<std::vector<PartialInfo>> RecoveryStore::ListPartials() { return std::vector<PartialInfo>{}; }

Status RecoveryStore::GetPartial(std::string_view, ByteSink&) {
  return Status::NotFound("ccr: partial record not found");
}

Status RecoveryStore::GetStreaming(std::string_view handle, ByteSink& out, const std::function<bool()>&,
                                   bool* stopped) {
  if (stopped != nullptr) *stopped = false;
  return Get(handle, out);
}

Result<std::optional<std::string>> RecoveryStore::GetMarkerMap(std::string_view handle) {
  // Existence check through the metadata accessor: every backend has one.
  CAVEMAN_RETURN_IF_ERROR(GetMetadata(handle).status());
  return std::optional<std::string>();
}


Status RecoveryStore::GetRange(std::string_view handle, uint64_t offset, uint64_t length, ByteSink& out) {
  StringSink slice;
  internal::RangeSink range(slice, offset, offset + length);
  CAVEMAN_RETURN_IF_ERROR(Get(handle, range));
  if (offset > range.seen() || length > range.seen() - offset) {
    return Status::InvalidArgument("ccr: byte range outside the original");
  }
  return out.Write(slice.data());
}

bool IsWellFormedPartialId(std::string_view id) {
  constexpr std::string_view kPrefix = "part_";
  if (id.size() != kPrefix.size() + 32 || id.substr(0, kPrefix.size()) != kPrefix) return false;
  for (char c : id.substr(kPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace caveman
