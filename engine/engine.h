// Engine API (§2): the public entry point of the library.
//
// HowTo:
//   auto store = caveman::OpenSqliteStore(*caveman::StoreOptions::FromEnv());
//   caveman::Engine engine({.store = store->get()});
//   caveman::CompressOptions o; o.mode = caveman::Mode::kCompress;
//   auto source = caveman::NewFdSource(0);
//   caveman::CompressResult r = engine.Compress(*source, o, *caveman::NewFdSink(1));
//
// Compress reads the input in chunks, computing SHA-256, the token count and the zstd frame
// of the original while reading; the transformed output is spooled (bounded memory, spill to
// a 0600 temporary file) until the size gate decides; the original is committed to the store
// before any transformed byte is written to the sink (§1.3, §1.4).
//
// Thread-safety: an Engine is immutable after construction (every method is const) except
// for the store it points to; use one Engine per thread when they share a store object.
// Constructing one has no process-wide effect: no environment variable is read and the
// allocator is not tuned (the CLI does both).
#ifndef CAVEMAN_ENGINE_ENGINE_H_
#define CAVEMAN_ENGINE_ENGINE_H_

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "caveman/stream/export.h"
#include "caveman/store/store.h"
#include "caveman/stream/byte_io.h"
#include "caveman/stream/status.h"
#include "caveman/stream/tokens.h"
#include "caveman/version.h"

