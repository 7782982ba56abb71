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

#include "stream/byte_io.h"
#include "stream/spool.h"
#include "stream/status.h"

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
  std::string method;                      // empty = the content type
  std::optional<bool> lossless_to_model;   // empty = class reversibility (false for S4)
  std::string recovery_metadata;           // stored in the record's metadata column
  std::vector<ElidedSpan> elided;          // side channel for the marker map; may stay empty
};

class Compressor {
 public:
  virtual ~Compressor() = default;
  virtual std::string_view content_type() const = 0;
  virtual SafetyClass safety_class() const { return SafetyClass::kS4; }
  // Query-aware compressors receive the query when it is non-empty.
  virtual bool query_aware() const { return false; }
  // Metadata-aware compressors always receive the query (possibly empty) and may fill meta.
  virtual bool metadata_aware() const { return false; }

  // Transforms `body` into `out`. `query` is empty unless the compressor is query/metadata
  // aware and a query was given. `meta` is never null.
  // Errors (Status): environment failures only (spool I/O); data problems are kDeclined.
  virtual Result<TransformOutcome> Transform(const Body& body, std::string_view query,
                                             ByteSink& out, TransformMeta* meta) const = 0;
};

// Convenience base for compressors that work on the whole body in memory (JSON, HTML, code,
// test reports, ...). Implement TransformText; return std::nullopt to decline.
class InMemoryCompressor : public Compressor {
 public:
  Result<TransformOutcome> Transform(const Body& body, std::string_view query, ByteSink& out,
                                     TransformMeta* meta) const final;

 protected:
  virtual std::optional<std::string> TransformText(std::string_view body, std::string_view query,
                                                   TransformMeta* meta) const = 0;
};

// Runs `c` on a string and returns its output, or nullopt when it declines or fails.
// Convenience for tests and for the stability guard on small outputs.
std::optional<std::string> RunOnString(const Compressor& c, std::string_view body,
                                       std::string_view query = {}, TransformMeta* meta = nullptr);

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_COMPRESSOR_H_
