// libFuzzer target for detection (§3.3) and presentation layers (§3.2): Detect never fails
// and returns an auto-detectable type; Detect equals DetectBody of the unwrapped body; an
// input without layers unwraps to itself; MayHavePresentationLayer is never wrong when it
// says no; re-wrapping the unwrapped body does not crash or come back empty.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "compressors/detect.h"
#include "tests/fuzz/fuzz_util.h"

// Lazily built databases are built here, outside libFuzzer's per-input timeout.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)caveman::Detect("2024-05-01 INFO x\n<file>\nx\n</file>");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace caveman;
  static const std::set<std::string_view> kAuto = {"json", "log",     "code",   "diff",        "search-result", "text",
                                                   "html", "tabular", "config", "test-report", "terminal"};
  std::string_view in = fuzz::AsView(data, size);
  std::string_view type = Detect(in);
  FUZZ_CHECK(kAuto.count(type) == 1, "Detect returned '%.*s'", (int)type.size(), type.data());

  Unwrapped u = Unwrap(in);
  FUZZ_CHECK(DetectBody(u.body) == type, "Detect != DetectBody(Unwrap(input).body)");
  if (u.layers.empty()) {
    FUZZ_CHECK(u.body == in, "no layers but the body differs from the input");
  } else {
    FUZZ_CHECK(MayHavePresentationLayer(in), "prefix test excluded a layer that applied");
    // Re-wrapping the unchanged body must reproduce a <file> wrapper byte for byte; a gutter
    // is restored as N<TAB> (§3.2), so only check that re-wrapping does not crash there.
    std::string back = u.layers.Rewrap(u.body);
    FUZZ_CHECK(!back.empty() || in.find_first_not_of(" \t\r\n") == std::string_view::npos,
               "re-wrapping the body lost everything");
  }
  return 0;
}
