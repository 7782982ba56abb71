// store check / store salvage (store/store_check.h).
#include "store/store_check.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <optional>

#include "store/internal/sqlite_util.h"
#include "store/internal/store_files.h"
#include "store/internal/zstd_frame.h"
#include "stream/sha256.h"

namespace caveman {
namespace {

using internal::Db;
using internal::Statement;

constexpr int kMaxIntegrityMessages = 100;
// How far past an unreadable page rowids are probed when the largest rowid cannot be read.
constexpr int64_t kMaxSkippedRowids = 65536;

Status OpenError(const std::string& m) { return Status::IoError("cannot open recovery store: " + m); }

// Copies `from` to `to` (created 0600, must not exist). Errors: kIoError naming the file.
Status CopyFile(const std::string& from, const std::string& to) {
  int in = open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (in < 0) return Status::IoError(from + ": " + std::strerror(errno));
  int out = open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out < 0) {
    int e = errno;
    close(in);
    return Status::IoError(to + ": " + std::strerror(e));
  }
  char buf[1 << 16];
  Status s;
  for (;;) {
    ssize_t n = read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      s = Status::IoError(from + ": " + std::strerror(errno));
      break;
    }
    if (n == 0) break;
    for (ssize_t at = 0; at < n;) {
      ssize_t w = write(out, buf + at, static_cast<size_t>(n - at));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        s = Status::IoError(to + ": " + std::strerror(errno));
        break;
      }
      at += w;
    }
    if (!s.ok()) break;
  }
  close(in);
  if (close(out) != 0 && s.ok()) s = Status::IoError(to + ": " + std::strerror(errno));
  return s;
}

// The source database, opened so that nothing of the original files can change.
class Source {
 public:
  ~Source() {
    db_.reset();
    if (!tmp_dir_.empty()) {
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) unlink((tmp_dir_ + "/ccr.db" + suffix).c_str());
      rmdir(tmp_dir_.c_str());
    }
  }

  Status Open(const std::string& path) {
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) return OpenError(path + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return OpenError(path + ": not a regular file");
    std::string uri;
    struct stat wal;
    if (lstat((path + "-wal").c_str(), &wal) == 0 && S_ISREG(wal.st_mode) && wal.st_size > 0) {
      // Records may live only in the WAL: read a private copy of both files, where SQLite can
      // build the -shm it needs.
      const char* tmp = std::getenv("TMPDIR");
      std::string templ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/caveman-check-XXXXXX";
      if (mkdtemp(templ.data()) == nullptr)
        return OpenError("temporary directory: " + std::string(std::strerror(errno)));
      tmp_dir_ = templ;
      std::string copy = tmp_dir_ + "/ccr.db";
      Status s = CopyFile(path, copy);
      if (s.ok()) s = CopyFile(path + "-wal", copy + "-wal");
      if (!s.ok()) return OpenError(s.message());
      uri = internal::SqliteFileUri(copy) + "?mode=ro";
    } else {
      uri = internal::SqliteFileUri(path) + "?mode=ro&immutable=1";
    }
    auto db = Db::Open(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOFOLLOW);
    if (!db.ok()) return OpenError(db.status().message());
    db_ = std::move(db).value();
    // A file shorter than its header says (truncated) is refused as corrupt unless the schema
    // is "writable"; on a read-only connection this only lets the readable pages be read.
    // cell_size_check makes damaged b-tree pages fail as corrupt instead of being misread.
    Status s = db_->Exec("PRAGMA writable_schema=ON; PRAGMA cell_size_check=ON;");
    if (!s.ok()) return OpenError(s.message());
    auto version = db_->QueryInt("PRAGMA user_version");
    if (!version.ok()) return OpenError(version.status().message());
    version_ = *version;
    // Versions 1-4 share the record, chunk and partial tables check reads (4 added the
    // ledger, which check and salvage leave alone).
    if (version_ < 1 || version_ > 4) return OpenError("unsupported schema version " + std::to_string(version_));
    return Status::OK();
  }

  Db& db() { return *db_; }
  int64_t version() const { return version_; }

 private:
  std::unique_ptr<Db> db_;
  std::string tmp_dir_;
  int64_t version_ = 0;
};

// Counts, hashes and forwards a decoded original; fails once it grows past `limit`.
class HashingSink final : public ByteSink {
 public:
  HashingSink(ByteSink* next, uint64_t limit) : next_(next), limit_(limit) {}
  Status Write(std::string_view data) override {
    if (data.size() > limit_ - bytes_) return Status::Corruption(internal::kCorruptMessage);
    bytes_ += data.size();
    sha_.Update(data);
    return next_ != nullptr ? next_->Write(data) : Status::OK();
  }
  uint64_t bytes() const { return bytes_; }
  std::array<uint8_t, 32> Digest() { return sha_.Final(); }

 private:
  ByteSink* next_;
  uint64_t limit_;
  uint64_t bytes_ = 0;
  Sha256 sha_;
};

