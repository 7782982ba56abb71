// terminal compressor (§5.16): captured terminal sessions with ANSI escapes and carriage-
// return redraws (progress bars). Redundancy guard, no query.
//
// Lossy (S4): each line is cleaned (a CR redraw keeps only its last non-empty segment, ANSI
// CSI/OSC/two-byte escapes are deleted); with ≥ 4 lines, the first and last 3, error-like
// lines and every line unlike a kept one stay, other runs become
// `… N lines elided (caveman) …`. Cleanup alone may be the whole reduction.
#ifndef CAVEMAN_COMPRESSORS_TERMINAL_H_
#define CAVEMAN_COMPRESSORS_TERMINAL_H_

#include <memory>
#include <string>
#include <string_view>

#include "compressors/compressor.h"

namespace caveman {

struct TerminalOptions {
  // Template grouping (project extension beyond §5.16, docs/DECISIONS.md): a cleaned line the
  // redundancy guard would keep stays dropped when a kept line has the same mined template
  // (listings, package-manager and build progress); markers of runs dropped mostly that way
  // carry `$k` invariants. Default: true. false = exactly §5.16.
  bool template_grouping = true;
};

std::unique_ptr<Compressor> NewTerminalCompressor(TerminalOptions options = {});

// The per-line cleanup of §5.16 (CR redraw, then ANSI deletion) of one LF-free line.
std::string CleanTerminalLine(std::string_view line);

// The §5.16 keep pattern on a cleaned line (shared with follow mode's online terminal stage).
bool TerminalKeepPattern(std::string_view cleaned_line);

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_TERMINAL_H_
