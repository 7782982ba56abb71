// Recovery store (§6): round trips, put semantics, capacity, corruption detection, file
// rules, environment, gc. Tampering goes through a second raw SQLite connection on a
// temporary database file, so the checks run against the real read path.
#include "caveman/store/store.h"

#include <sqlite3.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "store/background_store.h"
#include "stream/sha256.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

constexpr char kNotFound[] = "ccr: recovery handle not found";
constexpr char kCorrupt[] = "ccr: corrupt recovery record";
constexpr char kBudget[] = "ccr: storage budget exceeded";

using caveman::testing::RandomBytes;

std::string CiText(size_t n) {
  std::string s;
  uint64_t i = 0;
  while (s.size() < n) {
    s += "2024-05-01T12:00:" + std::to_string(10 + i % 50) + "Z [INFO] test_module_" + std::to_string(i % 37) +
         "::case_" + std::to_string(i) + (i % 11 == 0 ? " FAILED: assertion left == right\n" : " ... ok\n");
    ++i;
  }
  s.resize(n);
  return s;
}

std::string HandleOf(std::string_view data) { return HandleFromDigest(Sha256::Digest(data)); }

RecordInfo Info(std::string type = "log", uint64_t before = 100, uint64_t after = 10, std::string metadata = "") {
  RecordInfo info;
  info.content_type = std::move(type);
  info.compressor = "log";
  info.tokens_before = before;
  info.tokens_after = after;
  info.metadata = std::move(metadata);
  return info;
}

Status PutPieces(RecoveryStore& store, const std::vector<std::string_view>& pieces, const std::string& handle,
                 const RecordInfo& info) {
  auto w = store.BeginRecord();
  if (!w.ok()) return w.status();
  for (std::string_view p : pieces) CAVEMAN_RETURN_IF_ERROR((*w)->Append(p));
  return (*w)->Commit(handle, info);
}

Result<std::string> Put(RecoveryStore& store, std::string_view data, const RecordInfo& info = Info()) {
  std::string h = HandleOf(data);
  CAVEMAN_RETURN_IF_ERROR(PutPieces(store, {data}, h, info));
  return h;
}

// A private temporary directory (0700) removed with its content at the end.
class TempDir {
 public:
  TempDir() {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/caveman-store-test-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    char* p = ::mkdtemp(buf.data());
    EXPECT_NE(p, nullptr);
    path_ = p ? p : "";
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }
  std::string db() const { return path_ + "/ccr.db"; }

 private:
  std::string path_;
};

std::unique_ptr<RecoveryStore> MustOpen(const std::string& path, uint64_t max_bytes = kDefaultStoreCapacity) {
  StoreOptions o;
  o.path = path;
  o.max_bytes = max_bytes;
  auto s = OpenSqliteStore(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(s).value() : nullptr;
}

// A second, raw connection for tampering and inspection.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    sqlite3_busy_timeout(db_, 5000);
  }
  ~RawDb() { sqlite3_close_v2(db_); }
  void Exec(const std::string& sql) {
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "") << " in " << sql;
    sqlite3_free(err);
  }
  int64_t Int(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
    int64_t v = -1;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
  }
  std::string Text(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
    std::string v;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != nullptr) {
      v = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    return v;
  }
  // The concatenated frame of a record.
  std::string Frame(const std::string& handle) {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db_, "SELECT data FROM chunks WHERE handle=?1 ORDER BY seq", -1, &st, nullptr);
    sqlite3_bind_text(st, 1, handle.c_str(), -1, SQLITE_TRANSIENT);
    std::string frame;
    while (sqlite3_step(st) == SQLITE_ROW) {
      frame.append(static_cast<const char*>(sqlite3_column_blob(st, 0)), sqlite3_column_bytes(st, 0));
    }
    sqlite3_finalize(st);
    return frame;
  }
  // Flips one byte of chunk `seq` at `offset` (negative: from the end).
  void FlipByte(const std::string& handle, int seq, int64_t offset) {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db_, "SELECT data FROM chunks WHERE handle=?1 AND seq=?2", -1, &st, nullptr);
    sqlite3_bind_text(st, 1, handle.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 2, seq);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    std::string data(static_cast<const char*>(sqlite3_column_blob(st, 0)), sqlite3_column_bytes(st, 0));
    sqlite3_finalize(st);
    size_t pos = offset >= 0 ? static_cast<size_t>(offset) : data.size() - static_cast<size_t>(-offset);
    ASSERT_LT(pos, data.size());
    data[pos] = static_cast<char>(data[pos] ^ 0x5a);
    sqlite3_prepare_v2(db_, "UPDATE chunks SET data=?3 WHERE handle=?1 AND seq=?2", -1, &st, nullptr);
    sqlite3_bind_text(st, 1, handle.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 2, seq);
    sqlite3_bind_blob(st, 3, data.data(), static_cast<int>(data.size()), SQLITE_TRANSIENT);
    ASSERT_EQ(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
  }

 private:
  sqlite3* db_ = nullptr;
};

mode_t ModeOf(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return static_cast<mode_t>(-1);
  return st.st_mode & 07777;
}

// Restores an environment variable at scope exit.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old) old_ = old;
    had_ = old != nullptr;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      ::setenv(name_.c_str(), old_.c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

// ---------------------------------------------------------------------------------------

TEST(RecoveryStore, RoundTripsVariousSizesInMemory) {
  auto store = OpenMemoryStore();
  ASSERT_TRUE(store.ok()) << store.status().message();
  for (const std::string& data :
       {std::string(), std::string("x"), CiText(64 * 1024), RandomBytes(3 * 1024 * 1024 + 17, 7)}) {
    auto h = Put(**store, data);
    ASSERT_TRUE(h.ok()) << h.status().message();
    StringSink out;
    ASSERT_TRUE((*store)->Get(*h, out).ok()) << data.size();
    EXPECT_EQ(out.data(), data) << data.size();
  }
}

TEST(RecoveryStore, RoundTripsOnDiskAndSplitsLargeFramesIntoChunkRows) {
  TempDir dir;
  auto store = MustOpen(dir.db());
  ASSERT_TRUE(store);
  std::string random = RandomBytes(3 * 1024 * 1024, 11);  // incompressible: > 3 chunk rows
  std::string text = CiText(64 * 1024);
  auto h1 = Put(*store, random);
  auto h2 = Put(*store, text);
  auto h3 = Put(*store, "");
  auto h4 = Put(*store, "a");
  ASSERT_TRUE(h1.ok() && h2.ok() && h3.ok() && h4.ok());
  for (auto [h, data] : {std::pair{*h1, &random}, {*h2, &text}}) {
    StringSink out;
    ASSERT_TRUE(store->Get(h, out).ok());
    EXPECT_EQ(out.data(), *data);
  }
  StringSink empty, one;
  ASSERT_TRUE(store->Get(*h3, empty).ok());
  ASSERT_TRUE(store->Get(*h4, one).ok());
  EXPECT_EQ(empty.data(), "");
  EXPECT_EQ(one.data(), "a");

  RawDb raw(dir.db());
  EXPECT_EQ(raw.Int("SELECT count(*) FROM chunks WHERE handle='" + *h1 + "'"), 4);
  EXPECT_EQ(raw.Int("SELECT max(length(data)) FROM chunks"), 1 << 20);
  EXPECT_EQ(raw.Int("SELECT min(seq) FROM chunks WHERE handle='" + *h1 + "'"), 0);
  EXPECT_EQ(raw.Int("SELECT original_bytes FROM recoveries WHERE handle='" + *h1 + "'"),
            static_cast<int64_t>(random.size()));
  EXPECT_EQ(raw.Int("SELECT stored_bytes FROM recoveries WHERE handle='" + *h1 + "'"),
            raw.Int("SELECT sum(length(data)) FROM chunks WHERE handle='" + *h1 + "'"));
  EXPECT_EQ(raw.Int("PRAGMA user_version"), 4);
  EXPECT_EQ(raw.Int("PRAGMA page_size"), 4096);  // a new database (kPageSize)
  EXPECT_EQ(raw.Text("PRAGMA journal_mode"), "wal");
  std::string created = raw.Text("SELECT created_at FROM recoveries LIMIT 1");
  EXPECT_EQ(created.size(), 30u) << created;  // YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ
  EXPECT_EQ(created.back(), 'Z');
}

TEST(RecoveryStore, StoredFrameDoesNotDependOnAppendPieces) {
  TempDir dir;
  auto store = MustOpen(dir.db());
  ASSERT_TRUE(store);
  std::string text = CiText(200 * 1024);
  std::string h = HandleOf(text);
  ASSERT_TRUE(PutPieces(*store, {text}, h, Info()).ok());
  RawDb raw(dir.db());
  std::string frame = raw.Frame(h);
  ASSERT_FALSE(frame.empty());
  testing::ExpectChunkingInvariant(text, [&](const std::vector<std::string_view>& pieces) {
    // A fresh in-memory store per split: the frame bytes and the retrieval are compared.
    auto mem = OpenMemoryStore();
    EXPECT_TRUE(mem.ok());
    Status s = PutPieces(**mem, pieces, h, Info());
    EXPECT_TRUE(s.ok()) << s.message();
    StringSink out;
    EXPECT_TRUE((*mem)->Get(h, out).ok());
    return out.data();
  });
  // Frames written through different piece sizes into the file store are the same bytes.
  std::string pieces_frame;
  {
    TempDir dir2;
    auto store2 = MustOpen(dir2.db());
    ASSERT_TRUE(store2);
    ASSERT_TRUE(PutPieces(*store2, testing::RandomSplit(text, 3, 7), h, Info()).ok());
    RawDb raw2(dir2.db());
    pieces_frame = raw2.Frame(h);
  }
  EXPECT_EQ(pieces_frame, frame);
}

// RecordWriter::AppendLast (issue 19): a record given whole in one AppendLast is compressed in
// place (zstd's stable input, size pledged, so the frame header carries the content size);
// after Appends, or when it fits the held-back first block, it is an ordinary Append. Every
// way reads back the same bytes, and nothing but Commit or Abandon may follow.
TEST(RecoveryStore, AppendLastCompressesInPlaceOrAppendsAndRoundTrips) {
  TempDir dir;
  auto store = MustOpen(dir.db());
  ASSERT_TRUE(store);
  const std::string text = CiText(1 << 20);
  const std::string random = RandomBytes((128 << 10) + 1, 5);
  struct Case {
    std::string data;
    size_t appended;  // bytes given to Append before AppendLast takes the rest
    bool in_place;
  };
  const std::vector<Case> cases = {
      {text, 0, true},
      {random, 0, true},
      {text.substr(0, 128 << 10), 0, false},  // fits the held-back block: Append
      {text.substr(0, 5000), 0, false},
      {text, 100, false},          // held back, then the rest
      {text, (200 << 10), false},  // the frame already started
      {text.substr(0, 300 << 10) + random, 300 << 10, false},
  };
  RawDb raw(dir.db());
  for (size_t k = 0; k < cases.size(); ++k) {
    Case c = cases[k];
    c.data.back() = static_cast<char>('a' + k);  // distinct records (a Put of a stored original keeps its frame)
    const std::string h = HandleOf(c.data);
    auto w = store->BeginRecord();
    ASSERT_TRUE(w.ok());
    const std::string_view all(c.data);
    if (c.appended > 0) {
      ASSERT_TRUE((*w)->Append(all.substr(0, c.appended)).ok()) << k;
    }
    ASSERT_TRUE((*w)->AppendLast(all.substr(c.appended)).ok()) << k;
    ASSERT_TRUE((*w)->Commit(h, Info()).ok()) << k;
    StringSink out;
    ASSERT_TRUE(store->Get(h, out).ok()) << k;
    EXPECT_EQ(out.data(), c.data) << k;
    const std::string frame = raw.Frame(h);
    const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
    if (c.in_place) {
      EXPECT_EQ(size, c.data.size()) << k;
    } else if (c.data.size() > (128u << 10)) {
      EXPECT_EQ(size, ZSTD_CONTENTSIZE_UNKNOWN) << k;  // streamed through the window
    } else {
      EXPECT_EQ(size, c.data.size()) << k;  // held back, then one pass of known size
    }
  }
  auto w = store->BeginRecord();
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->AppendLast(text).ok());
  EXPECT_FALSE((*w)->Append("more").ok());
}

