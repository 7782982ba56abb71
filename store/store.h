// Recovery store (§6): the exact original of every lossy result, zstd-compressed (streaming
// API, content checksum on) in chunk rows of a SQLite database, written in one transaction
// per record so a record is visible only when complete.
//
// HowTo (write):
//   auto w = store->BeginRecord();          // before reading input
//   w->Append(chunk) ... for every chunk    // compresses into a temporary spool
//   w->Commit(handle, info)  or  w->Abandon()
// HowTo (read): store->Get(handle, sink) writes the original only after it has been fully
// decompressed and verified (checksum, length, SHA-256 prefix); on failure nothing is
// written to `sink`.
//
// Thread-safety: a RecoveryStore may be used by one thread at a time; several processes may
// write one database at once (WAL, busy timeout 5 s).
//
// Error messages are user-facing and exact (§9): kNotFound "ccr: recovery handle not found",
// kCorruption "ccr: corrupt recovery record", kResourceExhausted "ccr: storage budget
// exceeded"; open failures carry the full CLI message ("cannot create ~/.caveman: E",
// "cannot resolve home directory: E", "cannot open recovery store: E").
#ifndef CAVEMAN_STORE_STORE_H_
#define CAVEMAN_STORE_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "caveman/stream/export.h"
#include "caveman/stream/byte_io.h"
#include "caveman/stream/status.h"

namespace caveman {

inline constexpr uint64_t kDefaultStoreCapacity = 536870912;  // 512 MiB of stored bytes

struct CAVEMAN_EXPORT StoreOptions {
  // PostgreSQL connection URL (postgresql://... or postgres://...; libpq syntax, TLS and auth
  // parameters included). Non-empty selects the PostgreSQL backend and `path` is unused.
  std::string url;
  // Database path; ":memory:" (or empty with in_memory) for a private in-memory store.
  std::string path;
  // Capacity in stored (compressed) bytes. Default: 512 MiB.
  uint64_t max_bytes = kDefaultStoreCapacity;
  // zstd level for originals, 1..19. Default: 3.
  int zstd_level = 3;
  // Bytes of a record's frame (writer) or original (Get) held in memory before spilling to
  // a 0600 temporary file. Default: 8 MiB.
  size_t spool_memory_limit = 8 * 1024 * 1024;
  // TEST ONLY: PRAGMA max_page_count for this connection (0 = SQLite's default), to
  // simulate a full disk (SQLITE_FULL). Pages are 4 KiB (a new database).
  uint64_t max_page_count = 0;
  // Opened for reading (retrieve, stats): the modes of existing files are checked, never
  // changed (a deliberately read-only 0400 ccr.db stays 0400 and is opened read-only).
  bool read_only = false;

  // Resolves §6.2/§9 environment: CAVEMAN_CCR_URL (issue 18: when set, the PostgreSQL store;
  // the home directory is then neither resolved nor created), CAVEMAN_CCR_DB, CAVEMAN_HOME,
  // HOME; CAVEMAN_CCR_MAX_BYTES, CAVEMAN_CCR_ZSTD_LEVEL. Creates the home directory (0700) when it is the default or
  // CAVEMAN_HOME. Errors: kInvalidArgument (bad variable, message names it), kIoError with
  // the CLI message.
  static Result<StoreOptions> FromEnv();
};

struct CAVEMAN_EXPORT RecordInfo {
  std::string content_type;
  std::string compressor;
  uint64_t tokens_before = 0;
  uint64_t tokens_after = 0;
  std::string metadata;  // recovery metadata blob (may be empty)
  std::string command;   // `run`: the command line that produced the original (may be empty)
  // The marker map of the view emitted with this record (engine/marker_map.h serialises it;
  // opaque here). nullopt: none computed, stored as NULL. Replaced on every put of the same
  // original (the map describes the latest view).
  std::optional<std::string> marker_map;
  // The same map, not held in memory (follow mode, where a long run's map is tens of
  // megabytes): its size and a reader of its bytes from the first; used when marker_map is
  // nullopt and marker_map_reader is set. The SQLite store copies it into the record in pieces;
  // the PostgreSQL store reads it whole first. The reader must give exactly
  // marker_map_size bytes (else the put fails with kIoError).
  uint64_t marker_map_size = 0;
  std::function<std::unique_ptr<ByteSource>()> marker_map_reader;

