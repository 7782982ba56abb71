// Thin RAII layer over the SQLite C API and the store's one translation point from SQLite
// result codes to Status (STYLE §8). Only store/ includes it.
//
// Mapping: SQLITE_FULL → kResourceExhausted "ccr: storage budget exceeded" (§6.5: a put that
// hits "database or disk is full" fails like an over-budget put); SQLITE_CORRUPT →
// kCorruption "ccr: corrupt recovery record"; everything else (BUSY included) → kIoError
// "<what>: <sqlite3_errmsg>". Db::last_busy() tells whether the last failure was
// SQLITE_BUSY/SQLITE_LOCKED, for callers that retry.
//
// Thread-safety: a Db and its Statements belong to one thread at a time.
#ifndef CAVEMAN_STORE_INTERNAL_SQLITE_UTIL_H_
#define CAVEMAN_STORE_INTERNAL_SQLITE_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "caveman/stream/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace caveman {
class RecoveryStore;
}  // namespace caveman

namespace caveman::internal {

inline constexpr char kBudgetExceededMessage[] = "ccr: storage budget exceeded";
inline constexpr char kCorruptMessage[] = "ccr: corrupt recovery record";
inline constexpr char kNotFoundMessage[] = "ccr: recovery handle not found";

class Db;

// A prepared statement. Move-only; finalized on destruction.
class Statement {
 public:
  Statement() = default;
  ~Statement();
  Statement(Statement&& o) noexcept : db_(o.db_), stmt_(o.stmt_) { o.stmt_ = nullptr; }
  Statement& operator=(Statement&& o) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Status BindText(int idx, std::string_view v);
  Status BindInt(int idx, int64_t v);
  // Lifetime: `v` must stay valid until the statement is stepped to completion or reset.
  Status BindBlob(int idx, std::string_view v);
  // A blob of `n` zero bytes, to be filled in place (sqlite3_blob_write) after the row is written.
  Status BindZeroBlob(int idx, uint64_t n);
  // True when a row is available, false when the statement is done.
  Result<bool> Step();
  // Steps a statement that returns no rows (or ignores them) to completion.
  Status Run();
  void Reset();

  int64_t ColumnInt(int col) const;
  bool ColumnIsNull(int col) const;
  // Views are valid until the next Step/Reset.
  std::string_view ColumnText(int col) const;
  std::string_view ColumnBlob(int col) const;

 private:
  friend class Db;
  Statement(Db* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Db* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

class Db {
 public:
  // `flags` are sqlite3_open_v2 flags. Errors: kIoError (message from SQLite).
  static Result<std::unique_ptr<Db>> Open(const std::string& path, int flags);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  sqlite3* raw() { return db_; }
  // Runs one or more statements without results.
  Status Exec(std::string_view sql);
  Result<Statement> Prepare(std::string_view sql);
  // First column of the first row as text ("" when no row); for PRAGMA queries.
  Result<std::string> QueryText(std::string_view sql);
  Result<int64_t> QueryInt(std::string_view sql);
  bool in_transaction() const;
  // Rolls back an open transaction, ignoring errors (SQLite may have rolled back already).
  void RollbackQuietly();

  // Maps `rc` (with the connection's message) and remembers it for last_busy().
  Status Error(int rc, std::string_view what);
  bool last_busy() const { return last_busy_; }
  void ClearLastError() { last_busy_ = false; }

 private:
  explicit Db(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
  bool last_busy_ = false;
};

// The connection of `store` if it is a writable SQLite store (sqlite_store.cc), else null.
// Lets the ledger share an open store's connection (store/ledger.h, OpenLedgerOn).
Db* WritableSqliteStoreDb(RecoveryStore& store);

}  // namespace caveman::internal

#endif  // CAVEMAN_STORE_INTERNAL_SQLITE_UTIL_H_
