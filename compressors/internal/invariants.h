// Invariant summaries of §4.4: facts that hold across exactly the units of one dropped run.
//
// HowTo (incremental, bounded memory: ≤ 48 names, ≤ 5 distinct values and ≤ 4,096 coverage
// values per name):
//   InvariantAccumulator acc;
//   for each unit of the run: acc.Add(fields);   // fields: (name, value) pairs
//   std::string s = acc.Render(elided_bytes);    // "" when nothing may be claimed
//   acc.Reset();                                 // next run
// Summarize() does the same over an in-memory list.
//
// Field extraction helpers produce the (name, value) lists of §4.4 for JSON elements, log
// lines and table rows; the views they return point into the caller's data (or into a
// FieldScratch the caller keeps alive).
//
// Thread-safety: an accumulator belongs to one run.
#ifndef CAVEMAN_COMPRESSORS_INTERNAL_INVARIANTS_H_
#define CAVEMAN_COMPRESSORS_INTERNAL_INVARIANTS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compressors/internal/json_tree.h"

namespace caveman::internal {

struct Field {
  std::string_view name;
  std::string_view value;
};
using FieldList = std::vector<Field>;  // (name, value) pairs of one unit

inline constexpr size_t kMaxUnitFields = 24;
inline constexpr size_t kMaxTrackedNames = 48;
inline constexpr size_t kMaxDistinctValues = 5;
inline constexpr size_t kMaxCoverageValues = 4096;
inline constexpr size_t kMaxFieldNameBytes = 32;
inline constexpr size_t kMaxUsableBytes = 40;
inline constexpr size_t kMaxEnumUsableBytes = 24;
inline constexpr size_t kMaxSummaryBytes = 160;

// §4.4 usable / enum-usable values.
bool IsUsableValue(std::string_view v);
bool IsEnumUsableValue(std::string_view v);
// Names skipped because they look secret (or are empty / longer than 32 bytes).
bool IsSkippedFieldName(std::string_view name);
// Budget of step 7.
size_t SummaryBudget(int64_t elided_bytes);

class InvariantAccumulator {
 public:
  InvariantAccumulator();
  ~InvariantAccumulator();
  InvariantAccumulator(InvariantAccumulator&&) noexcept;
  InvariantAccumulator& operator=(InvariantAccumulator&&) noexcept;

  // Adds one unit. Only the first occurrence of a name within `fields` counts.
  void Add(const FieldList& fields) { Add(fields, 1); }
  // Adds `weight` units that all have these fields: the same as `weight` calls of Add(fields)
  // (an identical-run element of a log stands for `weight` lines).
  void Add(const FieldList& fields, uint64_t weight);
  // The summary of everything added so far (§4.4 steps 1 and 3–8).
  std::string Render(int64_t elided_bytes) const;
  void Reset();
  size_t units() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string Summarize(const std::vector<FieldList>& units, int64_t elided_bytes);

// ---- field extraction

// JSON element: top-level members of an object in sorted key order, only string (decoded),
// number (literal) and boolean values, empty values skipped, at most 24. Non-objects: none.
void JsonElementFields(const JsonTree& tree, JsonTree::NodeId element, FieldList* out);
// The field value of one member for JsonElementFields: strings (decoded) and number literals
// as they are, booleans as true/false; false for other kinds and for empty values.
bool JsonFieldValue(JsonKind kind, std::string_view text, std::string_view* value);

// Keeps the parsed JSON of a log line alive while its fields are in use.
struct FieldScratch {
  JsonTree tree;
};
// Log line: one-object JSON lines give their JSON-element fields (if non-empty); otherwise the
// logfmt pairs (first ≤ 24 matches, quotes removed, empty values skipped).
void LogLineFields(std::string_view line, FieldScratch* scratch, FieldList* out);
void LogfmtFields(std::string_view line, FieldList* out);

// Table row: for i < min(row width, header width, 24): (TRIM(header[i]), TRIM(cell)), pairs
// with an empty name or value skipped.
void TableRowFields(const std::vector<std::string_view>& header, const std::vector<std::string_view>& row,
                    FieldList* out);

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_INTERNAL_INVARIANTS_H_