  // marker_map, or the reader's bytes read whole; nullopt when neither is set.
  // Errors: the reader's, or kIoError when it gives more or fewer than marker_map_size bytes.
  Result<std::optional<std::string>> MarkerMapBytes() const;
};

// Lifetime: a RecordWriter must not outlive the RecoveryStore that made it.
class CAVEMAN_EXPORT RecordWriter {
 public:
  virtual ~RecordWriter() = default;
  // Appends original bytes. Errors: kIoError (spool).
  virtual Status Append(std::string_view data) = 0;
  // Appends the last original bytes: only Commit or Abandon follows, and `data` stays valid
  // and unchanged until then. A writer may then compress the bytes where they are instead of
  // copying them through its window; the default is Append. Errors: as Append.
  virtual Status AppendLast(std::string_view data) { return Append(data); }
  // Says that nothing more will be appended: a writer may finish its work on the bytes now
  // (the built-in writers end their zstd frame), on the caller's thread, so that Commit has
  // only the record to write. Optional; Commit finishes whatever is left. Errors: as Append.
  virtual Status EndOfInput() { return Status::OK(); }
  // Finishes the frame and writes the record in one transaction under `handle`
  // (ccr_<32 hex>, computed by the caller from the bytes appended). Put semantics of §6.5.
  // Errors: kInvalidArgument (handle malformed or not the SHA-256 prefix of the bytes
  // appended), kResourceExhausted (capacity or disk full), kIoError / kInternal otherwise.
  // Afterwards (success or not) the writer is finished; only Abandon() may follow.
  virtual Status Commit(const std::string& handle, const RecordInfo& info) = 0;
  // Drops everything appended. Idempotent.
  virtual void Abandon() = 0;
  // The handle (ccr_ + 32 hex of the SHA-256) of every byte appended so far, if this writer
  // hashes what it is given (the built-in stores' writers do, to check Commit's handle);
  // std::nullopt if it does not. A caller that needs the handle of the same bytes can take it
  // from here instead of hashing them a second time. Not concurrently with Append.
  virtual std::optional<std::string> AppendedHandle() const { return std::nullopt; }
};

// A record written while its original is still arriving (follow mode, `run`). Appended bytes
// are compressed into one zstd frame (checksum on); Sync() flushes the frame and commits the
// new chunk rows, plus the partial row (bytes covered, SHA-256 of that prefix), in one
// transaction, so after Sync() returns OK everything appended so far survives a SIGKILL of
// this process as a *partial record* (id "part_" + 32 hex). Commit() ends the frame and turns
// the partial record into the complete record `handle` (same handle as a batch put of the
// same bytes) in one transaction; if that record already exists, the partial one is dropped.
//
// HowTo:
//   auto w = store->BeginStreamRecord("make -j2");
//   w->Append(bytes) ...; w->Sync() before emitting anything whose original must be stored;
//   w->Commit(handle, info)  or  w->Abandon() (deletes the partial record)
// A writer destroyed without Commit/Abandon leaves its partial record (what was synced).
class CAVEMAN_EXPORT StreamRecordWriter {
 public:
  virtual ~StreamRecordWriter() = default;
  // Compresses `data` into the pending frame (memory; not durable until Sync).
  // Errors: kInternal (zstd).
  virtual Status Append(std::string_view data) = 0;
  // Makes every appended byte durable as part of the partial record. Errors:
  // kResourceExhausted "ccr: storage budget exceeded" (capacity, or disk full), kIoError
  // otherwise. After an error nothing more is synced (the partial record keeps what was).
  virtual Status Sync() = 0;
  virtual uint64_t appended_bytes() const = 0;
  virtual uint64_t synced_bytes() const = 0;  // original bytes a partial Get returns
  virtual const std::string& partial_id() const = 0;
  // The content-addressed handle (ccr_ + SHA-256 prefix) of every byte appended so far, so a
  // caller need not hash the stream a second time.
  virtual std::string handle() const = 0;
  // Finishes the frame and publishes the complete record (§6.5 put semantics). Errors as
  // RecordWriter::Commit. On failure the partial record stays (with what was synced).
  virtual Status Commit(const std::string& handle, const RecordInfo& info) = 0;
  // Deletes the partial record. Idempotent.
  virtual void Abandon() = 0;
};

// One complete record as ListRecords returns it (store migrate).
struct CAVEMAN_EXPORT RecordListing {
  std::string handle;
  uint64_t original_bytes = 0;
  RecordInfo info;  // everything a put of the same original would store
};

struct CAVEMAN_EXPORT PartialInfo {
  std::string id;               // part_<32 hex>
  std::string created_at;       // RFC 3339 UTC
  std::string updated_at;       // time of the last Sync
  uint64_t original_bytes = 0;  // bytes a GetPartial returns
  uint64_t stored_bytes = 0;
  std::string command;
  std::string writer;         // "host:pid"
  bool writer_alive = false;  // same host and the writing process still runs
};

struct CAVEMAN_EXPORT ContentTypeTotals {
  uint64_t count = 0;
  uint64_t tokens_before = 0;
  uint64_t tokens_after = 0;
};

struct CAVEMAN_EXPORT StoreStats {
  ContentTypeTotals totals;
  std::map<std::string, ContentTypeTotals> by_content_type;  // sorted by type
  uint64_t storage_bytes = 0;
  uint64_t max_storage_bytes = 0;
};

struct CAVEMAN_EXPORT GcResult {
  uint64_t removed = 0;        // records deleted (or that would be, with dry_run)
  uint64_t freed_bytes = 0;    // their stored size (stored + metadata) + orphan chunk bytes
  uint64_t orphan_chunks = 0;  // chunk rows without a record
  uint64_t storage_bytes = 0;  // after the run
  uint64_t max_storage_bytes = 0;
};

class CAVEMAN_EXPORT RecoveryStore {
 public:
  virtual ~RecoveryStore() = default;
  virtual Result<std::unique_ptr<RecordWriter>> BeginRecord() = 0;
  // Writes the verified original to `out` (nothing on error).
  virtual Status Get(std::string_view handle, ByteSink& out) = 0;
  // Sliced retrieve: writes the original to `out` as it is decompressed, before it has been
  // verified, and stops decompressing (setting *stopped, returning OK) as soon as `enough()`
  // returns true after a piece. A read that runs to the end is verified like Get (checksum,
  // length, SHA-256 prefix); a failure then returns kCorruption after bytes were written, so
  // callers that must not show unverified bytes spool them first. The default is Get.
  virtual Status GetStreaming(std::string_view handle, ByteSink& out, const std::function<bool()>& enough,
                              bool* stopped);
  virtual Result<std::string> GetMetadata(std::string_view handle) = 0;
  // The record's marker map blob; nullopt when it has none (stored before schema 3, or by a
  // writer that gave none). Errors: kNotFound. Default: nullopt for every existing record.
  virtual Result<std::optional<std::string>> GetMarkerMap(std::string_view handle);
  // Writes bytes [offset, offset + length) of the verified original to `out` (nothing on
  // error). The whole frame is decoded and verified; only the range is held (spooled).
  // Errors: as Get; kInvalidArgument when the range lies outside the original.
  virtual Status GetRange(std::string_view handle, uint64_t offset, uint64_t length, ByteSink& out);
  virtual Result<StoreStats> Stats() = 0;
  // older_than_seconds: records created earlier than now - age are removed; nullopt removes
  // only orphan chunks. Always checkpoints the WAL (unless dry_run).
  virtual Result<GcResult> Gc(std::optional<uint64_t> older_than_seconds, bool dry_run) = 0;

