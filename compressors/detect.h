// Detection (§3.3) and presentation layers (§3.2).
//
// Thread-safety: all functions are pure; compiled pattern databases are built once per
// process on first use and are immutable afterwards.
#ifndef CAVEMAN_COMPRESSORS_DETECT_H_
#define CAVEMAN_COMPRESSORS_DETECT_H_

#include <memory>
#include <string>
#include <string_view>

#include "stream/spool.h"

namespace caveman {

// Content type of an already-unwrapped body: one of json, log, code, diff, search-result,
// text, html, tabular, config, test-report, terminal. Never fails (text at worst).
std::string_view DetectBody(std::string_view body);

// Detect(input) of §3.3: unwrap presentation layers, then DetectBody.
std::string_view Detect(std::string_view input);

// Detection of a possibly huge, possibly spilled body, reading a bounded amount of it
// (see docs/DECISIONS.md for the sampling rule). Errors only from spool I/O.
Result<std::string_view> DetectLarge(const Body& body);

// Presentation layers (line-number gutter, <file> wrapper), at most 4.
class PresentationLayers {
 public:
  PresentationLayers();
  ~PresentationLayers();
  PresentationLayers(PresentationLayers&&) noexcept;
  PresentationLayers& operator=(PresentationLayers&&) noexcept;
  bool empty() const;
  // Re-wraps compressor output inner → outer (§3.2, gutter restore included).
  std::string Rewrap(std::string_view output) const;

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct Unwrapped {
  std::string body;
  PresentationLayers layers;
};

// Cheap test on the first bytes of an input (at least 64 KiB of it, or all of it): false
// means no layer can apply, so callers may skip Unwrap without loading the whole input.
bool MayHavePresentationLayer(std::string_view prefix);

// Unwraps up to 4 layers. Result.layers.empty() when none applied (body then equals input).
Unwrapped Unwrap(std::string_view input);

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_DETECT_H_
