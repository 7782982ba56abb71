#include "cli/internal/help_text.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "engine/command_hints.h"

namespace caveman::internal {
namespace {

// The parts of one subcommand's help; Compose() lays them out with the common headings, so
// every text has the same sections in the same order.
struct HelpParts {
  std::string_view name;
  std::string_view summary;                     // one line, for the top-level list
  std::string_view usage;                       // after "usage: caveman-engine "
  std::string_view description;                 // LF-terminated lines
  std::string_view options;                     // the subcommand's own options; -h/--help is added
  bool store_env;                               // whether the store variables apply
  std::string_view extra_env;                   // further variables
  std::string_view exit_ok;                     // what exit status 0 means
  std::string_view exit_fail;                   // what exit status 1 means (continuation lines indented 5)
  std::string_view examples;                    // LF-terminated command lines
  std::string_view exit_more = {};              // further "  N  meaning" lines, LF-terminated
  std::string (*more_description)() = nullptr;  // generated text after the description
};

// The `run` type hints, from the table of engine/command_hints.cc so that the help cannot
// drift from it: one paragraph per hint, the rows in table order.
std::string HintSummary() {
  constexpr size_t kWidth = 88;
  constexpr std::string_view kIndent = "            ";
  std::array<std::string_view, 4> hints = {"log", "diff", "terminal", ""};
  std::string out;
  for (std::string_view hint : hints) {
    std::string label(hint.empty() ? "none" : hint);
    std::string line = "  " + label + std::string(kIndent.size() - 2 - label.size(), ' ');
    bool first = true;
    std::vector<std::string_view> programs;  // those with rows before the current one
    for (const CommandHint& row : CommandHintTable()) {
      bool catch_all = row.words.empty() && row.flags.empty();
      bool earlier = std::find(programs.begin(), programs.end(), row.program) != programs.end();
      programs.push_back(row.program);
      if (row.hint != hint) continue;
      std::string item(row.program);
      if (!row.words.empty()) item += " " + std::string(row.words);
      if (!row.flags.empty()) item += " " + std::string(row.flags.substr(0, row.flags.find(' ')));
      if (catch_all && earlier) item += " (other)";
      std::string piece = (first ? "" : ", ") + item;
      if (line.size() + piece.size() + 1 > kWidth) {
        out += line + ",\n";
        line = std::string(kIndent) + item;
      } else {
        line += piece;
      }
      first = false;
    }
    out += line + "\n";
  }
  return out;
}

constexpr std::string_view kStoreEnv =
    "  CAVEMAN_HOME            store directory (default ~/.caveman, created 0700)\n"
    "  CAVEMAN_CCR_DB          database file; overrides CAVEMAN_HOME\n"
    "  CAVEMAN_CCR_URL         postgresql://... URL: a shared PostgreSQL store instead of\n"
    "                          the SQLite file (libpq settings; overrides CAVEMAN_CCR_DB)\n"
    "  CAVEMAN_CCR_MAX_BYTES   store capacity in stored bytes (default 536870912)\n"
    "  CAVEMAN_CCR_ZSTD_LEVEL  zstd level 1-19 for stored originals (default 3)\n";

constexpr std::array<HelpParts, 12> kParts = {{
    {.name = "compress",
     .summary = "FILE or stdin -> smaller view on stdout, report on stderr; original stored",
     .usage = "compress [--type T|auto] [--query Q] [--report json|pretty]\n"
              "                               [--follow] [--min-savings R] [-q] [-o OUT] [FILE]",
     .description = "Reads tool output from FILE (stdin when FILE is - or missing) and writes a smaller view\n"
                    "of it to stdout (or OUT), then a report to stderr. Before anything lossy is written,\n"
                    "the exact original is stored in the recovery store; `caveman-engine retrieve <handle>`\n"
                    "brings it back. Input that would not get smaller (or cannot be stored) is written\n"
                    "unchanged. At most 64 MiB of input, except\n"
                    "with --follow on line types.\n",
     .options = "  -o, --output OUT        write the view to OUT instead of stdout; OUT is replaced\n"
                "                          only when compress succeeds (never left half-written);\n"
                "                          a pass-through writes the original there\n"
                "  -q, --quiet             no report (errors are still printed)\n"
                "  --type T|auto           force content type T (an unknown T is an error that\n"
                "                          lists the valid ones); auto or no --type detects it\n"
                "  --min-savings R         pass through unless the view saves at least the share R\n"
                "                          (0 <= R < 1) of the tokens; default 0, or\n"
                "                          CAVEMAN_MIN_SAVINGS, or compress.min_savings in the\n"
                "                          configuration file\n"
                "  --query Q               keep what matches Q (json, log, text, tabular, config,\n"
                "                          search-result); empty = no query\n"
                "  --report json|pretty    report format: json is the one-line JSON report, pretty a\n"
                "                          few readable lines; default pretty when stderr is a\n"
                "                          terminal, json otherwise\n"
                "  --follow                write kept lines as the input arrives (log, repetition,\n"
                "                          terminal; other types wait for the end of input); a\n"
                "                          marker is written only after the lines it replaces are\n"
                "                          stored; no input limit on those types\n",
     .store_env = true,
     .extra_env = "  CAVE_ENGINE_TOON        best-of: json input may come out as TOON when smaller\n"
                  "  CAVEMAN_REPORT          json|pretty: report format when --report is not given\n"
                  "  CAVEMAN_MIN_SAVINGS     as --min-savings when the flag is not given\n",
     .exit_ok = "payload written, including a pass-through (the report's error member says\n"
                "     when the store failed and the original was written instead)",
     .exit_fail = "FILE unreadable, input over 64 MiB, store settings invalid, output not\n"
                  "     writable, or (--follow) lossy lines were written but their record\n"
                  "     could not be finalised (the report's error says why)",
     .examples = "  make 2>&1 | caveman-engine compress\n"
                 "  caveman-engine compress -q -o build.view build.log\n"
                 "  tail -f app.log | caveman-engine compress --follow --query timeout\n"
                 "  kubectl get pods -A -o json | caveman-engine compress --query CrashLoopBackOff\n"
                 "  pytest 2>&1 | caveman-engine compress --type repetition --report pretty\n"},
    {.name = "detect",
     .summary = "print the content type detected in FILE or stdin",
     .usage = "detect [FILE]",
     .description = "Reads FILE (stdin when FILE is - or missing; at most 64 MiB) and prints the content\n"
                    "type that compress would pick, followed by a newline. Opens no store.\n",
     .exit_ok = "type printed",
     .exit_fail = "FILE or stdin unreadable or over 64 MiB, or stdout not writable",
     .examples = "  git diff | caveman-engine detect\n"
                 "  caveman-engine detect build.log\n"
                 "  kubectl get pods -o json | caveman-engine detect\n"},
    {.name = "retrieve",
     .summary = "print the original stored under a recovery handle",
     .usage = "retrieve <handle> [query]\n"
              "   or: caveman-engine retrieve <handle> [query] --lines A:B|--bytes A:B|--grep RE [-C N]\n"
              "   or: caveman-engine retrieve <handle> --json-pointer P\n"
              "   or: caveman-engine retrieve part_<id>\n"
              "   or: caveman-engine retrieve <handle> --marker K\n"
              "   or: caveman-engine retrieve <handle> --map [--format json|table]\n"
              "   or: caveman-engine retrieve --partials [--format json|table]",
     .description = "Writes the original bytes stored under <handle> (ccr_ followed by 32 hex digits, as\n"
                    "printed in the compress report) to stdout, unchanged and with nothing appended. With\n"
                    "a query, only the parts of the original that match it are written.\n"
                    "A partial record (part_ followed by 32 hex digits) holds the original of a follow\n"
                    "mode run (compress --follow, run) as far as it was stored: one still running, or one\n"
                    "that could not be finalised (killed, store full). retrieve part_<id> writes those\n"
                    "bytes; --partials lists the partial records.\n"
                    "A slice writes only part of the original (of the query's text, with a query); one\n"
                    "slice flag at a time. A line or byte range stops reading the record once past the\n"
                    "range, so its bytes are not checked against the record's checksum.\n"
                    "Every view's markers are mapped to the original: --map lists them in view order\n"
                    "(marker K = 1, 2, ...: kind, view line, count of units, original lines first..last,\n"
                    "bytes [begin, end), and for JSON the array's pointer and element indices), and\n"
                    "--marker K writes exactly the original bytes marker K replaced.\n",
     .options = "  --lines A:B             lines A to B, from 1, inclusive (sed -n A,Bp); A: to the\n"
                "                          end, :B from line 1, N = one line\n"
                "  --bytes A:B             bytes from offset A (from 0) up to B, B excluded; A: or\n"
                "                          :B for open ends\n"
                "  --grep RE               lines matching RE (PCRE syntax as Hyperscan has it, no\n"
                "                          backreferences), as grep -n -E: N:line\n"
                "  -C, --context N         with --grep: N lines around each match (N-line), groups\n"
                "                          apart separated by --, as grep -n -C N\n"
                "  --json-pointer P        the value at RFC 6901 pointer P of a JSON original, its\n"
                "                          exact original bytes (P empty = the whole document)\n"
                "  --partials              list the partial records, oldest first: one JSON object\n"
                "                          per line (id, created_at, updated_at, original_bytes,\n"
                "                          stored_bytes, command, writer, writer_alive)\n"
                "  --marker K              write the original bytes the K-th marker of the view\n"
                "                          replaced (K from 1, in view order)\n"
                "  --map                   list the view's markers: one JSON line {\"handle\",\n"
                "                          \"markers\":[{marker, kind, view_line, count,\n"
                "                          first_line, last_line, byte_begin, byte_end,\n"
                "                          [pointer, first_index, last_index]}]}, or a table\n"
                "  --format json|table     with --partials or --map: JSON, or a table; default\n"
                "                          table when stdout is a terminal, json otherwise\n",
     .store_env = true,
     .exit_ok = "original written (or partial records or the marker map listed)",
     .exit_fail = "handle or partial record not found, record corrupt, store cannot\n"
                  "     be opened, marker K out of range, or stdout not writable",
     .examples = "  caveman-engine retrieve ccr_dfe6a45fb401d36689e7abe649b5617c > original.log\n"
                 "  caveman-engine retrieve ccr_9ffcb4b0e01e6d91a2527ea463750829 \"ord-1064 error\"\n"
                 "  caveman-engine retrieve ccr_dfe6a45fb401d36689e7abe649b5617c --lines 120:180\n"
                 "  caveman-engine retrieve ccr_dfe6a45fb401d36689e7abe649b5617c --grep 'FAILED|Error' -C 3\n"
                 "  caveman-engine retrieve ccr_9ffcb4b0e01e6d91a2527ea463750829 --json-pointer /orders/17\n"
                 "  caveman-engine retrieve --partials --format table\n"
                 "  caveman-engine retrieve ccr_dfe6a45fb401d36689e7abe649b5617c --map --format table\n"
                 "  caveman-engine retrieve ccr_dfe6a45fb401d36689e7abe649b5617c --marker 2\n",
     .exit_more = "  3  --marker/--map: the record has no marker map (stored before marker maps,\n"
                  "     or its view could not be aligned with the original)\n"},
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
     .exit_fail = "store cannot be opened or read, or stdout not writable",
     .examples = "  caveman-engine stats\n"
                 "  caveman-engine stats --format json | jq .totals.ratio\n"},
    {.name = "registry",
     .summary = "print the capability manifest (JSON)",
     .usage = "registry",
     .description = "Prints the capability manifest (one JSON object and a newline): every transform the\n"
                    "engine can apply, with its safety class, recovery mode and a conformance digest.\n"
                    "Opens no store.\n",
     .exit_ok = "manifest printed",
     .exit_fail = "stdout not writable",
     .examples = "  caveman-engine registry | jq -r '.capabilities[].transform_id'\n"},
    {.name = "toon",
     .summary = "convert JSON to TOON (encode) or TOON to JSON (decode)",
     .usage = "toon encode|decode [FILE]",
     .description = "encode: reads JSON and writes it as TOON (a compact, lossless table form for uniform\n"
                    "arrays of objects). decode: reads TOON and writes compact JSON. Input from FILE, or\n"
                    "stdin for - or none; at most 64 MiB. No trailing newline, no store.\n",
     .exit_ok = "converted",
     .exit_fail = "input not encodable/decodable, FILE or stdin unreadable or over 64 MiB,\n"
                  "     or stdout not writable",
     .examples = "  curl -s https://api.example.com/users | caveman-engine toon encode\n"
                 "  caveman-engine toon decode < users.toon | jq .\n"},
    {.name = "version",
     .summary = "print the version",
     .usage = "version [--json]",
     .description = "Prints the version string (the library's, from the CMake project version) and a\n"
                    "newline; `caveman-engine --version` and `-V` do the same.\n",
     .options = "  --json                  one JSON line with schema, version and capabilities\n",
     .exit_ok = "version printed",
     .exit_fail = "stdout not writable",
     .examples = "  caveman-engine version --json\n"},
    {.name = "gc",
     .summary = "delete old records and leftovers from the recovery store",
     .usage = "gc [--older-than <N>s|m|h|d] [--dry-run]",
     .description =
         "Cleans the recovery store: deletes records older than the given age (their handles\n"
         "stop working), deletes chunks left by interrupted writers, and checkpoints the WAL.\n"
         "Without --older-than no record is deleted. With it, rows of the savings ledger (see\n"
         "gain) older than the age are deleted too. Prints one JSON line:\n"
         "{\"removed\":N,\"freed_bytes\":B,\"orphan_chunks\":C,\"storage_bytes\":S,\"max_storage_bytes\":M}\n",
     .options = "  --older-than D          delete records older than D: a positive integer followed\n"
                "                          by s, m, h or d (90m, 12h, 7d)\n"
                "  --dry-run               count what would be deleted, delete nothing\n",
     .store_env = true,
     .exit_ok = "done (or counted, with --dry-run)",
     .exit_fail = "store cannot be opened or cleaned, or stdout not writable",
     .examples = "  caveman-engine gc --older-than 7d --dry-run\n"
                 "  caveman-engine gc --older-than 30d\n"},
    {.name = "run",
     .summary = "run a command and compress its output as it arrives; original stored",
     .usage = "run [--type T|auto] [--query Q] [--report json|pretty]\n"
              "                          [--min-savings R] [-q] -- CMD...",
     .description = "Runs CMD with its stdout and stderr on one pipe (their order kept) and stdin\n"
                    "inherited, and compresses what it prints as it arrives, like compress --follow: kept\n"
                    "lines appear at once, a marker only after the lines it replaces are stored. The report\n"
                    "goes to stderr at the end; the stored record also names the command line.\n"
                    "SIGINT and SIGTERM sent to caveman-engine are passed on to CMD (Ctrl-C at the terminal\n"
                    "reaches CMD directly, once); caveman-engine reads until CMD's output ends.\n"
                    "\n"
                    "Without --type the command suggests a content type; detection still wins when it\n"
                    "finds json, html, diff or test-report. The first matching entry counts:\n",
     .options = "  --type T|auto           force content type T; auto or no --type: detect, with\n"
                "                          the command's hint (or [run.PROGRAM] type in the\n"
                "                          configuration file)\n"
                "  --query Q               keep what matches Q; empty = no query (default: the\n"
                "                          file's [run.PROGRAM] query)\n"
                "  --report json|pretty    report format, as for compress\n"
                "  --min-savings R         as for compress (batch-compressed output only)\n"
                "  -q, --quiet             no report (errors are still printed)\n",
     .store_env = true,
     .extra_env = "  CAVEMAN_REPORT          json|pretty: report format when --report is not given\n"
                  "  CAVEMAN_MIN_SAVINGS     as --min-savings when the flag is not given\n",
     .exit_ok = "CMD exited 0",
     .exit_fail = "CMD exited 1, or caveman-engine failed: store settings invalid, stdout not\n"
                  "     writable, or lossy lines were written but their record could not be\n"
                  "     finalised (the report's error says why)",
     .examples = "  caveman-engine run -- make -j8\n"
                 "  caveman-engine run --query timeout -- kubectl logs -f deploy/api\n"
                 "  caveman-engine run --type log -- ./ci.sh\n",
     .exit_more = "  126  CMD was found but could not be executed\n"
                  "  127  CMD was not found\n"
                  "  N  any other status is CMD's own; 128+N when signal N killed it\n",
     .more_description =
         [] {
           return HintSummary() +
                  "Looked through: NAME=VALUE, env, sudo, doas, time, nice, nohup, ionice, stdbuf,\n"
                  "timeout, taskset, command, exec, npx, pnpx, bunx, uvx, npm/pnpm/yarn exec, pnpm/yarn\n"
                  "dlx, uv/poetry/pipenv/pdm/hatch/rye/pipx/conda/mamba run, bundle/direnv exec,\n"
                  "python -m, and sh/bash/zsh -c with one simple command (no pipes, lists or quotes).\n";
         }},
    {.name = "mcp",
     .summary = "MCP server on stdin/stdout: compress and retrieve as tools for a model",
     .usage = "mcp",
     .description = "Serves the Model Context Protocol (revision 2025-06-18) over stdio: JSON-RPC 2.0, one\n"
                    "message per line. An MCP client (Claude Desktop, Claude Code, an SDK) starts it; see\n"
                    "examples/agents/. Tools:\n"
                    "  caveman_compress  {text, type?, query?}: the view, then a text block with the\n"
                    "                    recovery handle, the exact retrieve call and the report\n"
                    "  caveman_retrieve  {handle, query?, lines?, bytes?, grep?, context?, json_pointer?}:\n"
                    "                    the original or a slice, as retrieve does\n"
                    "  caveman_stats     {}: what the store holds\n"
                    "Messages over 16 MiB are refused with a JSON-RPC error (-32600); protocol errors are\n"
                    "JSON-RPC errors, failing tool calls results with isError. Ends at end of input.\n",
     .options = "",
     .store_env = true,
     .exit_ok = "end of input",
     .exit_fail = "stdin/stdout failed",
     .examples = "  claude mcp add caveman -- caveman-engine mcp\n"},
    {.name = "store",
     .summary = "check the recovery store, salvage its intact records, or migrate it",
     .usage = "store check | salvage --to PATH | migrate --from SRC --to DST",
     .description = "check: runs SQLite's integrity_check and decodes every record and partial record,\n"
                    "verifying its zstd checksum, length and SHA-256 (the handle). Read-only: the database\n"
                    "and its file modes stay as they are (with a -wal file, a private copy is read). Prints\n"
                    "one JSON line: {\"integrity\":\"ok\" or [messages],\"records\":N,\"ok\":N,\"corrupt\":\n"
                    "[handles],\"partials\":N,\"partials_ok\":N,\"corrupt_partials\":[ids],\"unreadable_rows\":N}\n"
                    "salvage: copies every record that verifies into a new database at PATH (an existing\n"
                    "PATH is refused), also from damaged files normal opens refuse; prints check's members\n"
                    "plus \"copied\", \"partials_copied\", \"partial_ids\" (old id to new id) and \"lost\".\n"
                    "migrate: copies every record from SRC to DST (each sqlite:PATH or a postgresql:// URL),\n"
                    "verifying each by checksum after the copy; records already at DST are skipped, so an\n"
                    "interrupted migration resumes. See `store migrate --help`.\n",
     .options = "  --to PATH               salvage: the new database\n"
                "  --from SRC --to DST     migrate: source and destination stores\n",
     .store_env = true,
     .exit_ok = "nothing damaged (salvage: every record copied)",
     .exit_fail = "bad arguments, store cannot be opened, target exists or cannot be\n"
                  "     created, or stdout not writable",
     .examples = "  caveman-engine store check | jq .corrupt\n"
                 "  caveman-engine store salvage --to ~/.caveman/salvaged.db\n"
                 "  caveman-engine store migrate --from sqlite:$HOME/.caveman/ccr.db --to \"$CAVEMAN_CCR_URL\"\n",
     .exit_more = "  4  damage found: a record that does not verify, an unreadable row, or\n"
                  "     integrity_check not ok (salvage copied every intact record)\n"},
    {.name = "gain",
     .summary = "tokens saved per invocation of compress and run (the savings ledger)",
     .usage = "gain [--since D] [--by type|command|day] [--format json|table]",
     .description = "Sums the savings ledger: one row per compress or run invocation that reached the\n"
                    "store, pass-throughs and repeated inputs included (stats counts each stored original\n"
                    "once). Per row: time, content type, command (run), tokens before and after, and the\n"
                    "recovery handle if one was stored. Rows older than gc --older-than's age are pruned\n"
                    "by gc. JSON: {\"since\",\"by\",\"totals\":{invocations, passed_through,\n"
                    "tokens_before, tokens_after, tokens_saved, ratio},\"groups\":[{\"key\", ...}]}.\n",
     .options = "  --since D               only invocations of the last D (90m, 12h, 7d)\n"
                "  --by type|command|day   one line per content type, command line (compress runs\n"
                "                          are \"(compress)\") or UTC day\n"
                "  --format json|table     default table when stdout is a terminal, json otherwise\n",
     .store_env = true,
     .exit_ok = "summary printed",
     .exit_fail = "store cannot be opened or read, or stdout not writable",
     .examples = "  caveman-engine gain --since 7d --by type\n"
                 "  caveman-engine gain --by day --format json | jq '.groups[] | [.key, .tokens_saved]'\n"},
}};

std::string Compose(const HelpParts& p) {
  std::string out = "usage: caveman-engine ";
  out += p.usage;
  out += "\n\n";
  out += p.description;
  if (p.more_description != nullptr) out += p.more_description();
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
  out += "\n  2  bad arguments (usage error), or a bad configuration file";
  if (!p.exit_more.empty()) {
    out += "\n";
    out += p.exit_more.substr(0, p.exit_more.size() - 1);
  }
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
  out +=
      "\n\nCompresses the output of tools before it reaches an LLM; the original stays\n"
      "recoverable from a local SQLite store.\n\nSubcommands:\n";
  for (const SubcommandInfo& s : Table()) {
    out += "  ";
    out += s.name;
    out.append(10 - s.name.size(), ' ');
    out += s.summary;
    out += '\n';
  }
  out +=
      "\nOptions:\n"
      "  -h, --help     print this help on stdout and exit 0\n"
      "  -V, --version  print the version and exit 0\n"
      "\nConfiguration: $XDG_CONFIG_HOME/caveman/config.toml (default ~/.config/caveman/\n"
      "config.toml): [store] path, max_bytes, url; [compress] min_savings, never; [run.PROGRAM]\n"
      "type, query, never. A flag wins over the environment, which wins over the file.\n"
      "\nExit status: 0 success, 1 error, 2 usage error or bad configuration file; see each\n"
      "subcommand's help for more.\n"
      "\nRun `caveman-engine <subcommand> --help` for its options, environment, exit status\n"
      "and examples.\n";
  return out;
}

}  // namespace caveman::internal
