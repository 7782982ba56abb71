// SQLite + zstd recovery store (§6). Schema and persisted format: store/README.md.
//
// Write path: RecordWriter::Append streams the original through one zstd frame into a Spool
// (memory, then a 0600 temp file), hashing alongside; Commit copies the frame into ≤ 1 MiB
// chunk rows and writes the recoveries row in one BEGIN IMMEDIATE transaction, so other
// connections see either the whole record or nothing (a killed writer leaves only an
// uncommitted WAL tail that SQLite discards).
// Read path: Get decompresses into a Spool and verifies everything before the first byte
// reaches the caller's sink.
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "store/internal/sqlite_util.h"
#include "store/internal/store_files.h"
#include "store/internal/timestamp.h"
#include "store/internal/zstd_frame.h"
#include "store/store.h"
#include "stream/sha256.h"
#include "stream/spool.h"

namespace caveman {
namespace {

using internal::Db;
using internal::Statement;

constexpr size_t kMaxChunkBytes = 1 << 20;  // §6.3: ≤ 1 MiB of compressed bytes per row
constexpr int kBusyTimeoutMs = 5000;        // §6.2
constexpr std::chrono::milliseconds kSchemaRetryLimit{30000};  // §6.2
// Writers also retry past the busy timeout: sixteen writers of a few MiB each on a loaded
// machine can queue longer than 5 s, and failing would only turn into a pass-through.
constexpr std::chrono::milliseconds kWriteRetryLimit{30000};
constexpr std::chrono::milliseconds kInitialBackoff{10};
constexpr std::chrono::milliseconds kMaxBackoff{1000};
constexpr int64_t kSchemaVersion = 1;
constexpr int kPageSize = 65536;

constexpr char kMemoryPath[] = ":memory:";

constexpr char kCreateSchemaSql[] =
    "CREATE TABLE IF NOT EXISTS recoveries ("
    "  handle         TEXT PRIMARY KEY,"
    "  created_at     TEXT NOT NULL,"
    "  content_type   TEXT NOT NULL,"
    "  compressor     TEXT NOT NULL,"
    "  tokens_before  INTEGER NOT NULL,"
    "  tokens_after   INTEGER NOT NULL,"
    "  original_bytes INTEGER NOT NULL,"
    "  stored_bytes   INTEGER NOT NULL,"
    "  metadata       BLOB"
    ");"
    "CREATE TABLE IF NOT EXISTS chunks ("
    "  handle TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL,"
    "  PRIMARY KEY (handle, seq)"
    ") WITHOUT ROWID;"
    "PRAGMA user_version = 1;";

// Size of a record as counted against the capacity (§6.5).
constexpr char kUsedBytesSql[] =
    "SELECT coalesce(sum(stored_bytes + coalesce(length(metadata), 0)), 0) FROM recoveries";

Status NotFound() { return Status::NotFound(internal::kNotFoundMessage); }
Status Corrupt() { return Status::Corruption(internal::kCorruptMessage); }
Status BudgetExceeded() { return Status::ResourceExhausted(internal::kBudgetExceededMessage); }

Status OpenError(const Status& s) {
  return Status::IoError("cannot open recovery store: " + s.message());
}

int64_t ToSqlInt(uint64_t v) { return v > INT64_MAX ? INT64_MAX : static_cast<int64_t>(v); }
uint64_t FromSqlInt(int64_t v) { return v < 0 ? 0 : static_cast<uint64_t>(v); }

// Runs `attempt` again while it fails with SQLITE_BUSY/LOCKED, sleeping with a doubling
// back-off, until `limit` has passed. `attempt` must leave no transaction open on failure.
template <class Fn>
Status RetryBusy(Db& db, std::chrono::milliseconds limit, Fn attempt) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  auto backoff = kInitialBackoff;
  for (;;) {
    db.ClearLastError();
    Status s = attempt();
    if (s.ok() || !db.last_busy()) return s;
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return s;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    std::this_thread::sleep_for(std::min(backoff, left));
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
}

// Ends whatever transaction is still open when a scope is left early (error paths).
class TxnGuard {
 public:
  explicit TxnGuard(Db& db) : db_(db) {}
  ~TxnGuard() { db_.RollbackQuietly(); }
  TxnGuard(const TxnGuard&) = delete;
  TxnGuard& operator=(const TxnGuard&) = delete;

