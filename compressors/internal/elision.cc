#include "compressors/elision.h"

namespace caveman::internal {

bool WorthEliding(uint64_t count, uint64_t marker_bytes, uint64_t elided_bytes, std::string_view summary) {
  if (count >= kAlwaysElideCount) return true;
  return !summary.empty() && 2 * marker_bytes <= elided_bytes;
}

std::string ContractNote(std::string_view unit_word) {
  std::string s(kNotePrefix);
  s.append(unit_word);
  s.append(" resemble shown ");
  s.append(unit_word);
  s.append(
      " and match the stated invariants \xE2\x80\x94 answer from this view; if you truly "
      "cannot, one broad caveman_retrieve \xE2\x80\xA6");
  return s;
}

std::string ElisionMarker(uint64_t count, std::string_view what, std::string_view summary) {
  std::string s = "\xE2\x80\xA6 " + std::to_string(count) + " ";
  s.append(what);
  if (!summary.empty()) s.append(": ").append(summary);
  s.append(" \xE2\x80\xA6");
  return s;
}

bool IsStanzaNoteLine(std::string_view line) {
  if (line.substr(0, kStanzaNotePrefix.size()) != kStanzaNotePrefix) return false;
  size_t at = kStanzaNotePrefix.size();
  const size_t digits = at;
  while (at < line.size() && line[at] >= '0' && line[at] <= '9') ++at;
  return at > digits && line.substr(at, kStanzaNoteUnits.size()) == kStanzaNoteUnits;
}

}  // namespace caveman::internal
