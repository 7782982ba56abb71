// SQLite fault injection (issue 15, fault layer): a VFS shim registered as the default VFS by
// this test binary only wraps the database and WAL files of every connection the store opens,
// and fails writes/syncs with SQLITE_IOERR, reads with SQLITE_IOERR_READ, or WAL locks with
// SQLITE_BUSY (a given number of times, then it lets them through). Nothing of this ships:
// the product uses SQLite's default VFS.
//
// Each case asserts "original or clear error, nothing lost": compress either emits a view
// whose record retrieves the exact input, or passes the original through; retrieve either
// writes the exact original or fails with nothing written.
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "caveman/engine/engine.h"
#include "caveman/store/store.h"
#include "caveman/stream/byte_io.h"

namespace caveman {
namespace {

enum class Fault { kNone, kWriteIoErr, kReadIoErr, kBusy };
std::atomic<Fault> g_fault{Fault::kNone};
std::atomic<int> g_busy_left{0};  // kBusy: how many WAL write-lock attempts still fail
std::atomic<int> g_injected{0};   // faults returned so far

sqlite3_vfs* g_real = nullptr;
sqlite3_vfs g_vfs;

struct FaultFile {
  sqlite3_file base;
  sqlite3_file* real;  // allocated right after this struct
};

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<FaultFile*>(f)->real; }

int Close(sqlite3_file* f) {
  int rc = Real(f)->pMethods != nullptr ? Real(f)->pMethods->xClose(Real(f)) : SQLITE_OK;
  return rc;
}
int Read(sqlite3_file* f, void* buf, int n, sqlite3_int64 off) {
  if (g_fault == Fault::kReadIoErr) {
    ++g_injected;
    return SQLITE_IOERR_READ;
  }
  return Real(f)->pMethods->xRead(Real(f), buf, n, off);
}
int Write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 off) {
  if (g_fault == Fault::kWriteIoErr) {
    ++g_injected;
    return SQLITE_IOERR_WRITE;
  }
  return Real(f)->pMethods->xWrite(Real(f), buf, n, off);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) { return Real(f)->pMethods->xTruncate(Real(f), size); }
int Sync(sqlite3_file* f, int flags) {
  if (g_fault == Fault::kWriteIoErr) {
    ++g_injected;
    return SQLITE_IOERR_FSYNC;
  }
  return Real(f)->pMethods->xSync(Real(f), flags);
}
int FileSize(sqlite3_file* f, sqlite3_int64* size) { return Real(f)->pMethods->xFileSize(Real(f), size); }
int Lock(sqlite3_file* f, int level) { return Real(f)->pMethods->xLock(Real(f), level); }
int Unlock(sqlite3_file* f, int level) { return Real(f)->pMethods->xUnlock(Real(f), level); }
int CheckReservedLock(sqlite3_file* f, int* out) { return Real(f)->pMethods->xCheckReservedLock(Real(f), out); }
int FileControl(sqlite3_file* f, int op, void* arg) { return Real(f)->pMethods->xFileControl(Real(f), op, arg); }
int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int DeviceCharacteristics(sqlite3_file* f) { return Real(f)->pMethods->xDeviceCharacteristics(Real(f)); }
int ShmMap(sqlite3_file* f, int page, int size, int extend, void volatile** p) {
  return Real(f)->pMethods->xShmMap(Real(f), page, size, extend, p);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  // WAL_WRITE_LOCK is slot 0: the lock a writer takes for BEGIN IMMEDIATE.
  if (g_fault == Fault::kBusy && offset == 0 && (flags & SQLITE_SHM_LOCK) && (flags & SQLITE_SHM_EXCLUSIVE) &&
      g_busy_left.fetch_sub(1) > 0) {
    ++g_injected;
    return SQLITE_BUSY;
  }
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShmUnmap(sqlite3_file* f, int del) { return Real(f)->pMethods->xShmUnmap(Real(f), del); }
int Fetch(sqlite3_file* f, sqlite3_int64 off, int n, void** p) {
  *p = nullptr;  // no memory-mapped reads: every read goes through Read
  return SQLITE_OK;
}
int Unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) { return SQLITE_OK; }

const sqlite3_io_methods kMethods = {.iVersion = 3,
                                     .xClose = Close,
                                     .xRead = Read,
                                     .xWrite = Write,
                                     .xTruncate = Truncate,
                                     .xSync = Sync,
                                     .xFileSize = FileSize,
                                     .xLock = Lock,
                                     .xUnlock = Unlock,
                                     .xCheckReservedLock = CheckReservedLock,
                                     .xFileControl = FileControl,
                                     .xSectorSize = SectorSize,
                                     .xDeviceCharacteristics = DeviceCharacteristics,
                                     .xShmMap = ShmMap,
                                     .xShmLock = ShmLock,
                                     .xShmBarrier = ShmBarrier,
                                     .xShmUnmap = ShmUnmap,
                                     .xFetch = Fetch,
                                     .xUnfetch = Unfetch};