struct RecordRow {
  std::string handle;  // or the partial id
  std::string key;     // chunk key
  uint64_t original_bytes = 0;
  uint64_t stored_bytes = 0;
  RecordInfo info;
  // Partial records only.
  std::string prefix_sha256;
  int64_t rows = -1;
};

// Decodes the chunk rows of `row` (one lookup by key per row) into `out` and verifies them.
// Returns false when anything does not match or cannot be read.
bool DecodeRecord(Db& db, const RecordRow& row, bool partial, ByteSink* out) {
  auto decoder = internal::FrameDecoder::New();
  if (!decoder.ok()) return false;
  auto st = db.Prepare("SELECT data FROM chunks WHERE handle = ?1 AND seq = ?2");
  if (!st.ok()) return false;
  HashingSink sink(out, row.original_bytes);
  uint64_t total = 0;
  for (int64_t seq = 0;; ++seq) {
    if (partial ? seq >= row.rows : total >= row.stored_bytes) break;
    st->Reset();
    if (!st->BindText(1, row.key).ok() || !st->BindInt(2, seq).ok()) return false;
    auto found = st->Step();
    if (!found.ok() || !*found) return false;
    std::string_view data = st->ColumnBlob(0);
    total += data.size();
    if (total > row.stored_bytes) return false;
    if (!(*decoder)->Write(data, sink).ok()) return false;
  }
  st->Reset();
  if (total != row.stored_bytes || sink.bytes() != row.original_bytes) return false;
  if (partial) {
    return (*decoder)->FinishPrefix().ok() && Sha256::Hex(sink.Digest()) == row.prefix_sha256;
  }
  return (*decoder)->Finish().ok() && HandleFromDigest(sink.Digest()) == row.handle;
}

// Calls `fn` for every row of `table` that can be read, in rowid order. Where the scan hits
// an unreadable page, the following rowids are looked up one by one (each lookup reads only
// the path to its own leaf) up to the largest rowid, or kMaxSkippedRowids further when that
// cannot be read either; every lookup that fails adds one to *unreadable (so it is an upper
// bound of the rows lost: a rowid in a damaged page fails whether or not it existed).
template <class Fn>
void ForEachRow(Db& db, const std::string& table, const std::string& columns, uint64_t* unreadable, Fn fn) {
  auto next = db.Prepare("SELECT rowid, " + columns + " FROM " + table + " WHERE rowid > ?1 ORDER BY rowid LIMIT 1");
  auto exact = db.Prepare("SELECT rowid, " + columns + " FROM " + table + " WHERE rowid = ?1");
  if (!next.ok() || !exact.ok()) {
    ++*unreadable;  // the schema itself is unreadable
    return;
  }
  auto max = db.QueryInt("SELECT max(rowid) FROM " + table);
  int64_t last = 0;
  for (;;) {
    next->Reset();
    if (!next->BindInt(1, last).ok()) return;
    auto row = next->Step();
    if (row.ok() && !*row) return;
    if (row.ok()) {
      last = next->ColumnInt(0);
      fn(*next);
      continue;
    }
    next->Reset();
    const int64_t end = max.ok() ? *max : last + kMaxSkippedRowids;
    bool resumed = false;
    for (int64_t r = last + 1; r <= end && !resumed; ++r) {
      exact->Reset();
      if (!exact->BindInt(1, r).ok()) return;
      auto got = exact->Step();
      if (!got.ok()) {
        ++*unreadable;
      } else if (*got) {
        last = r;
        fn(*exact);
        resumed = true;
      }
    }
    exact->Reset();
    if (!resumed) return;
  }
}

std::string Columns(int64_t version) {
  std::string c =
      "handle, original_bytes, stored_bytes, content_type, compressor, tokens_before, tokens_after, metadata";
  c += version >= 2 ? ", coalesce(chunk_key, handle), coalesce(command, '')" : ", handle, ''";
  c += version >= 3 ? ", marker_map IS NOT NULL, marker_map" : ", 0, NULL";
  return c;
}

RecordRow ReadRecordRow(Statement& st) {
  RecordRow r;
  r.handle = std::string(st.ColumnText(1));
  r.original_bytes = static_cast<uint64_t>(std::max<int64_t>(0, st.ColumnInt(2)));
  r.stored_bytes = static_cast<uint64_t>(std::max<int64_t>(0, st.ColumnInt(3)));
  r.info.content_type = std::string(st.ColumnText(4));
  r.info.compressor = std::string(st.ColumnText(5));
  r.info.tokens_before = static_cast<uint64_t>(std::max<int64_t>(0, st.ColumnInt(6)));
  r.info.tokens_after = static_cast<uint64_t>(std::max<int64_t>(0, st.ColumnInt(7)));
  r.info.metadata = std::string(st.ColumnBlob(8));
  r.key = std::string(st.ColumnText(9));
  r.info.command = std::string(st.ColumnText(10));
  if (st.ColumnInt(11) != 0) r.info.marker_map = std::string(st.ColumnBlob(12));
  return r;
}

