// RFC 822 / deb822 field blocks ("stanzas"): `dpkg -s`, /var/lib/dpkg/status, `apt-cache show`,
// Debian control and Packages files, HTTP response headers (`curl -sI`, several responses after
// redirects). A config dialect of the `config` compressor (issue 16; docs/DECISIONS.md,
// "Stanzas").
//
// Thread-safety: free functions, pure.
#ifndef CAVEMAN_COMPRESSORS_INTERNAL_STANZA_H_
#define CAVEMAN_COMPRESSORS_INTERNAL_STANZA_H_

#include <string>
#include <string_view>
#include <vector>

namespace caveman::internal {

// True iff `body` is at least two stanzas of `Name: value` fields (continuation lines start
// with SPACE or TAB; stanzas are separated by blank lines; a stanza may open with an HTTP
// status line) that share at least one field name, with at least 8 field lines, and at most
// 1 line in 20 that is none of these (or a `#` comment).
bool LooksLikeStanzas(std::string_view body);

// What the stanza rules keep of `lines` (SplitLines of a body for which LooksLikeStanzas holds).
struct StanzaPlan {
  std::vector<bool> keep;  // one per line
  std::string note;        // the one synthesized summary line ("" if nothing to say)
  size_t stanzas = 0;
};

// Keeps every blank line, status line and comment, each stanza's first field (its identity:
// Package, Source, Name, ...), and every field line whose value varies across the stanzas it
// appears in; drops continuation lines (long descriptions, file and checksum lists), hash and
// size fields, and fields whose single-line value is the same in every stanza it appears in
// (≥ 2), which the note states once, with the range of each size field. The caller keeps a
// dropped run whose marker would be longer than its lines.
StanzaPlan PlanStanzas(const std::vector<std::string_view>& lines);

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_INTERNAL_STANZA_H_
