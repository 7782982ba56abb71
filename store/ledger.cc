#include "store/ledger.h"

#include <sqlite3.h>

#include <utility>

#include "store/internal/sqlite_util.h"
#include "store/internal/store_files.h"

namespace caveman {
namespace {

using internal::Db;
using internal::Statement;

constexpr int kBusyTimeoutMs = 5000;  // as the store (§6.2)
constexpr int64_t kLedgerSchemaVersion = 4;

int64_t ToSqlInt(uint64_t v) { return v > INT64_MAX ? INT64_MAX : static_cast<int64_t>(v); }
uint64_t FromSqlInt(int64_t v) { return v < 0 ? 0 : static_cast<uint64_t>(v); }

class SqliteLedger final : public Ledger {
 public:
  SqliteLedger(std::unique_ptr<Db> db, bool read_only, bool present)
      : owned_(std::move(db)), db_(owned_.get()), read_only_(read_only), present_(present) {}
  // On a connection someone else owns (a store's).
  explicit SqliteLedger(Db* db) : db_(db), read_only_(false), present_(true) {}

  Status Append(const LedgerEntry& e) override {
    if (read_only_ || !present_) return Status::NotSupported("ledger: not writable");
    CAVEMAN_ASSIGN_OR_RETURN(
        Statement st, db_->Prepare("INSERT INTO ledger (at, content_type, command, tokens_before, tokens_after, handle)"
                                   " VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
    CAVEMAN_RETURN_IF_ERROR(st.BindInt(1, e.unix_time));
    CAVEMAN_RETURN_IF_ERROR(st.BindText(2, e.content_type));
    CAVEMAN_RETURN_IF_ERROR(st.BindText(3, e.command));
    CAVEMAN_RETURN_IF_ERROR(st.BindInt(4, ToSqlInt(e.tokens_before)));
    CAVEMAN_RETURN_IF_ERROR(st.BindInt(5, ToSqlInt(e.tokens_after)));
    CAVEMAN_RETURN_IF_ERROR(st.BindText(6, e.handle));
    return st.Run();
  }

  Result<std::vector<LedgerEntry>> Since(int64_t since) override {
    std::vector<LedgerEntry> rows;
    if (!present_) return rows;
    CAVEMAN_ASSIGN_OR_RETURN(
        Statement st, db_->Prepare("SELECT at, content_type, command, tokens_before, tokens_after, handle FROM ledger"
                                   " WHERE at >= ?1 ORDER BY at, id"));
    CAVEMAN_RETURN_IF_ERROR(st.BindInt(1, since));
    for (;;) {
      CAVEMAN_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      rows.push_back({.unix_time = st.ColumnInt(0),
                      .content_type = std::string(st.ColumnText(1)),
                      .command = std::string(st.ColumnText(2)),
                      .tokens_before = FromSqlInt(st.ColumnInt(3)),
                      .tokens_after = FromSqlInt(st.ColumnInt(4)),
                      .handle = std::string(st.ColumnText(5))});
    }
    return rows;
  }

  Result<uint64_t> Prune(int64_t before, bool dry_run) override {
    if (!present_) return uint64_t{0};
    if (!dry_run && read_only_) return Status::NotSupported("ledger: not writable");
    CAVEMAN_ASSIGN_OR_RETURN(Statement count, db_->Prepare("SELECT count(*) FROM ledger WHERE at < ?1"));
    CAVEMAN_RETURN_IF_ERROR(count.BindInt(1, before));
    CAVEMAN_ASSIGN_OR_RETURN(bool row, count.Step());
    const uint64_t n = row ? FromSqlInt(count.ColumnInt(0)) : 0;
    if (dry_run || n == 0) return n;
    CAVEMAN_ASSIGN_OR_RETURN(Statement del, db_->Prepare("DELETE FROM ledger WHERE at < ?1"));
    CAVEMAN_RETURN_IF_ERROR(del.BindInt(1, before));
    CAVEMAN_RETURN_IF_ERROR(del.Run());
    return FromSqlInt(sqlite3_changes64(db_->raw()));
  }

 private:
  std::unique_ptr<Db> owned_;  // null when the connection is a store's
  Db* db_;
  bool read_only_;
  bool present_;  // schema version >= 4
};

Status LedgerOpenError(const Status& s) { return Status::IoError("cannot open ledger: " + s.message()); }

}  // namespace

Result<std::unique_ptr<Ledger>> OpenLedgerOn(RecoveryStore& store) {
  Db* db = internal::WritableSqliteStoreDb(store);
  if (db == nullptr) return Status::NotSupported("ledger: not a writable SQLite store");
  return std::unique_ptr<Ledger>(std::make_unique<SqliteLedger>(db));
}

Result<std::unique_ptr<Ledger>> OpenLedger(const std::string& db_path, bool read_only) {
  if (db_path.empty() || db_path == ":memory:") return LedgerOpenError(Status::InvalidArgument("no database file"));
  auto open = [&]() -> Result<std::unique_ptr<Db>> {
    if (!read_only) return Db::Open(db_path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW);
    // As the store's read-only open: without a -wal file no writer is active.
    const bool has_wal = internal::FileExists(db_path + "-wal");
    std::string uri = internal::SqliteFileUri(db_path) + (has_wal ? "?mode=ro" : "?mode=ro&immutable=1");
    return Db::Open(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOFOLLOW);
  };
  auto db = open();
  if (!db.ok()) return LedgerOpenError(db.status());
  sqlite3_busy_timeout((*db)->raw(), kBusyTimeoutMs);
  auto version = (*db)->QueryInt("PRAGMA user_version");
  if (!version.ok()) return LedgerOpenError(version.status());
  return std::unique_ptr<Ledger>(
      std::make_unique<SqliteLedger>(std::move(db).value(), read_only, *version >= kLedgerSchemaVersion));
}

}  // namespace caveman
