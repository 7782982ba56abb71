// PostgreSQL + zstd recovery store (issue 18): the RecoveryStore contract of store.h on a
// shared server, for fleets of CI runners. The only file that includes libpq (STYLE §8).
// Schema and persisted format: store/README.md ("PostgreSQL backend").
//
// Write path: as in SQLite, the writer streams the original through one zstd frame into a
// Spool; Commit sends the frame as ≤ 1 MiB bytea chunk rows (binary parameters) and the
// record row in one transaction. The record row is INSERT ... ON CONFLICT DO NOTHING, so two
// runners storing the same original store it once: the loser's transaction is rolled back
// and repeated as a refresh of the winner's record (§6.5). Capacity is one counter row
// (ccr_usage) charged in the same transaction with a conditional UPDATE, so the check and the
// insert are atomic across writers; its row lock is taken last and held only until COMMIT.
// Read path: one REPEATABLE READ snapshot; chunk rows are fetched one at a time by index and
// decompressed as they arrive (never the whole record in memory).
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <thread>
#include <vector>

#include "store/internal/libpq_loader.h"
#include "store/internal/range_sink.h"
#include "store/internal/read_sinks.h"
#include "store/internal/writer_identity.h"
#include "store/internal/framed_record_writer.h"
#include "store/internal/zstd_frame.h"
#include "caveman/store/store.h"
#include "stream/sha256.h"
#include "stream/spool.h"

namespace caveman {
namespace {

// The record's marker map as bytes: the PostgreSQL store binds it as one parameter, so a map
// given as a reader (follow mode) is read whole into *storage first.
Result<const std::optional<std::string>*> MarkerMapOf(const RecordInfo& info, std::optional<std::string>* storage) {
  if (info.marker_map.has_value() || !info.marker_map_reader) return &info.marker_map;
  CAVEMAN_ASSIGN_OR_RETURN(*storage, info.MarkerMapBytes());
  return static_cast<const std::optional<std::string>*>(storage);
}

using internal::StopSink;
using internal::VerifyingSink;

constexpr size_t kMaxChunkBytes = 1 << 20;  // ≤ 1 MiB of compressed bytes per row
constexpr int64_t kSchemaVersion = 1;
constexpr int kConnectAttempts = 3;
constexpr std::chrono::milliseconds kConnectBackoff{250};  // doubles: 250, 500 ms
constexpr int kTxnAttempts = 6;                            // serialization failure, deadlock
constexpr std::chrono::milliseconds kTxnBackoff{20};
constexpr char kDefaultConnectTimeout[] = "10";  // seconds, unless the URL sets connect_timeout
// pg_advisory_xact_lock key serialising schema creation/migration ("ccr_sch" in ASCII).
constexpr char kSchemaLockKey[] = "27988229463582824";
// Ages beyond this (about 95 years) keep everything; it also keeps the interval arithmetic
// inside PostgreSQL's range.
constexpr uint64_t kMaxAgeSeconds = 3000000000ULL;

constexpr char kCreateSchemaSql[] =
    "CREATE TABLE ccr_recoveries ("
    "  handle         text PRIMARY KEY,"
    "  created_at     timestamptz NOT NULL DEFAULT now(),"
    "  content_type   text NOT NULL,"
    "  compressor     text NOT NULL,"
    "  tokens_before  bigint NOT NULL,"
    "  tokens_after   bigint NOT NULL,"
    "  original_bytes bigint NOT NULL,"
    "  stored_bytes   bigint NOT NULL,"
    "  metadata       bytea,"
    "  command        text,"
    "  chunk_key      text,"
    "  marker_map     bytea"
    ");"
    "CREATE INDEX ccr_recoveries_chunk_key ON ccr_recoveries (chunk_key) WHERE chunk_key IS NOT NULL;"
    "CREATE INDEX ccr_recoveries_created_at ON ccr_recoveries (created_at);"
    "CREATE TABLE ccr_chunks ("
    "  chunk_key text NOT NULL, seq integer NOT NULL, data bytea NOT NULL,"
    "  PRIMARY KEY (chunk_key, seq)"
    ");"
    "CREATE TABLE ccr_partials ("
    "  id             text PRIMARY KEY,"
    "  created_at     timestamptz NOT NULL DEFAULT now(),"
    "  updated_at     timestamptz NOT NULL DEFAULT now(),"
    "  writer         text NOT NULL,"
    "  command        text,"
    "  original_bytes bigint NOT NULL,"
    "  stored_bytes   bigint NOT NULL,"
    "  prefix_sha256  text NOT NULL,"
    "  next_seq       integer NOT NULL"
    ");"
    "CREATE TABLE ccr_usage (id integer PRIMARY KEY CHECK (id = 1), used_bytes bigint NOT NULL);"
    "INSERT INTO ccr_usage VALUES (1, 0);";

// RFC 3339 UTC with microseconds, as the SQLite store prints its timestamps.
#define CCR_RFC3339(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"

Status NotFound() { return Status::NotFound(internal::kNotFoundMessage); }
Status Corrupt() { return Status::Corruption(internal::kCorruptMessage); }
Status BudgetExceeded() { return Status::ResourceExhausted(internal::kBudgetExceededMessage); }
Status PartialNotFound() { return Status::NotFound("ccr: partial record not found"); }

// libpq messages end with a newline and may span lines ("connection to server ... failed:
// Connection refused\n\tIs the server running ...").
std::string OneLine(const char* message) {
  std::string out;
  for (const char* p = message == nullptr ? "" : message; *p != '\0'; ++p) {
    if (*p == '\n' || *p == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += *p;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.empty() ? "unknown error" : out;
}

std::string Dec(uint64_t v) { return std::to_string(v > INT64_MAX ? INT64_MAX : v); }

uint64_t ParseCount(std::string_view text) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || v < 0) return 0;
  return static_cast<uint64_t>(v);
}

// One query parameter: text (format 0) or binary (format 1, for bytea), or NULL.
struct Param {
  std::string_view value;
  bool binary = false;
  bool null = false;
};
Param Text(std::string_view v) { return Param{v, false, false}; }
Param Bytes(std::string_view v) { return Param{v, true, false}; }
Param Null() { return Param{{}, false, true}; }
Param Bool(bool b) { return Text(b ? "true" : "false"); }

// libpq's entry points. REQUIRES: Pg::Connect loaded them (every PGconn and PGresult here
// comes from a connection it made).
const internal::LibPq& Pq() { return *internal::LoadLibPq(nullptr); }

class PgResult {
 public:
  explicit PgResult(PGresult* r) : r_(r) {}
  PgResult(PgResult&& o) noexcept : r_(o.r_) { o.r_ = nullptr; }
  PgResult& operator=(PgResult&& o) noexcept {
    std::swap(r_, o.r_);
    return *this;
  }
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;
  ~PgResult() {
    if (r_ != nullptr) Pq().PQclear(r_);
  }
  int rows() const { return Pq().PQntuples(r_); }
  bool IsNull(int row, int col) const { return Pq().PQgetisnull(r_, row, col) != 0; }
  std::string_view Get(int row, int col) const {
    return std::string_view(Pq().PQgetvalue(r_, row, col), static_cast<size_t>(Pq().PQgetlength(r_, row, col)));
  }
  uint64_t Count(int row, int col) const { return ParseCount(Get(row, col)); }
  PGresult* raw() const { return r_; }