 private:
  Db& db_;
};

// Receives the decompressed original: counts, hashes and spools it, and stops as soon as it
// grows past the recorded length (so a corrupt record cannot fill the disk).
class VerifyingSink final : public ByteSink {
 public:
  VerifyingSink(Spool& spool, uint64_t limit) : spool_(spool), limit_(limit) {}
  Status Write(std::string_view data) override {
    if (data.size() > limit_ - bytes_) return Corrupt();
    bytes_ += data.size();
    sha_.Update(data);
    return spool_.Write(data);
  }
  uint64_t bytes() const { return bytes_; }
  std::string Handle() { return HandleFromDigest(sha_.Final()); }

 private:
  Spool& spool_;
  uint64_t limit_;
  uint64_t bytes_ = 0;
  Sha256 sha_;
};

class SqliteStore;

class SqliteRecordWriter final : public RecordWriter {
 public:
  SqliteRecordWriter(SqliteStore* store, std::unique_ptr<internal::FrameEncoder> enc,
                     SpoolOptions spool_options)
      : store_(store), enc_(std::move(enc)), frame_(std::move(spool_options)) {}

  Status Append(std::string_view data) override;
  Status Commit(const std::string& handle, const RecordInfo& info) override;
  void Abandon() override {
    finished_ = true;
    enc_.reset();
    frame_.Clear();
  }

 private:
  SqliteStore* store_;
  std::unique_ptr<internal::FrameEncoder> enc_;
  Spool frame_;
  Sha256 sha_;
  uint64_t original_bytes_ = 0;
  bool finished_ = false;
};

class SqliteStore final : public RecoveryStore {
 public:
  static Result<std::unique_ptr<SqliteStore>> Open(const StoreOptions& options, bool memory);

  Result<std::unique_ptr<RecordWriter>> BeginRecord() override;
  Status Get(std::string_view handle, ByteSink& out) override;
  Result<std::string> GetMetadata(std::string_view handle) override;
  Result<StoreStats> Stats() override;
  Result<GcResult> Gc(std::optional<uint64_t> older_than_seconds, bool dry_run) override;

  // The writer's half of Commit: `frame` holds one complete zstd frame of `original_bytes`.
  Status Put(const std::string& handle, const RecordInfo& info, const Spool& frame,
             uint64_t original_bytes);

  SpoolOptions spool_options() const {
    SpoolOptions o;
    o.memory_limit = options_.spool_memory_limit;
    return o;
  }

 private:
  SqliteStore(StoreOptions options, std::unique_ptr<Db> db, bool memory)
      : options_(std::move(options)), db_(std::move(db)), memory_(memory) {}

  // An existing store we may not write (read-only directory, file or file system): retrieve
  // and stats still work; BeginRecord and Gc fail with kNotSupported.
  static Result<std::unique_ptr<SqliteStore>> OpenReadOnly(const StoreOptions& options);

  Status InitSchema();
  Status PutOnce(const std::string& handle, const RecordInfo& info, const Spool& frame,
                 uint64_t original_bytes);
  Status InsertChunks(const std::string& handle, const Spool& frame);
  Status ReadVerified(std::string_view handle, Spool& original);
  Result<uint64_t> UsedBytes();

