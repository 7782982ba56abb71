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

// The members of a totals or group entry (the group's "key" comes before them).
void WriteEntryMembers(const GainTotals& t, JsonWriter& w) {
  w.Key("invocations").Uint(t.invocations).Key("passed_through").Uint(t.passed_through);
  w.Key("tokens_before").Uint(t.tokens_before).Key("tokens_after").Uint(t.tokens_after);
  w.Key("tokens_saved").Uint(Saved(t)).Key("ratio").Ratio(Ratio(t));
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
  JsonWriter w;
  w.BeginObject().Key("since");
  if (since) {
    w.String(UtcTime(*since));
  } else {
    w.Null();
  }
  w.Key("by");
  if (group == GainGroup::kNone) {
    w.Null();
  } else {
    w.String(GroupName(group));
  }
  w.Key("totals").BeginObject();
  WriteEntryMembers(sums.front(), w);
  w.EndObject();
  if (group != GainGroup::kNone) {
    w.Key("groups").BeginArray();
    for (size_t i = 1; i < sums.size(); ++i) {
      w.BeginObject().Key("key").String(sums[i].key);
      WriteEntryMembers(sums[i], w);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return w.Take() + "\n";
}

std::string GainTable(const std::vector<GainTotals>& sums, GainGroup group) {
  using Row = std::array<std::string, 6>;
  auto row = [](const std::string& name, const GainTotals& t) {
    return Row{name,
               GroupThousands(t.invocations),
               GroupThousands(t.tokens_before),
               GroupThousands(t.tokens_after),
               GroupThousands(Saved(t)),
               Percent(Ratio(t))};
  };
  std::vector<Row> rows = {
      {group == GainGroup::kNone ? "" : GroupName(group), "runs", "tokens before", "tokens after", "saved", "share"}};
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