 private:
  PGresult* r_;
};

// A connection: the translation point from libpq results to Status. Connection failures
// (server down, timeout, auth) are kIoError "recovery store unavailable: ..."; a full disk on
// the server (SQLSTATE 53100) is kResourceExhausted like SQLITE_FULL; serialization failures
// and deadlocks set retryable() for Txn.
class Pg {
 public:
  static Result<std::unique_ptr<Pg>> Connect(const std::string& url) {
    std::string why;
    if (internal::LoadLibPq(&why) == nullptr) {
      return Status::IoError("ccr: recovery store unavailable: " + RedactUrl(url) + ": " + why);
    }
    std::unique_ptr<Pg> pg(new Pg(url));
    CAVEMAN_RETURN_IF_ERROR(pg->ConnectWithRetries());
    return pg;
  }
  ~Pg() {
    if (conn_ != nullptr) Pq().PQfinish(conn_);
  }
  Pg(const Pg&) = delete;
  Pg& operator=(const Pg&) = delete;

  const std::string& redacted_url() const { return redacted_; }
  bool retryable() const { return retryable_; }
  bool broken() const { return conn_ == nullptr || Pq().PQstatus(conn_) == CONNECTION_BAD; }

  // One statement with parameters; `binary_result` asks for every column in binary (bytea).
  Result<PgResult> Exec(const char* sql, std::initializer_list<Param> params = {}, bool binary_result = false) {
    retryable_ = false;
    if (broken()) return Unavailable();
    std::vector<const char*> values;
    std::vector<int> lengths, formats;
    for (const Param& p : params) {
      values.push_back(p.null ? nullptr : (p.value.data() == nullptr ? "" : p.value.data()));
      lengths.push_back(static_cast<int>(p.value.size()));
      formats.push_back(p.binary ? 1 : 0);
    }
    // Text parameters must be NUL-terminated: copy them.
    std::vector<std::string> texts;
    texts.reserve(values.size());
    size_t i = 0;
    for (const Param& p : params) {
      if (!p.null && !p.binary) {
        texts.emplace_back(p.value);
        values[i] = texts.back().c_str();
      }
      ++i;
    }
    PgResult r(Pq().PQexecParams(conn_, sql, static_cast<int>(values.size()), nullptr, values.data(), lengths.data(),
                                 formats.data(), binary_result ? 1 : 0));
    return Check(std::move(r));
  }
  Status Run(const char* sql, std::initializer_list<Param> params = {}) { return Exec(sql, params).status(); }
  // Several statements without parameters (schema DDL).
  Status Script(const char* sql) {
    retryable_ = false;
    if (broken()) return Unavailable();
    return Check(PgResult(Pq().PQexec(conn_, sql))).status();
  }
  void RollbackQuietly() {
    if (conn_ != nullptr && Pq().PQstatus(conn_) == CONNECTION_OK && Pq().PQtransactionStatus(conn_) != PQTRANS_IDLE) {
      Pq().PQclear(Pq().PQexec(conn_, "ROLLBACK"));
    }
  }
  // Marks the current attempt for a repeat (a concurrent writer won a race).
  Status Retry(std::string why) {
    retryable_ = true;
    return Status::IoError(std::move(why));
  }
  // After the server went away mid-session: one reconnect (with its bounded retries).
  Status Reconnect() {
    if (!broken()) return Status::OK();
    return ConnectWithRetries();
  }

 private:
  explicit Pg(std::string url) : url_(std::move(url)), redacted_(RedactUrl(url_)) {}

  Status Unavailable() const {
    return Status::IoError("ccr: recovery store unavailable: " + redacted_ + ": " +
                           (conn_ == nullptr ? std::string("not connected") : OneLine(Pq().PQerrorMessage(conn_))));
  }

  Status ConnectWithRetries() {
    auto backoff = kConnectBackoff;
    std::string last;
    for (int attempt = 1; attempt <= kConnectAttempts; ++attempt) {
      if (conn_ != nullptr) Pq().PQfinish(conn_);
      // The URL is passed as given (TLS, auth, service files and PGPASSFILE are libpq's);
      // keywords before the expanded dbname are defaults the URL overrides.
      const char* keys[] = {"connect_timeout", "application_name", "dbname", nullptr};
      const char* vals[] = {kDefaultConnectTimeout, "caveman-engine", url_.c_str(), nullptr};
      conn_ = Pq().PQconnectdbParams(keys, vals, /*expand_dbname=*/1);
      if (conn_ != nullptr && Pq().PQstatus(conn_) == CONNECTION_OK) {
        // Server notices ("relation ... already exists, skipping") must not reach stderr,
        // where the compress report goes.
        Pq().PQsetNoticeProcessor(
            conn_, [](void*, const char*) {}, nullptr);
        return Status::OK();
      }
      last = conn_ == nullptr ? std::string("out of memory") : OneLine(Pq().PQerrorMessage(conn_));
      // A bad password does not get better by waiting.
      if (conn_ != nullptr && Pq().PQconnectionNeedsPassword(conn_)) break;
      if (attempt < kConnectAttempts) {
        std::this_thread::sleep_for(backoff);
        backoff *= 2;
      }
    }
    return Status::IoError("ccr: recovery store unavailable: " + redacted_ + ": " + last);
  }

