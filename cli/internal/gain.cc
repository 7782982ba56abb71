#include "cli/internal/gain.h"

#include <time.h>

#include <algorithm>
#include <array>
#include <map>

#include "cli/internal/report_format.h"
#include "caveman/engine/engine.h"
#include "stream/json_writer.h"

namespace caveman::internal {
namespace {

std::string UtcDay(int64_t t) {
  time_t tt = static_cast<time_t>(t);
  struct tm tm {};
  if (gmtime_r(&tt, &tm) == nullptr) return "?";
  char buf[16];
  strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string UtcTime(int64_t t) {
  time_t tt = static_cast<time_t>(t);
  struct tm tm {};
  if (gmtime_r(&tt, &tm) == nullptr) return "?";
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

uint64_t Saved(const GainTotals& t) { return t.tokens_before > t.tokens_after ? t.tokens_before - t.tokens_after : 0; }

double Ratio(const GainTotals& t) {
  return t.tokens_before == 0 ? 0.0 : static_cast<double>(Saved(t)) / static_cast<double>(t.tokens_before);
}

void Add(GainTotals& t, const LedgerEntry& e) {
  ++t.invocations;
  if (e.handle.empty()) ++t.passed_through;
  t.tokens_before += e.tokens_before;
  t.tokens_after += e.tokens_after;
}

const char* GroupName(GainGroup g) {
  switch (g) {
    case GainGroup::kType: return "type";
    case GainGroup::kCommand: return "command";
    case GainGroup::kDay: return "day";
    case GainGroup::kNone: break;
  }
  return "";
}

std::string EntryJson(const GainTotals& t) {
  return "\"invocations\":" + std::to_string(t.invocations) + ",\"passed_through\":" + std::to_string(t.passed_through) +
         ",\"tokens_before\":" + std::to_string(t.tokens_before) + ",\"tokens_after\":" + std::to_string(t.tokens_after) +
         ",\"tokens_saved\":" + std::to_string(Saved(t)) + ",\"ratio\":" + FormatRatio(Ratio(t));
}

}  // namespace

std::optional<GainGroup> ParseGainGroup(std::string_view word) {
  if (word == "type") return GainGroup::kType;
  if (word == "command") return GainGroup::kCommand;
  if (word == "day") return GainGroup::kDay;
  return std::nullopt;
}

std::vector<GainTotals> SumLedger(const std::vector<LedgerEntry>& rows, GainGroup group) {
  GainTotals total;
  std::map<std::string, GainTotals> groups;
  for (const LedgerEntry& e : rows) {
    Add(total, e);
    if (group == GainGroup::kNone) continue;
    std::string key = group == GainGroup::kType      ? e.content_type
                      : group == GainGroup::kCommand ? (e.command.empty() ? "(compress)" : e.command)
                                                     : UtcDay(e.unix_time);
    GainTotals& g = groups[key];
    g.key = key;
    Add(g, e);
  }
  std::vector<GainTotals> out = {total};
  for (auto& [key, g] : groups) out.push_back(g);
  return out;
}

std::string GainJson(const std::vector<GainTotals>& sums, GainGroup group, std::optional<int64_t> since) {
  std::string j = "{\"since\":" + (since ? JsonQuote(UtcTime(*since)) : std::string("null"));
  j += ",\"by\":" + (group == GainGroup::kNone ? std::string("null") : JsonQuote(GroupName(group)));
  j += ",\"totals\":{" + EntryJson(sums.front()) + "}";
  if (group != GainGroup::kNone) {
    j += ",\"groups\":[";
    for (size_t i = 1; i < sums.size(); ++i) {
      j += (i > 1 ? ",{\"key\":" : "{\"key\":") + JsonQuote(sums[i].key) + "," + EntryJson(sums[i]) + "}";
    }
    j += "]";
  }
  return j + "}\n";
}

std::string GainTable(const std::vector<GainTotals>& sums, GainGroup group) {
  using Row = std::array<std::string, 6>;
  auto row = [](const std::string& name, const GainTotals& t) {
    return Row{name, GroupThousands(t.invocations), GroupThousands(t.tokens_before), GroupThousands(t.tokens_after),
               GroupThousands(Saved(t)), Percent(Ratio(t))};
  };
  std::vector<Row> rows = {{group == GainGroup::kNone ? "" : GroupName(group), "runs", "tokens before", "tokens after",
                            "saved", "share"}};
  for (size_t i = 1; i < sums.size(); ++i) rows.push_back(row(sums[i].key, sums[i]));
  rows.push_back(row("total", sums.front()));
  std::array<size_t, 6> width{};
  for (const Row& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  for (const Row& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      std::string pad(width[c] - r[c].size(), ' ');
      line += c == 0 ? r[c] + pad : "  " + pad + r[c];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace caveman::internal