TEST(RecoveryStore, PutTwiceKeepsChunksRefreshesRowAndFollowsFieldRules) {
  TempDir dir;
  auto store = MustOpen(dir.db());
  ASSERT_TRUE(store);
  std::string data = CiText(10000);
  auto h = Put(*store, data, Info("log", 500, 50, "meta-1"));
  ASSERT_TRUE(h.ok());
  RawDb raw(dir.db());
  // Mark the chunk so a rewrite would be visible, and age the row.
  raw.Exec("UPDATE recoveries SET created_at='2001-01-01T00:00:00Z'");
  int64_t chunks_before = raw.Int("SELECT count(*) FROM chunks");

  // New tokens_before 0 while old > 0: fields kept; metadata non-empty: kept.
  ASSERT_TRUE(Put(*store, data, Info("text", 0, 7, "meta-2")).ok());
  EXPECT_EQ(raw.Text("SELECT content_type FROM recoveries"), "log");
  EXPECT_EQ(raw.Int("SELECT tokens_before FROM recoveries"), 500);
  EXPECT_EQ(raw.Int("SELECT tokens_after FROM recoveries"), 50);
  EXPECT_NE(raw.Text("SELECT created_at FROM recoveries"), "2001-01-01T00:00:00Z");
  auto meta = store->GetMetadata(*h);
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(*meta, "meta-1");
  EXPECT_EQ(raw.Int("SELECT count(*) FROM chunks"), chunks_before);

  // New tokens_before > 0: fields replaced.
  ASSERT_TRUE(Put(*store, data, Info("json", 900, 90, "")).ok());
  EXPECT_EQ(raw.Text("SELECT content_type FROM recoveries"), "json");
  EXPECT_EQ(raw.Int("SELECT tokens_before FROM recoveries"), 900);
  EXPECT_EQ(raw.Int("SELECT tokens_after FROM recoveries"), 90);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM recoveries"), 1);

  // Empty metadata gets replaced by a new non-empty one.
  std::string other = "other original";
  auto h2 = Put(*store, other, Info("log", 1, 1, ""));
  ASSERT_TRUE(h2.ok());
  EXPECT_EQ(store->GetMetadata(*h2).value(), "");
  ASSERT_TRUE(Put(*store, other, Info("log", 1, 1, "late")).ok());
  EXPECT_EQ(store->GetMetadata(*h2).value(), "late");

  StringSink out;
  ASSERT_TRUE(store->Get(*h, out).ok());
  EXPECT_EQ(out.data(), data);
}

TEST(RecoveryStore, OverCapacityFailsClosedWithExactMessage) {
  TempDir dir;
  auto store = MustOpen(dir.db(), /*max_bytes=*/64 * 1024);
  ASSERT_TRUE(store);
  auto small = Put(*store, CiText(4096));
  ASSERT_TRUE(small.ok()) << small.status().message();
  std::string big = RandomBytes(100 * 1024, 3);
  auto r = Put(*store, big);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(r.status().message(), kBudget);
  StringSink out;
  Status g = store->Get(HandleOf(big), out);
  EXPECT_EQ(g.code(), StatusCode::kNotFound);
  EXPECT_TRUE(out.data().empty());
  RawDb raw(dir.db());
  EXPECT_EQ(raw.Int("SELECT count(*) FROM recoveries"), 1);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM chunks WHERE handle='" + HandleOf(big) + "'"), 0);

  // Metadata counts against the capacity too (§6.5).
  auto meta_heavy = Put(*store, "tiny", Info("log", 1, 1, std::string(70 * 1024, 'm')));
  EXPECT_EQ(meta_heavy.status().code(), StatusCode::kResourceExhausted);

  auto stats = store->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->max_storage_bytes, 64u * 1024);
  EXPECT_EQ(static_cast<int64_t>(stats->storage_bytes), raw.Int("SELECT sum(stored_bytes) FROM recoveries"));
}

TEST(RecoveryStore, DiskFullMapsToBudgetExceeded) {
  TempDir dir;
  StoreOptions o;
  o.path = dir.db();
  o.max_page_count = 8;  // 8 × 64 KiB pages, far below the 2 MiB record
  auto store = OpenSqliteStore(o);
  ASSERT_TRUE(store.ok()) << store.status().message();
  std::string big = RandomBytes(2 * 1024 * 1024, 5);
  auto r = Put(**store, big);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(r.status().message(), kBudget);
  StringSink out;
  EXPECT_EQ((*store)->Get(HandleOf(big), out).code(), StatusCode::kNotFound);
  // The connection is still usable for small records.
  auto ok = Put(**store, "small enough");
  EXPECT_TRUE(ok.ok()) << ok.status().message();
}

TEST(RecoveryStore, FlippedChunkByteIsCorruptionAndWritesNothing) {
  TempDir dir;
  auto store = MustOpen(dir.db());
  ASSERT_TRUE(store);
  std::string random = RandomBytes(2 * 1024 * 1024 + 999, 21);
  std::string text = CiText(300 * 1024);
  auto h1 = Put(*store, random);
  auto h2 = Put(*store, text);
  ASSERT_TRUE(h1.ok() && h2.ok());
  RawDb raw(dir.db());
  raw.FlipByte(*h1, 1, 12345);  // middle of the payload of an incompressible frame
  raw.FlipByte(*h2, 0, -2);     // inside the checksum of a compressible one
  for (const std::string& h : {*h1, *h2}) {
    StringSink out;
    Status s = store->Get(h, out);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << h;
    EXPECT_EQ(s.message(), kCorrupt);
    EXPECT_TRUE(out.data().empty());
  }
}

