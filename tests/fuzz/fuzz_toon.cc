// libFuzzer target for TOON (§5.13). Encoding: an encodable JSON document decodes back to its
// CJ (lossless round trip). Decoding arbitrary text: a successful decode is CJ JSON (parses,
// and is its own CJ), and if that value is encodable, encode→decode reproduces it.
#include <cstdint>
#include <string>
#include <string_view>

#include "compressors/internal/json_tree.h"
#include "compressors/toon.h"
#include "tests/fuzz/fuzz_util.h"

namespace {
bool Canonical(std::string_view json, std::string* out) {
  caveman::internal::JsonTree tree;
  if (!tree.Parse(json)) return false;
  out->clear();
  caveman::internal::AppendCanonicalJson(tree, tree.root(), out);
  return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace caveman;
  std::string_view in = fuzz::AsView(data, size);

  // Bounded like the compressors: deep nesting makes TOON quadratic in the depth.
  auto toon = EncodeToon(in, kMaxTokenBytes * in.size() + 4096);
  if (toon.ok()) {
    std::string cj;
    FUZZ_CHECK(Canonical(in, &cj), "EncodeToon accepted input that is not JSON");
    auto back = DecodeToon(*toon);
    FUZZ_CHECK(back.ok(), "DecodeToon rejects EncodeToon output: %s", back.status().ToString().c_str());
    FUZZ_CHECK(*back == cj, "TOON round trip changed the value");
  }

  auto decoded = DecodeToon(in);
  if (decoded.ok()) {
    std::string cj;
    FUZZ_CHECK(Canonical(*decoded, &cj), "DecodeToon output is not JSON");
    FUZZ_CHECK(cj == *decoded, "DecodeToon output is not CJ");
    auto re = EncodeToon(*decoded, kMaxTokenBytes * decoded->size() + 4096);
    if (re.ok()) {
      auto back = DecodeToon(*re);
      FUZZ_CHECK(back.ok() && *back == *decoded, "decode→encode→decode changed the value");
    }
  }
  return 0;
}