constexpr char kPartialColumns[] = "id, original_bytes, stored_bytes, prefix_sha256, next_seq, coalesce(command, '')";

RecordRow ReadPartialRow(Statement& st) {
  RecordRow r;
  r.handle = std::string(st.ColumnText(1));
  r.key = r.handle;
  r.original_bytes = static_cast<uint64_t>(std::max<int64_t>(0, st.ColumnInt(2)));
  r.stored_bytes = static_cast<uint64_t>(std::max<int64_t>(0, st.ColumnInt(3)));
  r.prefix_sha256 = std::string(st.ColumnText(4));
  r.rows = st.ColumnInt(5);
  r.info.command = std::string(st.ColumnText(6));
  return r;
}

void RunIntegrityCheck(Db& db, StoreCheckReport& report) {
  auto st = db.Prepare("PRAGMA integrity_check(" + std::to_string(kMaxIntegrityMessages) + ")");
  if (!st.ok()) {
    report.integrity = {"error: " + st.status().message()};
    return;
  }
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) {
      report.integrity.push_back("error: " + row.status().message());
      break;
    }
    if (!*row) break;
    report.integrity.emplace_back(st->ColumnText(0));
  }
  if (report.integrity.empty()) report.integrity = {"error: no result"};
}

// The shared walk of check and salvage: `on_record(row, partial)` decodes the record and
// returns whether it verified.
template <class Fn>
void Walk(Source& src, StoreCheckReport& report, Fn on_record) {
  RunIntegrityCheck(src.db(), report);
  ForEachRow(src.db(), "recoveries", Columns(src.version()), &report.unreadable_rows, [&](Statement& st) {
    RecordRow row = ReadRecordRow(st);
    ++report.records;
    if (on_record(row, false)) {
      ++report.ok;
    } else {
      report.corrupt.push_back(row.handle);
    }
  });
  if (src.version() < 2) return;
  ForEachRow(src.db(), "partials", kPartialColumns, &report.unreadable_rows, [&](Statement& st) {
    RecordRow row = ReadPartialRow(st);
    ++report.partials;
    if (on_record(row, true)) {
      ++report.partials_ok;
    } else {
      report.corrupt_partials.push_back(row.handle);
    }
  });
}

// Feeds a decoded original into a record writer.
template <class Writer>
class WriterSink final : public ByteSink {
 public:
  explicit WriterSink(Writer& w) : w_(w) {}
  Status Write(std::string_view data) override { return w_.Append(data); }

 private:
  Writer& w_;
};

}  // namespace

Result<StoreCheckReport> CheckStore(const std::string& path) {
  Source src;
  CAVEMAN_RETURN_IF_ERROR(src.Open(path));
  StoreCheckReport report;
  Walk(src, report, [&](const RecordRow& row, bool partial) {
    // Statements of the walk stay open across the lookups: all reads share one snapshot.
    return DecodeRecord(src.db(), row, partial, nullptr);
  });
  return report;
}

Result<SalvageReport> SalvageStore(const std::string& path, const StoreOptions& target) {
  for (const char* suffix : {"", "-wal", "-shm"}) {
    struct stat st;
    if (lstat((target.path + suffix).c_str(), &st) == 0 || errno != ENOENT) {
      return Status::InvalidArgument("salvage target exists (give a new path): " + target.path + suffix);
    }
  }
  Source src;
  CAVEMAN_RETURN_IF_ERROR(src.Open(path));
  StoreOptions to = target;
  to.read_only = false;
  CAVEMAN_ASSIGN_OR_RETURN(auto dest, OpenSqliteStore(to));
  SalvageReport report;
  Walk(src, report.check, [&](const RecordRow& row, bool partial) {
    if (!partial) {
      auto w = dest->BeginRecord();
      if (!w.ok()) {
        report.lost.push_back(row.handle);
        return DecodeRecord(src.db(), row, false, nullptr);
      }
      WriterSink<RecordWriter> sink(**w);
      bool ok = DecodeRecord(src.db(), row, false, &sink);
      // Commit checks the handle against the bytes once more.
      if (ok && (*w)->Commit(row.handle, row.info).ok()) {
        ++report.copied;
      } else {
        (*w)->Abandon();
        report.lost.push_back(row.handle);
      }
      return ok;
    }
    auto w = dest->BeginStreamRecord(row.info.command);
    if (!w.ok()) {
      report.lost.push_back(row.handle);
      return DecodeRecord(src.db(), row, true, nullptr);
    }
    WriterSink<StreamRecordWriter> sink(**w);
    bool ok = DecodeRecord(src.db(), row, true, &sink);
    if (ok && (*w)->Sync().ok()) {
      ++report.partials_copied;
      report.partial_ids.emplace_back(row.handle, (*w)->partial_id());
      // Destroyed without Commit/Abandon: the synced partial record stays.
    } else {
      (*w)->Abandon();
      report.lost.push_back(row.handle);
    }
    return ok;
  });
  return report;
}

}  // namespace caveman