TEST(RecoveryStore, TruncatedOrExtendedFramesAreCorruption) {
  TempDir dir;
  auto store = MustOpen(dir.db());
  ASSERT_TRUE(store);
  std::string random = RandomBytes(2 * 1024 * 1024 + 5, 22);
  std::string a = CiText(5000), b = CiText(6000), c = CiText(7000), d = CiText(8000);
  auto h_random = Put(*store, random);
  auto h_a = Put(*store, a);
  auto h_b = Put(*store, b);
  auto h_c = Put(*store, c);
  auto h_d = Put(*store, d);
  ASSERT_TRUE(h_random.ok() && h_a.ok() && h_b.ok() && h_c.ok() && h_d.ok());
  RawDb raw(dir.db());
  // Last chunk row deleted (stored_bytes adjusted so only the frame check can catch it).
  raw.Exec("DELETE FROM chunks WHERE handle='" + *h_random + "' AND seq=2");
  raw.Exec("UPDATE recoveries SET stored_bytes=(SELECT sum(length(data)) FROM chunks WHERE handle='" + *h_random +
           "') WHERE handle='" + *h_random + "'");
  // Frame cut short by 3 bytes inside one row.
  raw.Exec("UPDATE chunks SET data=substr(data, 1, length(data)-3) WHERE handle='" + *h_a + "'");
  raw.Exec("UPDATE recoveries SET stored_bytes=stored_bytes-3 WHERE handle='" + *h_a + "'");
  // Trailing bytes after the frame: a second valid frame appended as an extra row.
  raw.Exec("INSERT INTO chunks SELECT '" + *h_b + "', 1, data FROM chunks WHERE handle='" + *h_c + "'");
  raw.Exec("UPDATE recoveries SET stored_bytes=(SELECT sum(length(data)) FROM chunks WHERE handle='" + *h_b +
           "') WHERE handle='" + *h_b + "'");
  // Recorded length disagrees with the frame.
  raw.Exec("UPDATE recoveries SET original_bytes=original_bytes+1 WHERE handle='" + *h_c + "'");
  // A valid frame of other bytes under this handle (SHA-256 prefix mismatch).
  raw.Exec("UPDATE chunks SET data=(SELECT data FROM chunks WHERE handle='" + *h_a + "') WHERE handle='" + *h_d + "'");
  raw.Exec("UPDATE recoveries SET original_bytes=" + std::to_string(a.size()) +
           ", stored_bytes=(SELECT sum(length(data)) FROM chunks WHERE handle='" + *h_d + "') WHERE handle='" + *h_d +
           "'");
  for (const std::string& h : {*h_random, *h_a, *h_b, *h_c, *h_d}) {
    StringSink out;
    Status s = store->Get(h, out);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << h;
    EXPECT_EQ(s.message(), kCorrupt) << h;
    EXPECT_TRUE(out.data().empty()) << h;
  }
}

TEST(RecoveryStore, UnknownOrMalformedHandleIsNotFound) {
  auto store = OpenMemoryStore();
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(Put(**store, "something").ok());
  for (std::string h : {std::string("ccr_00000000000000000000000000000000"), std::string("ccr_"), std::string("nope"),
                        std::string(""), "CCR_" + HandleOf("something").substr(4), HandleOf("something") + "0",
                        "ccr_" + std::string(32, 'A'), std::string("ccr_' OR 1=1 --________________")}) {
    StringSink out;
    Status s = (*store)->Get(h, out);
    EXPECT_EQ(s.code(), StatusCode::kNotFound) << h;
    EXPECT_EQ(s.message(), kNotFound);
    EXPECT_TRUE(out.data().empty());
    EXPECT_EQ((*store)->GetMetadata(h).status().code(), StatusCode::kNotFound);
  }
}

TEST(RecoveryStore, CommitRejectsHandleThatDoesNotMatchTheBytes) {
  auto store = OpenMemoryStore();
  ASSERT_TRUE(store.ok());
  Status wrong = PutPieces(**store, {"abc"}, HandleOf("abd"), Info());
  EXPECT_EQ(wrong.code(), StatusCode::kInvalidArgument);
  Status malformed = PutPieces(**store, {"abc"}, "ccr_xyz", Info());
  EXPECT_EQ(malformed.code(), StatusCode::kInvalidArgument);
  StringSink out;
  EXPECT_EQ((*store)->Get(HandleOf("abd"), out).code(), StatusCode::kNotFound);
  // Writer state after Commit/Abandon.
  auto w = (*store)->BeginRecord();
  ASSERT_TRUE(w.ok());
  (*w)->Abandon();
  (*w)->Abandon();  // idempotent
  EXPECT_FALSE((*w)->Append("x").ok());
  EXPECT_FALSE((*w)->Commit(HandleOf(""), Info()).ok());
}

TEST(RecoveryStore, SymlinkedDatabaseOrCompanionIsRefused) {
  TempDir dir;
  std::string target = dir.path() + "/target.db";
  {
    auto store = MustOpen(target);
    ASSERT_TRUE(store);
  }
  ASSERT_EQ(::symlink(target.c_str(), dir.db().c_str()), 0);
  StoreOptions o;
  o.path = dir.db();
  auto r = OpenSqliteStore(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("cannot open recovery store: ", 0), 0u) << r.status().message();
  EXPECT_NE(r.status().message().find("symbolic link"), std::string::npos);

  // A planted -wal link is refused as well (and not followed).
  std::string other = dir.path() + "/other.db";
  std::string victim = dir.path() + "/victim";
  ASSERT_EQ(::symlink(victim.c_str(), (other + "-wal").c_str()), 0);
  o.path = other;
  auto r2 = OpenSqliteStore(o);
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.status().message().find("symbolic link"), std::string::npos);
  EXPECT_EQ(ModeOf(victim), static_cast<mode_t>(-1));  // never created through the link
}

// A closing writer leaves the WAL (and its -shm) for the next process, whose records stay
// readable from it, until kCheckpointAtCloseFrames (64) frames have collected: then the close
// checkpoints and removes both, as SQLite's own close does every time. gc always leaves the
// database file alone (issue 19, docs/DECISIONS.md "The WAL outlives a small run").
TEST(RecoveryStore, WalOutlivesSmallRunsUntilItHoldsSixtyFourFrames) {
  TempDir dir;
  auto size_of = [](const std::string& path) -> long long {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : -1;
  };
  std::vector<std::pair<std::string, std::string>> records;
  bool kept = false, removed = false;
  long long largest = 0;
  for (int run = 0; run < 60; ++run) {
    std::string data = CiText(2000) + std::to_string(run);
    {
      auto store = MustOpen(dir.db());
      ASSERT_TRUE(store);
      auto h = Put(*store, data);
      ASSERT_TRUE(h.ok()) << h.status().message();
      records.emplace_back(*h, data);
    }
    const long long wal = size_of(dir.db() + "-wal");
    largest = std::max(largest, wal);
    kept = kept || wal > 0;
    removed = removed || (run > 0 && wal < 0 && size_of(dir.db() + "-shm") < 0);
    // Every record so far, from a fresh connection (through the WAL when it is there).
    auto store = MustOpen(dir.db());
    ASSERT_TRUE(store);
    for (const auto& [h, d] : records) {
      StringSink out;
      ASSERT_TRUE(store->Get(h, out).ok()) << run;
      ASSERT_EQ(out.data(), d) << run;
    }
  }
  EXPECT_TRUE(kept);     // closes left the WAL in place
  EXPECT_TRUE(removed);  // and some close checkpointed it away
  // 64 frames of 4 KiB pages plus the frames of the last run (a few), headers included.
  EXPECT_LT(largest, 80 * (4096 + 24) + 32);
  {
    auto store = MustOpen(dir.db());
    ASSERT_TRUE(store);
    ASSERT_TRUE(Put(*store, "after the loop").ok());
    ASSERT_TRUE(store->Gc(std::nullopt, false).ok());
  }
  EXPECT_EQ(size_of(dir.db() + "-wal"), -1);
  EXPECT_EQ(size_of(dir.db() + "-shm"), -1);
}