namespace caveman {

enum class Mode : uint8_t { kRecord, kCompress };

// Parses §2.2 mode strings: "compress" → kCompress, anything else (empty, unknown) → kRecord.
CAVEMAN_EXPORT Mode ParseMode(std::string_view mode);

struct CompressResult;

struct CAVEMAN_EXPORT CompressOptions {
  Mode mode = Mode::kRecord;       // Default: record (pass-through).
  std::string type;                // forced content type; empty or "auto" = detect
  std::string query;               // empty = no query
  bool external_recovery = false;  // caller stores the original itself
  // Inputs larger than this are not held for the batch pipeline (issue 13): Compress then
  // continues a line type (log, terminal, repetition) on the streaming follow path, and
  // passes any other type through unchanged with error cave_input_too_large. Simulate
  // rejects them with kResourceExhausted. Default: no limit (the CLI sets 64 MiB).
  uint64_t max_input_bytes = UINT64_MAX;
  // `run`: the command line (recorded with the record; CompressFollowFd uses HintForCommand
  // of it as a detection hint). Empty for plain compress.
  std::string command;
  // A content type that wins over detection unless detection finds a structural type (json,
  // html, diff, test-report). Set by `run` from the command (HintForCommand). Empty = none.
  std::string type_hint;
  // Called by Compress (batch path) after the record is committed and before the view is
  // written, with the result as it will be returned (bytes_out = the view's size). Returning
  // false keeps the view back: the original passes through instead (reason kReportFailed;
  // the record stays stored). The CLI writes its report here, so a lossy view is only
  // released once its report, with the recovery handle, has been written (issue 15).
  std::function<bool(const CompressResult&)> before_view;
  // Content types that are never compressed (issue 17, the CLI's config file): a forced or
  // detected type in this list passes through (kNeverCompress); "*" matches every type.
  // Follow mode hands such a type to the batch path, which passes it through.
  std::vector<std::string> never_types;
  // Minimum share of tokens a view must save, in [0, 1): a batch view that saves less passes
  // through (kBelowMinSavings). 0 = any saving. Follow-mode views are written as the input
  // arrives and are not held back by it.
  double min_savings = 0;
};

// Why Compress passed the original through. Not part of the §8.1 report line (whose members
// are fixed); for human-readable reports and for callers that want to know.
enum class PassThroughReason : uint8_t {
  kNone,        // a view was emitted
  kRecordMode,  // Mode::kRecord: compression not requested
  kEmptyInput,
  kNoCompressor,       // no registered compressor for the (forced or detected) type
  kNoStore,            // no store and no external recovery: a lossy view may not be emitted
  kDeclined,           // the compressor found nothing it could do with this input
  kNoChange,           // the transform returned the input unchanged
  kUnstable,           // the view kept changing under re-compression (§1.5)
  kNotSmaller,         // the view would not count fewer tokens
  kStoreFailed,        // the original could not be stored (see CompressResult::error)
  kInputTooLarge,      // over max_input_bytes and no streaming compressor for its type
  kReportFailed,       // CompressOptions::before_view refused (the report could not be written)
  kOutOfMemory,        // memory ran out (std::bad_alloc; while reading: the spill file failed too): original passed
  kOverMemoryCeiling,  // the compressor would need more than 3x the input + 64 MiB of memory
  kNeverCompress,      // the content type is in CompressOptions::never_types
  kBelowMinSavings,    // the view would save less than CompressOptions::min_savings
};
// One short English phrase, e.g. "the view would not count fewer tokens".
CAVEMAN_EXPORT const char* PassThroughReasonText(PassThroughReason reason);

struct CAVEMAN_EXPORT CompressResult {
  std::string content_type;
  uint64_t tokens_before = 0;
  uint64_t tokens_after = 0;
  std::string token_count_basis;
  double ratio = 0;
  std::string recovery_handle;            // empty unless stored
  std::string method;                     // empty on pass-through
  std::optional<bool> lossless_to_model;  // empty on pass-through
  std::string error;                      // cave_ccr_budget_exceeded / cave_ccr_unavailable
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  PassThroughReason pass_through_reason = PassThroughReason::kNone;
  bool follow = false;  // the view was streamed as input arrived (follow path)
  // Follow path: the partial record that holds the original (a prefix of it) when the record
  // could not be finalised (store ceiling or failure); `error` then says why.
  std::string partial_record;
  bool passed_through() const { return method.empty(); }
  // §8.1 report line (without LF).
  std::string ReportJson() const;
};

// §2.5: the pipeline without store writes.
struct CAVEMAN_EXPORT SimResult {
  std::string content_type;
  std::string compressor;    // empty on pass-through
  std::string safety_class;  // "S4"; empty on pass-through
  uint64_t tokens_before = 0;
  uint64_t tokens_after = 0;
  std::string token_count_basis;
  double ratio = 0;
  bool requires_ccr = false;
  bool recoverable = true;
  std::string method;
  std::optional<bool> lossless_to_model;
  std::string output;  // the view that Compress would emit (original on pass-through)
  bool lossy() const { return lossless_to_model.has_value() && !*lossless_to_model; }
  // §8.2 JSON (without LF).
  std::string ToJson() const;
};

// Sliced retrieve (issue 14; docs/DECISIONS.md "Sliced retrieve"). One slice kind at a time.
struct CAVEMAN_EXPORT RetrieveSliceOptions {
  enum class Kind : uint8_t { kWhole, kLines, kBytes, kJsonPointer, kGrep };
  Kind kind = Kind::kWhole;
  // kLines: first..last, 1-based, inclusive (sed -n A,Bp). kBytes: [first, last), 0-based
  // (last = end offset, exclusive). UINT64_MAX = to the end.
  uint64_t first = 0;
  uint64_t last = UINT64_MAX;
  std::string json_pointer;  // kJsonPointer: RFC 6901 ("" = the whole document)
  std::string grep;          // kGrep: pattern (Hyperscan/PCRE syntax)
  // kGrep: lines of context before and after each match; set (even 0) = `grep -C N`, with
  // "--" between groups; unset = plain `grep -n`, no separators.
  std::optional<uint64_t> context;
  // Non-empty: the original is narrowed first (as RetrieveQuery), and lines/bytes/grep apply
  // to the narrowed text. Not allowed with kJsonPointer or a partial record.
  std::string query;
};

// Parses a --lines / --bytes range: "A:B", "A:", ":B", and for lines also "N" (= N:N).
// Lines are 1-based inclusive, bytes 0-based half-open. Errors: kInvalidArgument with a
// message that says what is expected.
CAVEMAN_EXPORT Status ParseSliceRange(std::string_view spec, RetrieveSliceOptions::Kind kind,
                                      RetrieveSliceOptions* options);

// One elision marker of a stored view and the original units it replaced (issue 14; the
// conventions are in docs/DECISIONS.md, "Marker maps"). Lines are 1-based and inclusive,
// bytes are 0-based and half-open: the marker stands for original[byte_begin, byte_end).
struct CAVEMAN_EXPORT MarkerEntry {
  uint64_t index = 0;       // K: 1-based, in the order the markers appear in the view
  std::string kind;         // lines, identical, context, search, config, rows, sections,
                            // comment, body, elements
  uint64_t view_line = 0;   // 1-based line of the view that holds the marker
  uint64_t count = 0;       // units it stands for (the N of its text; 1 for a body)
  uint64_t first_line = 0;  // original lines holding [byte_begin, byte_end)
  uint64_t last_line = 0;
  uint64_t byte_begin = 0;
  uint64_t byte_end = 0;
  // JSON: the array (RFC 6901 pointer into the original, indices as in the original) and
  // the 0-based inclusive element indices; pointer empty and indices -1 otherwise.
  std::string pointer;
  int64_t first_index = -1;
  int64_t last_index = -1;
};

struct CAVEMAN_EXPORT EngineOptions {
  RecoveryStore* store = nullptr;         // not owned; nullptr = no store
  const TokenCounter* counter = nullptr;  // nullptr = DefaultTokenCounter()
  // The json slot holds the best-of selector (§5.1.7): JSON input may come out as TOON when
  // that counts fewer tokens. Default: false. (The CLI sets it from CAVE_ENGINE_TOON=best-of;
  // the library reads no environment variable of its own.)
  bool json_best_of = false;
  std::string temp_dir;                         // spill directory for spools; empty = $TMPDIR
  size_t spool_memory_limit = 4 * 1024 * 1024;  // per spool; Default: 4 MiB
};

class CAVEMAN_EXPORT Engine {
 public:
  explicit Engine(EngineOptions options = {});
  ~Engine();
  // Movable, not copyable. A moved-from Engine may only be destroyed or assigned to.
  Engine(Engine&&) noexcept;
  Engine& operator=(Engine&&) noexcept;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Compresses `in` into `out` (§1.3). The payload (output or original) is written to `out`
  // only after the gate and the store have decided — except for inputs over
  // max_input_bytes, which stream (see CompressOptions::max_input_bytes; result.follow tells).
  // Status errors: kIoError for read/write failures of `in`/`out`. A store failure is not a
  // Status: the original passes through and result.error says why.
  Result<CompressResult> Compress(ByteSource& in, const CompressOptions& options, ByteSink& out) const;
  // Byte-span convenience; the output is returned in `out`.
  Result<CompressResult> Compress(std::string_view input, const CompressOptions& options, std::string* out) const;
  // Standard-stream convenience: reads `in` to its end in chunks (never whole into memory)
  // and writes the payload to `out`, flushed. Same contract as the ByteSource overload.
  Result<CompressResult> Compress(std::istream& in, const CompressOptions& options, std::ostream& out) const;
  // File-descriptor convenience (neither descriptor is closed): e.g. CompressFd(0, o, 1).
  Result<CompressResult> CompressFd(int in_fd, const CompressOptions& options, int out_fd) const;