  Result<PgResult> Check(PgResult r) {
    // PQexecParams returns NULL only when out of memory or the connection is unusable.
    ExecStatusType st = Pq().PQresultStatus(r.raw());
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
    if (broken()) return Unavailable();
    const char* state = Pq().PQresultErrorField(r.raw(), PG_DIAG_SQLSTATE);
    const std::string code = state == nullptr ? "" : state;
    const char* msg = Pq().PQresultErrorField(r.raw(), PG_DIAG_MESSAGE_PRIMARY);
    if (code == "40001" || code == "40P01") retryable_ = true;
    if (code == "53100") return Status(BudgetExceeded());  // disk full on the server
    if (code.starts_with("08") || code.starts_with("57P")) {
      return Status::IoError("ccr: recovery store unavailable: " + redacted_ + ": " + OneLine(msg));
    }
    return Status::IoError("ccr: postgresql: " + OneLine(msg == nullptr ? Pq().PQerrorMessage(conn_) : msg) +
                           (code.empty() ? "" : " (SQLSTATE " + code + ")"));
  }
  std::string url_;
  std::string redacted_;
  PGconn* conn_ = nullptr;
  bool retryable_ = false;
};

// Runs `body` between `begin` and COMMIT, rolling back on failure. Repeats while the failure
// is retryable (serialization failure, deadlock, a lost insert race), and once after a lost
// connection (the record writes are idempotent: content-addressed, and a repeated put
// refreshes). REQUIRES: `body` has no effect outside the transaction unless it succeeds.
template <class Fn>
Status Txn(Pg& pg, const char* begin, Fn body) {
  auto backoff = kTxnBackoff;
  bool reconnected = false;
  for (int attempt = 1;; ++attempt) {
    Status s = pg.Run(begin);
    if (s.ok()) s = body();
    if (s.ok()) s = pg.Run("COMMIT");
    if (s.ok()) return s;
    const bool retryable = pg.retryable();
    pg.RollbackQuietly();
    if (pg.broken() && !reconnected) {
      reconnected = true;
      if (!pg.Reconnect().ok()) return s;
      continue;
    }
    if (!retryable || attempt >= kTxnAttempts) return s;
    std::this_thread::sleep_for(backoff);
    backoff *= 2;
  }
}

class PgStore;

class StringAppendSink final : public ByteSink {
 public:
  explicit StringAppendSink(std::string* s) : s_(s) {}
  Status Write(std::string_view d) override {
    s_->append(d);
    return Status::OK();
  }

 private:
  std::string* s_;
};

class PgStreamWriter final : public StreamRecordWriter {
 public:
  PgStreamWriter(PgStore* store, std::unique_ptr<internal::FrameEncoder> enc, std::string command)
      : store_(store), enc_(std::move(enc)), id_(internal::NewPartialId()), command_(std::move(command)) {}
  Status Append(std::string_view data) override;
  Status Sync() override;
  uint64_t appended_bytes() const override { return appended_; }
  uint64_t synced_bytes() const override { return synced_; }
  const std::string& partial_id() const override { return id_; }
  std::string handle() const override { return HandleFromDigest(sha_.Peek()); }
  Status Commit(const std::string& handle, const RecordInfo& info) override;
  void Abandon() override;

 private:
  friend class PgStore;
  PgStore* store_;
  std::unique_ptr<internal::FrameEncoder> enc_;
  const std::string id_;
  const std::string command_;
  std::string pending_;  // frame bytes not yet committed
  Sha256 sha_;
  uint64_t appended_ = 0;
  uint64_t synced_ = 0;
  uint64_t stored_ = 0;  // frame bytes in committed rows
  int64_t next_seq_ = 0;
  bool row_written_ = false;
  Status failed_;
  bool finished_ = false;
};

class PgStore final : public RecoveryStore, public internal::FrameStore {
 public:
  PgStore(StoreOptions options, std::unique_ptr<Pg> pg) : options_(std::move(options)), pg_(std::move(pg)) {}

  Status InitSchema();

  Result<std::unique_ptr<RecordWriter>> BeginRecord() override {
    return internal::NewFrameStoreRecordWriter(this, options_);
  }
  Result<std::unique_ptr<StreamRecordWriter>> BeginStreamRecord(std::string_view command) override {
    CAVEMAN_ASSIGN_OR_RETURN(auto enc, internal::FrameEncoder::New(options_.zstd_level));
    return std::unique_ptr<StreamRecordWriter>(
        std::make_unique<PgStreamWriter>(this, std::move(enc), std::string(command)));
  }
  Status Get(std::string_view handle, ByteSink& out) override;
  Status GetStreaming(std::string_view handle, ByteSink& out, const std::function<bool()>& enough,
                      bool* stopped) override;
  Status GetRange(std::string_view handle, uint64_t offset, uint64_t length, ByteSink& out) override;
  Result<std::string> GetMetadata(std::string_view handle) override;
  Result<std::optional<std::string>> GetMarkerMap(std::string_view handle) override;
  Result<StoreStats> Stats() override;
  Result<GcResult> Gc(std::optional<uint64_t> older_than_seconds, bool dry_run) override;
  Result<std::vector<PartialInfo>> ListPartials() override;
  Result<std::vector<RecordListing>> ListRecords(std::string_view after, size_t limit) override;
  Status GetPartial(std::string_view id, ByteSink& out) override;

  Status PutFrame(const std::string& handle, const RecordInfo& info, const Spool& frame,
                  uint64_t original_bytes) override;
  Status SyncPartial(PgStreamWriter& w);
  Status CommitPartial(PgStreamWriter& w, const std::string& handle, const RecordInfo& info);
  void DropPartial(const std::string& id);

  SpoolOptions spool_options() const { return internal::StoreSpoolOptions(options_); }

 private:
  // §6.5 for an existing record: refreshes it and returns true; false when there is none.
  // REQUIRES: inside a transaction.
  Result<bool> RefreshExisting(const std::string& handle, const RecordInfo& info);
  // Adds `bytes` to the shared usage counter unless that passes this writer's capacity.
  Status Charge(uint64_t bytes);
  Status Release(uint64_t bytes);
  Status InsertChunkRows(const std::string& key, std::string_view frame, int64_t first_seq);
  Status InsertRecord(const std::string& handle, const RecordInfo& info, uint64_t original_bytes, uint64_t stored_bytes,
                      const std::string* chunk_key);
  Status DeletePartialRows(const std::string& id, uint64_t* stored);
  // Decodes chunk rows 0.. of `key` until `stored_bytes` frame bytes were fed.
  Status DecodeChunks(const std::string& key, uint64_t stored_bytes, int64_t max_rows, internal::FrameDecoder& dec,
                      ByteSink& sink, const std::function<bool()>* enough, bool* stopped);
  Status ReadRecord(std::string_view handle, ByteSink& out, const std::function<bool()>* enough, bool* stopped);