TEST(RecoveryStore, FilesAre0600AndInsecureParentIsRefused) {
  TempDir dir;
  {
    auto store = MustOpen(dir.db());
    ASSERT_TRUE(store);
    ASSERT_TRUE(Put(*store, "mode check").ok());
    EXPECT_EQ(ModeOf(dir.db()), 0600u);
    EXPECT_EQ(ModeOf(dir.db() + "-wal"), 0600u);
    EXPECT_EQ(ModeOf(dir.db() + "-shm"), 0600u);
  }
  // An existing file with loose permissions is tightened.
  ASSERT_EQ(::chmod(dir.db().c_str(), 0644), 0);
  {
    auto store = MustOpen(dir.db());
    ASSERT_TRUE(store);
    EXPECT_EQ(ModeOf(dir.db()), 0600u);
  }
  // Group-writable parent without sticky bit: refused; with sticky bit: accepted.
  std::string sub = dir.path() + "/shared";
  ASSERT_EQ(::mkdir(sub.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(sub.c_str(), 0770), 0);
  StoreOptions o;
  o.path = sub + "/ccr.db";
  auto r = OpenSqliteStore(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("group- or world-writable"), std::string::npos) << r.status().message();
  EXPECT_EQ(ModeOf(o.path), static_cast<mode_t>(-1));
  ASSERT_EQ(::chmod(sub.c_str(), 01777), 0);
  EXPECT_TRUE(OpenSqliteStore(o).ok());
}

TEST(StoreOptions, FromEnvResolvesPathsAndCreatesHome0700) {
  TempDir dir;
  ScopedEnv db("CAVEMAN_CCR_DB", nullptr);
  ScopedEnv max("CAVEMAN_CCR_MAX_BYTES", nullptr);
  ScopedEnv level("CAVEMAN_CCR_ZSTD_LEVEL", nullptr);
  {
    ScopedEnv home("HOME", dir.path().c_str());
    ScopedEnv chome("CAVEMAN_HOME", "");
    auto o = StoreOptions::FromEnv();
    ASSERT_TRUE(o.ok()) << o.status().message();
    EXPECT_EQ(o->path, dir.path() + "/.caveman/ccr.db");
    EXPECT_EQ(ModeOf(dir.path() + "/.caveman"), 0700u);
    EXPECT_EQ(o->max_bytes, kDefaultStoreCapacity);
    EXPECT_EQ(o->zstd_level, 3);
  }
  {
    std::string custom = dir.path() + "/a/b";
    ScopedEnv chome("CAVEMAN_HOME", custom.c_str());
    auto o = StoreOptions::FromEnv();
    ASSERT_TRUE(o.ok()) << o.status().message();
    EXPECT_EQ(o->path, custom + "/ccr.db");
    EXPECT_EQ(ModeOf(custom), 0700u);
    auto store = OpenSqliteStore(*o);
    EXPECT_TRUE(store.ok()) << store.status().message();
  }
  {
    ScopedEnv chome("CAVEMAN_HOME", (dir.path() + "/unused").c_str());
    ScopedEnv db2("CAVEMAN_CCR_DB", (dir.path() + "/explicit.db").c_str());
    ScopedEnv max2("CAVEMAN_CCR_MAX_BYTES", "1048576");
    ScopedEnv level2("CAVEMAN_CCR_ZSTD_LEVEL", "19");
    auto o = StoreOptions::FromEnv();
    ASSERT_TRUE(o.ok()) << o.status().message();
    EXPECT_EQ(o->path, dir.path() + "/explicit.db");
    EXPECT_EQ(o->max_bytes, 1048576u);
    EXPECT_EQ(o->zstd_level, 19);
    EXPECT_EQ(ModeOf(dir.path() + "/unused"), static_cast<mode_t>(-1));
  }
  {
    // A regular file where the home directory should be.
    std::string file = dir.path() + "/file";
    int fd = ::open(file.c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    ::close(fd);
    ScopedEnv chome("CAVEMAN_HOME", file.c_str());
    auto o = StoreOptions::FromEnv();
    ASSERT_FALSE(o.ok());
    EXPECT_EQ(o.status().message().rfind("cannot create ~/.caveman: ", 0), 0u) << o.status().message();
  }
}

TEST(StoreOptions, FromEnvRejectsBadNumbers) {
  TempDir dir;
  ScopedEnv db("CAVEMAN_CCR_DB", dir.db().c_str());
  for (const char* bad : {"0", "-1", "abc", "1.5", " 10", "10 ", "+10", "1e6", "18446744073709551616"}) {
    ScopedEnv max("CAVEMAN_CCR_MAX_BYTES", bad);
    auto o = StoreOptions::FromEnv();
    ASSERT_FALSE(o.ok()) << bad;
    EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(o.status().message().find("CAVEMAN_CCR_MAX_BYTES"), std::string::npos);
    EXPECT_EQ(o.status().message().rfind("cannot open recovery store: ", 0), 0u);
  }
  for (const char* bad : {"0", "20", "-3", "x", "3.0", "100000000000000000000"}) {
    ScopedEnv level("CAVEMAN_CCR_ZSTD_LEVEL", bad);
    auto o = StoreOptions::FromEnv();
    ASSERT_FALSE(o.ok()) << bad;
    EXPECT_NE(o.status().message().find("CAVEMAN_CCR_ZSTD_LEVEL"), std::string::npos);
  }
  ScopedEnv level("CAVEMAN_CCR_ZSTD_LEVEL", "1");
  ScopedEnv max("CAVEMAN_CCR_MAX_BYTES", "18446744073709551615");
  auto o = StoreOptions::FromEnv();
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->zstd_level, 1);
  EXPECT_EQ(o->max_bytes, UINT64_MAX);

  StoreOptions bad_level;
  bad_level.path = dir.db();
  bad_level.zstd_level = 20;
  EXPECT_FALSE(OpenSqliteStore(bad_level).ok());
}

TEST(RecoveryStore, StatsSumsPerContentType) {
  auto store = OpenMemoryStore();
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(Put(**store, "one", Info("log", 100, 10, "mm")).ok());
  ASSERT_TRUE(Put(**store, "two", Info("log", 50, 5)).ok());
  ASSERT_TRUE(Put(**store, "three", Info("json", 7, 3)).ok());
  auto stats = (*store)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->totals.count, 3u);
  EXPECT_EQ(stats->totals.tokens_before, 157u);
  EXPECT_EQ(stats->totals.tokens_after, 18u);
  ASSERT_EQ(stats->by_content_type.size(), 2u);
  EXPECT_EQ(stats->by_content_type["log"].count, 2u);
  EXPECT_EQ(stats->by_content_type["log"].tokens_before, 150u);
  EXPECT_EQ(stats->by_content_type["json"].tokens_after, 3u);
  EXPECT_EQ(stats->max_storage_bytes, kDefaultStoreCapacity);
  EXPECT_GT(stats->storage_bytes, 2u);
}

TEST(RecoveryStore, GcRemovesOldRecordsAndOrphanChunks) {
  TempDir dir;
  auto store = MustOpen(dir.db());
  ASSERT_TRUE(store);
  auto old1 = Put(*store, "old one");
  auto old2 = Put(*store, "old two");
  auto young = Put(*store, "young");
  auto odd = Put(*store, "unparseable date");
  ASSERT_TRUE(old1.ok() && old2.ok() && young.ok() && odd.ok());
  RawDb raw(dir.db());
  raw.Exec("UPDATE recoveries SET created_at='2020-01-01T00:00:00.5Z' WHERE handle='" + *old1 + "'");
  // 02:00+03:00 is 23:00 UTC the day before; fraction digits vary between writers.
  raw.Exec("UPDATE recoveries SET created_at='2020-01-02T02:00:00.123+03:00' WHERE handle='" + *old2 + "'");
  raw.Exec("UPDATE recoveries SET created_at='yesterday' WHERE handle='" + *odd + "'");
  raw.Exec("INSERT INTO chunks VALUES ('ccr_ffffffffffffffffffffffffffffffff', 0, x'00112233')");
  raw.Exec("INSERT INTO chunks VALUES ('ccr_ffffffffffffffffffffffffffffffff', 1, x'44')");
  int64_t old_sizes =
      raw.Int("SELECT sum(stored_bytes) FROM recoveries WHERE handle IN ('" + *old1 + "','" + *old2 + "')");

  auto dry = store->Gc(3600, /*dry_run=*/true);
  ASSERT_TRUE(dry.ok()) << dry.status().message();
  EXPECT_EQ(dry->removed, 2u);
  EXPECT_EQ(dry->orphan_chunks, 2u);
  EXPECT_EQ(static_cast<int64_t>(dry->freed_bytes), old_sizes + 5);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM recoveries"), 4);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM chunks"), 6);

  // Orphans only.
  auto orphans = store->Gc(std::nullopt, false);
  ASSERT_TRUE(orphans.ok());
  EXPECT_EQ(orphans->removed, 0u);
  EXPECT_EQ(orphans->orphan_chunks, 2u);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM chunks"), 4);

  auto gc = store->Gc(3600, false);
  ASSERT_TRUE(gc.ok());
  EXPECT_EQ(gc->removed, 2u);
  EXPECT_EQ(gc->orphan_chunks, 0u);
  EXPECT_EQ(gc->max_storage_bytes, kDefaultStoreCapacity);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM recoveries"), 2);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM chunks"), 2);
  EXPECT_EQ(static_cast<int64_t>(gc->storage_bytes), raw.Int("SELECT sum(stored_bytes) FROM recoveries"));
  StringSink out;
  EXPECT_EQ(store->Get(*old1, out).code(), StatusCode::kNotFound);
  EXPECT_TRUE(store->Get(*young, out).ok());
  EXPECT_EQ(out.data(), "young");

  // An age beyond the epoch keeps everything.
  auto keep = store->Gc(UINT64_MAX, false);
  ASSERT_TRUE(keep.ok());
  EXPECT_EQ(keep->removed, 0u);
}

// Hashes and counts what Get writes, without keeping it.
class HashingSink final : public ByteSink {
 public:
  Status Write(std::string_view d) override {
    sha_.Update(d);
    bytes_ += d.size();
    return Status::OK();
  }
  std::string Handle() { return HandleFromDigest(sha_.Final()); }
  uint64_t bytes() const { return bytes_; }

