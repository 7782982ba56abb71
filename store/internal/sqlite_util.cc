#include "store/internal/sqlite_util.h"

#include <sqlite3.h>

namespace caveman::internal {

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::operator=(Statement&& o) noexcept {
  if (this != &o) {
    sqlite3_finalize(stmt_);
    db_ = o.db_;
    stmt_ = o.stmt_;
    o.stmt_ = nullptr;
  }
  return *this;
}

Status Statement::BindText(int idx, std::string_view v) {
  int rc = sqlite3_bind_text64(stmt_, idx, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return rc == SQLITE_OK ? Status::OK() : db_->Error(rc, "bind");
}

Status Statement::BindInt(int idx, int64_t v) {
  int rc = sqlite3_bind_int64(stmt_, idx, v);
  return rc == SQLITE_OK ? Status::OK() : db_->Error(rc, "bind");
}

Status Statement::BindBlob(int idx, std::string_view v) {
  // A zero-length blob must still be a blob, not NULL: pass a non-null pointer.
  static const char kEmpty = 0;
  const char* p = v.data() != nullptr ? v.data() : &kEmpty;
  int rc = sqlite3_bind_blob64(stmt_, idx, p, v.size(), SQLITE_STATIC);
  return rc == SQLITE_OK ? Status::OK() : db_->Error(rc, "bind");
}

Status Statement::BindZeroBlob(int idx, uint64_t n) {
  int rc = sqlite3_bind_zeroblob64(stmt_, idx, n);
  return rc == SQLITE_OK ? Status::OK() : db_->Error(rc, "bind");
}

Result<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->Error(rc, "step");
}

Status Statement::Run() {
  for (;;) {
    CAVEMAN_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::OK();
  }
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::ColumnInt(int col) const { return sqlite3_column_int64(stmt_, col); }

bool Statement::ColumnIsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

std::string_view Statement::ColumnText(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  if (p == nullptr) return {};
  return std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
}

std::string_view Statement::ColumnBlob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  if (p == nullptr) return {};
  return std::string_view(static_cast<const char*>(p), static_cast<size_t>(n));
}

Result<std::unique_ptr<Db>> Db::Open(const std::string& path, int flags) {
  // Before SQLite initialises (once per process): no bulk page cache of 20 pages allocated at a
  // connection's first read; pages are allocated as they are used. A one-record `compress`
  // uses a handful, and each 4 KiB of fresh memory is a page fault (≈ 10 µs here; issue 19).
  // SQLITE_MISUSE when SQLite is already initialised (a library user's own use): then as is.
  static const int configured = sqlite3_config(SQLITE_CONFIG_PAGECACHE, nullptr, 0, 0);
  (void)configured;
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close_v2(raw);
    return Status::IoError(msg);
  }
  sqlite3_extended_result_codes(raw, 1);
  return std::unique_ptr<Db>(new Db(raw));
}

Db::~Db() { sqlite3_close_v2(db_); }

Status Db::Error(int rc, std::string_view what) {
  int primary = rc & 0xff;
  last_busy_ = primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
  if (primary == SQLITE_FULL) return Status::ResourceExhausted(kBudgetExceededMessage);
  if (primary == SQLITE_CORRUPT) return Status::Corruption(kCorruptMessage);
  const char* msg = sqlite3_errmsg(db_);
  // sqlite3_errmsg describes the most recent API call, which may not be `rc`'s.
  if (sqlite3_errcode(db_) != rc) msg = sqlite3_errstr(rc);
  return Status::IoError(std::string(what) + ": " + msg);
}

Status Db::Exec(std::string_view sql) {
  std::string s(sql);
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, nullptr);
  return rc == SQLITE_OK ? Status::OK() : Error(rc, s);
}

Result<Statement> Db::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return Error(rc, "prepare");
  }
  return Statement(this, stmt);
}

Result<std::string> Db::QueryText(std::string_view sql) {
  CAVEMAN_ASSIGN_OR_RETURN(Statement st, Prepare(sql));
  CAVEMAN_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::string();
  std::string v(st.ColumnText(0));
  return v;
}

Result<int64_t> Db::QueryInt(std::string_view sql) {
  CAVEMAN_ASSIGN_OR_RETURN(Statement st, Prepare(sql));
  CAVEMAN_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return int64_t{0};
  return st.ColumnInt(0);
}

bool Db::in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }

void Db::RollbackQuietly() {
  if (in_transaction()) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

}  // namespace caveman::internal
