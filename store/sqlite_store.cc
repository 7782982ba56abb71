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
#include <functional>
#include <thread>
#include <vector>

#include "store/internal/range_sink.h"
#include "store/internal/read_sinks.h"
#include "store/internal/sqlite_util.h"
#include "store/internal/store_files.h"
#include "store/internal/timestamp.h"
#include "store/internal/writer_identity.h"
#include "store/internal/framed_record_writer.h"
#include "store/internal/zstd_frame.h"
#include "caveman/store/store.h"
#include "stream/sha256.h"
#include "stream/spool.h"

namespace caveman {
namespace {

using internal::Db;
using internal::Statement;
using internal::StopSink;
using internal::VerifyingSink;

constexpr size_t kMaxChunkBytes = 1 << 20;                     // §6.3: ≤ 1 MiB of compressed bytes per row
constexpr int kBusyTimeoutMs = 5000;                           // §6.2
constexpr std::chrono::milliseconds kSchemaRetryLimit{30000};  // §6.2
// Writers also retry past the busy timeout: sixteen writers of a few MiB each on a loaded
// machine can queue longer than 5 s, and failing would only turn into a pass-through.
constexpr std::chrono::milliseconds kWriteRetryLimit{30000};
constexpr std::chrono::milliseconds kInitialBackoff{10};
constexpr std::chrono::milliseconds kMaxBackoff{1000};
constexpr int64_t kSchemaVersion = 4;
// Page size of a new database (an existing one keeps its own: SQLite cannot change it in WAL
// mode). 4 KiB, not the spec's suggested 64 KiB (§6.4, a recommendation): a small record's
// commit touched a handful of b-tree pages, and every page read or WAL frame was 64 KiB, so a
// 4 KiB `compress` read and wrote ≈ 0.6 MB of pages; 1 MiB chunk rows are overflow chains
// either way. Measured in docs/PERFORMANCE.md ("Small inputs: 4 KiB pages").
constexpr int kPageSize = 4096;

constexpr char kMemoryPath[] = ":memory:";

bool HasMarkerMap(const RecordInfo& info) {
  return info.marker_map.has_value() || static_cast<bool>(info.marker_map_reader);
}

// Binds the record's marker map: its bytes, or (given as a reader) a blob of zeros of its size
// that WriteMarkerMapPieces fills once the row exists.
Status BindMarkerMap(Statement& st, int idx, const RecordInfo& info) {
  if (info.marker_map.has_value()) return st.BindBlob(idx, *info.marker_map);
  return st.BindZeroBlob(idx, info.marker_map_size);
}

// The chunk table's columns and key: new stores (kCreateSchemaSql) and the layout move
// (kChunkLayoutMigrationSql) create it alike.
#define CAVEMAN_CHUNKS_COLUMNS \
  " (handle TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (handle, seq));"

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
    "CREATE TABLE IF NOT EXISTS chunks" CAVEMAN_CHUNKS_COLUMNS "PRAGMA user_version = 1;";

// Chunk rows live in a rowid table with a (handle, seq) index (docs/DECISIONS.md, "Chunk rows
// in a rowid table"). Stores made before kept them WITHOUT ROWID, as the spec's recommended
// schema (§6.4) has it: a b-tree keyed by the rows themselves, so every insert compared its
// key with whole neighbouring rows of up to 1 MiB (SQLite reads a row's overflow pages to
// compare keys), and interior pages held copies of whole rows. Same columns, same key, same
// statements: not a schema version, and older binaries work on either layout.
constexpr char kOldChunkLayoutSql[] =
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'chunks' AND sql LIKE '%WITHOUT ROWID%'";
constexpr char kChunkLayoutMigrationSql[] =
    "ALTER TABLE chunks RENAME TO chunks_without_rowid;"
    "CREATE TABLE chunks" CAVEMAN_CHUNKS_COLUMNS
    "INSERT INTO chunks (handle, seq, data) SELECT handle, seq, data FROM chunks_without_rowid ORDER BY handle, seq;"
    "DROP TABLE chunks_without_rowid;";
// A writable open moves the rows of a store of up to this many stored bytes (≈ 0.1 s); `gc`
// moves any store's.
constexpr uint64_t kChunkLayoutMigrationAtOpenBytes = uint64_t{32} << 20;
#undef CAVEMAN_CHUNKS_COLUMNS

// Version 2 (follow mode): partial records written while their original still arrives. A
// finalised stream record keeps its chunk rows under the partial id (chunk_key), so turning
// a partial record into a complete one rewrites no chunk.
constexpr char kMigrateV2Sql[] =
    "ALTER TABLE recoveries ADD COLUMN chunk_key TEXT;"
    "ALTER TABLE recoveries ADD COLUMN command TEXT;"
    "CREATE INDEX IF NOT EXISTS recoveries_chunk_key ON recoveries (chunk_key)"
    "  WHERE chunk_key IS NOT NULL;"
    "CREATE TABLE IF NOT EXISTS partials ("
    "  id             TEXT PRIMARY KEY,"
    "  created_at     TEXT NOT NULL,"
    "  updated_at     TEXT NOT NULL,"
    "  writer         TEXT NOT NULL,"
    "  command        TEXT,"
    "  original_bytes INTEGER NOT NULL,"
    "  stored_bytes   INTEGER NOT NULL,"
    "  prefix_sha256  TEXT NOT NULL,"
    "  next_seq       INTEGER NOT NULL"
    ");"
    "PRAGMA user_version = 2;";

// Version 3 (issue 14): the marker map of the view emitted with the record (NULL for records
// stored before; engine/internal/marker_map.h defines the blob).
constexpr char kMigrateV3Sql[] =
    "ALTER TABLE recoveries ADD COLUMN marker_map BLOB;"
    "PRAGMA user_version = 3;";

// Version 4 (issue 17): the savings ledger, one row per compress/run invocation. Read and
// written by store/ledger.cc over its own connection; the store only creates the table.
constexpr char kMigrateV4Sql[] =
    "CREATE TABLE IF NOT EXISTS ledger ("
    "  id            INTEGER PRIMARY KEY,"
    "  at            INTEGER NOT NULL,"
    "  content_type  TEXT NOT NULL,"
    "  command       TEXT NOT NULL,"
    "  tokens_before INTEGER NOT NULL,"
    "  tokens_after  INTEGER NOT NULL,"
    "  handle        TEXT NOT NULL"
    ");"
    "CREATE INDEX IF NOT EXISTS ledger_at ON ledger (at);"
    "PRAGMA user_version = 4;";

// Size of a record as counted against the capacity (§6.5): the frame plus the metadata;
// partial records count their frame so far. One expression for every query below.
#define CAVEMAN_RECORD_BYTES "coalesce(sum(stored_bytes + coalesce(length(metadata), 0)), 0)"
#define CAVEMAN_USED_BYTES        \
  "(SELECT " CAVEMAN_RECORD_BYTES \
  " FROM recoveries)"             \
  " + (SELECT coalesce(sum(stored_bytes), 0) FROM partials)"
constexpr char kUsedBytesV1Sql[] = "SELECT " CAVEMAN_RECORD_BYTES " FROM recoveries";  // no partials
constexpr char kUsedBytesSql[] = "SELECT " CAVEMAN_USED_BYTES;

// The same total kept in one row by triggers (issue 19): summing it per commit read every
// row of `recoveries` — 40 ms of every `compress` on a store of 200,000 records. Not a schema
// version: a binary of the previous version, which sums the rows itself, can still open a
// store that has it, and its writes keep the total exact (triggers belong to the database,
// not to the program). Created by the first writable open that finds it missing; `gc` sets it
// to the sum again; a missing row (only a hand edit can cause one) reads as the sum.
constexpr char kUsageTotalSql[] =
    "CREATE TABLE IF NOT EXISTS usage_total ("
    "  id    INTEGER PRIMARY KEY CHECK (id = 1),"
    "  bytes INTEGER NOT NULL"
    ");"
    "INSERT OR IGNORE INTO usage_total (id, bytes) VALUES (1, " CAVEMAN_USED_BYTES
    ");"
    "CREATE TRIGGER IF NOT EXISTS usage_total_record_in AFTER INSERT ON recoveries BEGIN"
    "  UPDATE usage_total SET bytes = bytes + NEW.stored_bytes + coalesce(length(NEW.metadata), 0) WHERE id = 1;"
    " END;"
    "CREATE TRIGGER IF NOT EXISTS usage_total_record_out AFTER DELETE ON recoveries BEGIN"
    "  UPDATE usage_total SET bytes = bytes - OLD.stored_bytes - coalesce(length(OLD.metadata), 0) WHERE id = 1;"
    " END;"
    "CREATE TRIGGER IF NOT EXISTS usage_total_record_change AFTER UPDATE OF stored_bytes, metadata ON recoveries"
    " BEGIN"
    "  UPDATE usage_total SET bytes = bytes - OLD.stored_bytes - coalesce(length(OLD.metadata), 0)"
    "    + NEW.stored_bytes + coalesce(length(NEW.metadata), 0) WHERE id = 1;"
    " END;"
    "CREATE TRIGGER IF NOT EXISTS usage_total_partial_in AFTER INSERT ON partials BEGIN"
    "  UPDATE usage_total SET bytes = bytes + NEW.stored_bytes WHERE id = 1;"
    " END;"
    "CREATE TRIGGER IF NOT EXISTS usage_total_partial_out AFTER DELETE ON partials BEGIN"
    "  UPDATE usage_total SET bytes = bytes - OLD.stored_bytes WHERE id = 1;"
    " END;"
    "CREATE TRIGGER IF NOT EXISTS usage_total_partial_change AFTER UPDATE OF stored_bytes ON partials BEGIN"
    "  UPDATE usage_total SET bytes = bytes - OLD.stored_bytes + NEW.stored_bytes WHERE id = 1;"
    " END;";
// The last trigger of the script above: all of it or none exists (one transaction).
constexpr char kHasUsageTotalSql[] =
    "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = 'usage_total_partial_change'";
constexpr char kUsageTotalReadSql[] =
    "SELECT coalesce((SELECT bytes FROM usage_total WHERE id = 1), " CAVEMAN_USED_BYTES ")";
constexpr char kUsageTotalResetSql[] =
    "INSERT OR REPLACE INTO usage_total (id, bytes) VALUES (1, " CAVEMAN_USED_BYTES ")";
#undef CAVEMAN_USED_BYTES
#undef CAVEMAN_RECORD_BYTES

Status NotFound() { return Status::NotFound(internal::kNotFoundMessage); }
Status Corrupt() { return Status::Corruption(internal::kCorruptMessage); }
Status BudgetExceeded() { return Status::ResourceExhausted(internal::kBudgetExceededMessage); }
Status PartialNotFound() { return Status::NotFound("ccr: partial record not found"); }

Status OpenError(const Status& s) { return Status::IoError("cannot open recovery store: " + s.message()); }

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

class SqliteStore;

// Appends to a std::string (the frame bytes not yet in chunk rows).
class AppendSink final : public ByteSink {
 public:
  explicit AppendSink(std::string* s) : s_(s) {}
  Status Write(std::string_view d) override {
    s_->append(d);
    return Status::OK();
  }