 private:
  Sha256 sha_;
  uint64_t bytes_ = 0;
};

long MaxRssKiB() {
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

// 64 MiB (the input limit) streamed in and out: the frame and the original go through
// spools, so the process never holds the whole original (input is generated piecewise).
TEST(RecoveryStore, SixtyFourMiBRoundTripInBoundedMemory) {
  constexpr size_t kPiece = 1 << 20;
  constexpr size_t kPieces = 64;
  TempDir dir;
  auto store = MustOpen(dir.db());
  ASSERT_TRUE(store);
  long rss_before = MaxRssKiB();
  Sha256 sha;
  auto w = store->BeginRecord();
  ASSERT_TRUE(w.ok());
  for (size_t i = 0; i < kPieces; ++i) {
    std::string piece = i % 2 == 0 ? RandomBytes(kPiece, 500 + i) : CiText(kPiece);
    sha.Update(piece);
    ASSERT_TRUE((*w)->Append(piece).ok());
  }
  std::string handle = HandleFromDigest(sha.Final());
  Status c = (*w)->Commit(handle, Info());
  ASSERT_TRUE(c.ok()) << c.message();
  HashingSink out;
  ASSERT_TRUE(store->Get(handle, out).ok());
  EXPECT_EQ(out.bytes(), kPiece * kPieces);
  EXPECT_EQ(out.Handle(), handle);
  // Spools hold ≤ 8 MiB each in memory; chunk rows are 1 MiB. A whole-input buffer would
  // add ≥ 64 MiB.
#if !defined(__SANITIZE_ADDRESS__)  // ASan's quarantine keeps freed buffers resident
  EXPECT_LT(MaxRssKiB() - rss_before, 48 * 1024) << "rss before " << rss_before;
#else
  (void)rss_before;
#endif
}

TEST(RecoveryStore, ReopenKeepsRecords) {
  TempDir dir;
  std::string data = CiText(500 * 1024);
  std::string h;
  {
    auto store = MustOpen(dir.db());
    ASSERT_TRUE(store);
    auto r = Put(*store, data);
    ASSERT_TRUE(r.ok());
    h = *r;
  }
  auto store = MustOpen(dir.db());
  ASSERT_TRUE(store);
  StringSink out;
  ASSERT_TRUE(store->Get(h, out).ok());
  EXPECT_EQ(out.data(), data);
}

// A store created with 64 KiB pages (before 2026-12-05) keeps them and keeps working: its
// records read back, new records of every size are written and read, stats and gc run.
TEST(RecoveryStore, DatabaseWithSixtyFourKibPagesKeepsItsPageSize) {
  TempDir dir;
  std::ofstream(dir.db()).close();  // an empty file is an empty database to SQLite
  {
    RawDb raw(dir.db());
    raw.Exec("PRAGMA page_size=65536; PRAGMA journal_mode=WAL; CREATE TABLE t(x); DROP TABLE t;");
    EXPECT_EQ(raw.Int("PRAGMA page_size"), 65536);
  }
  std::vector<std::pair<std::string, std::string>> records;  // handle, original
  for (size_t size : {size_t{0}, size_t{1}, size_t{4096}, size_t{3} << 20}) {
    auto store = MustOpen(dir.db());
    ASSERT_TRUE(store);
    const std::string data = size == (size_t{3} << 20) ? RandomBytes(size, 7) : CiText(size);
    auto h = Put(*store, data);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    records.emplace_back(*h, data);
  }
  auto store = MustOpen(dir.db());
  ASSERT_TRUE(store);
  for (const auto& [h, data] : records) {
    StringSink out;
    ASSERT_TRUE(store->Get(h, out).ok());
    EXPECT_TRUE(out.data() == data);
  }
  EXPECT_TRUE(store->Stats().ok());
  EXPECT_TRUE(store->Gc(std::nullopt, false).ok());
  RawDb raw(dir.db());
  EXPECT_EQ(raw.Int("PRAGMA page_size"), 65536);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), 4);
}

TEST(RecoveryStore, SpilledSpoolsRoundTrip) {
  TempDir dir;
  StoreOptions o;
  o.path = dir.db();
  o.spool_memory_limit = 4096;  // frame and original both spill to temp files
  auto store = OpenSqliteStore(o);
  ASSERT_TRUE(store.ok());
  std::string data = RandomBytes(1500 * 1024, 99) + CiText(700 * 1024);
  auto h = Put(**store, data);
  ASSERT_TRUE(h.ok()) << h.status().message();
  StringSink out;
  ASSERT_TRUE((*store)->Get(*h, out).ok());
  EXPECT_EQ(out.data(), data);
}

// ---------------------------------------------------------------------------------------
// Stream records (follow mode): partial records, finalisation, capacity, gc, migration.

std::string GetPartialOrDie(RecoveryStore& store, const std::string& id) {
  StringSink sink;
  Status s = store.GetPartial(id, sink);
  EXPECT_TRUE(s.ok()) << s.message();
  return sink.data();
}

TEST(StreamRecord, SyncedPrefixIsAPartialRecordAndCommitPublishesTheBatchHandle) {
  TempDir dir;
  auto store = MustOpen(dir.db());
  const std::string text = CiText(3 << 20);
  auto w = store->BeginStreamRecord("make -j2");
  ASSERT_TRUE(w.ok()) << w.status().message();
  const std::string id = (*w)->partial_id();
  EXPECT_TRUE(IsWellFormedPartialId(id)) << id;
  // Nothing synced yet: no partial record is visible.
  EXPECT_TRUE(store->ListPartials()->empty());
  size_t off = 0;
  std::vector<size_t> cuts = {1, 100, 70000, 1 << 20, 2500000, text.size()};
  for (size_t cut : cuts) {
    ASSERT_TRUE((*w)->Append(std::string_view(text).substr(off, cut - off)).ok());
    off = cut;
    ASSERT_TRUE((*w)->Sync().ok());
    EXPECT_EQ((*w)->synced_bytes(), cut);
    // Another connection sees exactly the synced prefix, verified.
    auto other = MustOpen(dir.db());
    EXPECT_EQ(GetPartialOrDie(*other, id), text.substr(0, cut));
    auto list = other->ListPartials();
    ASSERT_TRUE(list.ok());
    ASSERT_EQ(list->size(), 1u);
    EXPECT_EQ((*list)[0].id, id);
    EXPECT_EQ((*list)[0].original_bytes, cut);
    EXPECT_EQ((*list)[0].command, "make -j2");
    EXPECT_TRUE((*list)[0].writer_alive);
  }
  const std::string handle = HandleOf(text);
  RecordInfo info = Info();
  info.command = "make -j2";
  ASSERT_TRUE((*w)->Commit(handle, info).ok());
  StringSink got;
  ASSERT_TRUE(store->Get(handle, got).ok());
  EXPECT_EQ(got.data(), text);
  EXPECT_TRUE(store->ListPartials()->empty());
  StringSink gone;
  EXPECT_EQ(store->GetPartial(id, gone).code(), StatusCode::kNotFound);
  RawDb raw(dir.db());
  EXPECT_EQ(raw.Text("SELECT command FROM recoveries WHERE handle='" + handle + "'"), "make -j2");
  EXPECT_EQ(raw.Int("PRAGMA user_version"), 4);
  // The chunk rows were not copied: they stay under the partial id.
  EXPECT_EQ(raw.Int("SELECT count(*) FROM chunks WHERE handle='" + handle + "'"), 0);
  EXPECT_GT(raw.Int("SELECT count(*) FROM chunks WHERE handle='" + id + "'"), 0);
  // gc keeps a finalised stream record's chunks.
  auto gc = store->Gc(std::nullopt, false);
  ASSERT_TRUE(gc.ok());
  EXPECT_EQ(gc->orphan_chunks, 0u);
  StringSink again;
  ASSERT_TRUE(store->Get(handle, again).ok());
  EXPECT_EQ(again.data(), text);
  // And removes them with the record.
  ::usleep(20000);
  auto all = store->Gc(0, false);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->removed, 1u);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM chunks"), 0);
  EXPECT_EQ(all->storage_bytes, 0u);
}

TEST(StreamRecord, CommitOfAnExistingOriginalDropsThePartialCopy) {
  auto store = OpenMemoryStore().value();
  const std::string text = CiText(200000);
  auto h = Put(*store, text);
  ASSERT_TRUE(h.ok());
  auto w = store->BeginStreamRecord("").value();
  ASSERT_TRUE(w->Append(text).ok());
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_EQ(store->ListPartials()->size(), 1u);
  const uint64_t used_with_both = store->Stats()->storage_bytes;
  ASSERT_TRUE(w->Commit(*h, Info()).ok());
  EXPECT_TRUE(store->ListPartials()->empty());
  EXPECT_LT(store->Stats()->storage_bytes, used_with_both);
  StringSink got;
  ASSERT_TRUE(store->Get(*h, got).ok());
  EXPECT_EQ(got.data(), text);
  EXPECT_EQ(store->Stats()->totals.count, 1u);
}

