// libFuzzer target for the strict JSON tree parser (§0.3) and CJ serialization: whatever
// simdjson accepts (within its depth limit) the tree accepts; CJ output is JSON, parses back
// to itself (CJ is a fixed point) and is valid UTF-8. Then the piecewise elision of large
// texts, run with small limits chosen from the input: the skeleton's verdict is the byte
// validator's, and when the path is taken its view is the whole-tree elision's, byte for byte.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "compressors/internal/json_skeleton.h"
#include "compressors/internal/json_tree.h"
#include "compressors/internal/json_validity.h"
#include "compressors/json.h"
#include "compressors/text_util.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace caveman;
  static simdjson::dom::parser* parser = new simdjson::dom::parser(internal::kJsonTreeMaxDepth + 1);
  std::string_view in = fuzz::AsView(data, size);
  // Piecewise limits, record bound and query from a hash of the input, so that every
  // combination meets every shape.
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ULL;
  const size_t node_bytes = 1 + h % 13;
  const int depth = 1 + static_cast<int>((h >> 8) % 5);
  const size_t group_bytes = (h >> 16) % 97;
  const size_t bytes_per_record = (h >> 24) % 3 == 0 ? 1 : ((h >> 24) % 3 == 1 ? 4 : 64);
  const std::string_view query = (h >> 32) % 2 == 0 ? std::string_view() : std::string_view("error name");

  // The skeleton's verdict is the byte validator's, valid or not (Build itself may still fail
  // for too many child records; its shape carries the verdict).
  internal::JsonSkeleton skeleton;
  internal::JsonShape shape;
  const bool built = skeleton.Build(in, node_bytes, depth, &shape, bytes_per_record);
  FUZZ_CHECK(shape.valid == internal::ValidateJsonBytes(in).valid, "skeleton and byte validator disagree");
  FUZZ_CHECK(!built || shape.valid, "skeleton built for a text that is not JSON");

  internal::JsonTree tree;
  const bool ok = tree.Parse(in);

  simdjson::padded_string padded(in);
  const bool simd_ok = parser->parse(padded).error() == simdjson::SUCCESS;
  // simdjson rejects some numbers the spec accepts (huge integers), never the reverse.
  if (simd_ok) FUZZ_CHECK(ok, "simdjson accepts, JsonTree rejects");
  if (!ok) return 0;

  std::string cj;
  internal::AppendCanonicalJson(tree, tree.root(), &cj);
  FUZZ_CHECK(internal::IsValidUtf8(cj), "CJ output is not UTF-8");
  internal::JsonTree again;
  FUZZ_CHECK(again.Parse(cj), "CJ output does not parse");
  std::string cj2;
  internal::AppendCanonicalJson(again, again.root(), &cj2);
  FUZZ_CHECK(cj2 == cj, "CJ is not a fixed point");

  std::optional<std::string> pieces;
  if (ElideJsonPiecewiseForTest(in, query, node_bytes, depth, group_bytes, &pieces, bytes_per_record)) {
    FUZZ_CHECK(pieces == ElideJsonWholeTreeForTest(in, query), "piecewise elision differs from the whole tree's");
  }
  return 0;
}
