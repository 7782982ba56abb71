// `caveman-engine gain` (issue 17): the savings ledger (store/ledger.h) summed per content
// type, command or UTC day, as JSON or a table.
#ifndef CAVEMAN_CLI_INTERNAL_GAIN_H_
#define CAVEMAN_CLI_INTERNAL_GAIN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/ledger.h"

namespace caveman::internal {

enum class GainGroup { kNone, kType, kCommand, kDay };

// "type" | "command" | "day"; nullopt for anything else.
std::optional<GainGroup> ParseGainGroup(std::string_view word);

struct GainTotals {
  std::string key;  // the group ("" for the totals)
  uint64_t invocations = 0;
  uint64_t passed_through = 0;  // rows without a handle
  uint64_t tokens_before = 0;
  uint64_t tokens_after = 0;
};

// Totals first, then one entry per group in key order (days ascending). The key of a
// compress row under kCommand is "(compress)".
std::vector<GainTotals> SumLedger(const std::vector<LedgerEntry>& rows, GainGroup group);

// One JSON object + LF: {"since":S|null,"by":B|null,"totals":{...},"groups":[{"key":K,...}]}
// with invocations, passed_through, tokens_before, tokens_after, tokens_saved, ratio per
// entry (groups only with --by). `since` is RFC 3339 UTC.
std::string GainJson(const std::vector<GainTotals>& sums, GainGroup group, std::optional<int64_t> since);
// Aligned columns, the totals row last.
std::string GainTable(const std::vector<GainTotals>& sums, GainGroup group);

}  // namespace caveman::internal

#endif  // CAVEMAN_CLI_INTERNAL_GAIN_H_