TEST(StreamRecord, AbandonDeletesThePartialAndCommitChecksTheHandle) {
  auto store = OpenMemoryStore().value();
  auto w = store->BeginStreamRecord("x").value();
  ASSERT_TRUE(w->Append("hello\n").ok());
  ASSERT_TRUE(w->Sync().ok());
  EXPECT_EQ(store->ListPartials()->size(), 1u);
  w->Abandon();
  EXPECT_TRUE(store->ListPartials()->empty());
  EXPECT_EQ(store->Stats()->storage_bytes, 0u);

  auto w2 = store->BeginStreamRecord("").value();
  ASSERT_TRUE(w2->Append("abc").ok());
  EXPECT_EQ(w2->Commit(HandleOf("abd"), Info()).code(), StatusCode::kInvalidArgument);
}

TEST(StreamRecord, CeilingFailsTheSyncAndKeepsWhatWasSynced) {
  TempDir dir;
  auto store = MustOpen(dir.db(), /*max_bytes=*/64 * 1024);
  auto w = store->BeginStreamRecord("").value();
  const std::string first = "first line\n";
  ASSERT_TRUE(w->Append(first).ok());
  ASSERT_TRUE(w->Sync().ok());
  const std::string noise = RandomBytes(200000, 7);  // incompressible: over the ceiling
  ASSERT_TRUE(w->Append(noise).ok());
  Status s = w->Sync();
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), kBudget);
  EXPECT_EQ(w->synced_bytes(), first.size());
  EXPECT_FALSE(w->Sync().ok());  // sticky
  EXPECT_FALSE(w->Commit(HandleOf(first + noise), Info()).ok());
  EXPECT_EQ(GetPartialOrDie(*store, w->partial_id()), first);
}

TEST(StreamRecord, GcRemovesPartialsOfGoneWritersOnly) {
  TempDir dir;
  auto store = MustOpen(dir.db());
  auto live = store->BeginStreamRecord("live").value();
  ASSERT_TRUE(live->Append(CiText(5000)).ok());
  ASSERT_TRUE(live->Sync().ok());
  auto dead = store->BeginStreamRecord("dead").value();
  ASSERT_TRUE(dead->Append(CiText(3000)).ok());
  ASSERT_TRUE(dead->Sync().ok());
  {
    RawDb raw(dir.db());
    // A process that no longer exists on this host (pid 1 never has start time 1).
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    raw.Exec("UPDATE partials SET writer='" + std::string(host) + ":1:1' WHERE id='" + dead->partial_id() + "'");
  }
  auto list = store->ListPartials().value();
  ASSERT_EQ(list.size(), 2u);
  int alive = 0;
  for (const PartialInfo& p : list) alive += p.writer_alive ? 1 : 0;
  EXPECT_EQ(alive, 1);
  auto dry = store->Gc(std::nullopt, /*dry_run=*/true);
  ASSERT_TRUE(dry.ok());
  EXPECT_GE(dry->orphan_chunks, 1u);
  EXPECT_EQ(store->ListPartials()->size(), 2u);
  auto gc = store->Gc(std::nullopt, false);
  ASSERT_TRUE(gc.ok());
  EXPECT_EQ(gc->orphan_chunks, dry->orphan_chunks);
  list = store->ListPartials().value();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].id, live->partial_id());
  EXPECT_EQ(GetPartialOrDie(*store, live->partial_id()), CiText(5000));
  // With an age every partial not synced since is abandoned, live or not.
  ::usleep(20000);
  ASSERT_TRUE(store->Gc(0, false).ok());
  EXPECT_TRUE(store->ListPartials()->empty());
}

TEST(StreamRecord, TamperedPartialIsCorrupt) {
  TempDir dir;
  auto store = MustOpen(dir.db());
  auto w = store->BeginStreamRecord("").value();
  ASSERT_TRUE(w->Append(CiText(100000)).ok());
  ASSERT_TRUE(w->Sync().ok());
  RawDb raw(dir.db());
  raw.FlipByte(w->partial_id(), 0, -3);
  StringSink sink;
  EXPECT_EQ(store->GetPartial(w->partial_id(), sink).code(), StatusCode::kCorruption);
  EXPECT_TRUE(sink.data().empty());
  EXPECT_EQ(store->GetPartial("part_00000000000000000000000000000000", sink).code(), StatusCode::kNotFound);
  EXPECT_EQ(store->GetPartial("bogus", sink).code(), StatusCode::kNotFound);
}

TEST(StreamRecord, VersionOneDatabaseIsMigratedAndKeepsItsRecords) {
  TempDir dir;
  const std::string text = CiText(10000);
  const std::string handle = HandleOf(text);
  {
    // A store as version 1 wrote it.
    auto store = MustOpen(dir.db());
    ASSERT_TRUE(Put(*store, text).ok());
  }
  {
    RawDb raw(dir.db());
    raw.Exec(
        "DROP TABLE partials; DROP INDEX recoveries_chunk_key;"
        "ALTER TABLE recoveries DROP COLUMN chunk_key; ALTER TABLE recoveries DROP COLUMN command;"
        "ALTER TABLE recoveries DROP COLUMN marker_map; DROP TABLE ledger; PRAGMA user_version = 1;");
  }
  auto store = MustOpen(dir.db());
  StringSink got;
  ASSERT_TRUE(store->Get(handle, got).ok());
  EXPECT_EQ(got.data(), text);
  RawDb raw(dir.db());
  EXPECT_EQ(raw.Int("PRAGMA user_version"), 4);
  auto w = store->BeginStreamRecord("").value();
  ASSERT_TRUE(w->Append("x\n").ok());
  ASSERT_TRUE(w->Sync().ok());
}

