// The savings ledger (store/ledger.h, issue 17): rows per invocation, the version 4
// migration of an older database, read-only opens, pruning by age.
#include "store/ledger.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "caveman/store/store.h"

namespace caveman {
namespace {

class TempDir {
 public:
  TempDir() {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/caveman-ledger-test-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    char* p = ::mkdtemp(buf.data());
    EXPECT_NE(p, nullptr);
    path_ = p ? p : "";
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string db() const { return path_ + "/ccr.db"; }

 private:
  std::string path_;
};

std::unique_ptr<RecoveryStore> MustOpenStore(const std::string& path) {
  StoreOptions o;
  o.path = path;
  auto s = OpenSqliteStore(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(s).value() : nullptr;
}

void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close_v2(db);
}

int64_t RawInt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
  int64_t v = -1;
  if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close_v2(db);
  return v;
}

LedgerEntry Entry(int64_t at, std::string type, uint64_t before, uint64_t after, std::string handle = "") {
  return {.unix_time = at,
          .content_type = std::move(type),
          .command = "",
          .tokens_before = before,
          .tokens_after = after,
          .handle = std::move(handle)};
}

TEST(Ledger, AppendsEveryRowAndReadsThemOldestFirst) {
  TempDir dir;
  auto store = MustOpenStore(dir.db());
  auto ledger = OpenLedger(dir.db(), /*read_only=*/false);
  ASSERT_TRUE(ledger.ok()) << ledger.status().message();
  // The same invocation three times is three rows (no deduplication, unlike records).
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*ledger)->Append(Entry(1000, "log", 100, 10, "ccr_x")).ok());
  LedgerEntry run = Entry(900, "diff", 50, 50);
  run.command = "git diff";
  ASSERT_TRUE((*ledger)->Append(run).ok());
  auto rows = (*ledger)->Since(0);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ((*rows)[0].content_type, "diff");
  EXPECT_EQ((*rows)[0].command, "git diff");
  EXPECT_EQ((*rows)[0].handle, "");
  EXPECT_EQ((*rows)[1].handle, "ccr_x");
  EXPECT_EQ((*rows)[3].tokens_before, 100u);
  EXPECT_EQ((*rows)[3].tokens_after, 10u);
  EXPECT_EQ((*ledger)->Since(1000)->size(), 3u);
  EXPECT_EQ((*ledger)->Since(1001)->size(), 0u);
}

// OpenLedgerOn (issue 19): rows appended on the store's own connection are the file's rows,
// read back by a separate connection; another kind of store has none to lend.
TEST(Ledger, OnTheStoresConnectionWritesTheSameTable) {
  TempDir dir;
  auto store = MustOpenStore(dir.db());
  ASSERT_NE(store, nullptr);
  {
    auto ledger = OpenLedgerOn(*store);
    ASSERT_TRUE(ledger.ok()) << ledger.status().message();
    ASSERT_TRUE((*ledger)->Append(Entry(1000, "log", 100, 10, "ccr_x")).ok());
    ASSERT_TRUE((*ledger)->Append(Entry(1001, "json", 80, 20)).ok());
    EXPECT_EQ((*ledger)->Since(0)->size(), 2u);
  }
  auto by_path = OpenLedger(dir.db(), /*read_only=*/true);
  ASSERT_TRUE(by_path.ok()) << by_path.status().message();
  auto rows = (*by_path)->Since(0);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].handle, "ccr_x");
  EXPECT_EQ((*rows)[1].content_type, "json");
  // The store still works after lending its connection.
  auto w = store->BeginRecord();
  ASSERT_TRUE(w.ok()) << w.status().message();

  // Another kind of store has no SQLite connection to lend.
  class OtherStore final : public RecoveryStore {
   public:
    Result<std::unique_ptr<RecordWriter>> BeginRecord() override { return Status::NotSupported("x"); }
    Status Get(std::string_view, ByteSink&) override { return Status::NotSupported("x"); }
    Result<std::string> GetMetadata(std::string_view) override { return Status::NotSupported("x"); }
    Result<StoreStats> Stats() override { return Status::NotSupported("x"); }
    Result<GcResult> Gc(std::optional<uint64_t>, bool) override { return Status::NotSupported("x"); }
  } other;
  EXPECT_EQ(OpenLedgerOn(other).status().code(), StatusCode::kNotSupported);
}

TEST(Ledger, PruneDeletesOnlyOlderRowsAndDryRunCounts) {
  TempDir dir;
  auto store = MustOpenStore(dir.db());
  auto ledger = OpenLedger(dir.db(), false).value();
  ASSERT_TRUE(ledger->Append(Entry(100, "log", 10, 5)).ok());
  ASSERT_TRUE(ledger->Append(Entry(200, "log", 10, 5)).ok());
  ASSERT_TRUE(ledger->Append(Entry(300, "log", 10, 5)).ok());
  EXPECT_EQ(ledger->Prune(300, /*dry_run=*/true).value(), 2u);
  EXPECT_EQ(ledger->Since(0)->size(), 3u);
  EXPECT_EQ(ledger->Prune(300, false).value(), 2u);
  auto rows = ledger->Since(0).value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].unix_time, 300);
}

TEST(Ledger, VersionThreeDatabaseIsMigratedOnOpen) {
  TempDir dir;
  MustOpenStore(dir.db());
  RawExec(dir.db(), "DROP TABLE ledger; PRAGMA user_version = 3;");
  {
    // A read-only ledger open does not migrate: the ledger is empty and cannot be written.
    auto ro = OpenLedger(dir.db(), /*read_only=*/true);
    ASSERT_TRUE(ro.ok()) << ro.status().message();
    EXPECT_TRUE((*ro)->Since(0)->empty());
    EXPECT_EQ((*ro)->Append(Entry(1, "log", 2, 1)).code(), StatusCode::kNotSupported);
  }
  EXPECT_EQ(RawInt(dir.db(), "PRAGMA user_version"), 3);
  auto store = MustOpenStore(dir.db());
  EXPECT_EQ(RawInt(dir.db(), "PRAGMA user_version"), 4);
  auto ledger = OpenLedger(dir.db(), false).value();
  ASSERT_TRUE(ledger->Append(Entry(1, "log", 2, 1)).ok());
  EXPECT_EQ(RawInt(dir.db(), "SELECT count(*) FROM ledger"), 1);
}

TEST(Ledger, MissingDatabaseIsAnErrorNotACreatedFile) {
  TempDir dir;
  auto ledger = OpenLedger(dir.db(), false);
  EXPECT_FALSE(ledger.ok());
  EXPECT_EQ(access(dir.db().c_str(), F_OK), -1);
}

}  // namespace
}  // namespace caveman
