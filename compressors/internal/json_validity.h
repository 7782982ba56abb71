// Fast JSON validity test of §0.3 (RFC 8259 value, valid UTF-8 strings, depth ≤ 10,000) on
// simdjson's On-Demand front end: stage 1 (structural indexing + UTF-8 validation) is
// runtime-dispatched SIMD; the walk below visits every value without building a tree.
//
// Agrees with internal::IsJson (cj.h), which builds a tree and is far slower; an escaped lone
// surrogate is not JSON in both (the decoded string could not be valid UTF-8).
//
// Thread-safety: pure functions; the parser is per call (or per thread for small inputs).
#ifndef CAVEMAN_COMPRESSORS_INTERNAL_JSON_VALIDITY_H_
#define CAVEMAN_COMPRESSORS_INTERNAL_JSON_VALIDITY_H_

#include <cstddef>
#include <string_view>

namespace caveman::internal {

struct JsonShape {
  bool valid = false;
  // Only meaningful when valid: the top value is an object holding these top-level keys
  // (case-sensitive, compared after unescaping), used by the test-report rule of §3.3.
  bool top_is_object = false;
  bool has_exitcode = false;
  bool has_tests = false;
  bool has_num_failed_tests = false;
  bool has_test_results = false;
};

class JsonSkeleton;  // json_skeleton.h

// Validates `text` completely and reports the top-level shape.
JsonShape ValidateJson(std::string_view text);
// The allocation-free byte-level validator ValidateJson uses above 4 MiB and when a simdjson
// parser cannot be allocated; same verdict and shape (exposed for the equivalence tests).
JsonShape ValidateJsonBytes(std::string_view text);
// ValidateJsonBytes(text), reporting the structure to `skeleton` on the way (its Build calls
// this).
JsonShape ValidateJsonBytes(std::string_view text, JsonSkeleton* skeleton);

// An upper bound of the number of values in a JSON text: its commas and opening brackets plus
// one (a comma or bracket inside a string counts too, which only makes the bound safer). It
// runs over every byte of a large text, 16 bytes at a time.
size_t JsonValueBound(std::string_view text);

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_INTERNAL_JSON_VALIDITY_H_
