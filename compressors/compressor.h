// Compressor: one deterministic transform of one content type (§2.7, §5).
//
// A compressor reads its body (re-readable, possibly spilled to disk) and writes its
// candidate output to a sink. It never judges its own worth against the original in tokens:
// the engine's size gate does that once for all compressors. It may decline, in which case
// whatever it wrote is discarded and the engine forwards the original.
//
// Thread-safety: compressors are immutable after construction (Stage); Transform is const
// and may run concurrently on different bodies. Per-call state lives on the stack or in a
// State object created inside Transform.
#ifndef CAVEMAN_COMPRESSORS_COMPRESSOR_H_
#define CAVEMAN_COMPRESSORS_COMPRESSOR_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "caveman/stream/byte_io.h"
#include "stream/spool.h"
#include "caveman/stream/status.h"

namespace caveman {

// Safety classes of §1.2. Persisted in nothing; values fixed for readability only.
enum class SafetyClass : uint8_t { kS0 = 0, kS1 = 1, kS2 = 2, kS3 = 3, kS4 = 4 };

enum class TransformOutcome : uint8_t {
  kAccepted,  // the sink holds the candidate output
  kDeclined,  // forward the original; the sink content is ignored
};

// A byte range of the body a compressor replaced, reported for the marker map (issue 14) by
// compressors whose markers carry no count of lines (code bodies and comment blocks).
struct ElidedSpan {
  uint64_t begin = 0, end = 0;            // body bytes [begin, end) that were dropped
  uint64_t view_begin = 0, view_end = 0;  // the output bytes standing for them (the marker)
  std::string kind;                       // "body", "comment"
  uint64_t count = 0;                     // units (1 body, or the N comment lines)
};

// Optional metadata a metadata-aware compressor returns with an accepted output.
struct TransformMeta {
  std::string method;                     // empty = the content type
  std::optional<bool> lossless_to_model;  // empty = class reversibility (false for S4)
  std::string recovery_metadata;          // stored in the record's metadata column
  std::vector<ElidedSpan> elided;         // side channel for the marker map; may stay empty
  // Set with kDeclined when the body would break the memory ceiling (memory_model()); the
  // engine then streams a line type through its online stage instead (issue 15).
  bool over_memory_ceiling = false;
};

// Working memory an in-memory compressor needs beyond the body it is given, as a linear model
// of the body's size and line count (issue 15, item 2). Measured per compressor on its worst
// input shapes (scripts/memory_table.py --shapes; docs/PERFORMANCE.md, "Memory ceiling") and
// rounded up. {0, 0}: the compressor streams or needs no more than a constant.
struct MemoryModel {
  double per_byte = 0;  // bytes of working memory per body byte
  double per_line = 0;  // bytes of working memory per LF in the body
};

// The ceiling a compressor must keep to: peak RSS <= 3 x input + 64 MiB. The engine itself
// holds the body (1x) and the process baseline (vocabulary, pattern databases: about
// 40 MiB), which leaves a compressor 2 x input + 24 MiB.
inline constexpr double kWorkingSetPerInputByte = 2.0;
inline constexpr uint64_t kWorkingSetFloor = uint64_t{24} << 20;

// True when `model` on a body of `bytes` bytes and `lines` LFs stays within the ceiling.
bool WithinMemoryCeiling(const MemoryModel& model, uint64_t bytes, uint64_t lines);

class Compressor {
 public:
  virtual ~Compressor() = default;
  virtual std::string_view content_type() const = 0;
  // Default: a streaming compressor whose working set does not grow with its input.
  virtual MemoryModel memory_model() const { return {}; }
  virtual SafetyClass safety_class() const { return SafetyClass::kS4; }
  // Query-aware compressors receive the query when it is non-empty.
  virtual bool query_aware() const { return false; }
  // Metadata-aware compressors always receive the query (possibly empty) and may fill meta.
  virtual bool metadata_aware() const { return false; }

  // Transforms `body` into `out`. `query` is empty unless the compressor is query/metadata
  // aware and a query was given. `meta` is never null.
  // Errors (Status): environment failures only (spool I/O); data problems are kDeclined.
  virtual Result<TransformOutcome> Transform(const Body& body, std::string_view query, ByteSink& out,
                                             TransformMeta* meta) const = 0;
};

// Convenience base for compressors that work on the whole body in memory (JSON, HTML, code,
// test reports, ...). Implement TransformText; return std::nullopt to decline.
class InMemoryCompressor : public Compressor {
 public:
  // Declines, before any parsing, a body whose estimated working set (memory_model()) would
  // break the memory ceiling; otherwise runs TransformText on a stack sized for the input.
  Result<TransformOutcome> Transform(const Body& body, std::string_view query, ByteSink& out,
                                     TransformMeta* meta) const final;
  MemoryModel memory_model() const override = 0;

 protected:
  virtual std::optional<std::string> TransformText(std::string_view body, std::string_view query,
                                                   TransformMeta* meta) const = 0;
};

// Runs `c` on a string and returns its output, or nullopt when it declines or fails.
// Convenience for tests and for the stability guard on small outputs.
std::optional<std::string> RunOnString(const Compressor& c, std::string_view body, std::string_view query = {},
                                       TransformMeta* meta = nullptr);

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_COMPRESSOR_H_
