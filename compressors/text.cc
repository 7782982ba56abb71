#include "compressors/text.h"

#include <re2/re2.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "compressors/internal/bm25.h"
#include "compressors/elision.h"
#include "compressors/lines.h"
#include "compressors/internal/redundancy.h"
#include "compressors/internal/templates.h"
#include "compressors/text_util.h"

namespace caveman {
namespace {

using internal::Trim;

constexpr size_t kHead = 2;
constexpr size_t kTail = 2;
constexpr size_t kMinTrimmedBytes = 1600;
constexpr size_t kMinSections = 7;  // "more than 6"
constexpr int64_t kQueryLimit = 12;
constexpr double kQueryThreshold = 0.30;
constexpr size_t kMaxHeadingBytes = 96;
constexpr size_t kMaxHeadingFields = 8;
constexpr size_t kMaxFenceIndent = 3;
constexpr size_t kMinFenceRun = 3;
constexpr size_t kListingLines = 32;  // a paragraph with more lines is a listing (issue 16)
constexpr std::string_view kMarkerText = "sections elided (caveman)";
constexpr std::string_view kIdenticalRun = "each identical to the one above";  // a run's summary
constexpr std::string_view kHtmlBlockMarker = "\xE2\x80\xA6 1 sections elided (caveman) \xE2\x80\xA6";

const RE2& AlarmPattern() {
  static const RE2* re = new RE2(
      R"((?i)\b(ERROR|WARNING|IMPORTANT|NOTE|ACTION|FOLLOWUP|SECURITY|SUMMARY|CONCLUSION|DECISION|RECOMMENDATION)\b)");
  return *re;
}

bool IsReSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }

// `^\s{0,3}(`{3,}|~{3,})`: the fence character and run length, if the line opens/closes one.
bool FenceMatch(std::string_view line, char* ch, size_t* len) {
  size_t i = 0;
  while (i < line.size() && i < kMaxFenceIndent && IsReSpace(line[i])) ++i;
  if (i >= line.size() || (line[i] != '`' && line[i] != '~')) return false;
  const char c = line[i];
  size_t j = i;
  while (j < line.size() && line[j] == c) ++j;
  if (j - i < kMinFenceRun) return false;
  *ch = c;
  *len = j - i;
  return true;
}

// ASCII case-insensitive: does `s` hold `word` at `pos`?
bool HasAtIgnoreCase(std::string_view s, size_t pos, std::string_view word) {
  return pos <= s.size() && internal::EqualsAsciiIgnoreCase(s.substr(pos, word.size()), word);
}

bool LooksLikeHtml(std::string_view input) {
  std::string_view t = Trim(input);
  if (HasAtIgnoreCase(t, 0, "<!doctype html") || HasAtIgnoreCase(t, 0, "<html")) return true;
  for (size_t i = t.find('<'); i != std::string_view::npos; i = t.find('<', i + 1)) {
    if (HasAtIgnoreCase(t, i, "<body")) return true;
  }
  return false;
}

// Step 1 of §5.7: strip script/style/svg blocks and comments from HTML-looking text.
// REQUIRES: LooksLikeHtml(input).
std::string ScrubHtml(std::string_view input) {
  std::string text(input);
  static const RE2* script = new RE2(R"((?is)<script\b[^>]*>.*?</script>)");
  static const RE2* style = new RE2(R"((?is)<style\b[^>]*>.*?</style>)");
  static const RE2* svg = new RE2(R"((?is)<svg\b[^>]*>.*?</svg>)");
  static const RE2* comment = new RE2(R"((?s)<!--.*?-->)");
  const std::string marker(kHtmlBlockMarker);
  RE2::GlobalReplace(&text, *script, marker);
  RE2::GlobalReplace(&text, *style, marker);
  RE2::GlobalReplace(&text, *svg, marker);
  RE2::GlobalReplace(&text, *comment, "");
  return text;
}

// One §5.7 section: `text` is TRIM(its lines) (what the keep rules look at); `raw` is what the
// output carries: the bytes from the start of its first line to the end of its last
// line, without that line's CR in paragraph mode. In line mode a section is one line, and `raw` keeps its own CR
// too, so every output line is an input line (issue 16: line mode must not reshape lines).
struct Section {
  std::string_view text;
  std::string_view raw;
  // Paragraph mode: the lines of a paragraph longer than kListingLines (a listing such as
  // `apt list`) are sections of their own, joined to each other by a line ending, not a blank
  // line; `listing` is that paragraph's number + 1, 0 for every other section.
  size_t listing = 0;
};

// Lifetime: the sections are views into `text`. Lines come from SplitLines, which splits on LF
// only, so a section's lines joined with LF are exactly the bytes of `text` from the first
// line's start to the last line's end — no copy is needed.
std::vector<Section> Sections(std::string_view text, bool paragraph_mode) {
  internal::SplitResult split = internal::SplitLines(text);
  std::vector<Section> sections;
  const char* first = nullptr;  // start of the current section's first line
  const char* last = nullptr;   // end of its last line
  size_t lines_in_section = 0;
  size_t listings = 0;
  auto push_line = [&](std::string_view line) {
    if (first == nullptr) first = line.data();
    last = line.data() + line.size();
    ++lines_in_section;
  };
  auto end_section = [&](bool fence = false) {
    if (first == nullptr) return;
    std::string_view span(first, static_cast<size_t>(last - first));
    std::string_view t = Trim(span);
    const size_t count = lines_in_section;
    lines_in_section = 0;
    if (paragraph_mode && !fence && count > kListingLines) {
      ++listings;
      for (size_t b = 0; b < span.size();) {
        size_t e = span.find('\n', b);
        if (e == std::string_view::npos) e = span.size();
        std::string_view line = span.substr(b, e - b);
        b = e + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (!Trim(line).empty()) sections.push_back(Section{Trim(line), line, listings});
      }
      first = last = nullptr;
      return;
    }
    if (!t.empty()) {
      if (paragraph_mode) {
        // A section starts at a non-blank line (blank lines end sections); the last line's CR
        // belongs to the separator.
        if (!span.empty() && span.back() == '\r') span.remove_suffix(1);
      }
      sections.push_back(Section{t, span});
    }
    first = last = nullptr;
  };
  bool in_fence = false;
  char fence_char = 0;
  size_t fence_len = 0;
  for (std::string_view line : split.lines) {
    char ch;
    size_t len;
    if (in_fence) {
      push_line(line);
      if (FenceMatch(line, &ch, &len) && ch == fence_char && len >= fence_len) {
        in_fence = false;
        end_section(/*fence=*/true);
      }
      continue;
    }
    if (FenceMatch(line, &ch, &len)) {
      end_section();
      push_line(line);
      in_fence = true;
      fence_char = ch;
      fence_len = len;
      continue;
    }
    if (Trim(line).empty()) {
      end_section();
      continue;
    }
    push_line(line);
    if (!paragraph_mode) end_section();
  }
  end_section(/*fence=*/in_fence);
  return sections;
}

// The first line of a listing paragraph is its title or column header (`Relocation section
// '.rela.plt' at offset 0x2d48 contains 101 entries:`, `total 1184`, `Listing...`): kept like
// a heading, so no marker runs from one listing into the next without naming it.
bool StartsListing(const std::vector<Section>& sections, size_t i) {
  return sections[i].listing != 0 && (i == 0 || sections[i - 1].listing != sections[i].listing);
}

bool IsHeading(std::string_view s) {
  if (internal::StartsWith(s, "#")) return true;
  if (s.size() > kMaxHeadingBytes || s.find_first_of(".!?") != std::string_view::npos) {
    return false;
  }
  const size_t fields = internal::Fields(s).size();
  return fields >= 1 && fields <= kMaxHeadingFields;
}

// A line holding a line compressor's marker: "… N lines elided (caveman) …" or the §5.15
// "… caveman: N identical lines elided …".
bool HoldsLineMarkers(std::string_view body) {
  return body.find("lines elided (caveman)") != std::string_view::npos ||
         body.find(" identical lines elided \xE2\x80\xA6") != std::string_view::npos;
}

class TextCompressor final : public InMemoryCompressor {
 public:
  explicit TextCompressor(TextOptions options) : options_(options) {}
  std::string_view content_type() const override { return "text"; }
  // Working set (issue 15 ceiling; scripts/memory_table.py --shapes): section records, template grouping.
  MemoryModel memory_model() const override { return {.per_byte = 0.25, .per_line = 115}; }
  bool query_aware() const override { return true; }