// Schema 3 (issue 14): the marker map is stored with the record and replaced by a later put;
// a version 2 database is migrated on open and its records have no map.
TEST(MarkerMapColumn, StoredReplacedAndMigratedFromVersionTwo) {
  TempDir dir;
  const std::string text = CiText(5000);
  const std::string handle = HandleOf(text);
  {
    auto store = MustOpen(dir.db());
    ASSERT_TRUE(Put(*store, text).ok());
    EXPECT_FALSE(store->GetMarkerMap(handle)->has_value());  // Put gives no map
    auto w = store->BeginRecord().value();
    ASSERT_TRUE(w->Append(text).ok());
    RecordInfo info = Info();
    info.marker_map = "map one";
    ASSERT_TRUE(w->Commit(handle, info).ok());
    EXPECT_EQ(store->GetMarkerMap(handle)->value_or(""), "map one");
    auto w2 = store->BeginRecord().value();
    ASSERT_TRUE(w2->Append(text).ok());
    info.marker_map = "map two";
    ASSERT_TRUE(w2->Commit(handle, info).ok());
    EXPECT_EQ(store->GetMarkerMap(handle)->value_or(""), "map two");
    EXPECT_EQ(store->GetMarkerMap("ccr_00000000000000000000000000000000").status().code(), StatusCode::kNotFound);
    // A slice of the verified original.
    StringSink slice;
    ASSERT_TRUE(store->GetRange(handle, 100, 250, slice).ok());
    EXPECT_EQ(slice.data(), text.substr(100, 250));
    StringSink outside;
    EXPECT_EQ(store->GetRange(handle, text.size() - 1, 2, outside).code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(outside.data().empty());
  }
  {
    RawDb raw(dir.db());
    raw.Exec("ALTER TABLE recoveries DROP COLUMN marker_map; DROP TABLE ledger; PRAGMA user_version = 2;");
  }
  auto store = MustOpen(dir.db());
  EXPECT_FALSE(store->GetMarkerMap(handle)->has_value());
  StringSink got;
  ASSERT_TRUE(store->Get(handle, got).ok());
  EXPECT_EQ(got.data(), text);
  RawDb raw(dir.db());
  EXPECT_EQ(raw.Int("PRAGMA user_version"), 4);
}

// The capacity total kept by triggers (usage_total) equals the sum over the rows after every
// kind of write: put, refresh with new metadata, a stream record synced then committed or
// abandoned, gc, and rows written by another program (a binary that does not know the table).
int64_t SummedUsage(RawDb& raw) {
  return raw.Int(
      "SELECT (SELECT coalesce(sum(stored_bytes + coalesce(length(metadata), 0)), 0) FROM recoveries)"
      " + (SELECT coalesce(sum(stored_bytes), 0) FROM partials)");
}

TEST(RecoveryStore, UsageTotalFollowsEveryWrite) {
  TempDir dir;
  auto store = MustOpen(dir.db());
  ASSERT_TRUE(store);
  RawDb raw(dir.db());
  auto check = [&](const char* step) {
    const int64_t kept = raw.Int("SELECT bytes FROM usage_total WHERE id = 1");
    EXPECT_EQ(kept, SummedUsage(raw)) << step;
    auto stats = store->Stats();
    ASSERT_TRUE(stats.ok()) << step;
    EXPECT_EQ(static_cast<int64_t>(stats->storage_bytes), kept) << step;
  };
  check("new store");
  EXPECT_GT(raw.Int("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'usage_total_%'"), 5);

  auto a = Put(*store, CiText(5000));
  auto b = Put(*store, RandomBytes(70000, 3), Info("json", 10, 5, "meta-b"));
  ASSERT_TRUE(a.ok() && b.ok());
  check("two puts");
  ASSERT_TRUE(Put(*store, CiText(5000), Info("log", 100, 10, "new metadata for a")).ok());  // refresh
  check("refresh with metadata");

  auto w = store->BeginStreamRecord("make");
  ASSERT_TRUE(w.ok());
  const std::string text = CiText(300000);
  ASSERT_TRUE((*w)->Append(std::string_view(text).substr(0, 100000)).ok());
  ASSERT_TRUE((*w)->Sync().ok());
  check("partial synced");
  ASSERT_TRUE((*w)->Append(std::string_view(text).substr(100000)).ok());
  ASSERT_TRUE((*w)->Sync().ok());
  check("partial synced again");
  ASSERT_TRUE((*w)->Commit(HandleOf(text), Info()).ok());
  check("partial committed");
  auto w2 = store->BeginStreamRecord("abandoned");
  ASSERT_TRUE(w2.ok());
  ASSERT_TRUE((*w2)->Append(CiText(20000)).ok());
  ASSERT_TRUE((*w2)->Sync().ok());
  check("second partial synced");
  (*w2)->Abandon();
  check("partial abandoned");

  // Written by a program that knows nothing of the total.
  raw.Exec(
      "INSERT INTO recoveries (handle, created_at, content_type, compressor, tokens_before, tokens_after,"
      " original_bytes, stored_bytes, metadata) VALUES ('ccr_00000000000000000000000000000001',"
      " '2020-01-01T00:00:00Z', 'log', 'log', 1, 1, 10, 1234, x'0102')");
  check("foreign insert");
  raw.Exec(
      "UPDATE recoveries SET stored_bytes = 4321, metadata = NULL WHERE handle = 'ccr_00000000000000000000000000000001'");
  check("foreign update");
  auto gc = store->Gc(3600, false);  // removes the 2020 row
  ASSERT_TRUE(gc.ok());
  EXPECT_EQ(gc->removed, 1u);
  check("gc");
  EXPECT_EQ(static_cast<int64_t>(gc->storage_bytes), SummedUsage(raw));
}

TEST(RecoveryStore, StoreWithoutUsageTotalGetsItAndGcRepairsIt) {
  TempDir dir;
  {
    auto store = MustOpen(dir.db());
    ASSERT_TRUE(store);
    ASSERT_TRUE(Put(*store, CiText(9000)).ok());
    ASSERT_TRUE(Put(*store, RandomBytes(5000, 1), Info("log", 1, 1, "m")).ok());
  }
  {
    // As a store written by the previous version: no table, no triggers.
    RawDb raw(dir.db());
    for (const char* t : {"record_in", "record_out", "record_change", "partial_in", "partial_out", "partial_change"}) {
      raw.Exec(std::string("DROP TRIGGER usage_total_") + t);
    }
    raw.Exec("DROP TABLE usage_total");
  }
  RawDb raw(dir.db());
  EXPECT_EQ(raw.Int("SELECT count(*) FROM sqlite_master WHERE name = 'usage_total'"), 0);
  auto store = MustOpen(dir.db());  // adds it, with the sum of the rows already there
  ASSERT_TRUE(store);
  EXPECT_EQ(raw.Int("SELECT bytes FROM usage_total WHERE id = 1"), SummedUsage(raw));
  EXPECT_GT(SummedUsage(raw), 0);
  // A total gone wrong (a hand edit) is set right by the next gc that deletes something.
  raw.Exec("UPDATE usage_total SET bytes = 7 WHERE id = 1");
  raw.Exec("INSERT INTO chunks VALUES ('ccr_ffffffffffffffffffffffffffffffff', 0, x'00')");  // an orphan
  auto gc = store->Gc(std::nullopt, false);
  ASSERT_TRUE(gc.ok());
  EXPECT_EQ(gc->orphan_chunks, 1u);
  EXPECT_EQ(raw.Int("SELECT bytes FROM usage_total WHERE id = 1"), SummedUsage(raw));
  // A missing row falls back to the sum (and the capacity check keeps working).
  raw.Exec("DELETE FROM usage_total");
  auto stats = store->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(static_cast<int64_t>(stats->storage_bytes), SummedUsage(raw));
  EXPECT_TRUE(Put(*store, CiText(100)).ok());
}

// Chunk rows in a rowid table (docs/DECISIONS.md, "Chunk rows in a rowid table"): new stores
// have that layout; a store with the layout of earlier versions (WITHOUT ROWID) keeps every
// record when its rows are moved, by a writable open up to 32 MiB stored or by gc at any size,
// and works unmoved when moving fails.
constexpr char kOldLayout[] =
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'chunks' AND sql LIKE '%WITHOUT ROWID%'";

// Turns a store's chunk table back into the layout of earlier versions, rows and all.
void ToOldChunkLayout(RawDb& raw) {
  raw.Exec(
      "BEGIN;"
      "ALTER TABLE chunks RENAME TO chunks_new;"
      "CREATE TABLE chunks (handle TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL,"
      " PRIMARY KEY (handle, seq)) WITHOUT ROWID;"
      "INSERT INTO chunks SELECT handle, seq, data FROM chunks_new;"
      "DROP TABLE chunks_new;"
      "COMMIT;");
  EXPECT_EQ(raw.Int(kOldLayout), 1);
}

// What a store holds, for comparing before and after a move: every chunk row's key and the
// hash of its bytes, in key order, and the kept capacity total.
std::string ChunkRowsDigest(RawDb& raw) {
  return raw.Text(
             "SELECT group_concat(handle || ':' || seq || ':' || length(data) || ':' || hex(substr(data, 1, 8))"
             " || hex(substr(data, -8)), ',') FROM (SELECT * FROM chunks ORDER BY handle, seq)") +
         "|" + std::to_string(raw.Int("SELECT bytes FROM usage_total WHERE id = 1"));
}

struct LayoutFixture {
  TempDir dir;
  std::vector<std::pair<std::string, std::string>> records;  // handle, original
  std::string partial_id;
  std::string partial_text;

  // Records of one and of four chunk rows, a synced partial record, an orphan chunk row.
  void Fill() {
    auto store = MustOpen(dir.db());
    ASSERT_TRUE(store);
    for (std::string data : {CiText(20000), RandomBytes((3 << 20) + 5000, 17), std::string("a")}) {
      auto h = Put(*store, data);
      ASSERT_TRUE(h.ok()) << h.status().message();
      records.emplace_back(*h, data);
    }
    auto w = store->BeginStreamRecord("tail -f x.log");
    ASSERT_TRUE(w.ok());
    partial_text = CiText(5000);
    ASSERT_TRUE((*w)->Append(partial_text).ok());
    ASSERT_TRUE((*w)->Sync().ok());
    partial_id = (*w)->partial_id();
    w->reset();  // without Commit or Abandon: the partial record stays (as a killed writer's)
    RawDb raw(dir.db());
    raw.Exec("INSERT INTO chunks VALUES ('ccr_eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee', 0, x'0011')");
    EXPECT_EQ(raw.Int(kOldLayout), 0);
  }

  void ExpectRecords(RecoveryStore& store) {
    for (const auto& [h, data] : records) {
      StringSink out;
      Status s = store.Get(h, out);
      ASSERT_TRUE(s.ok()) << s.message();
      EXPECT_EQ(out.data(), data);
    }
    EXPECT_EQ(GetPartialOrDie(store, partial_id), partial_text);
  }
};

TEST(ChunkLayout, NewStoreKeepsChunkRowsInARowidTable) {
  LayoutFixture f;
  f.Fill();
  RawDb raw(f.dir.db());
  EXPECT_EQ(raw.Int(kOldLayout), 0);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'chunks'"), 1);
  // The key is the (handle, seq) index; the rows themselves are keyed by rowid.
  EXPECT_EQ(raw.Int("SELECT count(*) FROM pragma_index_list('chunks') WHERE origin = 'pk'"), 1);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM chunks WHERE rowid > 0"), raw.Int("SELECT count(*) FROM chunks"));
  auto store = MustOpen(f.dir.db());
  f.ExpectRecords(*store);
}

TEST(ChunkLayout, OldLayoutIsMovedOnOpenAndKeepsEveryRow) {
  LayoutFixture f;
  f.Fill();
  std::string before;
  {
    RawDb raw(f.dir.db());
    ToOldChunkLayout(raw);
    before = ChunkRowsDigest(raw);
  }
  {
    // Read-only use moves nothing.
    StoreOptions o;
    o.path = f.dir.db();
    o.read_only = true;
    auto ro = OpenSqliteStore(o);
    ASSERT_TRUE(ro.ok()) << ro.status().message();
    f.ExpectRecords(**ro);
    RawDb raw(f.dir.db());
    EXPECT_EQ(raw.Int(kOldLayout), 1);
  }
  auto store = MustOpen(f.dir.db());
  ASSERT_TRUE(store);
  RawDb raw(f.dir.db());
  EXPECT_EQ(raw.Int(kOldLayout), 0);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM sqlite_master WHERE name LIKE 'chunks_%'"), 0);
  EXPECT_EQ(ChunkRowsDigest(raw), before);  // the orphan row too: gc decides about it
  f.ExpectRecords(*store);
  EXPECT_TRUE(Put(*store, CiText(300)).ok());
  auto gc = store->Gc(std::nullopt, false);
  ASSERT_TRUE(gc.ok());
  EXPECT_EQ(gc->orphan_chunks, 1u);
  EXPECT_EQ(static_cast<int64_t>(gc->storage_bytes), SummedUsage(raw));
}

TEST(ChunkLayout, LargeOldStoreWorksUnmovedUntilGcMovesIt) {
  LayoutFixture f;
  f.Fill();
  RawDb raw(f.dir.db());
  ToOldChunkLayout(raw);
  // As if it stored 40 MiB: more than an open moves.
  raw.Exec("UPDATE usage_total SET bytes = " + std::to_string(int64_t{40} << 20) + " WHERE id = 1");
  auto store = MustOpen(f.dir.db());
  ASSERT_TRUE(store);
  EXPECT_EQ(raw.Int(kOldLayout), 1);
  f.ExpectRecords(*store);
  auto h = Put(*store, RandomBytes((1 << 20) + 10, 23));  // two rows, into the old layout
  ASSERT_TRUE(h.ok()) << h.status().message();
  f.records.emplace_back(*h, RandomBytes((1 << 20) + 10, 23));
  f.ExpectRecords(*store);
  const int64_t rows = raw.Int("SELECT count(*) FROM chunks");
  auto dry = store->Gc(std::nullopt, /*dry_run=*/true);
  ASSERT_TRUE(dry.ok());
  EXPECT_EQ(raw.Int(kOldLayout), 1);  // a dry run changes nothing
  raw.Exec("UPDATE usage_total SET bytes = " + std::to_string(SummedUsage(raw)) + " WHERE id = 1");  // the truth again
  auto gc = store->Gc(std::nullopt, false);
  ASSERT_TRUE(gc.ok()) << gc.status().message();
  EXPECT_EQ(raw.Int(kOldLayout), 0);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM chunks"), rows - 1);  // less the orphan
  f.ExpectRecords(*store);
  EXPECT_EQ(raw.Int("SELECT bytes FROM usage_total WHERE id = 1"), SummedUsage(raw));
}

TEST(ChunkLayout, MoveThatFailsLeavesTheOldLayoutWorking) {
  LayoutFixture f;
  f.Fill();
  int64_t pages = 0;
  {
    RawDb raw(f.dir.db());
    ToOldChunkLayout(raw);
    raw.Exec("VACUUM");  // no free pages left for the copy to use
    raw.Exec("PRAGMA wal_checkpoint(TRUNCATE)");
    pages = raw.Int("PRAGMA page_count");
    EXPECT_EQ(raw.Int("PRAGMA freelist_count"), 0);
  }
  {
    // Room for small writes, not for a copy of the 3 MiB record's rows: the move fails (full).
    StoreOptions o;
    o.path = f.dir.db();
    o.max_page_count = static_cast<uint64_t>(pages + 64);
    auto store = OpenSqliteStore(o);
    ASSERT_TRUE(store.ok()) << store.status().message();
    RawDb raw(f.dir.db());
    EXPECT_EQ(raw.Int(kOldLayout), 1);
    f.ExpectRecords(**store);
    auto h = Put(**store, "small enough");
    ASSERT_TRUE(h.ok()) << h.status().message();
    f.records.emplace_back(*h, "small enough");
    f.ExpectRecords(**store);
  }
  auto store = MustOpen(f.dir.db());  // room again: moved
  RawDb raw(f.dir.db());
  EXPECT_EQ(raw.Int(kOldLayout), 0);
  f.ExpectRecords(*store);
}

// ---- Opened on a thread of its own (BackgroundOpenedStore, `compress`; issue 19) ----

// A store that cannot be opened (its directory is a regular file): a record begun while the
// open is still running (held by the test hook) is framed, and its Commit fails with the
// open's own error, as every other call does; one begun after the failure is refused at once
// with it. Nothing is stored.
TEST(BackgroundOpenedStore, FailedOpenFailsTheCommitWithTheOpenError) {
  TempDir dir;
  const std::string file = dir.path() + "/not-a-directory";
  std::ofstream(file) << "x";
  StoreOptions o;
  o.path = file + "/ccr.db";
  const auto direct = OpenRecoveryStore(o);
  ASSERT_FALSE(direct.ok());
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  SetBackgroundOpenHookForTest([released] { (void)released.wait_for(std::chrono::seconds(20)); });
  auto opening = OpenRecoveryStoreInBackground(o);
  OpeningStore& store = *opening;
  const std::string data = CiText(10000);
  auto w = store.BeginRecord();
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_TRUE((*w)->Append(data).ok());
  release.set_value();
  const Status committed = (*w)->Commit(HandleOf(data), Info());
  SetBackgroundOpenHookForTest(nullptr);
  EXPECT_FALSE(committed.ok());
  EXPECT_EQ(committed.message(), direct.status().message());
  EXPECT_EQ(store.Wait(), nullptr);
  EXPECT_EQ(store.open_status().message(), direct.status().message());
  auto after = store.BeginRecord();
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.status().message(), direct.status().message());
  StringSink sink;
  EXPECT_EQ(store.Get(HandleOf(data), sink).message(), direct.status().message());
  EXPECT_EQ(store.Stats().status().message(), direct.status().message());
  EXPECT_TRUE(sink.data().empty());
}

