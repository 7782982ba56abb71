// File rules of the recovery store (§6.2): where the database lives, how its directory and
// files are created, and which existing files are refused. No SQLite here.
#ifndef CAVEMAN_STORE_INTERNAL_STORE_FILES_H_
#define CAVEMAN_STORE_INTERNAL_STORE_FILES_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "caveman/stream/status.h"

namespace caveman::internal {

// Environment lookup: nullopt when the variable is unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;
EnvLookup ProcessEnv();

struct ResolvedLocation {
  std::string db_path;
  std::string home_dir;  // directory to create (0700); empty when CAVEMAN_CCR_DB decides
};

// CAVEMAN_CCR_DB, else CAVEMAN_HOME/ccr.db, else <home>/.caveman/ccr.db (HOME, else the
// password database). Errors: kIoError "cannot resolve home directory: E".
Result<ResolvedLocation> ResolveLocation(const EnvLookup& env);

// Creates `dir` and missing ancestors with mode 0700. Errors: kIoError
// "cannot create ~/.caveman: E".
Status CreateHomeDir(const std::string& dir);

// Positive decimal integer (digits only, no sign, fits in uint64). nullopt otherwise.
std::optional<uint64_t> ParsePositiveDecimal(const std::string& s);

// Checks the parent directory of `db_path` (refused when group- or world-writable without
// the sticky bit), refuses `db_path`, `-wal` and `-shm` when they are symbolic links or not
// regular files, creates `db_path` exclusively with mode 0600 when missing, and sets
// existing files to 0600 — unless `fix_modes` is false (read-only operations never change a
// file's mode, issue 15). Errors: kIoError with the reason (no prefix).
Status PrepareDbFiles(const std::string& db_path, bool fix_modes = true);

// After SQLite created the WAL companions: the same checks for `-wal` and `-shm`.
Status SecureCompanions(const std::string& db_path, bool fix_modes = true);

// True unless `db_path` exists and this process may not write it or create files beside it
// (read-only directory, file or file system) — the case for a read-only connection.
bool DbIsWritable(const std::string& db_path);

bool FileExists(const std::string& path);

// "file:" URI of a path for sqlite3_open_v2 with SQLITE_OPEN_URI ('%', '?', '#' escaped).
std::string SqliteFileUri(const std::string& path);

}  // namespace caveman::internal

#endif  // CAVEMAN_STORE_INTERNAL_STORE_FILES_H_
