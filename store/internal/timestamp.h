// created_at timestamps of recovery records: RFC 3339 in UTC with fractional seconds.
#ifndef CAVEMAN_STORE_INTERNAL_TIMESTAMP_H_
#define CAVEMAN_STORE_INTERNAL_TIMESTAMP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace caveman::internal {

// Nanoseconds since the Unix epoch (UTC). int64 covers years 1678–2262, plenty for records.
using UnixNanos = int64_t;

UnixNanos NowNanos();
// "YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ" (always 9 fraction digits, so the text also sorts).
std::string FormatRfc3339(UnixNanos t);
// Accepts any RFC 3339 date-time: 'T'/'t'/' ' separator, 0–9 fraction digits (more are
// truncated), 'Z'/'z' or ±HH:MM offset. nullopt when malformed (such records are never
// treated as old).
std::optional<UnixNanos> ParseRfc3339(std::string_view s);

}  // namespace caveman::internal

#endif  // CAVEMAN_STORE_INTERNAL_TIMESTAMP_H_
