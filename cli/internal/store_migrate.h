// `caveman-engine store migrate --from SPEC --to SPEC` (issue 18): copies every complete record
// of one recovery store into another (SQLite <-> PostgreSQL, or any pair), verifying each by
// checksum, resumable.
//
// SPEC is `sqlite:PATH` or a postgresql:// / postgres:// URL. Each record is read verified
// from the source (zstd checksum, length, SHA-256 prefix = handle), hashed again while it is
// written to the destination (a handle that does not match is refused), and read back from
// the destination and hashed once more. Records the destination already holds are skipped,
// so an interrupted run is resumed by running it again. Partial records (follow mode, still
// being written) are not copied. The destination's capacity and zstd level come from
// CAVEMAN_CCR_MAX_BYTES / CAVEMAN_CCR_ZSTD_LEVEL.
//
// Prints one JSON line on stdout at the end:
//   {"migrated":N,"skipped":N,"failed":N,"original_bytes":B}
// and one line on stderr per record that failed. Exit: 0 all copied or present, 1 bad
// arguments, a store cannot be opened, or any record failed.
#ifndef CAVEMAN_CLI_INTERNAL_STORE_MIGRATE_H_
#define CAVEMAN_CLI_INTERNAL_STORE_MIGRATE_H_

#include <string>
#include <string_view>
#include <vector>

namespace caveman::internal {

inline constexpr std::string_view kStoreMigrateUsage =
    "usage: caveman-engine store migrate --from sqlite:PATH|postgresql://... --to sqlite:PATH|postgresql://...";

// `args` are the words after `store migrate`.
int RunStoreMigrate(const std::vector<std::string>& args);

}  // namespace caveman::internal

#endif  // CAVEMAN_CLI_INTERNAL_STORE_MIGRATE_H_