int Open(sqlite3_vfs*, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  ff->real = reinterpret_cast<sqlite3_file*>(ff + 1);
  int rc = g_real->xOpen(g_real, name, ff->real, flags, out_flags);
  // Only database and WAL files get the shim; SQLite requires pMethods set after a failed
  // open only when it needs xClose, so keep it null then.
  f->pMethods = (rc == SQLITE_OK && ff->real->pMethods != nullptr) ? &kMethods : nullptr;
  return rc;
}
int Delete(sqlite3_vfs*, const char* n, int sync) { return g_real->xDelete(g_real, n, sync); }
int Access(sqlite3_vfs*, const char* n, int flags, int* out) { return g_real->xAccess(g_real, n, flags, out); }
int FullPathname(sqlite3_vfs*, const char* n, int size, char* out) {
  return g_real->xFullPathname(g_real, n, size, out);
}

void RegisterFaultVfs() {
  if (g_real != nullptr) return;
  g_real = sqlite3_vfs_find(nullptr);
  g_vfs = *g_real;
  g_vfs.zName = "caveman-fault";
  g_vfs.szOsFile = static_cast<int>(sizeof(FaultFile)) + g_real->szOsFile;
  g_vfs.xOpen = Open;
  g_vfs.xDelete = Delete;
  g_vfs.xAccess = Access;
  g_vfs.xFullPathname = FullPathname;
  g_vfs.pNext = nullptr;
  ASSERT_EQ(sqlite3_vfs_register(&g_vfs, /*makeDflt=*/1), SQLITE_OK);
}

std::string RepetitiveLog() {
  std::string s;
  for (int i = 0; i < 3000; ++i) s += "2024-05-01T10:00:00 INFO worker-1: heartbeat ok\n";
  s += "2024-05-01T10:00:01 ERROR worker-0: upstream timeout\n";
  return s;
}

CompressOptions Repetition() {
  CompressOptions o;
  o.mode = Mode::kCompress;
  o.type = "repetition";
  return o;
}

class StoreFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterFaultVfs();
    g_fault = Fault::kNone;
    g_injected = 0;
    char tmpl[] = "/tmp/caveman-faults-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    StoreOptions o;
    o.path = dir_ + "/ccr.db";
    auto s = OpenSqliteStore(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }
  void TearDown() override {
    g_fault = Fault::kNone;
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string dir_;
  std::unique_ptr<RecoveryStore> store_;
};

TEST_F(StoreFaults, IoErrorDuringCommitPassesTheOriginalThrough) {
  Engine engine(EngineOptions{.store = store_.get()});
  const std::string in = RepetitiveLog();
  std::string out;
  g_fault = Fault::kWriteIoErr;
  auto r = engine.Compress(in, Repetition(), &out);
  g_fault = Fault::kNone;
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(g_injected.load(), 0);
  EXPECT_TRUE(r->passed_through());
  EXPECT_EQ(r->pass_through_reason, PassThroughReason::kStoreFailed);
  EXPECT_TRUE(r->recovery_handle.empty());
  EXPECT_EQ(out, in);  // nothing lost: the original itself
  // The store still works once the fault is gone.
  std::string again;
  auto r2 = engine.Compress(in, Repetition(), &again);
  ASSERT_TRUE(r2.ok());
  ASSERT_FALSE(r2->recovery_handle.empty());
  StringSink original;
  ASSERT_TRUE(engine.Retrieve(r2->recovery_handle, original).ok());
  EXPECT_EQ(original.data(), in);
}

TEST_F(StoreFaults, TransientBusyDuringCommitIsRetriedAndTheRecordCommitted) {
  Engine engine(EngineOptions{.store = store_.get()});
  const std::string in = RepetitiveLog();
  std::string out;
  g_busy_left = 3;
  g_fault = Fault::kBusy;
  auto r = engine.Compress(in, Repetition(), &out);
  g_fault = Fault::kNone;
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(g_injected.load(), 0);
  ASSERT_FALSE(r->passed_through());
  ASSERT_FALSE(r->recovery_handle.empty());
  EXPECT_LT(out.size(), in.size());
  StringSink original;
  ASSERT_TRUE(engine.Retrieve(r->recovery_handle, original).ok());
  EXPECT_EQ(original.data(), in);
}

TEST_F(StoreFaults, IoErrorDuringRetrieveIsAClearErrorWithNothingWritten) {
  Engine engine(EngineOptions{.store = store_.get()});
  const std::string in = RepetitiveLog();
  std::string out;
  auto r = engine.Compress(in, Repetition(), &out);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->recovery_handle.empty());
  // A fresh connection, so nothing is served from the page cache.
  store_.reset();
  StoreOptions o;
  o.path = dir_ + "/ccr.db";
  o.read_only = true;
  auto reopened = OpenSqliteStore(o);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  Engine reader(EngineOptions{.store = reopened->get()});
  StringSink original;
  g_fault = Fault::kReadIoErr;
  Status s = reader.Retrieve(r->recovery_handle, original);
  g_fault = Fault::kNone;
  EXPECT_GT(g_injected.load(), 0);
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(s.message().empty());
  EXPECT_TRUE(original.data().empty());
  // Without the fault the same connection reads the exact original.
  StringSink later;
  ASSERT_TRUE(reader.Retrieve(r->recovery_handle, later).ok());
  EXPECT_EQ(later.data(), in);
}

}  // namespace
}  // namespace caveman
