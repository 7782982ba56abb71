// text compressor (§5.7): the fallback for undetected input, Markdown included. Query-aware,
// redundancy guard.
//
// Lossy (S4): the text is cut into sections (paragraphs, or single lines when the text has no
// blank line; fenced code blocks stay whole); the first and last 2 sections, headings,
// alarm-word sections, query-relevant sections and every section unlike a kept one stay, and
// each dropped run becomes `… N sections elided (caveman) …`. Output sections are joined by a
// blank line (LF LF) and the output has no trailing newline. HTML-looking input first loses its
// script/style/svg blocks and comments.
#ifndef CAVEMAN_COMPRESSORS_TEXT_H_
#define CAVEMAN_COMPRESSORS_TEXT_H_

#include <memory>
#include <string_view>
#include <vector>

#include "compressors/compressor.h"

namespace caveman {

struct TextOptions {
  // Template grouping (project extension beyond the spec, docs/DECISIONS.md): a section the
  // redundancy guard would keep stays dropped when a kept one has the same mined line template.
  // Default: true. false = exactly the spec.
  bool template_grouping = true;
};

std::unique_ptr<Compressor> NewTextCompressor(TextOptions options = {});

// The §5.7 sections of `text` (step 2, no HTML scrub) as the compressor writes them: from the
// first line's start to the last line's end (paragraph mode: without its final CR), as views
// into `text` (offsets `section.data() - text.data()`). Used by the marker map's aligner.
std::vector<std::string_view> TextSections(std::string_view text);

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_TEXT_H_