 private:
  std::string* s_;
};

class SqliteStreamWriter final : public StreamRecordWriter {
 public:
  SqliteStreamWriter(SqliteStore* store, std::unique_ptr<internal::FrameEncoder> enc, std::string command)
      : store_(store), enc_(std::move(enc)), id_(internal::NewPartialId()), command_(std::move(command)) {}
  ~SqliteStreamWriter() override = default;  // what was synced stays, as a partial record

  Status Append(std::string_view data) override;
  Status Sync() override;
  uint64_t appended_bytes() const override { return appended_; }
  uint64_t synced_bytes() const override { return synced_; }
  const std::string& partial_id() const override { return id_; }
  std::string handle() const override { return HandleFromDigest(sha_.Peek()); }
  Status Commit(const std::string& handle, const RecordInfo& info) override;
  void Abandon() override;

 private:
  friend class SqliteStore;
  SqliteStore* store_;
  std::unique_ptr<internal::FrameEncoder> enc_;
  const std::string id_;
  const std::string command_;
  std::string pending_;  // frame bytes not yet committed
  Sha256 sha_;           // over every appended byte
  uint64_t appended_ = 0;
  uint64_t synced_ = 0;  // original bytes covered by committed rows
  uint64_t stored_ = 0;  // frame bytes in committed rows
  int64_t next_seq_ = 0;
  bool row_written_ = false;  // the partials row exists
  Status failed_;             // sticky: after a failed Sync or Commit nothing more is synced
  bool finished_ = false;
};

class SqliteStore final : public RecoveryStore, public internal::FrameStore {
 public:
  static Result<std::unique_ptr<SqliteStore>> Open(const StoreOptions& options, bool memory);

  Result<std::unique_ptr<RecordWriter>> BeginRecord() override;
  Result<std::unique_ptr<StreamRecordWriter>> BeginStreamRecord(std::string_view command) override;
  Result<std::vector<PartialInfo>> ListPartials() override;
  Result<std::vector<RecordListing>> ListRecords(std::string_view after, size_t limit) override;
  Status GetPartial(std::string_view id, ByteSink& out) override;
  Status Get(std::string_view handle, ByteSink& out) override;
  Status GetStreaming(std::string_view handle, ByteSink& out, const std::function<bool()>& enough,
                      bool* stopped) override;
  Status GetRange(std::string_view handle, uint64_t offset, uint64_t length, ByteSink& out) override;
  Result<std::string> GetMetadata(std::string_view handle) override;
  Result<std::optional<std::string>> GetMarkerMap(std::string_view handle) override;
  Result<StoreStats> Stats() override;
  Result<GcResult> Gc(std::optional<uint64_t> older_than_seconds, bool dry_run) override;

  // SQLite checkpoints a WAL database when its last connection closes (two syncs) and deletes
  // the WAL, so the next writer creates a new one (two more syncs: its header and the
  // directory) — ≈ 1.5 ms of every small `compress` (issue 19). Instead the close leaves the
  // WAL and the -shm in place until at least kCheckpointAtCloseFrames frames have collected
  // (then, or after `gc`, SQLite's own close runs), and a commit that leaves
  // kCheckpointAtCommitFrames checkpoints at once (SQLite's automatic checkpoint, which this
  // hook replaces). Committed transactions are in the WAL either way (synchronous=NORMAL,
  // §6.4: safe from a crash of the process, not of the machine); the bound keeps small the WAL
  // a later process must read back (its -shm index is rebuilt from it on open).
  ~SqliteStore() override;
  static int OnWalCommit(void* store, sqlite3* db, const char* schema, int frames);

  // The writer's half of Commit (FrameStore).
  Status PutFrame(const std::string& handle, const RecordInfo& info, const Spool& frame,
                  uint64_t original_bytes) override;

  // The stream writer's halves of Sync and Commit (one transaction each, retried on busy).
  Status SyncPartial(SqliteStreamWriter& w);
  Status CommitPartial(SqliteStreamWriter& w, const std::string& handle, const RecordInfo& info);
  void DropPartial(const std::string& id);

  // The connection, for a ledger on it (internal::WritableSqliteStoreDb); null if read-only.
  Db* writable_db() { return read_only_ ? nullptr : db_.get(); }

  SpoolOptions spool_options() const { return internal::StoreSpoolOptions(options_); }

 private:
  SqliteStore(StoreOptions options, std::unique_ptr<Db> db, bool memory)
      : options_(std::move(options)), db_(std::move(db)), memory_(memory) {}

  // An existing store we may not write (read-only directory, file or file system): retrieve
  // and stats still work; BeginRecord and Gc fail with kNotSupported.
  static Result<std::unique_ptr<SqliteStore>> OpenReadOnly(const StoreOptions& options);

