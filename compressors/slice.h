// Slices of a retrieved original (issue 14): `retrieve --lines/--bytes/--grep/--json-pointer`
// and the MCP tool caveman_retrieve share these, through Engine::RetrieveSlice.
//
// The line, byte and grep slicers are ByteSinks: the original is written into them as it is
// decompressed, in pieces of any size (the output never depends on the piece boundaries), and
// they write the slice to the sink they wrap. done() says that no later byte can change the
// output, so the reader may stop decompressing.
//
// Semantics (docs/DECISIONS.md, "Sliced retrieve"):
//   lines A..B  1-based, inclusive, the exact bytes of those lines (as `sed -n A,Bp`);
//   bytes A..B  0-based, half-open [A, B) (as `tail -c +$((A+1)) | head -c $((B-A))`);
//   grep RE, C  the format of `grep -n -C C -E RE` in the C locale: "N:line" for a matching
//               line, "N-line" for a context line, "--" between groups that are not adjacent;
//               every output line ends in LF. Patterns are Hyperscan (PCRE) syntax.
//   JSON pointer (RFC 6901)  the exact bytes of the value in the document.
//
// Thread-safety: none; one slicer per retrieve.
#ifndef CAVEMAN_COMPRESSORS_SLICE_H_
#define CAVEMAN_COMPRESSORS_SLICE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "caveman/stream/byte_io.h"
#include "caveman/stream/status.h"

namespace caveman {

class SliceSink : public ByteSink {
 public:
  // True when no later input can add to the output.
  virtual bool done() const = 0;
  // Call after the last byte (writes what a final line without LF still owes).
  virtual Status Finish() { return Status::OK(); }
};

// Lines first..last (1-based, inclusive; last = UINT64_MAX for "to the end").
std::unique_ptr<SliceSink> NewLineSlice(uint64_t first, uint64_t last, ByteSink& out);
// Bytes [first, end) (end = UINT64_MAX for "to the end").
std::unique_ptr<SliceSink> NewByteSlice(uint64_t first, uint64_t end, ByteSink& out);
// Lines matching `pattern` with `context` lines around them. Errors: kInvalidArgument with
// the compiler's message when the pattern is not supported.
// `context` unset: no "--" group separators (plain `grep -n`).
Result<std::unique_ptr<SliceSink>> NewGrepSlice(std::string_view pattern, std::optional<uint64_t> context,
                                                ByteSink& out);

// The exact bytes of the value at RFC 6901 `pointer` in the JSON document `doc` ("" = the
// whole document without surrounding whitespace). Errors: kInvalidArgument ("not a JSON
// document", "invalid JSON pointer"), kNotFound ("no value at JSON pointer P").
Result<std::string> JsonPointerSlice(std::string_view doc, std::string_view pointer);

// A complete RFC 8259 document with valid UTF-8 (the validator of detection).
bool IsJsonDocument(std::string_view text);

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_SLICE_H_