  // Complete records in handle order, those after `after` (exclusive; "" = from the start),
  // at most `limit` of them: pages for `store migrate` (issue 18). Default: kNotSupported.
  virtual Result<std::vector<RecordListing>> ListRecords(std::string_view after, size_t limit);

  // Follow mode. The defaults say the store cannot do it (kNotSupported / nothing listed).
  virtual Result<std::unique_ptr<StreamRecordWriter>> BeginStreamRecord(std::string_view command);
  // Partial records, oldest first. gc removes those whose writer is gone (their chunks count
  // as orphan_chunks) and, with an age, those not synced for longer than it.
  virtual Result<std::vector<PartialInfo>> ListPartials();
  // The bytes of a partial record (a prefix of the original), verified against the length
  // and SHA-256 recorded with its last Sync. Errors: kNotFound, kCorruption.
  virtual Status GetPartial(std::string_view id, ByteSink& out);
};

// "part_" + 32 lowercase hex digits.
CAVEMAN_EXPORT bool IsWellFormedPartialId(std::string_view id);

// Opens (creating if needed) the SQLite store at options.path with the file rules of §6.2.
// Errors: message "cannot open recovery store: E".
CAVEMAN_EXPORT Result<std::unique_ptr<RecoveryStore>> OpenSqliteStore(const StoreOptions& options);
// Opens the PostgreSQL store at options.url (issue 18): libpq connects with the URL as given
// (connect_timeout=10 unless the URL sets one; up to 3 attempts with back-off), then creates
// or migrates the schema under a transaction-scoped advisory lock. Errors: kIoError "cannot
// open recovery store: <URL without password>: <libpq message>". Schema: store/README.md.
CAVEMAN_EXPORT Result<std::unique_ptr<RecoveryStore>> OpenPostgresStore(const StoreOptions& options);
// The backend options select: PostgreSQL when options.url is set, else SQLite at options.path.
CAVEMAN_EXPORT Result<std::unique_ptr<RecoveryStore>> OpenRecoveryStore(const StoreOptions& options);
// True for postgresql:// and postgres:// URLs.
CAVEMAN_EXPORT bool IsPostgresUrl(std::string_view url);
// `url` with any password (user:PASSWORD@ or password=...) replaced by "***", for messages.
CAVEMAN_EXPORT std::string RedactUrl(std::string_view url);

// A private in-memory SQLite store with the same code paths (for tests and library users).
CAVEMAN_EXPORT Result<std::unique_ptr<RecoveryStore>> OpenMemoryStore(const StoreOptions& options = {});

}  // namespace caveman

#endif  // CAVEMAN_STORE_STORE_H_
