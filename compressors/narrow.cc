#include "compressors/narrow.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compressors/internal/bm25.h"
#include "compressors/internal/csv.h"
#include "compressors/internal/json_tree.h"
#include "compressors/text_util.h"

namespace caveman {
namespace {

constexpr size_t kMaxHits = 20;
constexpr std::string_view kGap = "\xE2\x80\xA6 [caveman: non-adjacent] \xE2\x80\xA6";
constexpr size_t kMinDataRecords = 2;

// The units of an original, and the header line printed before them (tables only).
struct Units {
  std::optional<std::string_view> header;
  // Text of each unit: JSON units are rendered, table and text units point into the original.
  std::vector<std::string> owned;
  std::vector<std::string_view> texts;
};

// §2.6 step 1. Pre-order walk in sorted key order; an array that is non-empty and holds only
// objects is a group and is not descended. Returns false when the original is not JSON.
bool JsonUnits(std::string_view original, Units* units) {
  internal::JsonTree tree;
  if (!tree.Parse(original)) return false;
  using NodeId = internal::JsonTree::NodeId;
  std::vector<std::vector<NodeId>> groups;
  // Explicit stack (children pushed in reverse) so 10,000 levels do not recurse.
  std::vector<NodeId> stack = {tree.root()};
  while (!stack.empty()) {
    const NodeId node = stack.back();
    stack.pop_back();
    const uint32_t size = tree.size(node);
    if (tree.kind(node) == internal::JsonKind::kArray) {
      bool all_objects = size > 0;
      for (uint32_t i = 0; i < size && all_objects; ++i) {
        all_objects = tree.kind(tree.item(node, i)) == internal::JsonKind::kObject;
      }
      if (all_objects) {
        std::vector<NodeId>& group = groups.emplace_back();
        for (uint32_t i = 0; i < size; ++i) group.push_back(tree.item(node, i));
        continue;
      }
      for (uint32_t i = size; i-- > 0;) stack.push_back(tree.item(node, i));
    } else if (tree.kind(node) == internal::JsonKind::kObject) {
      for (uint32_t i = size; i-- > 0;) stack.push_back(tree.member_value(node, i));
    }
  }
  if (groups.empty()) return true;  // JSON without a group: no units
  units->owned.emplace_back();
  for (size_t g = 0; g < groups.size(); ++g) {
    if (g > 0) units->owned.emplace_back();
    for (NodeId element : groups[g]) {
      internal::AppendCanonicalJsonIndented(tree, element, &units->owned.emplace_back());
    }
  }
  units->owned.emplace_back();
  units->texts.assign(units->owned.begin(), units->owned.end());
  return true;
}

std::string_view StripTrailingNewlines(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// §2.6 step 2. A unit is the byte range from the end of the previous record to the end of
// this one, so blank lines skipped before a record stay with it.
bool TableUnits(std::string_view original, Units* units) {
  if (!internal::IsValidUtf8(original)) return false;
  std::string_view trimmed = internal::Trim(original);
  if (!trimmed.empty() && (trimmed.front() == '{' || trimmed.front() == '[')) return false;
  std::optional<internal::DelimitedRecords> table = internal::ReadDelimitedRecords(original);
  // ReadDelimitedRecords already requires ≥ 2 fields.
  if (!table || table->record_ends.size() < 1 + kMinDataRecords) return false;
  const std::vector<size_t>& ends = table->record_ends;
  units->header = StripTrailingNewlines(original.substr(0, ends[0]));
  for (size_t k = 1; k < ends.size(); ++k) {
    units->texts.push_back(StripTrailingNewlines(original.substr(ends[k - 1], ends[k] - ends[k - 1])));
  }
  return true;
}

// §2.6 step 3.
void TextUnits(std::string_view original, Units* units) {
  const std::string_view sep = original.find("\n\n") != std::string_view::npos ? "\n\n" : "\n";
  size_t pos = 0;
  while (true) {
    const size_t at = original.find(sep, pos);
    std::string_view piece =
        internal::Trim(original.substr(pos, at == std::string_view::npos ? std::string_view::npos : at - pos));
    if (!piece.empty()) units->texts.push_back(piece);
    if (at == std::string_view::npos) break;
    pos = at + sep.size();
  }
}

}  // namespace

std::string NarrowForQuery(std::string_view original, std::string_view query) {
  if (internal::Trim(query).empty()) return std::string(original);
  Units units;
  if (!JsonUnits(original, &units) && !TableUnits(original, &units)) {
    TextUnits(original, &units);
  }
  if (units.texts.empty()) return std::string(original);

  const std::vector<double> scores = internal::Bm25Scores(units.texts, query);
  std::vector<size_t> hits;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (scores[i] > 0) hits.push_back(i);
  }
  if (hits.empty()) return std::string(original);
  // Best first, ties in source order; then the kept hits back in source order.
  std::stable_sort(hits.begin(), hits.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  if (hits.size() > kMaxHits) hits.resize(kMaxHits);
  std::sort(hits.begin(), hits.end());

  std::string out;
  if (units.header) {
    out.append(*units.header);
    out.push_back('\n');
  }
  for (size_t k = 0; k < hits.size(); ++k) {
    const size_t unit = hits[k];
    if (k == 0) {
      if (unit != 0) {
        out.append(kGap);
        out.append("\n\n");
      }
    } else if (unit == hits[k - 1] + 1) {
      out.append("\n\n");
    } else {
      out.append("\n\n");
      out.append(kGap);
      out.append("\n\n");
    }
    out.append(units.texts[unit]);
  }
  if (hits.back() + 1 != units.texts.size()) {
    out.append("\n\n");
    out.append(kGap);
  }
  if (out.size() >= original.size()) return std::string(original);
  return out;
}

}  // namespace caveman
