// json compressor (§5.1): method `elision`, query-aware, S4.
//
// Parses the body as exactly one JSON value (strict, §0.3; numbers kept as literals), walks it
// in sorted key order and collapses long arrays (> 8 elements): the first 3 / last 2
// elements, elements carrying an error word, anomalies, both sides of change-point seams,
// query-relevant elements (up to 50 kept) and one element of each resemblance class stay;
// every maximal run of the others becomes a marker object
//   {"__caveman_elided__":N,"__caveman_invariants__":"…","__caveman_note__":"…"}
// (invariants only when something can be claimed; the note once, on the first marker, when
// its run held ≥ 4,096 bytes). Subtrees under error-like keys (error, message, stack, …) are
// copied unchanged, every object key survives, and arrays already holding a marker are left
// as they are, so a second pass returns the same bytes. Output is CJ: one line, keys sorted.
//
// Lossy: dropped array elements (recoverable from the store). Declines on non-JSON, on
// nesting deeper than 10,000, and when no array was collapsed.
//
// Memory: below 4 MiB, the input plus a compact tree (~24 bytes per value) plus per-element
// bookkeeping of the array being selected; while parsing, simdjson's structural index (4
// bytes per token). From 4 MiB on, the input plus the skeleton (16 bytes per child of a
// container of ≥ 1 MiB) plus the tree of one piece or one group of array elements (≤ 512 KiB
// of text) at a time.
// Thread-safety: stateless; Transform may run concurrently.
#ifndef CAVEMAN_COMPRESSORS_JSON_H_
#define CAVEMAN_COMPRESSORS_JSON_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "compressors/compressor.h"

namespace caveman {

std::unique_ptr<Compressor> NewJsonCompressor();

// The elision transform itself (also used by the best-of selector of §5.1.7): the output, or
// nullopt to decline. An empty query means no query.
// JSON text without its insignificant whitespace (RFC 8259 §2: space, tab, LF, CR between
// tokens); strings, numbers and key order are kept byte for byte. With `max_depth`, the deepest
// nesting of arrays and objects. REQUIRES: `json` is valid JSON (else the result is unspecified,
// but the function is total and never reads out of bounds).
std::string MinifyJson(std::string_view json, int* max_depth = nullptr);
// MinifyJson(json, max_depth).size(), without building it.
size_t MinifiedJsonSize(std::string_view json, int* max_depth = nullptr);
// MinifiedJsonSize(json) <= limit, reading only as far as needed to decide.
bool MinifiedJsonSizeAtMost(std::string_view json, size_t limit);

std::optional<std::string> ElideJson(std::string_view body, std::string_view query);
// Same, where `readable_padding` bytes after body.end() may be read (Body::view_padding()):
// with ≥ 64 the parser reads the body in place instead of copying it.
std::optional<std::string> ElideJson(std::string_view body, std::string_view query, size_t readable_padding);

// Large texts (≥ 4 MiB) are elided a piece at a time from their skeleton
// (internal/json_skeleton.h) instead of from one tree of the whole text; the output is the
// same. This runs that path with explicit limits — containers of ≥ node_bytes down to
// `depth` walked from the skeleton, array elements parsed in groups of ≤ group_bytes — so
// tests can compare it with the tree on small texts (by default with no bound on the
// skeleton's child records, which the product keeps to one per 64 bytes of text). False when
// the path cannot be taken (no skeleton, or a piece failed to parse); else *out is
// ElideJson's answer.
bool ElideJsonPiecewiseForTest(std::string_view body, std::string_view query, size_t node_bytes, int depth,
                               size_t group_bytes, std::optional<std::string>* out, size_t bytes_per_record = 1);
// ElideJson over one tree of the whole text, whatever its size (no memory bound): the
// reference the piecewise path is compared with on large texts.
std::optional<std::string> ElideJsonWholeTreeForTest(std::string_view body, std::string_view query);

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_JSON_H_
