// Several processes on one recovery store file (§6.2/§6.3): concurrent creation and writes
// all succeed, and a writer killed mid-commit leaves no partial record.
#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "caveman/store/store.h"
#include "stream/sha256.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

using caveman::testing::RandomBytes;

// Half random, half text: both compressible and incompressible parts in every record.
std::string WriterInput(int idx, size_t n) {
  std::string s = RandomBytes(n / 2, 1000 + idx);
  while (s.size() < n) s += "writer " + std::to_string(idx) + " line " + std::to_string(s.size()) + "\n";
  s.resize(n);
  return s;
}

std::string HandleOf(std::string_view d) { return HandleFromDigest(Sha256::Digest(d)); }

class TempDir {
 public:
  TempDir() {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/caveman-store-conc-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    char* p = ::mkdtemp(buf.data());
    path_ = p ? p : "";
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string db() const { return path_ + "/ccr.db"; }

 private:
  std::string path_;
};

// Child body: open, wait for the start signal, write one record. Exit code 0 on success.
[[noreturn]] void WriterChild(const std::string& db, int start_fd, int idx, size_t size) {
  char c;
  // Start together: everyone blocks on the pipe until the parent closes its end.
  while (::read(start_fd, &c, 1) < 0) {
  }
  StoreOptions o;
  o.path = db;
  auto store = OpenSqliteStore(o);
  if (!store.ok()) {
    std::fprintf(stderr, "child %d open: %s\n", idx, store.status().message().c_str());
    ::_exit(2);
  }
  std::string data = WriterInput(idx, size);
  auto w = (*store)->BeginRecord();
  if (!w.ok()) ::_exit(3);
  for (size_t off = 0; off < data.size(); off += 64 * 1024) {
    if (!(*w)->Append(std::string_view(data).substr(off, 64 * 1024)).ok()) ::_exit(4);
  }
  RecordInfo info;
  info.content_type = "log";
  info.compressor = "log";
  info.tokens_before = 10 + idx;
  info.tokens_after = 1;
  Status s = (*w)->Commit(HandleOf(data), info);
  if (!s.ok()) {
    std::fprintf(stderr, "child %d commit: %s\n", idx, s.message().c_str());
    ::_exit(5);
  }
  store->reset();
  ::_exit(0);
}

void RunWriters(int writers, size_t size) {
  TempDir dir;
  int start[2];
  ASSERT_EQ(::pipe(start), 0);
  std::vector<pid_t> pids;
  for (int i = 0; i < writers; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(start[1]);
      WriterChild(dir.db(), start[0], i, size);
    }
    pids.push_back(pid);
  }
  ::close(start[0]);
  ::close(start[1]);  // all children start now: the database does not exist yet
  for (size_t i = 0; i < pids.size(); ++i) {
    int status = 0;
    ASSERT_EQ(::waitpid(pids[i], &status, 0), pids[i]);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer " << i << " status " << status;
  }
  StoreOptions o;
  o.path = dir.db();
  auto store = OpenSqliteStore(o);
  ASSERT_TRUE(store.ok()) << store.status().message();
  for (int i = 0; i < writers; ++i) {
    std::string data = WriterInput(i, size);
    StringSink out;
    Status s = (*store)->Get(HandleOf(data), out);
    ASSERT_TRUE(s.ok()) << "writer " << i << ": " << s.message();
    EXPECT_TRUE(out.data() == data) << "writer " << i;
  }
  auto stats = (*store)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->totals.count, static_cast<uint64_t>(writers));
  auto gc = (*store)->Gc(std::nullopt, /*dry_run=*/true);
  ASSERT_TRUE(gc.ok());
  EXPECT_EQ(gc->orphan_chunks, 0u);
}

TEST(StoreConcurrency, EightProcessesWriteOneMiBEach) { RunWriters(8, 1 << 20); }

TEST(StoreConcurrency, SixteenProcessesWriteOneMiBEach) { RunWriters(16, 1 << 20); }

// SIGKILL during a large commit. Timing decides whether the kill lands before, during or
// after the transaction (the WAL-size wait makes "during" the usual case); whichever it is, the record must be absent or complete, with no orphan rows, and the
// store must open and accept writes afterwards.
TEST(StoreConcurrency, KilledWriterLeavesNoPartialRecord) {
  constexpr size_t kBig = 24 << 20;  // incompressible: 24 chunk rows, a long transaction
  for (int round = 0; round < 3; ++round) {
    TempDir dir;
    {
      StoreOptions o;
      o.path = dir.db();
      ASSERT_TRUE(OpenSqliteStore(o).ok());
    }
    std::string data = RandomBytes(kBig, 77 + round);
    std::string handle = HandleOf(data);
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(ready[0]);
      StoreOptions o;
      o.path = dir.db();
      auto store = OpenSqliteStore(o);
      if (!store.ok()) ::_exit(2);
      auto w = (*store)->BeginRecord();
      if (!w.ok() || !(*w)->Append(data).ok()) ::_exit(3);
      // Tell the parent the frame is ready: the next step is the transaction.
      if (::write(ready[1], "r", 1) != 1) ::_exit(4);
      Status s = (*w)->Commit(handle, RecordInfo{"log", "log", 1, 1, ""});
      ::_exit(s.ok() ? 0 : 5);
    }
    ::close(ready[1]);
    char c;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ::close(ready[0]);
    // Round 0 kills at once; later rounds wait until the transaction has spilled 4 or 12 MiB
    // of uncommitted pages into the WAL, so the kill lands inside it.
    const off_t wal_goal = round == 0 ? 0 : (round == 1 ? 4 << 20 : 12 << 20);
    int status = 0;
    bool exited = false;
    for (;;) {
      struct stat st;
      if (::stat((dir.db() + "-wal").c_str(), &st) == 0 && st.st_size >= wal_goal) break;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
      ::usleep(500);
    }
    if (!exited) {
      ::kill(pid, SIGKILL);
      ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    }

    StoreOptions o;
    o.path = dir.db();
    auto store = OpenSqliteStore(o);
    ASSERT_TRUE(store.ok()) << store.status().message();
    StringSink out;
    Status s = (*store)->Get(handle, out);
    if (s.ok()) {
      EXPECT_TRUE(out.data() == data);
    } else {
      EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.message();
      EXPECT_TRUE(out.data().empty());
    }
    auto gc = (*store)->Gc(std::nullopt, /*dry_run=*/true);
    ASSERT_TRUE(gc.ok());
    EXPECT_EQ(gc->orphan_chunks, 0u);
    auto w = (*store)->BeginRecord();
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append("after the crash").ok());
    Status c2 = (*w)->Commit(HandleOf("after the crash"), RecordInfo{"log", "log", 1, 1, ""});
    EXPECT_TRUE(c2.ok()) << c2.message();
  }
}

}  // namespace
}  // namespace caveman
