// Integrity check and salvage of a recovery store database (issue 15 item 9).
//
// Both read the source database without changing it or its file modes: the file is opened
// read-only as immutable (no -shm, no locks). When a -wal file lies next to it, the database
// and its -wal are first copied into a private 0700 temporary directory and read there, so
// records committed only to the WAL are seen even when the -shm is missing and the directory
// is read-only (the copy is deleted afterwards).
//
// Every record is read one chunk row at a time by key ((handle, seq): the table itself in stores
// made before 2026-12-06, a separate index of the rowid table since), so damage in one part of
// the file costs only the records stored there — or, in a rowid store, whose index entries
// are there (the rows are not then scanned for; docs/DECISIONS.md, "Chunk rows in a rowid
// table"). Records are listed
// from the recoveries table by rowid; a rowid whose lookup fails is skipped and counted
// (unreadable_rows). A record is ok when its frame decodes with a valid zstd checksum, the
// chunk bytes add up to stored_bytes, the original to original_bytes, and the SHA-256 prefix
// of the original equals the handle; a partial record when its prefix matches the length and
// SHA-256 of its last sync.
//
// HowTo:
//   auto r = CheckStore("/home/u/.caveman/ccr.db");   // r->damaged() -> exit 4 in the CLI
//   auto s = SalvageStore(src, {.path = "/tmp/new.db"});  // refuses an existing path
#ifndef CAVEMAN_STORE_STORE_CHECK_H_
#define CAVEMAN_STORE_STORE_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "caveman/store/store.h"
#include "caveman/stream/status.h"

namespace caveman {

struct StoreCheckReport {
  // "ok", or SQLite's PRAGMA integrity_check messages (at most 100), or one "error: E" when
  // the check itself could not run.
  std::vector<std::string> integrity;
  uint64_t records = 0;              // recoveries rows read
  uint64_t ok = 0;                   // of them, verified
  std::vector<std::string> corrupt;  // handles of the others, in rowid order
  uint64_t partials = 0;             // partial records read
  uint64_t partials_ok = 0;
  std::vector<std::string> corrupt_partials;
  uint64_t unreadable_rows = 0;  // recoveries/partials rowids that could not be read
  bool integrity_ok() const { return integrity.size() == 1 && integrity[0] == "ok"; }
  bool damaged() const {
    return !integrity_ok() || !corrupt.empty() || !corrupt_partials.empty() || unreadable_rows > 0;
  }
};

struct SalvageReport {
  StoreCheckReport check;                                        // what was found in the source
  uint64_t copied = 0;                                           // complete records written to the new database
  uint64_t partials_copied = 0;                                  // partial records written (they get new ids)
  std::vector<std::pair<std::string, std::string>> partial_ids;  // old id -> new id
  std::vector<std::string> lost;                                 // handles/ids that could not be copied
};

// Errors: kIoError "cannot open recovery store: E" when not even the file header can be read
// (missing file, not a database).
Result<StoreCheckReport> CheckStore(const std::string& path);

// Copies every verified record of `path` into a NEW store at `target.path`
// (kInvalidArgument when that path, its -wal or -shm exists). Errors as CheckStore, plus those of opening the target.
Result<SalvageReport> SalvageStore(const std::string& path, const StoreOptions& target);

}  // namespace caveman

#endif  // CAVEMAN_STORE_STORE_CHECK_H_
