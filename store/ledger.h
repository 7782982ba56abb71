// The savings ledger (issue 17): one row per compress/run invocation — pass-throughs and
// repeated inputs included, unlike the recovery records behind `stats`, which are unique per
// original. Rows live in table `ledger` of the recovery store's SQLite database (schema
// version 4, created by the store's migration); OpenLedger makes a second connection to that
// file and OpenLedgerOn borrows an open store's, so the store itself knows nothing about the
// ledger.
//
// HowTo:
//   auto store = OpenSqliteStore(options);           // creates / migrates the database
//   auto ledger = OpenLedger(options.path);           // then the ledger on the same file
//   (*ledger)->Append({.unix_time = time(nullptr), .content_type = "log", ...});
//   auto rows = (*ledger)->Since(cutoff);             // oldest first
//
// Thread-safety: one thread at a time per Ledger; several processes may append at once
// (WAL, busy timeout 5 s).
#ifndef CAVEMAN_STORE_LEDGER_H_
#define CAVEMAN_STORE_LEDGER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "caveman/stream/status.h"

namespace caveman {

class RecoveryStore;

struct LedgerEntry {
  int64_t unix_time = 0;     // seconds since the epoch, UTC
  std::string content_type;  // detected or forced type
  std::string command;       // `run`: the command line; empty for compress
  uint64_t tokens_before = 0;
  uint64_t tokens_after = 0;  // = tokens_before for a pass-through
  std::string handle;         // recovery handle (or partial record id); empty = none
};

class Ledger {
 public:
  virtual ~Ledger() = default;
  // Errors: kIoError (database), kNotSupported (opened read-only).
  virtual Status Append(const LedgerEntry& entry) = 0;
  // Rows with unix_time >= `since`, oldest first (ties in insertion order).
  virtual Result<std::vector<LedgerEntry>> Since(int64_t since) = 0;
  // Deletes (or with dry_run counts) rows with unix_time < `before`. Returns the row count.
  virtual Result<uint64_t> Prune(int64_t before, bool dry_run) = 0;
};

// Opens the ledger of the existing database at `db_path` (never creates the file).
// A database older than schema version 4 (only possible read-only: a writable open migrates
// it) has no ledger: Since returns nothing, Append fails with kNotSupported.
// Errors: kIoError "cannot open ledger: E".
Result<std::unique_ptr<Ledger>> OpenLedger(const std::string& db_path, bool read_only);

// The ledger on the connection of `store` when it is a writable SQLite store (a writable open
// has migrated it to schema version 4): no second connection, schema read or WAL commit of its
// own, which was a fifth of a 4 KiB `compress` (issue 19). `store` must outlive the ledger and
// not be used by another thread meanwhile. Errors: kNotSupported for any other store (open the
// ledger by path then).
Result<std::unique_ptr<Ledger>> OpenLedgerOn(RecoveryStore& store);

}  // namespace caveman

#endif  // CAVEMAN_STORE_LEDGER_H_