// Records begun before the open has ended, several of them, in pieces, are stored by the
// opened store: the same bytes come back through the wrapper and through a second open.
TEST(BackgroundOpenedStore, RecordsFramedWhileOpeningAreStoredAtCommit) {
  TempDir dir;
  StoreOptions o;
  o.path = dir.db();
  std::vector<std::string> originals = {CiText(1), CiText(5000), RandomBytes(300000, 7)};
  std::vector<std::string> handles;
  {
    auto opening = OpenRecoveryStoreInBackground(o);
    OpeningStore& store = *opening;
    for (const std::string& data : originals) {
      auto w = store.BeginRecord();
      ASSERT_TRUE(w.ok()) << w.status().message();
      for (size_t at = 0; at < data.size(); at += 4096) {
        ASSERT_TRUE((*w)->Append(std::string_view(data).substr(at, 4096)).ok());
      }
      handles.push_back(HandleOf(data));
      ASSERT_TRUE((*w)->Commit(handles.back(), Info()).ok());
    }
    ASSERT_NE(store.Wait(), nullptr);
    EXPECT_TRUE(store.open_status().ok());
    for (size_t i = 0; i < originals.size(); ++i) {
      StringSink sink;
      ASSERT_TRUE(store.Get(handles[i], sink).ok());
      EXPECT_EQ(sink.data(), originals[i]);
    }
  }
  auto again = MustOpen(dir.db());
  ASSERT_TRUE(again);
  for (size_t i = 0; i < originals.size(); ++i) {
    StringSink sink;
    ASSERT_TRUE(again->Get(handles[i], sink).ok());
    EXPECT_EQ(sink.data(), originals[i]);
  }
  auto stats = again->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->totals.count, originals.size());
}

// A zstd level the store would refuse is refused when the record begins.
TEST(BackgroundOpenedStore, RefusesTheZstdLevelTheStoreRefuses) {
  TempDir dir;
  StoreOptions o;
  o.path = dir.db();
  o.zstd_level = 0;
  ASSERT_FALSE(OpenRecoveryStore(o).ok());
  auto opening = OpenRecoveryStoreInBackground(o);
  OpeningStore& store = *opening;
  EXPECT_FALSE(store.BeginRecord().ok());
  EXPECT_EQ(store.Wait(), nullptr);
}

// The record is framed while the open is still running: the begin and the appends do not wait
// for it (the open is held until they are done), the commit does.
TEST(BackgroundOpenedStore, BeginAndAppendDoNotWaitForTheOpen) {
  TempDir dir;
  StoreOptions o;
  o.path = dir.db();
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> appended{false};
  std::atomic<bool> appended_before_open{false};
  SetBackgroundOpenHookForTest([&] {
    (void)released.wait_for(std::chrono::seconds(20));
    appended_before_open = appended.load();
  });
  auto opening = OpenRecoveryStoreInBackground(o);
  const std::string data = CiText(200000);
  auto w = opening->BeginRecord();
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_TRUE((*w)->Append(data).ok());
  appended = true;
  release.set_value();
  EXPECT_TRUE((*w)->Commit(HandleOf(data), Info()).ok());
  SetBackgroundOpenHookForTest(nullptr);
  EXPECT_TRUE(appended_before_open.load());
  StringSink sink;
  ASSERT_TRUE(opening->Get(HandleOf(data), sink).ok());
  EXPECT_EQ(sink.data(), data);
}

}  // namespace
}  // namespace caveman
