// libFuzzer target for token accounting (§7): the streaming count over a random split equals
// the whole count; O200kEncode yields exactly Count() ids; LastSafeCut and LastCountCut return
// cuts that are additive; approx-chars/4 streams the same way.
#include <cstdint>
#include <string_view>

#include "caveman/stream/tokens.h"
#include "tests/fuzz/fuzz_util.h"

namespace {
uint64_t Streamed(const caveman::TokenCounter& c, std::string_view in, uint64_t seed) {
  caveman::StreamingTokenCount s(c);
  size_t pos = 0;
  while (pos < in.size()) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    size_t piece = 1 + (seed >> 33) % 64;
    if (piece > in.size() - pos) piece = in.size() - pos;
    s.Feed(in.substr(pos, piece));
    pos += piece;
  }
  return s.Finish();
}
}  // namespace

// Lazily built databases are built here, outside libFuzzer's per-input timeout.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)caveman::DefaultTokenCounter().Count("warm up");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace caveman;
  std::string_view in = fuzz::AsView(data, size);
  const uint64_t seed = fuzz::TakeByte(&in);
  const TokenCounter& c = DefaultTokenCounter();
  FUZZ_CHECK(c.name() == "o200k_base", "vocabulary did not load");
  const uint64_t whole = c.Count(in);
  FUZZ_CHECK(Streamed(c, in, seed) == whole, "streaming count differs from whole count");
  FUZZ_CHECK(O200kEncode(in).size() == whole, "encode size differs from count");
  FUZZ_CHECK(in.empty() == (whole == 0), "count %llu for %zu bytes", (unsigned long long)whole, in.size());
  size_t cut = LastSafeCut(in);
  if (cut != 0) {
    FUZZ_CHECK(cut < in.size(), "cut at the end");
    FUZZ_CHECK(c.Count(in.substr(0, cut)) + c.Count(in.substr(cut)) == whole, "LastSafeCut %zu is not additive", cut);
  }
  cut = LastCountCut(in);
  if (cut != 0) {
    FUZZ_CHECK(cut < in.size(), "count cut at the end");
    FUZZ_CHECK(c.Count(in.substr(0, cut)) + c.Count(in.substr(cut)) == whole, "LastCountCut %zu is not additive", cut);
  }
  const TokenCounter& a = ApproxTokenCounter();
  FUZZ_CHECK(Streamed(a, in, seed) == a.Count(in), "approx streaming differs");
  return 0;
}
