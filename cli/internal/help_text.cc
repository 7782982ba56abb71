#include "cli/internal/help_text.h"

#include <array>

namespace caveman::internal {
namespace {

// Shared blocks, spliced in by string-literal concatenation so that each help text stays one
// constant (no start-up work, and the texts cannot drift apart).
#define CAVEMAN_HELP_STORE_ENV                                                          \
  "  CAVEMAN_HOME            store directory (default ~/.caveman, created 0700)\n"      \
  "  CAVEMAN_CCR_DB          database file; overrides CAVEMAN_HOME\n"                   \
  "  CAVEMAN_CCR_MAX_BYTES   store capacity in stored bytes (default 536870912)\n"      \
  "  CAVEMAN_CCR_ZSTD_LEVEL  zstd level 1-19 for stored originals (default 3)\n"
#define CAVEMAN_HELP_HELP_FLAG "  -h, --help              print this help on stdout and exit 0\n"

constexpr std::string_view kCompressHelp =
    "usage: caveman-engine compress [--type T|auto] [--query Q] [--report json|pretty]\n"
    "\n"
    "Reads tool output on stdin and writes a smaller view of it to stdout, then a report to\n"
    "stderr. Before anything lossy is written, the exact original is stored in the recovery\n"
    "store; `caveman-engine retrieve <handle>` brings it back. Input that would not get\n"
    "smaller (or cannot be stored) is written unchanged. At most 64 MiB of input.\n"
    "\n"
    "Options:\n"
    "  --type T|auto           force content type T (list: caveman-engine registry);\n"
    "                          auto or no --type detects it\n"
    "  --query Q               keep what matches Q (json, log, text, tabular, config,\n"
    "                          search-result); empty = no query\n"
    "  --report json|pretty    report format: json is the one-line JSON report, pretty a\n"
    "                          few readable lines; default pretty when stderr is a\n"
    "                          terminal, json otherwise\n" CAVEMAN_HELP_HELP_FLAG
    "\n"
    "Environment:\n" CAVEMAN_HELP_STORE_ENV
    "  CAVE_ENGINE_TOON        best-of: json input may come out as TOON when smaller\n"
    "  CAVEMAN_REPORT          json|pretty: report format when --report is not given\n"
    "\n"
    "Exit status:\n"
    "  0  payload written, including a pass-through (the report's error member says\n"
    "     when the store failed and the original was written instead)\n"
    "  1  bad arguments, stdin unreadable or over 64 MiB, store settings invalid, or\n"
    "     stdout not writable\n"
    "\n"
    "Examples:\n"
    "  make 2>&1 | caveman-engine compress\n"
    "  kubectl get pods -A -o json | caveman-engine compress --query CrashLoopBackOff\n"
    "  pytest 2>&1 | caveman-engine compress --type repetition --report pretty\n";

constexpr std::string_view kDetectHelp =
    "usage: caveman-engine detect\n"
    "\n"
    "Reads stdin (at most 64 MiB) and prints the content type that compress would pick,\n"
    "followed by a newline. Opens no store.\n"
    "\n"
    "Options:\n" CAVEMAN_HELP_HELP_FLAG
    "\n"
    "Environment: none.\n"
    "\n"
    "Exit status:\n"
    "  0  type printed\n"
    "  1  bad arguments, stdin unreadable or over 64 MiB, or stdout not writable\n"
    "\n"
    "Examples:\n"
    "  git diff | caveman-engine detect        # diff\n"
    "  kubectl get pods -o json | caveman-engine detect\n";

constexpr std::string_view kRetrieveHelp =
    "usage: caveman-engine retrieve <handle> [query]\n"
    "\n"
    "Writes the original bytes stored under <handle> (ccr_ followed by 32 hex digits, as\n"
    "printed in the compress report) to stdout, unchanged and with nothing appended. With\n"
    "a query, only the parts of the original that match it are written.\n"
    "\n"
    "Options:\n" CAVEMAN_HELP_HELP_FLAG
    "\n"
    "Environment:\n" CAVEMAN_HELP_STORE_ENV
    "\n"
    "Exit status:\n"
    "  0  original written\n"
    "  1  no handle, handle not found, record corrupt, store cannot be opened, or\n"
    "     stdout not writable\n"
    "\n"
    "Examples:\n"
    "  caveman-engine retrieve ccr_dfe6a45fb401d36689e7abe649b5617c > original.log\n"
    "  caveman-engine retrieve ccr_9ffcb4b0e01e6d91a2527ea463750829 \"ord-1064 error\"\n";

constexpr std::string_view kStatsHelp =
    "usage: caveman-engine stats [--format json|table]\n"
    "\n"
    "Prints what the recovery store has seen: records, tokens before and after, and the\n"
    "share saved, per content type and in total, plus the store's size and capacity.\n"
    "\n"
    "Options:\n"
    "  --format json|table     json is indented JSON (the stable, scriptable form), table\n"
    "                          aligned columns; default table when stdout is a terminal,\n"
    "                          json otherwise\n" CAVEMAN_HELP_HELP_FLAG
    "\n"
    "Environment:\n" CAVEMAN_HELP_STORE_ENV
    "\n"
    "Exit status:\n"
    "  0  statistics printed\n"
    "  1  bad arguments, store cannot be opened or read, or stdout not writable\n"
    "\n"
    "Examples:\n"
    "  caveman-engine stats\n"
    "  caveman-engine stats --format json | jq .totals.ratio\n";

constexpr std::string_view kRegistryHelp =
    "usage: caveman-engine registry\n"
    "\n"
    "Prints the capability manifest (one JSON object and a newline): every transform the\n"
    "engine can apply, with its safety class, recovery mode and a conformance digest.\n"
    "Opens no store.\n"
    "\n"
    "Options:\n" CAVEMAN_HELP_HELP_FLAG
    "\n"
    "Environment: none.\n"
    "\n"
    "Exit status:\n"
    "  0  manifest printed\n"
    "  1  bad arguments or stdout not writable\n"
    "\n"
    "Example:\n"
    "  caveman-engine registry | jq -r '.capabilities[].transform_id'\n";

constexpr std::string_view kToonHelp =
    "usage: caveman-engine toon encode|decode\n"
    "\n"
    "encode: reads JSON on stdin and writes it as TOON (a compact, lossless table form for\n"
    "uniform arrays of objects). decode: reads TOON and writes compact JSON. No trailing\n"
    "newline, no store. At most 64 MiB of input.\n"
    "\n"
    "Options:\n" CAVEMAN_HELP_HELP_FLAG
    "\n"
    "Environment: none.\n"
    "\n"
    "Exit status:\n"
    "  0  converted\n"
    "  1  no or unknown verb, input not encodable/decodable, stdin unreadable or over\n"
    "     64 MiB, or stdout not writable\n"
    "\n"
    "Examples:\n"
    "  curl -s https://api.example.com/users | caveman-engine toon encode\n"
    "  caveman-engine toon decode < users.toon | jq .\n";

constexpr std::string_view kVersionHelp =
    "usage: caveman-engine version [--json]\n"
    "\n"
    "Prints the version string and a newline; `caveman-engine --version` does the same.\n"
    "\n"
    "Options:\n"
    "  --json                  one JSON line with schema, version and capabilities\n"
    CAVEMAN_HELP_HELP_FLAG
    "\n"
    "Environment: none.\n"
    "\n"
    "Exit status:\n"
    "  0  version printed\n"
    "  1  bad arguments or stdout not writable\n"
    "\n"
    "Example:\n"
    "  caveman-engine version --json\n";

constexpr std::string_view kGcHelp =
    "usage: caveman-engine gc [--older-than <N>s|m|h|d] [--dry-run]\n"
    "\n"
    "Cleans the recovery store: deletes records older than the given age (their handles\n"
    "stop working), deletes chunks left by interrupted writers, and checkpoints the WAL.\n"
    "Without --older-than no record is deleted. Prints one JSON line:\n"
    "{\"removed\":N,\"freed_bytes\":B,\"orphan_chunks\":C,\"storage_bytes\":S,"
    "\"max_storage_bytes\":M}\n"
    "\n"
    "Options:\n"
    "  --older-than D          delete records older than D: a positive integer followed\n"
    "                          by s, m, h or d (90m, 12h, 7d)\n"
    "  --dry-run               count what would be deleted, delete nothing\n"
    CAVEMAN_HELP_HELP_FLAG
    "\n"
    "Environment:\n" CAVEMAN_HELP_STORE_ENV
    "\n"
    "Exit status:\n"
    "  0  done (or counted, with --dry-run)\n"
    "  1  bad arguments, store cannot be opened or cleaned, or stdout not writable\n"
    "\n"
    "Examples:\n"
    "  caveman-engine gc --older-than 7d --dry-run\n"
    "  caveman-engine gc --older-than 30d\n";

#undef CAVEMAN_HELP_STORE_ENV
#undef CAVEMAN_HELP_HELP_FLAG

constexpr std::array<SubcommandInfo, 8> kSubcommands = {{
    {"compress", "stdin -> smaller view on stdout, report on stderr; original stored", kCompressHelp},
    {"detect", "print the content type detected in stdin", kDetectHelp},
    {"retrieve", "print the original stored under a recovery handle", kRetrieveHelp},
    {"stats", "tokens saved per content type, and store usage", kStatsHelp},
    {"registry", "print the capability manifest (JSON)", kRegistryHelp},
    {"toon", "convert JSON to TOON (encode) or TOON to JSON (decode)", kToonHelp},
    {"version", "print the version", kVersionHelp},
    {"gc", "delete old records and leftovers from the recovery store", kGcHelp},
}};

}  // namespace

std::span<const SubcommandInfo> Subcommands() { return kSubcommands; }

const SubcommandInfo* FindSubcommand(std::string_view name) {
  for (const SubcommandInfo& s : kSubcommands) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string TopLevelHelp() {
  std::string out = "usage: ";
  out += kUsageLine;
  out += "\n\nCompresses the output of tools before it reaches an LLM; the original stays\n"
         "recoverable from a local SQLite store.\n\nSubcommands:\n";
  for (const SubcommandInfo& s : kSubcommands) {
    out += "  ";
    out += s.name;
    out.append(10 - s.name.size(), ' ');
    out += s.summary;
    out += '\n';
  }
  out += "\nRun `caveman-engine <subcommand> --help` for its options, environment, exit status\n"
         "and examples.\n";
  return out;
}

}  // namespace caveman::internal
