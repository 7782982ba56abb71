// Marker maps (issue 14): for every elision marker of an emitted view, where the units it
// dropped lie in the original (lines, bytes; array indices for JSON).
//
// One general mechanism for the batch path: an aligner walks the view and the original
// together. Every line of a line-type view is an input line (byte-identical, or its terminal
// cleanup / table re-encoding) or a synthesized line: a marker, whose text carries the exact
// count of units it replaced (ParseMarkerLine), or a contract note (replaces nothing). JSON
// views are walked as trees: a `{"__caveman_elided__": N}` item stands for N elements of the
// original array. Text views are walked by sections. Where markers carry no count (code
// bodies, comment blocks), the compressor reports its spans (TransformMeta::elided) and the
// map is built from those. Follow mode records each marker event's input range as it is
// queued (OnlineMarkerTracker).
//
// Conventions (docs/DECISIONS.md, "Marker maps"): K is 1-based in view order; lines 1-based
// inclusive; bytes 0-based half-open; a line range's bytes include the lines' LFs.
//
// Thread-safety: free functions are pure; a tracker belongs to one stream.
#ifndef CAVEMAN_ENGINE_INTERNAL_MARKER_MAP_H_
#define CAVEMAN_ENGINE_INTERNAL_MARKER_MAP_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compressors/compressor.h"
#include "compressors/online.h"
#include "caveman/engine/engine.h"
#include "stream/spool.h"
#include "caveman/stream/status.h"

namespace caveman::internal {

// A marker line's kind and count (`line` without its LF; a final CR is ignored), e.g.
// "… 12 lines elided (caveman): all level=info …" → {"lines", 12}. Recognised anywhere in the
// line, so table marker rows (`… 5 rows elided (caveman) …,,`) and config's `# …` match too.
struct MarkerText {
  std::string_view kind;
  uint64_t count = 0;
};
std::optional<MarkerText> ParseMarkerLine(std::string_view line);
// The §4.6 contract note (`… caveman: elided …`), possibly inside a table row.
bool IsNoteLine(std::string_view line);

struct MarkerMap {
  bool mapped = false;  // false: the view could not be aligned; `reason` says why
  std::string reason;
  std::vector<MarkerEntry> markers;
};

// Largest original (and view) the in-memory aligners (JSON, text, spans) load: 16 MiB.
inline constexpr uint64_t kMarkerMapMaxInMemory = 16u << 20;

// Batch: the map of `view` (the emitted bytes) over `original`. `spans` (may be empty): the
// compressor's side channel, valid only when the view is exactly that compressor's output
// on the whole original. Errors: spool I/O only; an unalignable view is mapped = false.
Result<MarkerMap> BuildMarkerMap(const Spool& original, const Spool& view, const std::vector<ElidedSpan>& spans);
// BuildMarkerMap, serialised; a spool failure becomes an unmapped map naming it.
std::string MarkerMapBlob(const Spool& original, const Spool& view, const std::vector<ElidedSpan>& spans);
// The same over strings (tests).
MarkerMap BuildMarkerMap(std::string_view original, std::string_view view, const std::vector<ElidedSpan>& spans = {});

// The stored blob (store/ keeps it opaque): a text header line and one line per marker.
std::string SerializeMarkerMap(const MarkerMap& map);
// Errors: kCorruption.
Result<MarkerMap> ParseMarkerMap(std::string_view blob);

// Follow mode: fed every OnlineEvent in queue order; a lossy event whose bytes are one
// marker line with the event's line count becomes an entry, serialised at once (a long
// follow run writes tens of thousands of markers: the blob is a fraction of their entries)
// into a spool that keeps 1 MiB in memory and the rest in its temporary file, so a run of any
// length holds the map in bounded memory (512 MiB of CI log: a 36 MB map; issue 19).
class OnlineMarkerTracker {
 public:
  OnlineMarkerTracker();
  void Add(const OnlineEvent& e);
  // SerializeMarkerMap of the entries so far (or of the unmapped map, also when the spool
  // could not be written), moved out: call it once, after the last Add.
  std::unique_ptr<Spool> TakeBlob();

  static constexpr size_t kMemoryLimit = 1 << 20;

 private:
  void Unmap(std::string reason);
  void Flush();

  bool mapped_ = true;
  std::string reason_;           // !mapped_: why
  std::unique_ptr<Spool> blob_;  // mapped_: header and every entry flushed so far
  std::string pending_;          // mapped_: entries not yet in blob_ (< 64 KiB)
  uint64_t markers_ = 0;
  uint64_t view_lines_ = 0;   // LFs written so far
  uint64_t input_lines_ = 0;  // complete input lines before the next event
  uint64_t input_end_ = 0;
};

}  // namespace caveman::internal

#endif  // CAVEMAN_ENGINE_INTERNAL_MARKER_MAP_H_