  // Follow mode (`compress --follow`, `run`): reads `in_fd` as data arrives (poll), detects
  // the type on the first 64 KiB or first second, and for the line types (repetition, log
  // incl. JSON Lines, terminal) writes every kept line to `out` (flushed) as soon as it is
  // decided; markers are written only after the bytes they replace are committed to the store
  // as a partial record, which is finalised under the content-addressed handle at end of
  // input. Other types take the batch path (inputs over max_input_bytes then pass through
  // with error cave_input_too_large). No input size limit on the line types. A pipe on
  // `in_fd` is grown to 256 KiB where the system allows (F_SETPIPE_SZ): fewer, larger reads.
  // Status errors: kIoError for read/write failures of in_fd/out.
  Result<CompressResult> CompressFollowFd(int in_fd, const CompressOptions& options, ByteSink& out) const;

  std::string Detect(std::string_view input) const;
  Result<SimResult> Simulate(std::string_view input, const CompressOptions& options) const;
  Result<SimResult> Simulate(ByteSource& in, const CompressOptions& options) const;

  // Errors: kNotFound, kCorruption, kNotSupported (no store).
  Status Retrieve(std::string_view handle, ByteSink& out) const;
  Status Retrieve(std::string_view handle, std::ostream& out) const;
  Status RetrieveQuery(std::string_view handle, std::string_view query, ByteSink& out) const;
  // A slice of the original of `handle` (a ccr_ handle, or a part_ id without query). Lines
  // and bytes stop decompressing once past the range (their bytes are then not verified
  // against the record's checksum and hash; the whole-record paths are). The slice is
  // spooled and written to `out` only when complete. Errors: as Retrieve, plus
  // kInvalidArgument (bad pattern or pointer, slice + query combinations) and kNotFound
  // ("no value at JSON pointer P").
  Status RetrieveSlice(std::string_view handle, const RetrieveSliceOptions& slice, ByteSink& out) const;
  Result<std::string> RetrieveMetadata(std::string_view handle) const;
  // The marker map of the record's latest view, markers in view order. Errors: kNotFound,
  // kCorruption (unreadable map), kNotSupported when the record has no map: stored before
  // schema 3 (message "ccr: no marker map: the record was stored before marker maps"), or its
  // view could not be aligned with its original ("ccr: no marker map: …" with the reason).
  Result<std::vector<MarkerEntry>> RetrieveMarkerMap(std::string_view handle) const;
  // Exactly the original bytes marker `k` (1-based) replaced, decoded from the stored frame
  // (only that range is held). Errors: those of RetrieveMarkerMap; kInvalidArgument when k is
  // outside 1..markers ("marker K out of range: the record has M markers").
  Status RetrieveMarker(std::string_view handle, uint64_t k, ByteSink& out) const;
  Result<StoreStats> Stats() const;

  const TokenCounter& counter() const;

 private:
  struct Impl;  // engine/internal/engine_impl.h
  std::unique_ptr<const Impl> impl_;
};

// Version of the library linked ("0.1.0"): CAVEMAN_VERSION_STRING of <caveman/version.h> as
// the library was built (the macros in a consumer are the version it was compiled against).
CAVEMAN_EXPORT const char* LibraryVersion();

// Opens the recovery store the CLI uses: StoreOptions::FromEnv() (CAVEMAN_CCR_URL, else
// CAVEMAN_CCR_DB, CAVEMAN_HOME or ~/.caveman; CAVEMAN_CCR_MAX_BYTES, CAVEMAN_CCR_ZSTD_LEVEL),
// then OpenRecoveryStore (PostgreSQL or SQLite). Errors: those of FromEnv and the backend's
// open (CLI-ready messages).
CAVEMAN_EXPORT Result<std::unique_ptr<RecoveryStore>> OpenDefaultStore();

}  // namespace caveman

#endif  // CAVEMAN_ENGINE_ENGINE_H_
