#include "cli/internal/report_format.h"
#include "stream/json_writer.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <vector>

namespace caveman::internal {
namespace {

double Ratio(uint64_t before, uint64_t after) {
  if (before == 0) return 0.0;
  return (static_cast<double>(before) - static_cast<double>(after)) / static_cast<double>(before);
}

void WriteTotals(const ContentTypeTotals& t, JsonWriter& w) {
  w.BeginObject().Key("count").Uint(t.count).Key("tokens_before").Uint(t.tokens_before);
  w.Key("tokens_after").Uint(t.tokens_after).Key("ratio").Ratio(Ratio(t.tokens_before, t.tokens_after));
  w.EndObject();
}

// Pads to `width` on the left (numbers) or on the right (names).
std::string Pad(std::string_view s, size_t width, bool right_align) {
  std::string fill(width > s.size() ? width - s.size() : 0, ' ');
  return right_align ? fill + std::string(s) : std::string(s) + fill;
}

// Aligned columns two blanks apart; `right_aligned(c)` says which columns are numbers. The last
// column is padded only when right-aligned, so no line ends in blanks.
template <size_t N>
std::string Columns(const std::vector<std::array<std::string, N>>& rows, bool (*right_aligned)(size_t)) {
  std::array<size_t, N> width{};
  for (const auto& r : rows) {
    for (size_t c = 0; c < N; ++c) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  for (const auto& r : rows) {
    for (size_t c = 0; c < N; ++c) {
      if (c > 0) out += "  ";
      bool right = right_aligned(c);
      out += c + 1 == N && !right ? r[c] : Pad(r[c], width[c], right);
    }
    out += '\n';
  }
  return out;
}

}  // namespace

Result<ReportFormat> ChooseReportFormat(const FormatSources& src) {
  auto parse = [&](std::string_view source, std::string_view word) -> Result<ReportFormat> {
    if (word == "json") return ReportFormat::kJson;
    if (word == src.pretty_name) return ReportFormat::kPretty;
    if (word.empty()) {
      return Status::InvalidArgument(std::string(source) + ": missing format (use json or " +
                                     std::string(src.pretty_name) + ")");
    }
    return Status::InvalidArgument(std::string(source) + ": unknown format \"" + std::string(word) +
                                   "\" (use json or " + std::string(src.pretty_name) + ")");
  };
  if (src.flag.has_value()) return parse(src.flag_name, *src.flag);
  // An empty variable counts as unset, as `VAR= cmd` is the usual way to switch one off.
  if (!src.env_name.empty() && !src.env.empty()) return parse(src.env_name, src.env);
  return src.is_terminal ? ReportFormat::kPretty : ReportFormat::kJson;
}

std::string GroupThousands(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string HumanBytes(uint64_t n) {
  static constexpr std::array<const char*, 6> kUnits = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (n < 1024) return std::to_string(n) + " B";
  double v = static_cast<double>(n);
  size_t unit = 0;
  while (v >= 1024 && unit + 1 < kUnits.size()) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  std::string num = buf;
  // "512.0 MiB" reads as more precise than it is; whole values drop the decimal.
  if (num.size() > 2 && num.compare(num.size() - 2, 2, ".0") == 0) num.resize(num.size() - 2);
  return num + " " + kUnits[unit];
}

std::string Percent(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%", ratio * 100.0);
  return buf;
}

std::string PrettyReport(const CompressResult& r, std::string_view subcommand) {
  std::string out = "caveman-engine " + std::string(subcommand) + ": " + r.content_type;
  auto line = [&out](std::string_view label, const std::string& value) {
    out += "  " + Pad(label, 8, false) + value + "\n";
  };
  if (!r.partial_record.empty()) {
    // Follow mode: output was written as it arrived, but the record could not be finalised.
    out += r.passed_through() ? ", written as it arrived\n" : ", compressed with " + r.method + " as it arrived\n";
    line("error", "record not finalised (" + (r.error.empty() ? std::string("unknown error") : r.error) + ")");
    line("partial", "caveman-engine retrieve " + r.partial_record + " (the original as far as it was stored)");
    line("bytes", GroupThousands(r.bytes_in) + " -> " + GroupThousands(r.bytes_out));
    return out;
  }
  if (!r.passed_through()) {
    bool lossless = r.lossless_to_model.value_or(false);
    out += ", compressed with " + r.method + (lossless ? " (lossless)" : " (lossy)") + "\n";
    uint64_t saved = r.tokens_before > r.tokens_after ? r.tokens_before - r.tokens_after : 0;
    line("tokens", GroupThousands(r.tokens_before) + " -> " + GroupThousands(r.tokens_after) + ", saved " +
                       GroupThousands(saved) + " (" + Percent(r.ratio) + ", " + r.token_count_basis + ")");
    line("bytes", GroupThousands(r.bytes_in) + " -> " + GroupThousands(r.bytes_out));
    if (!r.recovery_handle.empty()) line("undo", "caveman-engine retrieve " + r.recovery_handle);
    return out;
  }
  out += ", passed through (original written unchanged)\n";
  if (r.error == "cave_ccr_budget_exceeded") {
    line("error", "original passed through; recovery store full (" + r.error + ")");
    line("hint", "free space with `caveman-engine gc --older-than 7d` or raise CAVEMAN_CCR_MAX_BYTES");
  } else if (r.error == "cave_ccr_unavailable") {
    line("error", "original passed through; recovery store unavailable (" + r.error + ")");
  } else if (!r.error.empty()) {
    line("error", "original passed through; " + r.error);
  } else if (r.bytes_in == 0) {
    line("why", "empty input");
  } else if (r.pass_through_reason == PassThroughReason::kNoCompressor) {
    line("why", "no compressor for content type \"" + r.content_type + "\" (list: caveman-engine registry)");
  } else if (r.pass_through_reason != PassThroughReason::kNone) {
    line("why", PassThroughReasonText(r.pass_through_reason));
  } else {
    line("why", "not smaller after compression, or no compressor applies to this input");
  }
  line("tokens", GroupThousands(r.tokens_before) + " (" + r.token_count_basis + ")");
  line("bytes", GroupThousands(r.bytes_in));
  return out;
}

std::string StatsJson(const StoreStats& s) {
  // Indented: `stats` is read by people as much as by scripts (the MCP tool minifies it).
  JsonWriter w(2);
  w.BeginObject().Key("totals");
  WriteTotals(s.totals, w);
  w.Key("by_content_type").BeginObject();
  for (const auto& [type, t] : s.by_content_type) WriteTotals(t, w.Key(type));
  w.EndObject().Key("basis").String("inferred");
  if (s.storage_bytes > 0) w.Key("storage_bytes").Uint(s.storage_bytes);
  if (s.max_storage_bytes > 0) w.Key("max_storage_bytes").Uint(s.max_storage_bytes);
  if (s.max_storage_bytes > 0 && s.storage_bytes >= s.max_storage_bytes) w.Key("storage_full").Bool(true);
  w.EndObject();
  return w.Take() + "\n";
}

std::string StatsTable(const StoreStats& s) {
  using Row = std::array<std::string, 5>;
  auto row = [](const std::string& name, const ContentTypeTotals& t) {
    return Row{name, GroupThousands(t.count), GroupThousands(t.tokens_before), GroupThousands(t.tokens_after),
               Percent(Ratio(t.tokens_before, t.tokens_after))};
  };
  std::vector<Row> rows = {{"type", "count", "tokens before", "tokens after", "saved"}};
  for (const auto& [type, t] : s.by_content_type) rows.push_back(row(type, t));
  rows.push_back(row("total", s.totals));
  // Names left-aligned, numbers right-aligned.
  std::string out = Columns(rows, [](size_t c) { return c > 0; });
  out += "\nstore  " + HumanBytes(s.storage_bytes) + " used";
  if (s.max_storage_bytes > 0) {
    out += " of " + HumanBytes(s.max_storage_bytes) + " (" +
           Percent(static_cast<double>(s.storage_bytes) / static_cast<double>(s.max_storage_bytes)) + ")";
  }
  out += '\n';
  if (s.max_storage_bytes > 0 && s.storage_bytes >= s.max_storage_bytes) {
    out += "store full: lossy results pass through until `caveman-engine gc --older-than <D>` frees space\n";
  }
  return out;
}

std::string PartialJson(const PartialInfo& p) {
  JsonWriter w;
  w.BeginObject().Key("id").String(p.id).Key("created_at").String(p.created_at).Key("updated_at").String(p.updated_at);
  w.Key("original_bytes").Uint(p.original_bytes).Key("stored_bytes").Uint(p.stored_bytes);
  w.Key("command").String(p.command).Key("writer").String(p.writer).Key("writer_alive").Bool(p.writer_alive);
  w.EndObject();
  return w.Take();
}

std::string PartialsTable(const std::vector<PartialInfo>& partials) {
  if (partials.empty()) return "no partial records\n";
  using Row = std::array<std::string, 6>;
  std::vector<Row> rows = {{"id", "updated", "original", "stored", "writer", "command"}};
  for (const PartialInfo& p : partials) {
    rows.push_back({p.id, p.updated_at, HumanBytes(p.original_bytes), HumanBytes(p.stored_bytes),
                    p.writer + (p.writer_alive ? " (running)" : " (gone)"), p.command});
  }
  // Sizes right-aligned.
  return Columns(rows, [](size_t c) { return c == 2 || c == 3; });
}

std::string TerminalHandleLine(const CompressResult& r) {
  if (!r.recovery_handle.empty()) {
    return "… caveman: original: caveman-engine retrieve " + r.recovery_handle +
           " (slices: --lines A:B, --grep RE -C N) …\n";
  }
  if (!r.partial_record.empty()) {
    return "… caveman: stored so far: caveman-engine retrieve " + r.partial_record + " …\n";
  }
  return "";
}

}  // namespace caveman::internal
