// Hyperscan multi-pattern scan used by detection (§3.3): one block-mode database holding the
// log-line regex of rule 9 (split into its four alternatives, RE2 semantics preserved per
// line), the code keyword regex of rule 8, and the build/test console patterns this project
// added (docs/DECISIONS.md, "Detection: console output").
//
// Thread-safety: the database is compiled once per process (function-local static); scratch
// space is per thread.
#ifndef CAVEMAN_COMPRESSORS_INTERNAL_DETECT_SCAN_H_
#define CAVEMAN_COMPRESSORS_INTERNAL_DETECT_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace caveman::internal {

enum LineFlag : uint8_t {
  kLineLog = 1,      // matches the log regex of §3.3 rule 9
  kLineConsole = 2,  // a build/test tool console line (compiler, make, ninja, pytest, ctest…)
};

// Fixed strings whose presence anywhere in the text the rules test (bit i of
// ScanResult::literals). kLitTag* are ASCII case-insensitive.
enum Literal : int {
  kLitFatArrow,         // =>
  kLitClassName,        // className=
  kLitCloseCall,        // });
  kLitColonColon,       // ::
  kLitArrow,            // ->
  kLitParenBrace,       // ){
  kLitParenSpaceBrace,  // ") {"
  kLitSemicolonLf,      // ;\n
  kLitBrace,            // {
  kLitDefSpace,         // "def "
  kLitColon,            // :
  kLitDiffGit,          // "diff --git "
  kLitLfAt,             // "\n@@ "
  kLitLfMinus,          // "\n--- "
  kLitLfPlus,           // "\n+++ "
  kLitLfFourSpaces,     // "\n    "
  kLitLfImport,         // "\nimport "
  kLitLfExport,         // "\nexport "
  kLitLfPackage,        // "\npackage "
  kLitLfFunc,           // "\nfunc "
  kLitLfDef,            // "\ndef "
  kLitLfClass,          // "\nclass "
  kLitLfConst,          // "\nconst "
  kLitTagBody,          // <body
  kLitTagArticle,       // <article
  kLitTagMain,          // <main
  kLitTagDiv,           // <div
  kLitTagP,             // <p> or "<p "
  kLitCount,
};

struct ScanResult {
  std::vector<uint8_t> line_flags;      // one per LF piece (see line_starts)
  std::vector<uint16_t> line_keywords;  // keyword matches per piece (saturating)
  // Rule 8 keywords that start a statement, per piece (saturating): the first word of the
  // line or the first after `;`, `{` or `}`, past blanks and Rust's `pub`/`pub(…)` (project
  // rule, docs/DECISIONS.md "Code keywords start statements").
  std::vector<uint16_t> line_statements;
  size_t keyword_matches = 0;  // non-overlapping matches of the rule 8 keyword regex
  uint64_t literals = 0;       // bit per Literal present in the text
  bool Has(Literal l) const { return (literals >> l) & 1; }
  bool ok = true;  // false if Hyperscan failed (flags are then all 0)
};

// `line_starts` holds the offset of every LF-separated piece of `text` (0, and each LF + 1).
ScanResult ScanDetectPatterns(std::string_view text, const std::vector<size_t>& line_starts);

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_INTERNAL_DETECT_SCAN_H_