  StoreOptions options_;
  std::unique_ptr<Db> db_;
  bool memory_;
  bool read_only_ = false;
};

constexpr const char* kReadOnlyMessage = "recovery store is read-only (no write permission)";

// ---------------------------------------------------------------------------------------
// Writer

Status SqliteRecordWriter::Append(std::string_view data) {
  if (finished_) return Status::Internal("ccr: record writer used after Commit or Abandon");
  sha_.Update(data);
  original_bytes_ += data.size();
  Status s = enc_->Write(data, frame_);
  if (!s.ok()) Abandon();
  return s;
}

Status SqliteRecordWriter::Commit(const std::string& handle, const RecordInfo& info) {
  if (finished_) return Status::Internal("ccr: record writer used after Commit or Abandon");
  Status s = enc_->Finish(frame_);
  if (s.ok() && !IsWellFormedHandle(handle)) {
    s = Status::InvalidArgument("ccr: malformed recovery handle: " + handle);
  }
  // A record stored under the wrong handle could never be verified on Get, so a lossy
  // result pointing at it would be unrecoverable: refuse it here instead.
  if (s.ok() && HandleFromDigest(sha_.Final()) != handle) {
    s = Status::InvalidArgument("ccr: handle does not match the recorded bytes: " + handle);
  }
  if (s.ok()) s = store_->Put(handle, info, frame_, original_bytes_);
  Abandon();
  return s;
}

// ---------------------------------------------------------------------------------------
// Open

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const StoreOptions& options, bool memory) {
  if (options.zstd_level < internal::kMinZstdLevel || options.zstd_level > internal::kMaxZstdLevel) {
    return OpenError(Status::InvalidArgument("zstd level must be an integer from 1 to 19"));
  }
  if (options.max_bytes == 0) {
    return OpenError(Status::InvalidArgument("capacity must be a positive number of bytes"));
  }
  if (!memory && options.path.empty()) {
    return OpenError(Status::InvalidArgument("empty database path"));
  }
  std::string path = memory ? kMemoryPath : options.path;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  if (memory) {
    flags |= SQLITE_OPEN_MEMORY;
  } else {
    Status files = internal::PrepareDbFiles(path);
    if (!files.ok()) return OpenError(files);
    flags |= SQLITE_OPEN_NOFOLLOW;
  }
  auto db = Db::Open(path, flags);
  Status s = db.status();
  std::unique_ptr<SqliteStore> store;
  if (s.ok()) {
    store.reset(new SqliteStore(options, std::move(db).value(), memory));
    sqlite3_busy_timeout(store->db_->raw(), kBusyTimeoutMs);
    s = store->InitSchema();
  }
  if (s.ok()) s = store->db_->Exec("PRAGMA synchronous=NORMAL; PRAGMA secure_delete=FAST;");
  if (s.ok() && options.max_page_count > 0) {
    s = store->db_->Exec("PRAGMA max_page_count=" + std::to_string(options.max_page_count));
  }
  if (s.ok() && !memory) s = internal::SecureCompanions(path);
  if (!s.ok()) {
    if (!memory && !internal::DbIsWritable(path)) {
      store.reset();
      auto ro = OpenReadOnly(options);
      if (ro.ok()) return ro;
    }
    return OpenError(s);
  }
  return store;
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::OpenReadOnly(const StoreOptions& options) {
  // Without a -wal file no writer is active (a writer creates it), so the database can be read
  // as immutable, which needs no -shm either; with one, SQLite reads it through the existing
  // -shm. Records are verified on Get, so a concurrent owner's write cannot yield wrong bytes.
  bool has_wal = internal::FileExists(options.path + "-wal");
  std::string uri = internal::SqliteFileUri(options.path) + (has_wal ? "?mode=ro" : "?mode=ro&immutable=1");
  CAVEMAN_ASSIGN_OR_RETURN(auto db, Db::Open(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOFOLLOW));
  std::unique_ptr<SqliteStore> store(new SqliteStore(options, std::move(db), /*memory=*/false));
  store->read_only_ = true;
  sqlite3_busy_timeout(store->db_->raw(), kBusyTimeoutMs);
  CAVEMAN_ASSIGN_OR_RETURN(int64_t version, store->db_->QueryInt("PRAGMA user_version"));
  if (version != kSchemaVersion) {
    return Status::NotSupported("unsupported schema version " + std::to_string(version));
  }
  return store;
}

Status SqliteStore::InitSchema() {
  // Only meaningful before the first table exists; a no-op on an existing database. It must
  // precede the switch to WAL, which writes the database header.
  CAVEMAN_RETURN_IF_ERROR(db_->Exec("PRAGMA page_size=" + std::to_string(kPageSize)));
  return RetryBusy(*db_, kSchemaRetryLimit, [&]() -> Status {
    TxnGuard guard(*db_);
    if (!memory_) {
      CAVEMAN_ASSIGN_OR_RETURN(std::string mode, db_->QueryText("PRAGMA journal_mode=WAL"));
      if (mode != "wal") return Status::IoError("cannot enable WAL mode (journal_mode " + mode + ")");
    }
    // Read first: an existing store needs no write lock to be opened.
    CAVEMAN_ASSIGN_OR_RETURN(int64_t version, db_->QueryInt("PRAGMA user_version"));
    if (version == kSchemaVersion) return Status::OK();
    if (version > kSchemaVersion) {
      return Status::NotSupported("unsupported schema version " + std::to_string(version));
    }
    CAVEMAN_RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
    CAVEMAN_ASSIGN_OR_RETURN(version, db_->QueryInt("PRAGMA user_version"));
    if (version == 0) CAVEMAN_RETURN_IF_ERROR(db_->Exec(kCreateSchemaSql));
    return db_->Exec("COMMIT");
  });
}

Result<std::unique_ptr<RecordWriter>> SqliteStore::BeginRecord() {
  if (read_only_) return Status::NotSupported(kReadOnlyMessage);
  CAVEMAN_ASSIGN_OR_RETURN(auto enc, internal::FrameEncoder::New(options_.zstd_level));
  return std::unique_ptr<RecordWriter>(
      std::make_unique<SqliteRecordWriter>(this, std::move(enc), spool_options()));
}

// ---------------------------------------------------------------------------------------
// Put

Result<uint64_t> SqliteStore::UsedBytes() {
  CAVEMAN_ASSIGN_OR_RETURN(int64_t used, db_->QueryInt(kUsedBytesSql));
  return FromSqlInt(used);
}

Status SqliteStore::Put(const std::string& handle, const RecordInfo& info, const Spool& frame,
                        uint64_t original_bytes) {
  return RetryBusy(*db_, kWriteRetryLimit, [&]() -> Status {
    TxnGuard guard(*db_);
    return PutOnce(handle, info, frame, original_bytes);
  });
}

Status SqliteStore::PutOnce(const std::string& handle, const RecordInfo& info,
                            const Spool& frame, uint64_t original_bytes) {
  // IMMEDIATE takes the write lock up front, so the capacity check below and the insert see
  // the same database even with other writers.
  CAVEMAN_RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
  const uint64_t capacity = options_.max_bytes;
  CAVEMAN_ASSIGN_OR_RETURN(uint64_t used, UsedBytes());
  const std::string now = internal::FormatRfc3339(internal::NowNanos());

  CAVEMAN_ASSIGN_OR_RETURN(
      Statement find,
      db_->Prepare("SELECT stored_bytes, coalesce(length(metadata), 0), tokens_before "
                   "FROM recoveries WHERE handle = ?1"));
  CAVEMAN_RETURN_IF_ERROR(find.BindText(1, handle));
  CAVEMAN_ASSIGN_OR_RETURN(bool exists, find.Step());

  if (exists) {
    // §6.5: the complete record stays; only its row is refreshed.
    const uint64_t old_stored = FromSqlInt(find.ColumnInt(0));
    const uint64_t old_meta = FromSqlInt(find.ColumnInt(1));
    const int64_t old_tokens_before = find.ColumnInt(2);
    find.Reset();
    const bool keep_meta = old_meta > 0;
    const bool replace_fields = !(info.tokens_before == 0 && old_tokens_before > 0);
    const uint64_t old_size = old_stored + old_meta;
    const uint64_t new_size = old_stored + (keep_meta ? old_meta : info.metadata.size());
    if (new_size > capacity || used - std::min(used, old_size) > capacity - new_size) {
      return BudgetExceeded();
    }
    CAVEMAN_ASSIGN_OR_RETURN(
        Statement upd,
        db_->Prepare("UPDATE recoveries SET created_at = ?2,"
                     " content_type = CASE WHEN ?3 THEN ?4 ELSE content_type END,"
                     " compressor = CASE WHEN ?3 THEN ?5 ELSE compressor END,"
                     " tokens_before = CASE WHEN ?3 THEN ?6 ELSE tokens_before END,"
                     " tokens_after = CASE WHEN ?3 THEN ?7 ELSE tokens_after END,"
                     " metadata = CASE WHEN ?8 THEN metadata ELSE ?9 END"
                     " WHERE handle = ?1"));
    CAVEMAN_RETURN_IF_ERROR(upd.BindText(1, handle));
    CAVEMAN_RETURN_IF_ERROR(upd.BindText(2, now));
    CAVEMAN_RETURN_IF_ERROR(upd.BindInt(3, replace_fields ? 1 : 0));
    CAVEMAN_RETURN_IF_ERROR(upd.BindText(4, info.content_type));
    CAVEMAN_RETURN_IF_ERROR(upd.BindText(5, info.compressor));
    CAVEMAN_RETURN_IF_ERROR(upd.BindInt(6, ToSqlInt(info.tokens_before)));
    CAVEMAN_RETURN_IF_ERROR(upd.BindInt(7, ToSqlInt(info.tokens_after)));
    CAVEMAN_RETURN_IF_ERROR(upd.BindInt(8, keep_meta ? 1 : 0));
    if (!info.metadata.empty()) CAVEMAN_RETURN_IF_ERROR(upd.BindBlob(9, info.metadata));
    CAVEMAN_RETURN_IF_ERROR(upd.Run());
    return db_->Exec("COMMIT");
  }
  find.Reset();

  const uint64_t stored = frame.size();
  const uint64_t new_size = stored + info.metadata.size();
  if (new_size < stored || new_size > capacity || used > capacity - new_size) {
    return BudgetExceeded();
  }
  CAVEMAN_RETURN_IF_ERROR(InsertChunks(handle, frame));
  CAVEMAN_ASSIGN_OR_RETURN(
      Statement ins,
      db_->Prepare("INSERT INTO recoveries (handle, created_at, content_type, compressor,"
                   " tokens_before, tokens_after, original_bytes, stored_bytes, metadata)"
                   " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"));
  CAVEMAN_RETURN_IF_ERROR(ins.BindText(1, handle));
  CAVEMAN_RETURN_IF_ERROR(ins.BindText(2, now));
  CAVEMAN_RETURN_IF_ERROR(ins.BindText(3, info.content_type));
  CAVEMAN_RETURN_IF_ERROR(ins.BindText(4, info.compressor));
  CAVEMAN_RETURN_IF_ERROR(ins.BindInt(5, ToSqlInt(info.tokens_before)));
  CAVEMAN_RETURN_IF_ERROR(ins.BindInt(6, ToSqlInt(info.tokens_after)));
  CAVEMAN_RETURN_IF_ERROR(ins.BindInt(7, ToSqlInt(original_bytes)));
  CAVEMAN_RETURN_IF_ERROR(ins.BindInt(8, ToSqlInt(stored)));
  if (!info.metadata.empty()) CAVEMAN_RETURN_IF_ERROR(ins.BindBlob(9, info.metadata));
  CAVEMAN_RETURN_IF_ERROR(ins.Run());
  return db_->Exec("COMMIT");
}

Status SqliteStore::InsertChunks(const std::string& handle, const Spool& frame) {
  // Rows without a record are never visible from a committed writer, but a damaged or
  // foreign database could hold some under this handle; they must not mix into the frame.
  CAVEMAN_ASSIGN_OR_RETURN(Statement del, db_->Prepare("DELETE FROM chunks WHERE handle = ?1"));
  CAVEMAN_RETURN_IF_ERROR(del.BindText(1, handle));
  CAVEMAN_RETURN_IF_ERROR(del.Run());

  CAVEMAN_ASSIGN_OR_RETURN(
      Statement ins, db_->Prepare("INSERT INTO chunks (handle, seq, data) VALUES (?1, ?2, ?3)"));
  std::string buf;
  int64_t seq = 0;
  for (uint64_t off = 0; off < frame.size(); off += kMaxChunkBytes, ++seq) {
    std::string_view piece;
    if (frame.in_memory()) {
      piece = frame.memory_view().substr(off, kMaxChunkBytes);
    } else {
      buf.clear();
      CAVEMAN_RETURN_IF_ERROR(frame.ReadRange(off, kMaxChunkBytes, &buf));
      piece = buf;
    }
    CAVEMAN_RETURN_IF_ERROR(ins.BindText(1, handle));
    CAVEMAN_RETURN_IF_ERROR(ins.BindInt(2, seq));
    CAVEMAN_RETURN_IF_ERROR(ins.BindBlob(3, piece));
    CAVEMAN_RETURN_IF_ERROR(ins.Run());
    ins.Reset();
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------------------
// Get

Status SqliteStore::Get(std::string_view handle, ByteSink& out) {
  if (!IsWellFormedHandle(handle)) return NotFound();
  Spool original(spool_options());
  Status s = RetryBusy(*db_, kWriteRetryLimit, [&]() -> Status {
    original.Clear();
    TxnGuard guard(*db_);
    return ReadVerified(handle, original);
  });
  CAVEMAN_RETURN_IF_ERROR(s);
  // Only a fully verified original reaches the caller.
  return original.CopyTo(out);
}

Status SqliteStore::ReadVerified(std::string_view handle, Spool& original) {
  // One read transaction: the record row and its chunks come from the same snapshot even if
  // gc or a writer commits meanwhile.
  CAVEMAN_RETURN_IF_ERROR(db_->Exec("BEGIN"));
  CAVEMAN_ASSIGN_OR_RETURN(
      Statement rec,
      db_->Prepare("SELECT original_bytes, stored_bytes FROM recoveries WHERE handle = ?1"));
  CAVEMAN_RETURN_IF_ERROR(rec.BindText(1, handle));
  CAVEMAN_ASSIGN_OR_RETURN(bool found, rec.Step());
  if (!found) return NotFound();
  const int64_t original_bytes = rec.ColumnInt(0);
  const int64_t stored_bytes = rec.ColumnInt(1);
  rec.Reset();
  if (original_bytes < 0 || stored_bytes < 0) return Corrupt();

  CAVEMAN_ASSIGN_OR_RETURN(auto decoder, internal::FrameDecoder::New());
  VerifyingSink sink(original, static_cast<uint64_t>(original_bytes));
  CAVEMAN_ASSIGN_OR_RETURN(
      Statement chunks,
      db_->Prepare("SELECT seq, data FROM chunks WHERE handle = ?1 ORDER BY seq"));
  CAVEMAN_RETURN_IF_ERROR(chunks.BindText(1, handle));
  int64_t expected_seq = 0;
  uint64_t total = 0;
  for (;;) {
    CAVEMAN_ASSIGN_OR_RETURN(bool row, chunks.Step());
    if (!row) break;
    if (chunks.ColumnInt(0) != expected_seq++) return Corrupt();  // a missing row
    std::string_view data = chunks.ColumnBlob(1);
    total += data.size();
    CAVEMAN_RETURN_IF_ERROR(decoder->Write(data, sink));
  }
  chunks.Reset();
  CAVEMAN_RETURN_IF_ERROR(db_->Exec("COMMIT"));
  CAVEMAN_RETURN_IF_ERROR(decoder->Finish());
  if (total != static_cast<uint64_t>(stored_bytes)) return Corrupt();
  if (sink.bytes() != static_cast<uint64_t>(original_bytes)) return Corrupt();
  if (sink.Handle() != handle) return Corrupt();
  return Status::OK();
}

Result<std::string> SqliteStore::GetMetadata(std::string_view handle) {
  if (!IsWellFormedHandle(handle)) return NotFound();
  std::string meta;
  Status s = RetryBusy(*db_, kWriteRetryLimit, [&]() -> Status {
    CAVEMAN_ASSIGN_OR_RETURN(
        Statement st, db_->Prepare("SELECT metadata FROM recoveries WHERE handle = ?1"));
    CAVEMAN_RETURN_IF_ERROR(st.BindText(1, handle));
    CAVEMAN_ASSIGN_OR_RETURN(bool found, st.Step());
    if (!found) return NotFound();
    meta = std::string(st.ColumnBlob(0));
    return Status::OK();
  });
  CAVEMAN_RETURN_IF_ERROR(s);
  return meta;
}

// ---------------------------------------------------------------------------------------
// Stats and gc

Result<StoreStats> SqliteStore::Stats() {
  StoreStats stats;
  Status s = RetryBusy(*db_, kWriteRetryLimit, [&]() -> Status {
    stats = StoreStats();
    TxnGuard guard(*db_);
    CAVEMAN_RETURN_IF_ERROR(db_->Exec("BEGIN"));
    CAVEMAN_ASSIGN_OR_RETURN(
        Statement st,
        db_->Prepare("SELECT content_type, count(*), coalesce(sum(tokens_before), 0),"
                     " coalesce(sum(tokens_after), 0) FROM recoveries GROUP BY content_type"));
    for (;;) {
      CAVEMAN_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      ContentTypeTotals t;
      t.count = FromSqlInt(st.ColumnInt(1));
      t.tokens_before = FromSqlInt(st.ColumnInt(2));
      t.tokens_after = FromSqlInt(st.ColumnInt(3));
      stats.totals.count += t.count;
      stats.totals.tokens_before += t.tokens_before;
      stats.totals.tokens_after += t.tokens_after;
      stats.by_content_type[std::string(st.ColumnText(0))] = t;
    }
    st.Reset();
    CAVEMAN_ASSIGN_OR_RETURN(stats.storage_bytes, UsedBytes());
    return db_->Exec("COMMIT");
  });
  CAVEMAN_RETURN_IF_ERROR(s);
  stats.max_storage_bytes = options_.max_bytes;
  return stats;
}

Result<GcResult> SqliteStore::Gc(std::optional<uint64_t> older_than_seconds, bool dry_run) {
  if (read_only_ && !dry_run) return Status::NotSupported(kReadOnlyMessage);
  GcResult result;
  Status s = RetryBusy(*db_, kWriteRetryLimit, [&]() -> Status {
    result = GcResult();
    TxnGuard guard(*db_);
    // The age test and the deletes share one write transaction, so a put that refreshes
    // created_at concurrently is either seen (record kept) or happens after the delete.
    CAVEMAN_RETURN_IF_ERROR(db_->Exec(dry_run ? "BEGIN" : "BEGIN IMMEDIATE"));
    std::vector<std::string> victims;
    if (older_than_seconds.has_value()) {
      constexpr int64_t kNanosPerSecond = 1000000000;
      const uint64_t max_age = static_cast<uint64_t>(INT64_MAX / kNanosPerSecond);
      const int64_t age = static_cast<int64_t>(std::min(*older_than_seconds, max_age));
      const internal::UnixNanos now = internal::NowNanos();
      // Saturate: an age beyond the epoch keeps everything.
      const internal::UnixNanos cutoff =
          now < INT64_MIN + age * kNanosPerSecond ? INT64_MIN : now - age * kNanosPerSecond;
      CAVEMAN_ASSIGN_OR_RETURN(
          Statement st,
          db_->Prepare("SELECT handle, created_at,"
                       " stored_bytes + coalesce(length(metadata), 0) FROM recoveries"));
      for (;;) {
        CAVEMAN_ASSIGN_OR_RETURN(bool row, st.Step());
        if (!row) break;
        auto created = internal::ParseRfc3339(st.ColumnText(1));
        if (!created.has_value() || *created >= cutoff) continue;  // unknown age: keep
        victims.emplace_back(st.ColumnText(0));
        result.freed_bytes += FromSqlInt(st.ColumnInt(2));
      }
      st.Reset();
    }
    result.removed = victims.size();

    constexpr char kOrphanWhere[] =
        " FROM chunks WHERE NOT EXISTS"
        " (SELECT 1 FROM recoveries r WHERE r.handle = chunks.handle)";
    CAVEMAN_ASSIGN_OR_RETURN(
        Statement orphans,
        db_->Prepare(std::string("SELECT count(*), coalesce(sum(length(data)), 0)") + kOrphanWhere));
    CAVEMAN_ASSIGN_OR_RETURN(bool row, orphans.Step());
    if (row) {
      result.orphan_chunks = FromSqlInt(orphans.ColumnInt(0));
      result.freed_bytes += FromSqlInt(orphans.ColumnInt(1));
    }
    orphans.Reset();

    if (!dry_run) {
      CAVEMAN_ASSIGN_OR_RETURN(Statement del_chunks,
                               db_->Prepare("DELETE FROM chunks WHERE handle = ?1"));
      CAVEMAN_ASSIGN_OR_RETURN(Statement del_rec,
                               db_->Prepare("DELETE FROM recoveries WHERE handle = ?1"));
      for (const std::string& h : victims) {
        CAVEMAN_RETURN_IF_ERROR(del_chunks.BindText(1, h));
        CAVEMAN_RETURN_IF_ERROR(del_chunks.Run());
        del_chunks.Reset();
        CAVEMAN_RETURN_IF_ERROR(del_rec.BindText(1, h));
        CAVEMAN_RETURN_IF_ERROR(del_rec.Run());
        del_rec.Reset();
      }
      CAVEMAN_RETURN_IF_ERROR(db_->Exec(std::string("DELETE") + kOrphanWhere));
    }
    CAVEMAN_ASSIGN_OR_RETURN(result.storage_bytes, UsedBytes());
    return db_->Exec("COMMIT");
  });
  CAVEMAN_RETURN_IF_ERROR(s);
  if (!dry_run && !memory_) {
    // Best effort: readers still using old WAL frames make TRUNCATE report busy (not an
    // error); the next gc finishes the job.
    CAVEMAN_ASSIGN_OR_RETURN(std::string busy, db_->QueryText("PRAGMA wal_checkpoint(TRUNCATE)"));
    (void)busy;
  }
  result.max_storage_bytes = options_.max_bytes;
  return result;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Public entry points

Result<StoreOptions> StoreOptions::FromEnv() {
  internal::EnvLookup env = internal::ProcessEnv();
  StoreOptions options;
  // Variables set to "" count as unset, like CAVEMAN_CCR_DB and CAVEMAN_HOME (§6.2).
  if (auto v = env("CAVEMAN_CCR_MAX_BYTES"); v && !v->empty()) {
    auto bytes = internal::ParsePositiveDecimal(*v);
    if (!bytes.has_value()) {
      return Status::InvalidArgument(
          "cannot open recovery store: CAVEMAN_CCR_MAX_BYTES must be a positive integer of "
          "bytes, got \"" + *v + "\"");
    }
    options.max_bytes = *bytes;
  }
  if (auto v = env("CAVEMAN_CCR_ZSTD_LEVEL"); v && !v->empty()) {
    auto level = internal::ParsePositiveDecimal(*v);
    if (!level.has_value() || *level < static_cast<uint64_t>(internal::kMinZstdLevel) ||
        *level > static_cast<uint64_t>(internal::kMaxZstdLevel)) {
      return Status::InvalidArgument(
          "cannot open recovery store: CAVEMAN_CCR_ZSTD_LEVEL must be an integer from 1 to 19, "
          "got \"" + *v + "\"");
    }
    options.zstd_level = static_cast<int>(*level);
  }
  CAVEMAN_ASSIGN_OR_RETURN(internal::ResolvedLocation loc, internal::ResolveLocation(env));
  if (!loc.home_dir.empty()) CAVEMAN_RETURN_IF_ERROR(internal::CreateHomeDir(loc.home_dir));
  options.path = loc.db_path;
  return options;
}

Result<std::unique_ptr<RecoveryStore>> OpenSqliteStore(const StoreOptions& options) {
  CAVEMAN_ASSIGN_OR_RETURN(auto store, SqliteStore::Open(options, options.path == kMemoryPath));
  return std::unique_ptr<RecoveryStore>(std::move(store));
}

Result<std::unique_ptr<RecoveryStore>> OpenMemoryStore(const StoreOptions& options) {
  CAVEMAN_ASSIGN_OR_RETURN(auto store, SqliteStore::Open(options, /*memory=*/true));
  return std::unique_ptr<RecoveryStore>(std::move(store));
}

}  // namespace caveman
