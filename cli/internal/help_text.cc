#include "cli/internal/help_text.h"

#include <array>
#include <string>

namespace caveman::internal {
namespace {

// The parts of one subcommand's help; Compose() lays them out with the common headings, so
// every text has the same sections in the same order.
struct HelpParts {
  std::string_view name;
  std::string_view summary;      // one line, for the top-level list
  std::string_view usage;        // after "usage: caveman-engine "
  std::string_view description;  // LF-terminated lines
  std::string_view options;      // the subcommand's own options; -h/--help is added
  bool store_env;                // whether the store variables apply
  std::string_view extra_env;    // further variables
  std::string_view exit_ok;      // what exit status 0 means
  std::string_view exit_fail;    // what exit status 1 means (continuation lines indented 5)
  std::string_view examples;     // LF-terminated command lines
};

constexpr std::string_view kStoreEnv =
    "  CAVEMAN_HOME            store directory (default ~/.caveman, created 0700)\n"
    "  CAVEMAN_CCR_DB          database file; overrides CAVEMAN_HOME\n"
    "  CAVEMAN_CCR_MAX_BYTES   store capacity in stored bytes (default 536870912)\n"
    "  CAVEMAN_CCR_ZSTD_LEVEL  zstd level 1-19 for stored originals (default 3)\n";

constexpr std::array<HelpParts, 8> kParts = {{
    {.name = "compress",
     .summary = "stdin -> smaller view on stdout, report on stderr; original stored",
     .usage = "compress [--type T|auto] [--query Q] [--report json|pretty]",
     .description =
         "Reads tool output on stdin and writes a smaller view of it to stdout, then a report to\n"
         "stderr. Before anything lossy is written, the exact original is stored in the recovery\n"
         "store; `caveman-engine retrieve <handle>` brings it back. Input that would not get\n"
         "smaller (or cannot be stored) is written unchanged. At most 64 MiB of input.\n",
     .options = "  --type T|auto           force content type T (list: caveman-engine registry);\n"
                "                          auto or no --type detects it\n"
                "  --query Q               keep what matches Q (json, log, text, tabular, config,\n"
                "                          search-result); empty = no query\n"
                "  --report json|pretty    report format: json is the one-line JSON report, pretty a\n"
                "                          few readable lines; default pretty when stderr is a\n"
                "                          terminal, json otherwise\n",
     .store_env = true,
     .extra_env = "  CAVE_ENGINE_TOON        best-of: json input may come out as TOON when smaller\n"
                  "  CAVEMAN_REPORT          json|pretty: report format when --report is not given\n",
     .exit_ok = "payload written, including a pass-through (the report's error member says\n"
                "     when the store failed and the original was written instead)",
     .exit_fail = "bad arguments, stdin unreadable or over 64 MiB, store settings invalid, or\n"
                  "     stdout not writable",
     .examples = "  make 2>&1 | caveman-engine compress\n"
                 "  kubectl get pods -A -o json | caveman-engine compress --query CrashLoopBackOff\n"
                 "  pytest 2>&1 | caveman-engine compress --type repetition --report pretty\n"},
    {.name = "detect",
     .summary = "print the content type detected in stdin",
     .usage = "detect",
     .description = "Reads stdin (at most 64 MiB) and prints the content type that compress would pick,\n"
                    "followed by a newline. Opens no store.\n",
     .exit_ok = "type printed",
     .exit_fail = "bad arguments, stdin unreadable or over 64 MiB, or stdout not writable",
     .examples = "  git diff | caveman-engine detect\n"
                 "  kubectl get pods -o json | caveman-engine detect\n"},
    {.name = "retrieve",
     .summary = "print the original stored under a recovery handle",
     .usage = "retrieve <handle> [query]",
     .description =
         "Writes the original bytes stored under <handle> (ccr_ followed by 32 hex digits, as\n"
         "printed in the compress report) to stdout, unchanged and with nothing appended. With\n"
         "a query, only the parts of the original that match it are written.\n",
     .store_env = true,
     .exit_ok = "original written",
     .exit_fail = "no handle, handle not found, record corrupt, store cannot be opened, or\n"
                  "     stdout not writable",
     .examples = "  caveman-engine retrieve ccr_dfe6a45fb401d36689e7abe649b5617c > original.log\n"
                 "  caveman-engine retrieve ccr_9ffcb4b0e01e6d91a2527ea463750829 \"ord-1064 error\"\n"},
    {.name = "stats",
     .summary = "tokens saved per content type, and store usage",
     .usage = "stats [--format json|table]",
     .description = "Prints what the recovery store has seen: records, tokens before and after, and the\n"
                    "share saved, per content type and in total, plus the store's size and capacity.\n",
     .options = "  --format json|table     json is indented JSON (the stable, scriptable form), table\n"
                "                          aligned columns; default table when stdout is a terminal,\n"
                "                          json otherwise\n",
     .store_env = true,
     .exit_ok = "statistics printed",
     .exit_fail = "bad arguments, store cannot be opened or read, or stdout not writable",
     .examples = "  caveman-engine stats\n"
                 "  caveman-engine stats --format json | jq .totals.ratio\n"},
    {.name = "registry",
     .summary = "print the capability manifest (JSON)",
     .usage = "registry",
     .description = "Prints the capability manifest (one JSON object and a newline): every transform the\n"
                    "engine can apply, with its safety class, recovery mode and a conformance digest.\n"
                    "Opens no store.\n",
     .exit_ok = "manifest printed",
     .exit_fail = "bad arguments or stdout not writable",
     .examples = "  caveman-engine registry | jq -r '.capabilities[].transform_id'\n"},
    {.name = "toon",
     .summary = "convert JSON to TOON (encode) or TOON to JSON (decode)",
     .usage = "toon encode|decode",
     .description =
         "encode: reads JSON on stdin and writes it as TOON (a compact, lossless table form for\n"
         "uniform arrays of objects). decode: reads TOON and writes compact JSON. No trailing\n"
         "newline, no store. At most 64 MiB of input.\n",
     .exit_ok = "converted",
     .exit_fail = "no or unknown verb, input not encodable/decodable, stdin unreadable or over\n"
                  "     64 MiB, or stdout not writable",
     .examples = "  curl -s https://api.example.com/users | caveman-engine toon encode\n"
                 "  caveman-engine toon decode < users.toon | jq .\n"},
    {.name = "version",
     .summary = "print the version",
     .usage = "version [--json]",
     .description = "Prints the version string and a newline; `caveman-engine --version` does the same.\n",
     .options = "  --json                  one JSON line with schema, version and capabilities\n",
     .exit_ok = "version printed",
     .exit_fail = "bad arguments or stdout not writable",
     .examples = "  caveman-engine version --json\n"},
    {.name = "gc",
     .summary = "delete old records and leftovers from the recovery store",
     .usage = "gc [--older-than <N>s|m|h|d] [--dry-run]",
     .description =
         "Cleans the recovery store: deletes records older than the given age (their handles\n"
         "stop working), deletes chunks left by interrupted writers, and checkpoints the WAL.\n"
         "Without --older-than no record is deleted. Prints one JSON line:\n"
         "{\"removed\":N,\"freed_bytes\":B,\"orphan_chunks\":C,\"storage_bytes\":S,\"max_storage_bytes\":M}\n",
     .options = "  --older-than D          delete records older than D: a positive integer followed\n"
                "                          by s, m, h or d (90m, 12h, 7d)\n"
                "  --dry-run               count what would be deleted, delete nothing\n",
     .store_env = true,
     .exit_ok = "done (or counted, with --dry-run)",
     .exit_fail = "bad arguments, store cannot be opened or cleaned, or stdout not writable",
     .examples = "  caveman-engine gc --older-than 7d --dry-run\n"
                 "  caveman-engine gc --older-than 30d\n"},
}};

std::string Compose(const HelpParts& p) {
  std::string out = "usage: caveman-engine ";
  out += p.usage;
  out += "\n\n";
  out += p.description;
  out += "\nOptions:\n";
  out += p.options;
  out += "  -h, --help              print this help on stdout and exit 0\n\nEnvironment:";
  if (!p.store_env && p.extra_env.empty()) out += " none.";
  out += "\n";
  if (p.store_env) out += kStoreEnv;
  out += p.extra_env;
  out += "\nExit status:\n  0  ";
  out += p.exit_ok;
  out += "\n  1  ";
  out += p.exit_fail;
  bool several = p.examples.find('\n') + 1 < p.examples.size();
  out += several ? "\n\nExamples:\n" : "\n\nExample:\n";
  out += p.examples;
  return out;
}

// The composed texts live as long as the program; SubcommandInfo points into them.
const std::array<SubcommandInfo, kParts.size()>& Table() {
  static const std::array<std::string, kParts.size()> texts = [] {
    std::array<std::string, kParts.size()> t;
    for (size_t i = 0; i < kParts.size(); ++i) t[i] = Compose(kParts[i]);
    return t;
  }();
  static const std::array<SubcommandInfo, kParts.size()> table = [] {
    std::array<SubcommandInfo, kParts.size()> t;
    for (size_t i = 0; i < kParts.size(); ++i) t[i] = {kParts[i].name, kParts[i].summary, texts[i]};
    return t;
  }();
  return table;
}

}  // namespace

std::span<const SubcommandInfo> Subcommands() { return Table(); }

const SubcommandInfo* FindSubcommand(std::string_view name) {
  for (const SubcommandInfo& s : Table()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string TopLevelHelp() {
  std::string out = "usage: ";
  out += kUsageLine;
  out += "\n\nCompresses the output of tools before it reaches an LLM; the original stays\n"
         "recoverable from a local SQLite store.\n\nSubcommands:\n";
  for (const SubcommandInfo& s : Table()) {
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