  Status InitSchema();
  // Moves the rows of a store with the old chunk layout (kOldChunkLayoutSql) into the rowid
  // table, in one transaction, if it stores at most `limit` bytes. Best effort: busy, full or
  // failing, the store keeps its layout (every statement works on both) for a later try.
  void MigrateChunkLayout(uint64_t limit);
  Status PutOnce(const std::string& handle, const RecordInfo& info, const Spool& frame, uint64_t original_bytes);
  // §6.5 for an existing record: refreshes it and returns true; false when there is none.
  // REQUIRES: inside a write transaction; `used` = UsedBytes().
  Result<bool> RefreshExisting(const std::string& handle, const RecordInfo& info, uint64_t used);
  Status InsertChunks(const std::string& handle, const Spool& frame);
  // A marker map given as a reader: copies its bytes into the zero blob BindMarkerMap bound,
  // 1 MiB at a time (a long follow run's map never sits in memory whole). No-op otherwise.
  Status WriteMarkerMapPieces(const std::string& handle, const RecordInfo& info);
  Status InsertChunkRows(const std::string& key, std::string_view frame, int64_t first_seq);
  Status DeletePartialRows(const std::string& id);
  Status ReadVerified(std::string_view handle, Spool& original);
  // Decodes the record into `out`; with `enough`, stops (checking nothing more) once it says
  // so after a piece, and sets *stopped.
  Status ReadRecord(std::string_view handle, ByteSink& out, const std::function<bool()>* enough, bool* stopped);
  Result<uint64_t> UsedBytes();

