// RecoveryStore defaults shared by every backend.
#include "caveman/store/store.h"

#include "store/internal/range_sink.h"

#include <algorithm>

namespace caveman {

Result<std::optional<std::string>> RecordInfo::MarkerMapBytes() const {
  if (marker_map.has_value() || !marker_map_reader) return marker_map;
  std::unique_ptr<ByteSource> reader = marker_map_reader();
  std::string all;
  all.resize(marker_map_size);
  uint64_t got = 0;
  while (got < marker_map_size) {
    CAVEMAN_ASSIGN_OR_RETURN(size_t n, reader->Read(all.data() + got, marker_map_size - got));
    if (n == 0) return Status::IoError("ccr: marker map shorter than announced");
    got += n;
  }
  char extra;
  CAVEMAN_ASSIGN_OR_RETURN(size_t more, reader->Read(&extra, 1));
  if (more != 0) return Status::IoError("ccr: marker map longer than announced");
  return std::optional<std::string>(std::move(all));
}

Result<std::unique_ptr<StreamRecordWriter>> RecoveryStore::BeginStreamRecord(std::string_view) {
  return Status::NotSupported("this recovery store cannot record streams");
}

Result<std::vector<RecordListing>> RecoveryStore::ListRecords(std::string_view, size_t) {
  return Status::NotSupported("this recovery store cannot list its records");
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

bool IsPostgresUrl(std::string_view url) { return url.starts_with("postgresql://") || url.starts_with("postgres://"); }

std::string RedactUrl(std::string_view url) {
  std::string out(url);
  // userinfo: scheme://user:PASSWORD@host — the authority ends at the first '/', '?' or '#'.
  const size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    const size_t start = scheme + 3;
    const size_t end = std::min(out.find_first_of("/?#", start), out.size());
    const size_t at = out.rfind('@', end == 0 ? 0 : end - 1);
    if (at != std::string::npos && at >= start && at < end) {
      const size_t colon = out.find(':', start);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // Query parameter password=...
  for (size_t pos = out.find("password="); pos != std::string::npos; pos = out.find("password=", pos + 1)) {
    if (pos > 0 && out[pos - 1] != '?' && out[pos - 1] != '&') continue;
    const size_t value = pos + 9;
    const size_t end = std::min(out.find('&', value), out.size());
    out.replace(value, end - value, "***");
  }
  return out;
}

Result<std::unique_ptr<RecoveryStore>> OpenRecoveryStore(const StoreOptions& options) {
  if (!options.url.empty()) return OpenPostgresStore(options);
  return OpenSqliteStore(options);
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
