// Human-readable forms of the compress report and of `stats` (issue 9), next to the §8.1 and
// §8.3 JSON forms, plus the rule that picks between them.
//
// The JSON forms stay the default wherever the output is not a terminal, so pipes, scripts and
// tests keep the exact spec bytes; the readable forms are for people at a terminal.
#ifndef CAVEMAN_CLI_INTERNAL_REPORT_FORMAT_H_
#define CAVEMAN_CLI_INTERNAL_REPORT_FORMAT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "caveman/engine/engine.h"
#include "caveman/store/store.h"
#include "caveman/stream/status.h"

namespace caveman::internal {

enum class ReportFormat : uint8_t {
  kJson,    // §8.1 line / §8.3 document
  kPretty,  // aligned lines (compress report) or a table (stats)
};

// Where the format comes from: `flag` (--report / --format, nullopt when absent) beats `env`
// (empty when unset) beats the terminal test. `pretty_name` is the word that selects kPretty
// ("pretty" for compress, "table" for stats).
struct FormatSources {
  std::string_view flag_name;  // "--report"
  std::optional<std::string_view> flag;
  std::string_view env_name;  // "CAVEMAN_REPORT"; empty = no variable
  std::string_view env;
  bool is_terminal = false;
  std::string_view pretty_name;
};

// An unknown word is kInvalidArgument, e.g. `--report: unknown format "x" (use json or
// pretty)`.
Result<ReportFormat> ChooseReportFormat(const FormatSources& sources);

// 1234567 → "1,234,567".
std::string GroupThousands(uint64_t n);
// IEC units with one decimal where it matters: 512 → "512 B", 1536 → "1.5 KiB",
// 536870912 → "512 MiB".
std::string HumanBytes(uint64_t n);
// 0.7446 → "74.5%".
std::string Percent(double ratio);

// The pretty compress report: a few LF-terminated lines for stderr. A pass-through says why,
// from r.pass_through_reason (an unregistered --type is named). `subcommand` names the
// producer in the first line ("compress", "run"). A follow-mode result whose record could not
// be finalised names its error and partial record.
std::string PrettyReport(const CompressResult& r, std::string_view subcommand = "compress");

// §8.3 stats JSON (two-space indented, LF-terminated).
std::string StatsJson(const StoreStats& s);
// The line compress/run append to a view written to a terminal: "… caveman: original:
// caveman-engine retrieve ccr_X (slices: --lines A:B, --grep RE -C N) …" + LF; for a
// follow run whose record could not be finalised, the partial record; empty on pass-through.
std::string TerminalHandleLine(const CompressResult& r);
// The stats table: one row per content type, a total row, then the store usage.
std::string StatsTable(const StoreStats& s);

// One partial record (follow mode) as one JSON object (without LF), members in this order:
// id, created_at, updated_at, original_bytes, stored_bytes, command, writer, writer_alive.
std::string PartialJson(const PartialInfo& p);
// The partial records as a table (id, updated, sizes, writer and whether it runs, command);
// "no partial records" when there are none.
std::string PartialsTable(const std::vector<PartialInfo>& partials);

}  // namespace caveman::internal

#endif  // CAVEMAN_CLI_INTERNAL_REPORT_FORMAT_H_