  StoreOptions options_;
  std::unique_ptr<Pg> pg_;
};

// ---------------------------------------------------------------------------------------
// Open and schema

Status PgStore::InitSchema() {
  // Fast path without a lock: the schema exists at this version.
  {
    auto r = pg_->Exec("SELECT max(version) FROM ccr_schema_version");
    if (r.ok() && r->rows() == 1 && !r->IsNull(0, 0)) {
      const uint64_t v = r->Count(0, 0);
      if (v == kSchemaVersion) return Status::OK();
      if (v > kSchemaVersion) return Status::NotSupported("unsupported schema version " + std::to_string(v));
    } else if (!r.ok() && pg_->broken()) {
      return r.status();
    }
  }
  // First use (or an older schema): create or migrate under a transaction-scoped advisory lock,
  // so concurrent first users wait for one another instead of racing CREATE TABLE.
  return Txn(*pg_, "BEGIN", [&]() -> Status {
    CAVEMAN_RETURN_IF_ERROR(pg_->Run("SELECT pg_advisory_xact_lock($1::bigint)", {Text(kSchemaLockKey)}));
    CAVEMAN_RETURN_IF_ERROR(pg_->Script("CREATE TABLE IF NOT EXISTS ccr_schema_version (version integer NOT NULL)"));
    CAVEMAN_ASSIGN_OR_RETURN(PgResult r, pg_->Exec("SELECT coalesce(max(version), 0) FROM ccr_schema_version"));
    const uint64_t v = r.Count(0, 0);
    if (v > kSchemaVersion) return Status::NotSupported("unsupported schema version " + std::to_string(v));
    if (v == 0) {
      CAVEMAN_RETURN_IF_ERROR(pg_->Script(kCreateSchemaSql));
      // Later versions migrate here: `if (v < 2) ...`, each step in this transaction.
      CAVEMAN_RETURN_IF_ERROR(pg_->Run("INSERT INTO ccr_schema_version VALUES (1)"));
    }
    return Status::OK();
  });
}

// ---------------------------------------------------------------------------------------
// Put

Status PgStore::Charge(uint64_t bytes) {
  if (bytes > options_.max_bytes) return BudgetExceeded();
  CAVEMAN_ASSIGN_OR_RETURN(PgResult r, pg_->Exec("UPDATE ccr_usage SET used_bytes = used_bytes + $1::bigint"
                                                 " WHERE id = 1 AND used_bytes + $1::bigint <= $2::bigint"
                                                 " RETURNING used_bytes",
                                                 {Text(Dec(bytes)), Text(Dec(options_.max_bytes))}));
  return r.rows() == 1 ? Status::OK() : BudgetExceeded();
}

Status PgStore::Release(uint64_t bytes) {
  if (bytes == 0) return Status::OK();
  return pg_->Run("UPDATE ccr_usage SET used_bytes = greatest(used_bytes - $1::bigint, 0) WHERE id = 1",
                  {Text(Dec(bytes))});
}

Result<bool> PgStore::RefreshExisting(const std::string& handle, const RecordInfo& info) {
  CAVEMAN_ASSIGN_OR_RETURN(PgResult r, pg_->Exec("SELECT coalesce(length(metadata), 0), tokens_before"
                                                 " FROM ccr_recoveries WHERE handle = $1 FOR UPDATE",
                                                 {Text(handle)}));
  if (r.rows() == 0) return false;
  const uint64_t old_meta = r.Count(0, 0);
  const uint64_t old_tokens_before = r.Count(0, 1);
  const bool keep_meta = old_meta > 0;
  const bool replace_fields = !(info.tokens_before == 0 && old_tokens_before > 0);
  // Only the metadata can grow the record (it is set once, when the record had none).
  if (!keep_meta && !info.metadata.empty()) CAVEMAN_RETURN_IF_ERROR(Charge(info.metadata.size()));
  std::optional<std::string> read_map;
  CAVEMAN_ASSIGN_OR_RETURN(const std::optional<std::string>* map, MarkerMapOf(info, &read_map));
  CAVEMAN_RETURN_IF_ERROR(
      pg_->Run("UPDATE ccr_recoveries SET created_at = now(),"
               " content_type = CASE WHEN $2::boolean THEN $3 ELSE content_type END,"
               " compressor = CASE WHEN $2::boolean THEN $4 ELSE compressor END,"
               " tokens_before = CASE WHEN $2::boolean THEN $5::bigint ELSE tokens_before END,"
               " tokens_after = CASE WHEN $2::boolean THEN $6::bigint ELSE tokens_after END,"
               " metadata = CASE WHEN $7::boolean THEN metadata ELSE $8::bytea END,"
               " marker_map = CASE WHEN $9::boolean THEN $10::bytea ELSE marker_map END"
               " WHERE handle = $1",
               {Text(handle), Bool(replace_fields), Text(info.content_type), Text(info.compressor),
                Text(Dec(info.tokens_before)), Text(Dec(info.tokens_after)), Bool(keep_meta),
                info.metadata.empty() ? Null() : Bytes(info.metadata), Bool(map->has_value()),
                map->has_value() ? Bytes(**map) : Null()}));
  return true;
}

// Rows of ≤ 1 MiB under `key`, numbered from `first_seq`. A row left under the key by a
// damaged store is overwritten; a concurrent writer's uncommitted row makes this wait for it.
Status PgStore::InsertChunkRows(const std::string& key, std::string_view frame, int64_t first_seq) {
  int64_t seq = first_seq;
  for (size_t off = 0; off < frame.size(); off += kMaxChunkBytes, ++seq) {
    CAVEMAN_RETURN_IF_ERROR(
        pg_->Run("INSERT INTO ccr_chunks (chunk_key, seq, data) VALUES ($1, $2::integer, $3::bytea)"
                 " ON CONFLICT (chunk_key, seq) DO UPDATE SET data = EXCLUDED.data",
                 {Text(key), Text(std::to_string(seq)), Bytes(frame.substr(off, kMaxChunkBytes))}));
  }
  return Status::OK();
}

Status PgStore::InsertRecord(const std::string& handle, const RecordInfo& info, uint64_t original_bytes,
                             uint64_t stored_bytes, const std::string* chunk_key) {
  std::optional<std::string> read_map;
  CAVEMAN_ASSIGN_OR_RETURN(const std::optional<std::string>* map, MarkerMapOf(info, &read_map));
  CAVEMAN_ASSIGN_OR_RETURN(
      PgResult r,
      pg_->Exec(
          "INSERT INTO ccr_recoveries (handle, content_type, compressor, tokens_before, tokens_after,"
          " original_bytes, stored_bytes, metadata, command, chunk_key, marker_map)"
          " VALUES ($1, $2, $3, $4::bigint, $5::bigint, $6::bigint, $7::bigint, $8::bytea, $9, $10, $11::bytea)"
          " ON CONFLICT (handle) DO NOTHING RETURNING 1",
          {Text(handle), Text(info.content_type), Text(info.compressor), Text(Dec(info.tokens_before)),
           Text(Dec(info.tokens_after)), Text(Dec(original_bytes)), Text(Dec(stored_bytes)),
           info.metadata.empty() ? Null() : Bytes(info.metadata), info.command.empty() ? Null() : Text(info.command),
           chunk_key == nullptr ? Null() : Text(*chunk_key), map->has_value() ? Bytes(**map) : Null()}));
  // Another writer committed the same original since RefreshExisting looked: this
  // transaction is rolled back and repeated, and then refreshes that record.
  if (r.rows() == 0) return pg_->Retry("ccr: concurrent put of " + handle);
  return Status::OK();
}

Status PgStore::PutFrame(const std::string& handle, const RecordInfo& info, const Spool& frame,
                         uint64_t original_bytes) {
  return Txn(*pg_, "BEGIN", [&]() -> Status {
    CAVEMAN_ASSIGN_OR_RETURN(bool refreshed, RefreshExisting(handle, info));
    if (refreshed) return Status::OK();
    const uint64_t stored = frame.size();
    if (stored + info.metadata.size() > options_.max_bytes) return BudgetExceeded();
    if (frame.in_memory()) {
      CAVEMAN_RETURN_IF_ERROR(InsertChunkRows(handle, frame.memory_view(), 0));
    } else {
      std::string buf;
      int64_t seq = 0;
      for (uint64_t off = 0; off < stored; off += kMaxChunkBytes, ++seq) {
        buf.clear();
        CAVEMAN_RETURN_IF_ERROR(frame.ReadRange(off, kMaxChunkBytes, &buf));
        CAVEMAN_RETURN_IF_ERROR(InsertChunkRows(handle, buf, seq));
      }
    }
    CAVEMAN_RETURN_IF_ERROR(InsertRecord(handle, info, original_bytes, stored, nullptr));
    // Last: the counter's row lock serialises writers only from here to COMMIT.
    return Charge(stored + info.metadata.size());
  });
}

// ---------------------------------------------------------------------------------------
// Get

Status PgStore::DecodeChunks(const std::string& key, uint64_t stored_bytes, int64_t max_rows,
                             internal::FrameDecoder& dec, ByteSink& sink, const std::function<bool()>* enough,
                             bool* stopped) {
  uint64_t total = 0;
  for (int64_t seq = 0; total < stored_bytes; ++seq) {
    if (max_rows >= 0 && seq >= max_rows) return Corrupt();
    // One row at a time: memory holds one ≤ 1 MiB chunk, however large the record.
    CAVEMAN_ASSIGN_OR_RETURN(PgResult r,
                             pg_->Exec("SELECT data FROM ccr_chunks WHERE chunk_key = $1 AND seq = $2::integer",
                                       {Text(key), Text(std::to_string(seq))}, /*binary_result=*/true));
    if (r.rows() != 1) return Corrupt();  // a missing row
    std::string_view data = r.Get(0, 0);
    if (data.size() > stored_bytes - total) return Corrupt();
    total += data.size();
    if (enough == nullptr) {
      CAVEMAN_RETURN_IF_ERROR(dec.Write(data, sink));
      continue;
    }
    // Sliced reads: 16 KiB of frame at a time, interrupted once the caller has enough.
    constexpr size_t kPiece = 16 * 1024;
    StopSink stop(sink, *enough);
    for (size_t at = 0; at < data.size(); at += kPiece) {
      Status w = dec.Write(data.substr(at, kPiece), stop);
      if (!w.ok() && !stop.stopped()) return w;
      if (stop.stopped() || (*enough)()) {
        *stopped = true;
        return Status::OK();
      }
    }
  }
  return Status::OK();
}

Status PgStore::ReadRecord(std::string_view handle, ByteSink& original, const std::function<bool()>* enough,
                           bool* stopped) {
  CAVEMAN_ASSIGN_OR_RETURN(PgResult rec, pg_->Exec("SELECT original_bytes, stored_bytes, coalesce(chunk_key, handle)"
                                                   " FROM ccr_recoveries WHERE handle = $1",
                                                   {Text(handle)}));
  if (rec.rows() == 0) return NotFound();
  const uint64_t original_bytes = rec.Count(0, 0);
  const uint64_t stored_bytes = rec.Count(0, 1);
  const std::string key(rec.Get(0, 2));
  CAVEMAN_ASSIGN_OR_RETURN(auto decoder, internal::FrameDecoder::New());
  VerifyingSink sink(original, original_bytes);
  bool stop = false;
  CAVEMAN_RETURN_IF_ERROR(DecodeChunks(key, stored_bytes, -1, *decoder, sink, enough, &stop));
  if (stop) {
    *stopped = true;
    return Status::OK();
  }
  CAVEMAN_RETURN_IF_ERROR(decoder->Finish());
  if (sink.bytes() != original_bytes) return Corrupt();
  if (sink.Handle() != handle) return Corrupt();
  return Status::OK();
}

// Reads run in one snapshot: the record row and its chunks agree even while gc deletes.
constexpr char kReadTxn[] = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

Status PgStore::Get(std::string_view handle, ByteSink& out) {
  if (!IsWellFormedHandle(handle)) return NotFound();
  Spool original(spool_options());
  CAVEMAN_RETURN_IF_ERROR(Txn(*pg_, kReadTxn, [&]() -> Status {
    original.Clear();
    return ReadRecord(handle, original, nullptr, nullptr);
  }));
  return original.CopyTo(out);  // only a fully verified original reaches the caller
}

Status PgStore::GetStreaming(std::string_view handle, ByteSink& out, const std::function<bool()>& enough,
                             bool* stopped) {
  if (stopped != nullptr) *stopped = false;
  if (!IsWellFormedHandle(handle)) return NotFound();
  // No repeat: bytes may already have reached `out`.
  CAVEMAN_RETURN_IF_ERROR(pg_->Run(kReadTxn));
  bool stop = false;
  Status s = ReadRecord(handle, out, &enough, &stop);
  if (s.ok()) s = pg_->Run("COMMIT");
  if (!s.ok()) pg_->RollbackQuietly();
  if (stopped != nullptr) *stopped = stop;
  return s;
}

Status PgStore::GetRange(std::string_view handle, uint64_t offset, uint64_t length, ByteSink& out) {
  if (!IsWellFormedHandle(handle)) return NotFound();
  if (length > UINT64_MAX - offset) return Status::InvalidArgument("ccr: byte range outside the original");
  Spool slice(spool_options());
  CAVEMAN_RETURN_IF_ERROR(Txn(*pg_, kReadTxn, [&]() -> Status {
    slice.Clear();
    internal::RangeSink range(slice, offset, offset + length);
    return ReadRecord(handle, range, nullptr, nullptr);
  }));
  if (slice.size() != length) return Status::InvalidArgument("ccr: byte range outside the original");
  return slice.CopyTo(out);
}

Result<std::string> PgStore::GetMetadata(std::string_view handle) {
  if (!IsWellFormedHandle(handle)) return NotFound();
  CAVEMAN_ASSIGN_OR_RETURN(PgResult r,
                           pg_->Exec("SELECT coalesce(metadata, ''::bytea) FROM ccr_recoveries WHERE handle = $1",
                                     {Text(handle)}, /*binary_result=*/true));
  if (r.rows() == 0) return NotFound();
  return std::string(r.Get(0, 0));
}

Result<std::optional<std::string>> PgStore::GetMarkerMap(std::string_view handle) {
  if (!IsWellFormedHandle(handle)) return NotFound();
  CAVEMAN_ASSIGN_OR_RETURN(PgResult r, pg_->Exec("SELECT marker_map FROM ccr_recoveries WHERE handle = $1",
                                                 {Text(handle)}, /*binary_result=*/true));
  if (r.rows() == 0) return NotFound();
  if (r.IsNull(0, 0)) return std::optional<std::string>();
  return std::optional<std::string>(std::string(r.Get(0, 0)));
}

// ---------------------------------------------------------------------------------------
// Stats and gc

Result<StoreStats> PgStore::Stats() {
  StoreStats stats;
  CAVEMAN_RETURN_IF_ERROR(Txn(*pg_, kReadTxn, [&]() -> Status {
    stats = StoreStats();
    CAVEMAN_ASSIGN_OR_RETURN(PgResult r, pg_->Exec("SELECT content_type, count(*), coalesce(sum(tokens_before), 0),"
                                                   " coalesce(sum(tokens_after), 0) FROM ccr_recoveries"
                                                   " GROUP BY content_type"));
    for (int i = 0; i < r.rows(); ++i) {
      ContentTypeTotals t;
      t.count = r.Count(i, 1);
      t.tokens_before = r.Count(i, 2);
      t.tokens_after = r.Count(i, 3);
      stats.totals.count += t.count;
      stats.totals.tokens_before += t.tokens_before;
      stats.totals.tokens_after += t.tokens_after;
      stats.by_content_type[std::string(r.Get(i, 0))] = t;
    }
    CAVEMAN_ASSIGN_OR_RETURN(PgResult u, pg_->Exec("SELECT used_bytes FROM ccr_usage WHERE id = 1"));
    if (u.rows() == 1) stats.storage_bytes = u.Count(0, 0);
    return Status::OK();
  }));
  stats.max_storage_bytes = options_.max_bytes;
  return stats;
}

Result<GcResult> PgStore::Gc(std::optional<uint64_t> older_than_seconds, bool dry_run) {
  GcResult result;
  const bool aged = older_than_seconds.has_value() && *older_than_seconds <= kMaxAgeSeconds;
  const std::string age = aged ? Dec(*older_than_seconds) : "0";
  CAVEMAN_RETURN_IF_ERROR(Txn(*pg_, "BEGIN", [&]() -> Status {
    result = GcResult();
    // The counter's lock first: no writer charges (and so commits a record) until gc has
    // recounted, so the recount below is exact.
    if (!dry_run) CAVEMAN_RETURN_IF_ERROR(pg_->Run("SELECT used_bytes FROM ccr_usage WHERE id = 1 FOR UPDATE"));

    // Partial records whose writer is gone: on this host, a writer that no longer runs; on any
    // host, with an age, one not synced for longer than it (the server's clock decides).
    CAVEMAN_ASSIGN_OR_RETURN(PgResult parts,
                             pg_->Exec("SELECT id, writer,"
                                       " $1::boolean AND updated_at < now() - $2::bigint * interval '1 second'"
                                       " FROM ccr_partials",
                                       {Bool(aged), Text(age)}));
    std::string abandoned = "{";
    for (int i = 0; i < parts.rows(); ++i) {
      const std::string_view id = parts.Get(i, 0), writer = parts.Get(i, 1);
      if (!IsWellFormedPartialId(id)) continue;
      const bool gone = internal::WriterOnThisHost(writer) && !internal::WriterAlive(writer);
      if (!gone && parts.Get(i, 2) != "t") continue;
      if (abandoned.size() > 1) abandoned += ",";
      abandoned += std::string(id);
    }
    abandoned += "}";

    // Records older than the age; in a write pass their chunk rows go with them.
    if (aged) {
      const char* sql =
          dry_run
              ? "SELECT count(*), coalesce(sum(stored_bytes + coalesce(length(metadata), 0)), 0) FROM ccr_recoveries"
                " WHERE created_at < now() - $1::bigint * interval '1 second'"
              : "WITH d AS (DELETE FROM ccr_recoveries WHERE created_at < now() - $1::bigint * interval '1 second'"
                "   RETURNING coalesce(chunk_key, handle) AS k, stored_bytes + coalesce(length(metadata), 0) AS n),"
                " c AS (DELETE FROM ccr_chunks WHERE chunk_key IN (SELECT k FROM d))"
                " SELECT count(*), coalesce(sum(n), 0) FROM d";
      CAVEMAN_ASSIGN_OR_RETURN(PgResult r, pg_->Exec(sql, {Text(age)}));
      result.removed = r.Count(0, 0);
      result.freed_bytes = r.Count(0, 1);
    }
    if (!dry_run) {
      CAVEMAN_RETURN_IF_ERROR(pg_->Run("DELETE FROM ccr_partials WHERE id = ANY($1::text[])", {Text(abandoned)}));
    }
    // Chunk rows no record and no (kept) partial record owns.
    const char* orphans =
        dry_run ? "SELECT count(*), coalesce(sum(length(data)), 0) FROM ccr_chunks c"
                  " WHERE NOT EXISTS (SELECT 1 FROM ccr_recoveries r WHERE r.handle = c.chunk_key)"
                  " AND NOT EXISTS (SELECT 1 FROM ccr_recoveries r WHERE r.chunk_key = c.chunk_key)"
                  " AND NOT EXISTS (SELECT 1 FROM ccr_partials p WHERE p.id = c.chunk_key AND p.id <> ALL($1::text[]))"
                : "WITH o AS (DELETE FROM ccr_chunks c"
                  " WHERE NOT EXISTS (SELECT 1 FROM ccr_recoveries r WHERE r.handle = c.chunk_key)"
                  " AND NOT EXISTS (SELECT 1 FROM ccr_recoveries r WHERE r.chunk_key = c.chunk_key)"
                  " AND NOT EXISTS (SELECT 1 FROM ccr_partials p WHERE p.id = c.chunk_key AND p.id <> ALL($1::text[]))"
                  " RETURNING length(data) AS n) SELECT count(*), coalesce(sum(n), 0) FROM o";
    CAVEMAN_ASSIGN_OR_RETURN(PgResult o, pg_->Exec(orphans, {Text(abandoned)}));
    result.orphan_chunks = o.Count(0, 0);
    result.freed_bytes += o.Count(0, 1);

    const char* used =
        dry_run ? "SELECT used_bytes FROM ccr_usage WHERE id = 1"
                : "UPDATE ccr_usage SET used_bytes ="
                  " (SELECT coalesce(sum(stored_bytes + coalesce(length(metadata), 0)), 0) FROM ccr_recoveries)"
                  " + (SELECT coalesce(sum(stored_bytes), 0) FROM ccr_partials) WHERE id = 1"
                  " RETURNING used_bytes";
    CAVEMAN_ASSIGN_OR_RETURN(PgResult u, pg_->Exec(used));
    if (u.rows() == 1) result.storage_bytes = u.Count(0, 0);
    return Status::OK();
  }));
  result.max_storage_bytes = options_.max_bytes;
  return result;
}

// ---------------------------------------------------------------------------------------
// Stream records (partial records of follow mode)

Status PgStreamWriter::Append(std::string_view data) {
  if (finished_) return Status::Internal("ccr: stream writer used after Commit or Abandon");
  if (!failed_.ok()) return failed_;
  sha_.Update(data);
  appended_ += data.size();
  StringAppendSink sink(&pending_);
  Status s = enc_->Write(data, sink);
  if (!s.ok()) failed_ = s;
  return s;
}

Status PgStreamWriter::Sync() {
  if (finished_) return Status::Internal("ccr: stream writer used after Commit or Abandon");
  if (!failed_.ok()) return failed_;
  if (row_written_ && synced_ == appended_) return Status::OK();
  StringAppendSink sink(&pending_);
  Status s = enc_->Flush(sink);
  if (s.ok()) s = store_->SyncPartial(*this);
  if (!s.ok()) {
    failed_ = s;
    return s;
  }
  pending_.clear();
  return Status::OK();
}

Status PgStreamWriter::Commit(const std::string& handle, const RecordInfo& info) {
  if (finished_) return Status::Internal("ccr: stream writer used after Commit or Abandon");
  Status s = failed_;
  if (s.ok() && !IsWellFormedHandle(handle)) s = Status::InvalidArgument("ccr: malformed recovery handle: " + handle);
  if (s.ok() && HandleFromDigest(sha_.Peek()) != handle) {
    s = Status::InvalidArgument("ccr: handle does not match the recorded bytes: " + handle);
  }
  if (s.ok()) {
    StringAppendSink sink(&pending_);
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

void PgStreamWriter::Abandon() {
  if (finished_) return;
  finished_ = true;
  pending_.clear();
  if (row_written_) store_->DropPartial(id_);
}

Status PgStore::SyncPartial(PgStreamWriter& w) {
  const uint64_t add = w.pending_.size();
  const int64_t rows = static_cast<int64_t>((add + kMaxChunkBytes - 1) / kMaxChunkBytes);
  const std::string prefix_hash = Sha256::Hex(w.sha_.Peek());
  CAVEMAN_RETURN_IF_ERROR(Txn(*pg_, "BEGIN", [&]() -> Status {
    CAVEMAN_RETURN_IF_ERROR(InsertChunkRows(w.id_, w.pending_, w.next_seq_));
    CAVEMAN_RETURN_IF_ERROR(pg_->Run(
        "INSERT INTO ccr_partials (id, writer, command, original_bytes, stored_bytes, prefix_sha256, next_seq)"
        " VALUES ($1, $2, $3, $4::bigint, $5::bigint, $6, $7::integer)"
        " ON CONFLICT (id) DO UPDATE SET updated_at = now(), original_bytes = EXCLUDED.original_bytes,"
        " stored_bytes = EXCLUDED.stored_bytes, prefix_sha256 = EXCLUDED.prefix_sha256, next_seq = EXCLUDED.next_seq",
        {Text(w.id_), Text(internal::CurrentWriterIdentity()), w.command_.empty() ? Null() : Text(w.command_),
         Text(Dec(w.appended_)), Text(Dec(w.stored_ + add)), Text(prefix_hash),
         Text(std::to_string(w.next_seq_ + rows))}));
    return Charge(add);
  }));
  w.row_written_ = true;
  w.next_seq_ += rows;
  w.stored_ += add;
  w.synced_ = w.appended_;
  return Status::OK();
}

Status PgStore::DeletePartialRows(const std::string& id, uint64_t* stored) {
  CAVEMAN_RETURN_IF_ERROR(pg_->Run("DELETE FROM ccr_chunks WHERE chunk_key = $1", {Text(id)}));
  CAVEMAN_ASSIGN_OR_RETURN(PgResult r,
                           pg_->Exec("DELETE FROM ccr_partials WHERE id = $1 RETURNING stored_bytes", {Text(id)}));
  *stored = r.rows() == 1 ? r.Count(0, 0) : 0;
  return Status::OK();
}

Status PgStore::CommitPartial(PgStreamWriter& w, const std::string& handle, const RecordInfo& info) {
  return Txn(*pg_, "BEGIN", [&]() -> Status {
    CAVEMAN_ASSIGN_OR_RETURN(bool refreshed, RefreshExisting(handle, info));
    uint64_t partial_stored = 0;
    if (refreshed) {
      // The same original is stored already: the partial copy goes.
      CAVEMAN_RETURN_IF_ERROR(DeletePartialRows(w.id_, &partial_stored));
      return Release(partial_stored);
    }
    CAVEMAN_RETURN_IF_ERROR(InsertChunkRows(w.id_, w.pending_, w.next_seq_));
    RecordInfo with_command = info;
    if (with_command.command.empty()) with_command.command = w.command_;
    CAVEMAN_RETURN_IF_ERROR(InsertRecord(handle, with_command, w.appended_, w.stored_ + w.pending_.size(), &w.id_));
    CAVEMAN_ASSIGN_OR_RETURN(PgResult r,
                             pg_->Exec("DELETE FROM ccr_partials WHERE id = $1 RETURNING stored_bytes", {Text(w.id_)}));
    // The record's size replaces the partial row's: net, the new frame bytes and metadata.
    const uint64_t was = r.rows() == 1 ? r.Count(0, 0) : 0;
    const uint64_t now_size = w.stored_ + w.pending_.size() + info.metadata.size();
    if (now_size >= was) return Charge(now_size - was);
    return Release(was - now_size);
  });
}

void PgStore::DropPartial(const std::string& id) {
  // Best effort: what stays behind is removed by gc once this process is gone.
  (void)Txn(*pg_, "BEGIN", [&]() -> Status {
    uint64_t stored = 0;
    CAVEMAN_RETURN_IF_ERROR(DeletePartialRows(id, &stored));
    return Release(stored);
  });
}

Result<std::vector<PartialInfo>> PgStore::ListPartials() {
  CAVEMAN_ASSIGN_OR_RETURN(PgResult r, pg_->Exec("SELECT id, " CCR_RFC3339("created_at") ", " CCR_RFC3339(
                                           "updated_at") ", original_bytes, stored_bytes, coalesce(command, ''), writer"
                                                         " FROM ccr_partials ORDER BY created_at, id"));
  std::vector<PartialInfo> out;
  for (int i = 0; i < r.rows(); ++i) {
    PartialInfo p;
    p.id = std::string(r.Get(i, 0));
    p.created_at = std::string(r.Get(i, 1));
    p.updated_at = std::string(r.Get(i, 2));
    p.original_bytes = r.Count(i, 3);
    p.stored_bytes = r.Count(i, 4);
    p.command = std::string(r.Get(i, 5));
    p.writer = internal::WriterDisplay(r.Get(i, 6));
    p.writer_alive = internal::WriterAlive(r.Get(i, 6));
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<RecordListing>> PgStore::ListRecords(std::string_view after, size_t limit) {
  // Binary results: the blobs come as they are; the integers as 8-byte big-endian values.
  CAVEMAN_ASSIGN_OR_RETURN(
      PgResult r,
      pg_->Exec("SELECT handle, content_type, compressor, tokens_before::text::bytea, tokens_after::text::bytea,"
                " original_bytes::text::bytea, coalesce(metadata, ''::bytea), coalesce(command, ''),"
                " marker_map IS NOT NULL, marker_map FROM ccr_recoveries WHERE handle COLLATE \"C\" > $1"
                " ORDER BY handle COLLATE \"C\" LIMIT $2::bigint",
                {Text(after), Text(Dec(limit))}, /*binary_result=*/true));
  std::vector<RecordListing> out;
  for (int i = 0; i < r.rows(); ++i) {
    RecordListing rec;
    rec.handle = std::string(r.Get(i, 0));
    rec.info.content_type = std::string(r.Get(i, 1));
    rec.info.compressor = std::string(r.Get(i, 2));
    rec.info.tokens_before = r.Count(i, 3);
    rec.info.tokens_after = r.Count(i, 4);
    rec.original_bytes = r.Count(i, 5);
    rec.info.metadata = std::string(r.Get(i, 6));
    rec.info.command = std::string(r.Get(i, 7));
    if (r.Get(i, 8) == std::string_view("\x01", 1)) rec.info.marker_map = std::string(r.Get(i, 9));
    out.push_back(std::move(rec));
  }
  return out;
}

Status PgStore::GetPartial(std::string_view id, ByteSink& out) {
  if (!IsWellFormedPartialId(id)) return PartialNotFound();
  Spool original(spool_options());
  CAVEMAN_RETURN_IF_ERROR(Txn(*pg_, kReadTxn, [&]() -> Status {
    original.Clear();
    CAVEMAN_ASSIGN_OR_RETURN(PgResult rec, pg_->Exec("SELECT original_bytes, stored_bytes, prefix_sha256, next_seq"
                                                     " FROM ccr_partials WHERE id = $1",
                                                     {Text(id)}));
    if (rec.rows() == 0) return PartialNotFound();
    const uint64_t original_bytes = rec.Count(0, 0);
    const uint64_t stored_bytes = rec.Count(0, 1);
    const std::string prefix_hash(rec.Get(0, 2));
    const int64_t rows = static_cast<int64_t>(rec.Count(0, 3));
    CAVEMAN_ASSIGN_OR_RETURN(auto decoder, internal::FrameDecoder::New());
    VerifyingSink sink(original, original_bytes);
    CAVEMAN_RETURN_IF_ERROR(DecodeChunks(std::string(id), stored_bytes, rows, *decoder, sink, nullptr, nullptr));
    CAVEMAN_RETURN_IF_ERROR(decoder->FinishPrefix());
    if (sink.bytes() != original_bytes || sink.HexDigest() != prefix_hash) return Corrupt();
    return Status::OK();
  }));
  return original.CopyTo(out);
}

}  // namespace

Result<std::unique_ptr<RecoveryStore>> OpenPostgresStore(const StoreOptions& options) {
  auto fail = [](const Status& s) {
    // "ccr: recovery store unavailable: URL: why" reads "cannot open recovery store: URL: why".
    std::string m = s.message();
    constexpr std::string_view kPrefix = "ccr: recovery store unavailable: ";
    if (m.starts_with(kPrefix)) m = m.substr(kPrefix.size());
    return Status::IoError("cannot open recovery store: " + m);
  };
  if (!IsPostgresUrl(options.url)) return fail(Status::InvalidArgument("not a postgresql:// URL"));
  if (options.zstd_level < internal::kMinZstdLevel || options.zstd_level > internal::kMaxZstdLevel) {
    return fail(Status::InvalidArgument("zstd level must be an integer from 1 to 19"));
  }
  if (options.max_bytes == 0) return fail(Status::InvalidArgument("capacity must be a positive number of bytes"));
  auto pg = Pg::Connect(options.url);
  if (!pg.ok()) return fail(pg.status());
  auto store = std::make_unique<PgStore>(options, std::move(pg).value());
  Status s = store->InitSchema();
  if (!s.ok()) {
    const std::string url = RedactUrl(options.url);
    return fail(
        s.message().starts_with("ccr: recovery store unavailable: ") ? s : Status::IoError(url + ": " + s.message()));
  }
  return std::unique_ptr<RecoveryStore>(std::move(store));
}

}  // namespace caveman