  StoreOptions options_;
  std::unique_ptr<Db> db_;
  bool memory_;
  bool read_only_ = false;
  bool v2_ = true;            // schema version ≥ 2 (a read-only open may find version 1)
  bool v3_ = true;            // schema version ≥ 3: recoveries.marker_map
  bool usage_total_ = false;  // the usage_total table and its triggers exist
  // The chunks table has rowids (set by MigrateChunkLayout at open). A layout only ever moves
  // from the old one to this, so a false that another writer's move has made stale merely
  // keeps InsertChunkRows binding its blobs.
  bool rowid_chunks_ = false;
  int wal_frames_ = 0;                // frames in the WAL after this connection's last commit
  bool checkpoint_on_close_ = false;  // set by Gc: the store is left as its database file alone
};

constexpr int kCheckpointAtCloseFrames = 64;
constexpr int kCheckpointAtCommitFrames = 1000;  // SQLite's default wal_autocheckpoint

SqliteStore::~SqliteStore() {
  // SQLite's own close: the last connection checkpoints and deletes the WAL and the -shm (the
  // copy state lives in the -shm, so a WAL kept with it would look uncopied to the next
  // process). Other connections open: nothing happens, without waiting.
  if (db_ != nullptr && (checkpoint_on_close_ || wal_frames_ >= kCheckpointAtCloseFrames)) {
    sqlite3_db_config(db_->raw(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, nullptr);
  }
}

int SqliteStore::OnWalCommit(void* store, sqlite3* db, const char* schema, int frames) {
  // The count stays as it is after a checkpoint here: the close then deletes the WAL (a later
  // process would otherwise read all of it back to rebuild its -shm, which has lost the
  // record of what was copied).
  static_cast<SqliteStore*>(store)->wal_frames_ = frames;
  if (frames >= kCheckpointAtCommitFrames) {
    sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  }
  return SQLITE_OK;
}

constexpr const char* kReadOnlyMessage = "recovery store is read-only (no write permission)";

// ---------------------------------------------------------------------------------------
// Writer

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
    Status files = internal::PrepareDbFiles(path, /*fix_modes=*/!options.read_only);
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
  if (s.ok() && !memory) {
    // Checkpoints at commit past kCheckpointAtCommitFrames and at close past
    // kCheckpointAtCloseFrames instead of at every close (see ~SqliteStore).
    sqlite3_db_config(store->db_->raw(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    sqlite3_wal_hook(store->db_->raw(), &SqliteStore::OnWalCommit, store.get());
  }
  if (s.ok() && options.max_page_count > 0) {
    s = store->db_->Exec("PRAGMA max_page_count=" + std::to_string(options.max_page_count));
  }
  if (s.ok() && !memory) s = internal::SecureCompanions(path, /*fix_modes=*/!options.read_only);
  if (s.ok() && !options.read_only) store->MigrateChunkLayout(kChunkLayoutMigrationAtOpenBytes);
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
  // A -wal whose -shm is gone, in a directory we cannot write (a killed writer's leftovers),
  // cannot be read at all (SQLite needs a -shm for it): then the database file alone is read
  // as immutable, so every record checkpointed into it stays reachable (issue 15 item 9; the
  // WAL's own records need `store salvage`, which reads a private copy).
  const bool has_wal = internal::FileExists(options.path + "-wal");
  auto open = [&](bool immutable) -> Result<std::unique_ptr<SqliteStore>> {
    std::string uri = internal::SqliteFileUri(options.path) + (immutable ? "?mode=ro&immutable=1" : "?mode=ro");
    CAVEMAN_ASSIGN_OR_RETURN(auto db, Db::Open(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOFOLLOW));
    std::unique_ptr<SqliteStore> store(new SqliteStore(options, std::move(db), /*memory=*/false));
    store->read_only_ = true;
    sqlite3_busy_timeout(store->db_->raw(), kBusyTimeoutMs);
    CAVEMAN_ASSIGN_OR_RETURN(int64_t version, store->db_->QueryInt("PRAGMA user_version"));
    if (version < 1 || version > kSchemaVersion) {
      return Status::NotSupported("unsupported schema version " + std::to_string(version));
    }
    store->v2_ = version >= 2;
    store->v3_ = version >= 3;
    CAVEMAN_ASSIGN_OR_RETURN(int64_t total, store->db_->QueryInt(kHasUsageTotalSql));
    store->usage_total_ = total > 0;
    return store;
  };
  auto store = open(/*immutable=*/!has_wal);
  if (store.ok() || !has_wal || internal::FileExists(options.path + "-shm")) return store;
  auto fallback = open(/*immutable=*/true);
  return fallback.ok() ? std::move(fallback) : std::move(store);
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
    if (version > kSchemaVersion) {
      return Status::NotSupported("unsupported schema version " + std::to_string(version));
    }
    if (version == kSchemaVersion) {
      CAVEMAN_ASSIGN_OR_RETURN(int64_t total, db_->QueryInt(kHasUsageTotalSql));
      usage_total_ = total > 0;
      if (usage_total_) return Status::OK();
    }
    CAVEMAN_RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
    CAVEMAN_ASSIGN_OR_RETURN(version, db_->QueryInt("PRAGMA user_version"));
    if (version == 0) CAVEMAN_RETURN_IF_ERROR(db_->Exec(kCreateSchemaSql));
    if (version <= 1) CAVEMAN_RETURN_IF_ERROR(db_->Exec(kMigrateV2Sql));
    if (version <= 2) CAVEMAN_RETURN_IF_ERROR(db_->Exec(kMigrateV3Sql));
    if (version <= 3) CAVEMAN_RETURN_IF_ERROR(db_->Exec(kMigrateV4Sql));
    CAVEMAN_RETURN_IF_ERROR(db_->Exec(kUsageTotalSql));
    CAVEMAN_RETURN_IF_ERROR(db_->Exec("COMMIT"));
    usage_total_ = true;
    return Status::OK();
  });
}

void SqliteStore::MigrateChunkLayout(uint64_t limit) {
  auto old_layout = [&] {
    auto n = db_->QueryInt(kOldChunkLayoutSql);
    rowid_chunks_ = n.ok() && *n == 0;
    return n.ok() && *n > 0;
  };
  auto small_enough = [&] {
    auto used = UsedBytes();
    return used.ok() && *used <= limit;
  };
  // Both checks before the write lock too: a store too large to move at open must not make
  // every open wait for the lock.
  if (!old_layout() || !small_enough()) return;
  TxnGuard guard(*db_);
  if (!db_->Exec("BEGIN IMMEDIATE").ok()) return;
  if (!old_layout() || !small_enough()) return;  // (another writer may have moved or filled it)
  if (db_->Exec(kChunkLayoutMigrationSql).ok()) rowid_chunks_ = db_->Exec("COMMIT").ok();
}

Result<std::unique_ptr<RecordWriter>> SqliteStore::BeginRecord() {
  if (read_only_) return Status::NotSupported(kReadOnlyMessage);
  return internal::NewFrameStoreRecordWriter(this, options_);
}

// ---------------------------------------------------------------------------------------
// Put

Result<uint64_t> SqliteStore::UsedBytes() {
  CAVEMAN_ASSIGN_OR_RETURN(int64_t used, db_->QueryInt(usage_total_ ? kUsageTotalReadSql
                                                       : v2_        ? kUsedBytesSql
                                                                    : kUsedBytesV1Sql));
  return FromSqlInt(used);
}

Status SqliteStore::PutFrame(const std::string& handle, const RecordInfo& info, const Spool& frame,
                             uint64_t original_bytes) {
  if (read_only_) return Status::NotSupported(kReadOnlyMessage);
  return RetryBusy(*db_, kWriteRetryLimit, [&]() -> Status {
    TxnGuard guard(*db_);
    return PutOnce(handle, info, frame, original_bytes);
  });
}

Status SqliteStore::PutOnce(const std::string& handle, const RecordInfo& info, const Spool& frame,
                            uint64_t original_bytes) {
  // IMMEDIATE takes the write lock up front, so the capacity check below and the insert see
  // the same database even with other writers.
  CAVEMAN_RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
  const uint64_t capacity = options_.max_bytes;
  CAVEMAN_ASSIGN_OR_RETURN(uint64_t used, UsedBytes());
  const std::string now = internal::FormatRfc3339(internal::NowNanos());

  CAVEMAN_ASSIGN_OR_RETURN(bool refreshed, RefreshExisting(handle, info, used));
  if (refreshed) return db_->Exec("COMMIT");

  const uint64_t stored = frame.size();
  const uint64_t new_size = stored + info.metadata.size();
  if (new_size < stored || new_size > capacity || used > capacity - new_size) {
    return BudgetExceeded();
  }
  CAVEMAN_RETURN_IF_ERROR(InsertChunks(handle, frame));
  CAVEMAN_ASSIGN_OR_RETURN(Statement ins,
                           db_->Prepare("INSERT INTO recoveries (handle, created_at, content_type, compressor,"
                                        " tokens_before, tokens_after, original_bytes, stored_bytes, metadata,"
                                        " command, marker_map) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"));
  CAVEMAN_RETURN_IF_ERROR(ins.BindText(1, handle));
  CAVEMAN_RETURN_IF_ERROR(ins.BindText(2, now));
  CAVEMAN_RETURN_IF_ERROR(ins.BindText(3, info.content_type));
  CAVEMAN_RETURN_IF_ERROR(ins.BindText(4, info.compressor));
  CAVEMAN_RETURN_IF_ERROR(ins.BindInt(5, ToSqlInt(info.tokens_before)));
  CAVEMAN_RETURN_IF_ERROR(ins.BindInt(6, ToSqlInt(info.tokens_after)));
  CAVEMAN_RETURN_IF_ERROR(ins.BindInt(7, ToSqlInt(original_bytes)));
  CAVEMAN_RETURN_IF_ERROR(ins.BindInt(8, ToSqlInt(stored)));
  if (!info.metadata.empty()) CAVEMAN_RETURN_IF_ERROR(ins.BindBlob(9, info.metadata));
  if (!info.command.empty()) CAVEMAN_RETURN_IF_ERROR(ins.BindText(10, info.command));
  if (HasMarkerMap(info)) CAVEMAN_RETURN_IF_ERROR(BindMarkerMap(ins, 11, info));
  CAVEMAN_RETURN_IF_ERROR(ins.Run());
  CAVEMAN_RETURN_IF_ERROR(WriteMarkerMapPieces(handle, info));
  return db_->Exec("COMMIT");
}

Result<bool> SqliteStore::RefreshExisting(const std::string& handle, const RecordInfo& info, uint64_t used) {
  const uint64_t capacity = options_.max_bytes;
  const std::string now = internal::FormatRfc3339(internal::NowNanos());
  CAVEMAN_ASSIGN_OR_RETURN(Statement find,
                           db_->Prepare("SELECT stored_bytes, coalesce(length(metadata), 0), tokens_before "
                                        "FROM recoveries WHERE handle = ?1"));
  CAVEMAN_RETURN_IF_ERROR(find.BindText(1, handle));
  CAVEMAN_ASSIGN_OR_RETURN(bool exists, find.Step());

  if (!exists) {
    find.Reset();
    return false;
  }
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
    return Status(BudgetExceeded());
  }
  CAVEMAN_ASSIGN_OR_RETURN(Statement upd, db_->Prepare("UPDATE recoveries SET created_at = ?2,"
                                                       " content_type = CASE WHEN ?3 THEN ?4 ELSE content_type END,"
                                                       " compressor = CASE WHEN ?3 THEN ?5 ELSE compressor END,"
                                                       " tokens_before = CASE WHEN ?3 THEN ?6 ELSE tokens_before END,"
                                                       " tokens_after = CASE WHEN ?3 THEN ?7 ELSE tokens_after END,"
                                                       " metadata = CASE WHEN ?8 THEN metadata ELSE ?9 END,"
                                                       " marker_map = CASE WHEN ?10 THEN ?11 ELSE marker_map END"
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
  // The map describes the view just emitted, so the latest put's map replaces the old one.
  CAVEMAN_RETURN_IF_ERROR(upd.BindInt(10, HasMarkerMap(info) ? 1 : 0));
  if (HasMarkerMap(info)) CAVEMAN_RETURN_IF_ERROR(BindMarkerMap(upd, 11, info));
  CAVEMAN_RETURN_IF_ERROR(upd.Run());
  CAVEMAN_RETURN_IF_ERROR(WriteMarkerMapPieces(handle, info));
  return true;
}

Status SqliteStore::WriteMarkerMapPieces(const std::string& handle, const RecordInfo& info) {
  if (info.marker_map.has_value() || !info.marker_map_reader) return Status::OK();
  CAVEMAN_ASSIGN_OR_RETURN(Statement find, db_->Prepare("SELECT rowid FROM recoveries WHERE handle = ?1"));
  CAVEMAN_RETURN_IF_ERROR(find.BindText(1, handle));
  CAVEMAN_ASSIGN_OR_RETURN(bool found, find.Step());
  if (!found) return Status::Internal("ccr: the record written a moment ago is missing");
  const int64_t rowid = find.ColumnInt(0);
  find.Reset();
  std::unique_ptr<ByteSource> reader = info.marker_map_reader();
  sqlite3_blob* blob = nullptr;
  if (info.marker_map_size > 0) {
    const int rc = sqlite3_blob_open(db_->raw(), "main", "recoveries", "marker_map", rowid, 1, &blob);
    if (rc != SQLITE_OK) {
      sqlite3_blob_close(blob);
      return db_->Error(rc, "open marker map");
    }
  }
  std::unique_ptr<sqlite3_blob, int (*)(sqlite3_blob*)> closer(blob, sqlite3_blob_close);
  std::unique_ptr<char[]> buf(new char[kMaxChunkBytes]);
  uint64_t written = 0;
  for (;;) {
    CAVEMAN_ASSIGN_OR_RETURN(size_t n, reader->Read(buf.get(), kMaxChunkBytes));
    if (n == 0) break;
    if (n > info.marker_map_size - written) return Status::IoError("ccr: marker map longer than announced");
    const int rc = sqlite3_blob_write(blob, buf.get(), static_cast<int>(n), static_cast<int>(written));
    if (rc != SQLITE_OK) return db_->Error(rc, "write marker map");
    written += n;
  }
  if (written != info.marker_map_size) return Status::IoError("ccr: marker map shorter than announced");
  return Status::OK();
}

// Frames from this size on are written into zero blobs in place (InsertChunkRows): glibc maps
// blocks of 128 KiB and more afresh for every record SQLite builds.
constexpr size_t kChunkInPlaceBytes = 128 * 1024;

Status SqliteStore::InsertChunks(const std::string& handle, const Spool& frame) {
  // Rows without a record are never visible from a committed writer, but a damaged or
  // foreign database could hold some under this handle; they must not mix into the frame.
  CAVEMAN_ASSIGN_OR_RETURN(Statement del, db_->Prepare("DELETE FROM chunks WHERE handle = ?1"));
  CAVEMAN_RETURN_IF_ERROR(del.BindText(1, handle));
  CAVEMAN_RETURN_IF_ERROR(del.Run());

  if (frame.in_memory()) return InsertChunkRows(handle, frame.memory_view(), 0);
  std::string buf;
  int64_t seq = 0;
  for (uint64_t off = 0; off < frame.size(); off += kMaxChunkBytes, ++seq) {
    buf.clear();
    CAVEMAN_RETURN_IF_ERROR(frame.ReadRange(off, kMaxChunkBytes, &buf));
    CAVEMAN_RETURN_IF_ERROR(InsertChunkRows(handle, buf, seq));
  }
  return Status::OK();
}

// Rows of ≤ 1 MiB under `key`, numbered from `first_seq`. REQUIRES: inside a write
// transaction (the table's layout cannot change under it).
//
// In the rowid table each row is inserted as a zero blob and filled in place
// (sqlite3_blob_write): a bound 1 MiB blob made SQLite build the whole record in a buffer of
// its own first, a fresh 1 MiB mapping per row (about 240 page faults each; a 64 MiB JSON
// dump's 6-row frame faulted 1,429 times in sqlite3VdbeExec, issue 19). The old WITHOUT ROWID
// layout has no rowid to open a blob by and keeps the bound blob, as does a frame below
// kChunkInPlaceBytes (a record that small comes from the heap; the blob handle would cost a
// small run more than it saves).
Status SqliteStore::InsertChunkRows(const std::string& key, std::string_view frame, int64_t first_seq) {
  const bool in_place = rowid_chunks_ && frame.size() >= kChunkInPlaceBytes;
  CAVEMAN_ASSIGN_OR_RETURN(
      Statement ins, db_->Prepare(in_place ? "INSERT INTO chunks (handle, seq, data) VALUES (?1, ?2, zeroblob(?3))"
                                           : "INSERT INTO chunks (handle, seq, data) VALUES (?1, ?2, ?3)"));
  sqlite3_blob* blob = nullptr;
  std::unique_ptr<sqlite3_blob, int (*)(sqlite3_blob*)> closer(nullptr, sqlite3_blob_close);
  int64_t seq = first_seq;
  for (size_t off = 0; off < frame.size(); off += kMaxChunkBytes, ++seq) {
    const std::string_view piece = frame.substr(off, kMaxChunkBytes);
    CAVEMAN_RETURN_IF_ERROR(ins.BindText(1, key));
    CAVEMAN_RETURN_IF_ERROR(ins.BindInt(2, seq));
    CAVEMAN_RETURN_IF_ERROR(in_place ? ins.BindInt(3, static_cast<int64_t>(piece.size())) : ins.BindBlob(3, piece));
    CAVEMAN_RETURN_IF_ERROR(ins.Run());
    ins.Reset();
    if (!in_place) continue;
    const int64_t rowid = sqlite3_last_insert_rowid(db_->raw());
    int rc = blob == nullptr ? sqlite3_blob_open(db_->raw(), "main", "chunks", "data", rowid, 1, &blob)
                             : sqlite3_blob_reopen(blob, rowid);
    if (blob != nullptr && closer.get() == nullptr) closer.reset(blob);
    if (rc != SQLITE_OK) return db_->Error(rc, "open chunk");
    rc = sqlite3_blob_write(blob, piece.data(), static_cast<int>(piece.size()), 0);
    if (rc != SQLITE_OK) return db_->Error(rc, "write chunk");
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

Status SqliteStore::GetRange(std::string_view handle, uint64_t offset, uint64_t length, ByteSink& out) {
  if (!IsWellFormedHandle(handle)) return NotFound();
  if (length > UINT64_MAX - offset) return Status::InvalidArgument("ccr: byte range outside the original");
  Spool slice(spool_options());
  Status s = RetryBusy(*db_, kWriteRetryLimit, [&]() -> Status {
    slice.Clear();
    TxnGuard guard(*db_);
    // The whole record is decoded and verified; only the slice is kept.
    internal::RangeSink range(slice, offset, offset + length);
    return ReadRecord(handle, range, nullptr, nullptr);
  });
  CAVEMAN_RETURN_IF_ERROR(s);
  if (slice.size() != length) return Status::InvalidArgument("ccr: byte range outside the original");
  return slice.CopyTo(out);
}

Result<std::optional<std::string>> SqliteStore::GetMarkerMap(std::string_view handle) {
  if (!IsWellFormedHandle(handle)) return NotFound();
  std::optional<std::string> map;
  Status s = RetryBusy(*db_, kWriteRetryLimit, [&]() -> Status {
    map.reset();
    CAVEMAN_ASSIGN_OR_RETURN(
        Statement st, db_->Prepare(v3_ ? "SELECT marker_map IS NOT NULL, marker_map FROM recoveries WHERE handle = ?1"
                                       : "SELECT 0, NULL FROM recoveries WHERE handle = ?1"));
    CAVEMAN_RETURN_IF_ERROR(st.BindText(1, handle));
    CAVEMAN_ASSIGN_OR_RETURN(bool found, st.Step());
    if (!found) return NotFound();
    if (st.ColumnInt(0) != 0) map = std::string(st.ColumnBlob(1));
    return Status::OK();
  });
  CAVEMAN_RETURN_IF_ERROR(s);
  return map;
}

Status SqliteStore::ReadVerified(std::string_view handle, Spool& original) {
  return ReadRecord(handle, original, nullptr, nullptr);
}

Status SqliteStore::GetStreaming(std::string_view handle, ByteSink& out, const std::function<bool()>& enough,
                                 bool* stopped) {
  if (stopped != nullptr) *stopped = false;
  if (!IsWellFormedHandle(handle)) return NotFound();
  // No busy retry: bytes may already have reached `out` (a read transaction in WAL mode does
  // not wait for writers anyway).
  TxnGuard guard(*db_);
  bool stop = false;
  Status s = ReadRecord(handle, out, &enough, &stop);
  if (stopped != nullptr) *stopped = stop;
  return s;
}

Status SqliteStore::ReadRecord(std::string_view handle, ByteSink& original, const std::function<bool()>* enough,
                               bool* stopped) {
  // One read transaction: the record row and its chunks come from the same snapshot even if
  // gc or a writer commits meanwhile.
  CAVEMAN_RETURN_IF_ERROR(db_->Exec("BEGIN"));
  CAVEMAN_ASSIGN_OR_RETURN(
      Statement rec,
      db_->Prepare(v2_ ? "SELECT original_bytes, stored_bytes, coalesce(chunk_key, handle)"
                         " FROM recoveries WHERE handle = ?1"
                       : "SELECT original_bytes, stored_bytes, handle FROM recoveries WHERE handle = ?1"));
  CAVEMAN_RETURN_IF_ERROR(rec.BindText(1, handle));
  CAVEMAN_ASSIGN_OR_RETURN(bool found, rec.Step());
  if (!found) return NotFound();
  const int64_t original_bytes = rec.ColumnInt(0);
  const int64_t stored_bytes = rec.ColumnInt(1);
  const std::string key(rec.ColumnText(2));
  rec.Reset();
  if (original_bytes < 0 || stored_bytes < 0) return Corrupt();

  CAVEMAN_ASSIGN_OR_RETURN(auto decoder, internal::FrameDecoder::New());
  VerifyingSink sink(original, static_cast<uint64_t>(original_bytes));
  CAVEMAN_ASSIGN_OR_RETURN(Statement chunks,
                           db_->Prepare("SELECT seq, data FROM chunks WHERE handle = ?1 ORDER BY seq"));
  CAVEMAN_RETURN_IF_ERROR(chunks.BindText(1, key));
  int64_t expected_seq = 0;
  uint64_t total = 0;
  for (;;) {
    CAVEMAN_ASSIGN_OR_RETURN(bool row, chunks.Step());
    if (!row) break;
    if (chunks.ColumnInt(0) != expected_seq++) return Corrupt();  // a missing row
    std::string_view data = chunks.ColumnBlob(1);
    total += data.size();
    if (enough == nullptr) {
      CAVEMAN_RETURN_IF_ERROR(decoder->Write(data, sink));
      continue;
    }
    // Sliced reads: 16 KiB of frame at a time, and the decoder is interrupted after any
    // output piece (≤ ZSTD_DStreamOutSize) once the caller has enough, so decoding stops
    // soon after the range however well the record compresses.
    constexpr size_t kPiece = 16 * 1024;
    StopSink stop(sink, *enough);
    for (size_t at = 0; at < data.size(); at += kPiece) {
      Status w = decoder->Write(data.substr(at, kPiece), stop);
      if (!w.ok() && !stop.stopped()) return w;
      if (stop.stopped() || (*enough)()) {
        chunks.Reset();
        CAVEMAN_RETURN_IF_ERROR(db_->Exec("COMMIT"));
        *stopped = true;
        return Status::OK();
      }
    }
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
    CAVEMAN_ASSIGN_OR_RETURN(Statement st, db_->Prepare("SELECT metadata FROM recoveries WHERE handle = ?1"));
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
    CAVEMAN_ASSIGN_OR_RETURN(Statement st,
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
  bool abandoned_partials = false;
  // Counted first in a read transaction; a write transaction only when there is something to
  // delete, so gc works on a store whose disk is full when there is nothing to free.
  auto pass = [&](bool write) {
    return RetryBusy(*db_, kWriteRetryLimit, [&]() -> Status {
      result = GcResult();
      TxnGuard guard(*db_);
      // The age test and the deletes share one write transaction, so a put that refreshes
      // created_at concurrently is either seen (record kept) or happens after the delete.
      CAVEMAN_RETURN_IF_ERROR(db_->Exec(write ? "BEGIN IMMEDIATE" : "BEGIN"));
      std::optional<internal::UnixNanos> cutoff;
      if (older_than_seconds.has_value()) {
        constexpr int64_t kNanosPerSecond = 1000000000;
        const uint64_t max_age = static_cast<uint64_t>(INT64_MAX / kNanosPerSecond);
        const int64_t age = static_cast<int64_t>(std::min(*older_than_seconds, max_age));
        const internal::UnixNanos now = internal::NowNanos();
        // Saturate: an age beyond the epoch keeps everything.
        cutoff = now < INT64_MIN + age * kNanosPerSecond ? INT64_MIN : now - age * kNanosPerSecond;
      }
      auto older = [&](std::string_view rfc3339) {
        if (!cutoff.has_value()) return false;
        auto t = internal::ParseRfc3339(rfc3339);
        return t.has_value() && *t < *cutoff;  // unknown age: keep
      };
      std::vector<std::string> victims;      // handles
      std::vector<std::string> victim_keys;  // their chunk keys
      if (cutoff.has_value()) {
        CAVEMAN_ASSIGN_OR_RETURN(
            Statement st,
            db_->Prepare(std::string("SELECT handle, created_at, stored_bytes + coalesce(length(metadata), 0), ") +
                         (v2_ ? "coalesce(chunk_key, handle)" : "handle") + " FROM recoveries"));
        for (;;) {
          CAVEMAN_ASSIGN_OR_RETURN(bool row, st.Step());
          if (!row) break;
          if (!older(st.ColumnText(1))) continue;
          victims.emplace_back(st.ColumnText(0));
          victim_keys.emplace_back(st.ColumnText(3));
          result.freed_bytes += FromSqlInt(st.ColumnInt(2));
        }
        st.Reset();
      }
      result.removed = victims.size();

      // Partial records whose writer is gone (or, with an age, not synced for longer than it):
      // their rows go, and their chunk rows are then orphans like those of interrupted writers.
      std::string abandoned;  // SQL list of quoted ids (well-formed: hex only)
      if (v2_) {
        CAVEMAN_ASSIGN_OR_RETURN(Statement st, db_->Prepare("SELECT id, updated_at, writer FROM partials"));
        for (;;) {
          CAVEMAN_ASSIGN_OR_RETURN(bool row, st.Step());
          if (!row) break;
          const std::string_view id = st.ColumnText(0);
          if (!IsWellFormedPartialId(id)) continue;
          if (internal::WriterAlive(st.ColumnText(2)) && !older(st.ColumnText(1))) continue;
          if (!abandoned.empty()) abandoned += ",";
          abandoned += "'" + std::string(id) + "'";
        }
        st.Reset();
      }
      std::string orphan_where =
          " FROM chunks WHERE NOT EXISTS"
          " (SELECT 1 FROM recoveries r WHERE r.handle = chunks.handle)";
      if (v2_) {
        orphan_where +=
            " AND NOT EXISTS (SELECT 1 FROM recoveries r WHERE r.chunk_key = chunks.handle)"
            " AND NOT EXISTS (SELECT 1 FROM partials p WHERE p.id = chunks.handle";
        if (!abandoned.empty()) orphan_where += " AND p.id NOT IN (" + abandoned + ")";
        orphan_where += ")";
      }
      CAVEMAN_ASSIGN_OR_RETURN(Statement orphans,
                               db_->Prepare("SELECT count(*), coalesce(sum(length(data)), 0)" + orphan_where));
      CAVEMAN_ASSIGN_OR_RETURN(bool row, orphans.Step());
      if (row) {
        result.orphan_chunks = FromSqlInt(orphans.ColumnInt(0));
        result.freed_bytes += FromSqlInt(orphans.ColumnInt(1));
      }
      orphans.Reset();

      abandoned_partials = !abandoned.empty();
      if (write) {
        CAVEMAN_ASSIGN_OR_RETURN(Statement del_chunks, db_->Prepare("DELETE FROM chunks WHERE handle = ?1"));
        CAVEMAN_ASSIGN_OR_RETURN(Statement del_rec, db_->Prepare("DELETE FROM recoveries WHERE handle = ?1"));
        for (size_t i = 0; i < victims.size(); ++i) {
          CAVEMAN_RETURN_IF_ERROR(del_chunks.BindText(1, victim_keys[i]));
          CAVEMAN_RETURN_IF_ERROR(del_chunks.Run());
          del_chunks.Reset();
          CAVEMAN_RETURN_IF_ERROR(del_rec.BindText(1, victims[i]));
          CAVEMAN_RETURN_IF_ERROR(del_rec.Run());
          del_rec.Reset();
        }
        CAVEMAN_RETURN_IF_ERROR(db_->Exec("DELETE" + orphan_where));
        if (!abandoned.empty()) {
          CAVEMAN_RETURN_IF_ERROR(db_->Exec("DELETE FROM partials WHERE id IN (" + abandoned + ")"));
        }
      }
      // The kept total is set to the sum again here, where every row is read anyway.
      if (write && usage_total_) CAVEMAN_RETURN_IF_ERROR(db_->Exec(kUsageTotalResetSql));
      CAVEMAN_ASSIGN_OR_RETURN(result.storage_bytes, UsedBytes());
      return db_->Exec("COMMIT");
    });
  };
  CAVEMAN_RETURN_IF_ERROR(pass(/*write=*/false));
  if (!dry_run && (result.removed > 0 || result.orphan_chunks > 0 || abandoned_partials)) {
    CAVEMAN_RETURN_IF_ERROR(pass(/*write=*/true));
  }
  if (!dry_run) MigrateChunkLayout(UINT64_MAX);
  if (!dry_run && !memory_) {
    // Best effort: readers still using old WAL frames make TRUNCATE report busy, and on a full
    // disk the database file cannot grow to take the WAL's pages (SQLITE_FULL); the deletes
    // are committed either way and the next gc finishes the job.
    (void)db_->QueryText("PRAGMA wal_checkpoint(TRUNCATE)");
    checkpoint_on_close_ = true;
  }
  result.max_storage_bytes = options_.max_bytes;
  return result;
}

// ---------------------------------------------------------------------------------------
// Stream records (partial records of follow mode)

Result<std::unique_ptr<StreamRecordWriter>> SqliteStore::BeginStreamRecord(std::string_view command) {
  if (read_only_) return Status::NotSupported(kReadOnlyMessage);
  CAVEMAN_ASSIGN_OR_RETURN(auto enc, internal::FrameEncoder::New(options_.zstd_level));
  return std::unique_ptr<StreamRecordWriter>(
      std::make_unique<SqliteStreamWriter>(this, std::move(enc), std::string(command)));
}

Status SqliteStreamWriter::Append(std::string_view data) {
  if (finished_) return Status::Internal("ccr: stream writer used after Commit or Abandon");
  if (!failed_.ok()) return failed_;
  sha_.Update(data);
  appended_ += data.size();
  AppendSink sink(&pending_);
  Status s = enc_->Write(data, sink);
  if (!s.ok()) failed_ = s;
  return s;
}

Status SqliteStreamWriter::Sync() {
  if (finished_) return Status::Internal("ccr: stream writer used after Commit or Abandon");
  if (!failed_.ok()) return failed_;
  if (row_written_ && synced_ == appended_) return Status::OK();
  AppendSink sink(&pending_);
  Status s = enc_->Flush(sink);
  if (s.ok()) s = store_->SyncPartial(*this);
  if (!s.ok()) {
    failed_ = s;
    return s;
  }
  pending_.clear();
  return Status::OK();
}

Status SqliteStreamWriter::Commit(const std::string& handle, const RecordInfo& info) {
  if (finished_) return Status::Internal("ccr: stream writer used after Commit or Abandon");
  Status s = failed_;
  if (s.ok() && !IsWellFormedHandle(handle)) {
    s = Status::InvalidArgument("ccr: malformed recovery handle: " + handle);
  }
  if (s.ok() && HandleFromDigest(sha_.Peek()) != handle) {
    s = Status::InvalidArgument("ccr: handle does not match the recorded bytes: " + handle);
  }
  if (s.ok()) {
    AppendSink sink(&pending_);
    s = enc_->Finish(sink);
  }
  if (s.ok()) s = store_->CommitPartial(*this, handle, info);
  if (!s.ok()) {
    failed_ = s;
    return s;
  }
  finished_ = true;
  pending_.clear();
  return Status::OK();
}

void SqliteStreamWriter::Abandon() {
  if (finished_) return;
  finished_ = true;
  pending_.clear();
  if (row_written_) store_->DropPartial(id_);
}

Status SqliteStore::SyncPartial(SqliteStreamWriter& w) {
  const std::string now = internal::FormatRfc3339(internal::NowNanos());
  const std::string prefix_hash = Sha256::Hex(w.sha_.Peek());
  return RetryBusy(*db_, kWriteRetryLimit, [&]() -> Status {
    TxnGuard guard(*db_);
    CAVEMAN_RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
    CAVEMAN_ASSIGN_OR_RETURN(uint64_t used, UsedBytes());
    const uint64_t add = w.pending_.size();
    if (add > options_.max_bytes || used > options_.max_bytes - add) return BudgetExceeded();
    CAVEMAN_RETURN_IF_ERROR(InsertChunkRows(w.id_, w.pending_, w.next_seq_));
    const int64_t rows = static_cast<int64_t>((add + kMaxChunkBytes - 1) / kMaxChunkBytes);
    CAVEMAN_ASSIGN_OR_RETURN(Statement up,
                             db_->Prepare("INSERT INTO partials (id, created_at, updated_at, writer, command,"
                                          " original_bytes, stored_bytes, prefix_sha256, next_seq)"
                                          " VALUES (?1, ?2, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
                                          " ON CONFLICT (id) DO UPDATE SET updated_at = ?2, original_bytes = ?5,"
                                          " stored_bytes = ?6, prefix_sha256 = ?7, next_seq = ?8"));
    CAVEMAN_RETURN_IF_ERROR(up.BindText(1, w.id_));
    CAVEMAN_RETURN_IF_ERROR(up.BindText(2, now));
    CAVEMAN_RETURN_IF_ERROR(up.BindText(3, internal::CurrentWriterIdentity()));
    if (!w.command_.empty()) CAVEMAN_RETURN_IF_ERROR(up.BindText(4, w.command_));
    CAVEMAN_RETURN_IF_ERROR(up.BindInt(5, ToSqlInt(w.appended_)));
    CAVEMAN_RETURN_IF_ERROR(up.BindInt(6, ToSqlInt(w.stored_ + add)));
    CAVEMAN_RETURN_IF_ERROR(up.BindText(7, prefix_hash));
    CAVEMAN_RETURN_IF_ERROR(up.BindInt(8, w.next_seq_ + rows));
    CAVEMAN_RETURN_IF_ERROR(up.Run());
    CAVEMAN_RETURN_IF_ERROR(db_->Exec("COMMIT"));
    w.row_written_ = true;
    w.next_seq_ += rows;
    w.stored_ += add;
    w.synced_ = w.appended_;
    return Status::OK();
  });
}

Status SqliteStore::DeletePartialRows(const std::string& id) {
  CAVEMAN_ASSIGN_OR_RETURN(Statement del, db_->Prepare("DELETE FROM chunks WHERE handle = ?1"));
  CAVEMAN_RETURN_IF_ERROR(del.BindText(1, id));
  CAVEMAN_RETURN_IF_ERROR(del.Run());
  CAVEMAN_ASSIGN_OR_RETURN(Statement row, db_->Prepare("DELETE FROM partials WHERE id = ?1"));
  CAVEMAN_RETURN_IF_ERROR(row.BindText(1, id));
  return row.Run();
}

Status SqliteStore::CommitPartial(SqliteStreamWriter& w, const std::string& handle, const RecordInfo& info) {
  return RetryBusy(*db_, kWriteRetryLimit, [&]() -> Status {
    TxnGuard guard(*db_);
    CAVEMAN_RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
    CAVEMAN_ASSIGN_OR_RETURN(uint64_t used, UsedBytes());
    CAVEMAN_ASSIGN_OR_RETURN(bool refreshed, RefreshExisting(handle, info, used));
    if (refreshed) {
      // The same original is stored already: the partial copy goes.
      CAVEMAN_RETURN_IF_ERROR(DeletePartialRows(w.id_));
      return db_->Exec("COMMIT");
    }
    const uint64_t add = w.pending_.size() + info.metadata.size();
    if (add > options_.max_bytes || used > options_.max_bytes - add) return BudgetExceeded();
    CAVEMAN_RETURN_IF_ERROR(InsertChunkRows(w.id_, w.pending_, w.next_seq_));
    CAVEMAN_ASSIGN_OR_RETURN(Statement ins,
                             db_->Prepare("INSERT INTO recoveries (handle, created_at, content_type, compressor,"
                                          " tokens_before, tokens_after, original_bytes, stored_bytes, metadata,"
                                          " command, chunk_key, marker_map)"
                                          " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"));
    CAVEMAN_RETURN_IF_ERROR(ins.BindText(1, handle));
    CAVEMAN_RETURN_IF_ERROR(ins.BindText(2, internal::FormatRfc3339(internal::NowNanos())));
    CAVEMAN_RETURN_IF_ERROR(ins.BindText(3, info.content_type));
    CAVEMAN_RETURN_IF_ERROR(ins.BindText(4, info.compressor));
    CAVEMAN_RETURN_IF_ERROR(ins.BindInt(5, ToSqlInt(info.tokens_before)));
    CAVEMAN_RETURN_IF_ERROR(ins.BindInt(6, ToSqlInt(info.tokens_after)));
    CAVEMAN_RETURN_IF_ERROR(ins.BindInt(7, ToSqlInt(w.appended_)));
    CAVEMAN_RETURN_IF_ERROR(ins.BindInt(8, ToSqlInt(w.stored_ + w.pending_.size())));
    if (!info.metadata.empty()) CAVEMAN_RETURN_IF_ERROR(ins.BindBlob(9, info.metadata));
    const std::string& command = info.command.empty() ? w.command_ : info.command;
    if (!command.empty()) CAVEMAN_RETURN_IF_ERROR(ins.BindText(10, command));
    CAVEMAN_RETURN_IF_ERROR(ins.BindText(11, w.id_));
    if (HasMarkerMap(info)) CAVEMAN_RETURN_IF_ERROR(BindMarkerMap(ins, 12, info));
    CAVEMAN_RETURN_IF_ERROR(ins.Run());
    CAVEMAN_RETURN_IF_ERROR(WriteMarkerMapPieces(handle, info));
    CAVEMAN_ASSIGN_OR_RETURN(Statement row, db_->Prepare("DELETE FROM partials WHERE id = ?1"));
    CAVEMAN_RETURN_IF_ERROR(row.BindText(1, w.id_));
    CAVEMAN_RETURN_IF_ERROR(row.Run());
    return db_->Exec("COMMIT");
  });
}

void SqliteStore::DropPartial(const std::string& id) {
  // Best effort: what stays behind is removed by gc once this process is gone.
  (void)RetryBusy(*db_, kWriteRetryLimit, [&]() -> Status {
    TxnGuard guard(*db_);
    CAVEMAN_RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
    CAVEMAN_RETURN_IF_ERROR(DeletePartialRows(id));
    return db_->Exec("COMMIT");
  });
}

Result<std::vector<PartialInfo>> SqliteStore::ListPartials() {
  std::vector<PartialInfo> out;
  if (!v2_) return out;
  Status s = RetryBusy(*db_, kWriteRetryLimit, [&]() -> Status {
    out.clear();
    CAVEMAN_ASSIGN_OR_RETURN(Statement st,
                             db_->Prepare("SELECT id, created_at, updated_at, original_bytes, stored_bytes,"
                                          " coalesce(command, ''), writer FROM partials ORDER BY created_at, id"));
    for (;;) {
      CAVEMAN_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      PartialInfo p;
      p.id = std::string(st.ColumnText(0));
      p.created_at = std::string(st.ColumnText(1));
      p.updated_at = std::string(st.ColumnText(2));
      p.original_bytes = FromSqlInt(st.ColumnInt(3));
      p.stored_bytes = FromSqlInt(st.ColumnInt(4));
      p.command = std::string(st.ColumnText(5));
      p.writer = internal::WriterDisplay(st.ColumnText(6));
      p.writer_alive = internal::WriterAlive(st.ColumnText(6));
      out.push_back(std::move(p));
    }
    return Status::OK();
  });
  CAVEMAN_RETURN_IF_ERROR(s);
  return out;
}

Result<std::vector<RecordListing>> SqliteStore::ListRecords(std::string_view after, size_t limit) {
  std::vector<RecordListing> out;
  Status s = RetryBusy(*db_, kWriteRetryLimit, [&]() -> Status {
    out.clear();
    CAVEMAN_ASSIGN_OR_RETURN(
        Statement st,
        db_->Prepare(std::string("SELECT handle, content_type, compressor, tokens_before, tokens_after, original_bytes,"
                                 " metadata, ") +
                     (v2_ ? "coalesce(command, '')" : "''") + ", " +
                     (v3_ ? "marker_map IS NOT NULL, marker_map" : "0, NULL") +
                     " FROM recoveries WHERE handle > ?1 ORDER BY handle LIMIT ?2"));
    CAVEMAN_RETURN_IF_ERROR(st.BindText(1, after));
    CAVEMAN_RETURN_IF_ERROR(st.BindInt(2, ToSqlInt(limit)));
    for (;;) {
      CAVEMAN_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      RecordListing rec;
      rec.handle = std::string(st.ColumnText(0));
      rec.info.content_type = std::string(st.ColumnText(1));
      rec.info.compressor = std::string(st.ColumnText(2));
      rec.info.tokens_before = FromSqlInt(st.ColumnInt(3));
      rec.info.tokens_after = FromSqlInt(st.ColumnInt(4));
      rec.original_bytes = FromSqlInt(st.ColumnInt(5));
      rec.info.metadata = std::string(st.ColumnBlob(6));
      rec.info.command = std::string(st.ColumnText(7));
      if (st.ColumnInt(8) != 0) rec.info.marker_map = std::string(st.ColumnBlob(9));
      out.push_back(std::move(rec));
    }
    return Status::OK();
  });
  CAVEMAN_RETURN_IF_ERROR(s);
  return out;
}

Status SqliteStore::GetPartial(std::string_view id, ByteSink& out) {
  if (!v2_ || !IsWellFormedPartialId(id)) return PartialNotFound();
  Spool original(spool_options());
  Status s = RetryBusy(*db_, kWriteRetryLimit, [&]() -> Status {
    original.Clear();
    TxnGuard guard(*db_);
    // One snapshot: the row and exactly the chunks it accounts for, even while the writer syncs.
    CAVEMAN_RETURN_IF_ERROR(db_->Exec("BEGIN"));
    CAVEMAN_ASSIGN_OR_RETURN(Statement rec, db_->Prepare("SELECT original_bytes, stored_bytes, prefix_sha256, next_seq"
                                                         " FROM partials WHERE id = ?1"));
    CAVEMAN_RETURN_IF_ERROR(rec.BindText(1, id));
    CAVEMAN_ASSIGN_OR_RETURN(bool found, rec.Step());
    if (!found) return PartialNotFound();
    const int64_t original_bytes = rec.ColumnInt(0);
    const int64_t stored_bytes = rec.ColumnInt(1);
    const std::string prefix_hash(rec.ColumnText(2));
    const int64_t rows = rec.ColumnInt(3);
    rec.Reset();
    if (original_bytes < 0 || stored_bytes < 0) return Corrupt();
    CAVEMAN_ASSIGN_OR_RETURN(auto decoder, internal::FrameDecoder::New());
    VerifyingSink sink(original, static_cast<uint64_t>(original_bytes));
    CAVEMAN_ASSIGN_OR_RETURN(Statement chunks,
                             db_->Prepare("SELECT seq, data FROM chunks WHERE handle = ?1 AND seq < ?2 ORDER BY seq"));
    CAVEMAN_RETURN_IF_ERROR(chunks.BindText(1, id));
    CAVEMAN_RETURN_IF_ERROR(chunks.BindInt(2, rows));
    int64_t expected_seq = 0;
    uint64_t total = 0;
    for (;;) {
      CAVEMAN_ASSIGN_OR_RETURN(bool row, chunks.Step());
      if (!row) break;
      if (chunks.ColumnInt(0) != expected_seq++) return Corrupt();
      std::string_view data = chunks.ColumnBlob(1);
      total += data.size();
      CAVEMAN_RETURN_IF_ERROR(decoder->Write(data, sink));
    }
    chunks.Reset();
    CAVEMAN_RETURN_IF_ERROR(db_->Exec("COMMIT"));
    CAVEMAN_RETURN_IF_ERROR(decoder->FinishPrefix());
    if (expected_seq != rows || total != static_cast<uint64_t>(stored_bytes)) return Corrupt();
    if (sink.bytes() != static_cast<uint64_t>(original_bytes)) return Corrupt();
    if (sink.HexDigest() != prefix_hash) return Corrupt();
    return Status::OK();
  });
  CAVEMAN_RETURN_IF_ERROR(s);
  return original.CopyTo(out);
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
          "bytes, got \"" +
          *v + "\"");
    }
    options.max_bytes = *bytes;
  }
  if (auto v = env("CAVEMAN_CCR_ZSTD_LEVEL"); v && !v->empty()) {
    auto level = internal::ParsePositiveDecimal(*v);
    if (!level.has_value() || *level < static_cast<uint64_t>(internal::kMinZstdLevel) ||
        *level > static_cast<uint64_t>(internal::kMaxZstdLevel)) {
      return Status::InvalidArgument(
          "cannot open recovery store: CAVEMAN_CCR_ZSTD_LEVEL must be an integer from 1 to 19, "
          "got \"" +
          *v + "\"");
    }
    options.zstd_level = static_cast<int>(*level);
  }
  if (auto v = env("CAVEMAN_CCR_URL"); v && !v->empty()) {
    if (!IsPostgresUrl(*v)) {
      return Status::InvalidArgument(
          "cannot open recovery store: CAVEMAN_CCR_URL must be a postgresql:// or postgres:// URL, got \"" +
          RedactUrl(*v) + "\"");
    }
    options.url = *v;
    return options;
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

namespace internal {
Db* WritableSqliteStoreDb(RecoveryStore& store) {
  auto* sqlite = dynamic_cast<SqliteStore*>(&store);
  return sqlite != nullptr ? sqlite->writable_db() : nullptr;
}
}  // namespace internal

Result<std::unique_ptr<RecoveryStore>> OpenMemoryStore(const StoreOptions& options) {
  CAVEMAN_ASSIGN_OR_RETURN(auto store, SqliteStore::Open(options, /*memory=*/true));
  return std::unique_ptr<RecoveryStore>(std::move(store));
}

}  // namespace caveman