 protected:
  std::optional<std::string> TransformText(std::string_view body, std::string_view query,
                                           TransformMeta*) const override {
    if (!internal::IsValidUtf8(body) || Trim(body).size() < kMinTrimmedBytes) return std::nullopt;
    // A view of a line compressor (log, terminal, follow mode) is already compressed: its
    // markers say so. Re-compressing it as prose would reshape it (issue 13: batch compress
    // of a follow view passes it through; issue 16: line structure is kept).
    if (HoldsLineMarkers(body)) return std::nullopt;
    // Plain text (the common case, up to 64 MiB) is used in place; only HTML is copied.
    std::string scrubbed;
    std::string_view text = body;
    if (LooksLikeHtml(body)) {
      scrubbed = ScrubHtml(body);
      text = scrubbed;
    }
    const bool paragraph_mode = internal::Contains(text, "\n\n") || internal::Contains(text, "\r\n\r\n");
    const std::vector<Section> sections = Sections(text, paragraph_mode);
    const size_t n = sections.size();
    if (n < kMinSections) return std::nullopt;
    std::vector<std::string_view> docs, raws;
    docs.reserve(n);
    raws.reserve(n);
    for (const Section& sec : sections) {
      docs.push_back(sec.text);
      raws.push_back(sec.raw);
    }
    std::vector<bool> keep(n, false);
    for (size_t i = 0; i < n; ++i) {
      // The heading rule is for prose: a listing's rows (project extension, kListingLines) are
      // short lines without '.', '!' or '?' as often as not (`readelf -S`'s size rows, `ls -1`),
      // and kept as "headings" they crowded out the rows that name things.
      const bool heading = sections[i].listing == 0 ? IsHeading(docs[i]) : StartsListing(sections, i);
      keep[i] = i < kHead || i + kTail >= n || heading || RE2::PartialMatch(docs[i], AlarmPattern()) ||
                internal::Contains(docs[i], kMarkerText);
    }
    // A section that repeats the one before it byte for byte says nothing new (`yes | head`,
    // a retried line printed 500 times): outside the head and tail it is not kept by the rules
    // above (project extension; every line of such a run counted as a heading) — when the
    // repeats take more bytes than the marker that would stand for them.
    for (size_t a = 0; a < n;) {
      size_t b = a + 1;
      while (b < n && raws[b] == raws[a]) ++b;
      const size_t repeats = b - a - 1;
      if (repeats > 0 && !internal::Contains(docs[a], kMarkerText) &&
          repeats * (raws[a].size() + 1) > internal::ElisionMarker(repeats, kMarkerText, kIdenticalRun).size()) {
        for (size_t i = std::max(a + 1, kHead); i < b && i + kTail < n; ++i) keep[i] = false;
      }
      a = b;
    }
    internal::KeepQueryRelevant(&keep, docs, query, kQueryLimit, kQueryThreshold);
    // §4.2 guard, extended: a section whose mined line template matches a kept section's is
    // represented by it (listings such as `ls -l`, fixed-width tables; docs/DECISIONS.md).
    std::optional<internal::TemplateGrouping> grouping;
    if (options_.template_grouping) {
      grouping.emplace(docs, &keep);
    } else {
      internal::KeepNonRedundant(docs, &keep);
    }
    // Line endings (issue 16, docs/DECISIONS.md): in line mode each output line is an input
    // line with its own CR, a marker gets a CR iff the input is majority CRLF, lines are joined
    // by LF and the input's final LF is kept; in paragraph mode sections are separated by one
    // blank line in the input's convention ("\r\n\r\n" for majority CRLF, else "\n\n").
    const bool crlf = internal::IsMajorityCrlf(text);
    // Runs dropped mostly by template grouping carry the invariants of their variable tokens
    // (project extension; the spec's text markers have no summary).
    // Each output unit is a kept section or one marker for a maximal dropped run; between two
    // units of the same listing the separator is one line ending, else the mode's separator.
    const std::string_view sep = paragraph_mode ? (crlf ? "\r\n\r\n" : "\n\n") : "\n";
    const std::string_view eol = crlf ? "\r\n" : "\n";
    // The marker of the dropped run [i, j).
    auto marker = [&](size_t i, size_t j) {
      std::string summary;
      if (i > 0 &&
          std::all_of(raws.begin() + static_cast<std::ptrdiff_t>(i), raws.begin() + static_cast<std::ptrdiff_t>(j),
                      [&](std::string_view r) { return r == raws[i - 1]; })) {
        summary = kIdenticalRun;
      } else if (grouping) {
        summary = grouping->RunSummary(i, j);
      }
      return internal::SynthesizedLine(internal::ElisionMarker(j - i, kMarkerText, summary), crlf && !paragraph_mode);
    };
    // Each maximal dropped run's marker, in order; a run whose sections take no more bytes
    // than its marker is written as it is instead (project extension: `find` output had
    // one-line markers standing for one short line each). Runs left dropped stay maximal.
    std::vector<std::string> markers;
    for (size_t i = 0; i < n;) {
      if (keep[i]) {
        ++i;
        continue;
      }
      size_t j = i + 1;
      while (j < n && !keep[j]) ++j;
      size_t run_bytes = 0;
      for (size_t k = i; k < j; ++k) run_bytes += raws[k].size() + 1;
      std::string m = marker(i, j);
      if (run_bytes <= m.size()) {
        std::fill(keep.begin() + static_cast<std::ptrdiff_t>(i), keep.begin() + static_cast<std::ptrdiff_t>(j), true);
      } else {
        markers.push_back(std::move(m));
      }
      i = j;
    }
    size_t next_marker = 0;
    std::string out;
    size_t units = 0;
    size_t prev_last = n;  // last section of the previous unit
    for (size_t i = 0; i < n;) {
      size_t j = i + 1;
      if (!keep[i]) {
        while (j < n && !keep[j]) ++j;
      }
      if (units > 0) {
        const bool same_listing = sections[i].listing != 0 && sections[i].listing == sections[prev_last].listing;
        out.append(same_listing ? eol : sep);
      }
      if (keep[i]) {
        out.append(raws[i]);
      } else {
        out.append(markers[next_marker++]);
      }
      ++units;
      prev_last = j - 1;
      i = j;
    }
    if (units == n) return std::nullopt;
    // The input's final line ending is kept, as every line compressor keeps it (§4.1 Join).
    if (!text.empty() && text.back() == '\n') {
      out.append(paragraph_mode && text.size() >= 2 && text[text.size() - 2] == '\r' ? "\r\n" : "\n");
    }
    return out;
  }

 private:
  TextOptions options_;
};

}  // namespace

std::vector<std::string_view> TextSections(std::string_view text) {
  const bool paragraph_mode = internal::Contains(text, "\n\n") || internal::Contains(text, "\r\n\r\n");
  std::vector<std::string_view> out;
  for (const Section& s : Sections(text, paragraph_mode)) out.push_back(s.raw);
  return out;
}

std::unique_ptr<Compressor> NewTextCompressor(TextOptions options) { return std::make_unique<TextCompressor>(options); }

}  // namespace caveman
