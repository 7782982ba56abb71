// worthEliding (§4.5), the contract note (§4.6) and the run marker text, shared by the
// compressors that elide runs of units.
#ifndef CAVEMAN_COMPRESSORS_ELISION_H_
#define CAVEMAN_COMPRESSORS_ELISION_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace caveman::internal {

// Runs of at least this many dropped units always become a marker.
inline constexpr uint64_t kAlwaysElideCount = 3;
// The note rides on a payload only when at least this many bytes were elided (§4.6).
inline constexpr uint64_t kNoteMinElidedBytes = 4096;
// Prefix of the contract note, recognised on re-entry.
inline constexpr std::string_view kNotePrefix = "\xE2\x80\xA6 caveman: elided ";

// §4.5: a run of ≥ 3 dropped units always becomes a marker; a shorter one only if `summary`
// is non-empty and 2 × marker_bytes ≤ elided_bytes.
bool WorthEliding(uint64_t count, uint64_t marker_bytes, uint64_t elided_bytes, std::string_view summary);

// §4.6 contract note for unit word "elements", "lines" or "rows".
std::string ContractNote(std::string_view unit_word);

// The note of a stanza view (internal/stanza.h, StanzaPlan::note) is
// `# caveman: N stanzas[; ...]`; marker maps skip such a line as synthesized.
inline constexpr std::string_view kStanzaNotePrefix = "# caveman: ";
inline constexpr std::string_view kStanzaNoteUnits = " stanzas";
bool IsStanzaNoteLine(std::string_view line);

// The marker text for `count` elided units: "… <count> <what> …", or with a non-empty
// invariant summary "… <count> <what>: <summary> …". `what` is the compressor's marker
// phrase, e.g. "lines elided (caveman)".
std::string ElisionMarker(uint64_t count, std::string_view what, std::string_view summary = {});

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_ELISION_H_
