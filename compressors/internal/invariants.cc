#include "compressors/internal/invariants.h"

#include <algorithm>
#include <optional>

#include <re2/re2.h>

#include "compressors/text_util.h"

namespace caveman::internal {
namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";
constexpr std::string_view kTimes = "\xC3\x97";

const RE2& SecretNameRe() {
  static const RE2 re("(?i)(secret|passw|token|api[_-]?key|authoriz|credential|cookie|session)");
  return re;
}

const RE2& LogfmtRe() {
  static const RE2 re(R"re((?:^|[\s,\[{(])([A-Za-z_][A-Za-z0-9_.\-]*)=("[^"]*"|'[^']*'|[^\s,\]})]+))re");
  return re;
}

bool HasControl(std::string_view v) {
  size_t i = 0;
  while (i < v.size()) {
    unsigned char c = static_cast<unsigned char>(v[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7F) return true;
      ++i;
      continue;
    }
    uint32_t cp = DecodeUtf8(v, &i);
    if (IsControl(cp)) return true;
  }
  return false;
}

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

enum class EntryKind : uint8_t { kConstant, kRange, kEnum, kWeakEnum, kDenseCoverage, kBoundedCoverage };

struct Entry {
  EntryKind kind;
  std::string text;  // without the "all "/"range " section prefix
};

// Shedding order of step 7.
constexpr EntryKind kVictimOrder[] = {EntryKind::kWeakEnum, EntryKind::kRange,         EntryKind::kBoundedCoverage,
                                      EntryKind::kConstant, EntryKind::kDenseCoverage, EntryKind::kEnum};

std::string RenderEntries(const std::vector<Entry>& entries, const std::vector<bool>& selected) {
  std::vector<std::string> sections;
  std::string constants, ranges;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!selected[i]) continue;
    if (entries[i].kind == EntryKind::kConstant) {
      constants.append(constants.empty() ? "all " : " ");
      constants.append(entries[i].text);
    } else if (entries[i].kind == EntryKind::kRange) {
      ranges.append(ranges.empty() ? "range " : " ");
      ranges.append(entries[i].text);
    }
  }
  if (!constants.empty()) sections.push_back(std::move(constants));
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!selected[i]) continue;
    if (entries[i].kind != EntryKind::kConstant && entries[i].kind != EntryKind::kRange) {
      sections.push_back(entries[i].text);
    }
  }
  if (!ranges.empty()) sections.push_back(std::move(ranges));
  std::string out;
  for (size_t i = 0; i < sections.size(); ++i) {
    if (i > 0) out.append("; ");
    out.append(sections[i]);
  }
  return out;
}

// Splits v into (prefix, trailing digit run); false if the run is not 1..18 digits.
bool SplitDigitSuffix(std::string_view v, std::string_view* prefix, uint64_t* num, size_t* width) {
  size_t e = v.size();
  size_t b = e;
  while (b > 0 && v[b - 1] >= '0' && v[b - 1] <= '9') --b;
  size_t w = e - b;
  if (w < 1 || w > 18) return false;
  uint64_t x = 0;
  for (size_t k = b; k < e; ++k) x = x * 10 + static_cast<uint64_t>(v[k] - '0');
  *prefix = v.substr(0, b);
  *num = x;
  *width = w;
  return true;
}

}  // namespace

bool IsUsableValue(std::string_view v) {
  if (v.empty() || v.size() > kMaxUsableBytes) return false;
  if (!IsValidUtf8(v) || HasControl(v)) return false;
  if (Contains(v, "caveman") || Contains(v, kEllipsis)) return false;
  return true;
}

bool IsEnumUsableValue(std::string_view v) {
  if (v.size() > kMaxEnumUsableBytes) return false;
  if (v.find(' ') != std::string_view::npos || v.find('\t') != std::string_view::npos) return false;
  return IsUsableValue(v);
}

bool IsSkippedFieldName(std::string_view name) {
  if (name.empty() || name.size() > kMaxFieldNameBytes) return true;
  return RE2::PartialMatch(name, SecretNameRe());
}

size_t SummaryBudget(int64_t elided_bytes) {
  if (elided_bytes <= 0) return kMaxSummaryBytes;
  int64_t half = elided_bytes / 2;
  int64_t quarter = std::max<int64_t>(96, elided_bytes / 4);
  return static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(kMaxSummaryBytes), std::min(half, quarter)));
}

struct InvariantAccumulator::Impl {
  struct NameAgg {
    std::string name;
    uint64_t seen = 0;
    uint64_t last_unit = UINT64_MAX;
    std::string first;
    bool constant = true;
    bool numeric = true;
    double min_v = 0, max_v = 0;
    std::string min_s, max_s;
    std::vector<std::pair<std::string, uint64_t>> distinct;
    bool too_wide = false;
    bool cov_usable = true;
    std::unordered_set<std::string, StringHash, std::equal_to<>> cov;
    std::string cov_min, cov_max;

    // Back to the state of a NameAgg{} whose storage is kept (Recycle; the test
    // Invariants.ResetEqualsAFreshAccumulator compares the two).
    void Clear() {
      name.clear();
      seen = 0;
      last_unit = UINT64_MAX;
      first.clear();
      constant = true;
      numeric = true;
      min_v = max_v = 0;
      min_s.clear();
      max_s.clear();
      distinct.clear();
      too_wide = false;
      cov_usable = true;
      cov.clear();
      cov_min.clear();
      cov_max.clear();
    }
  };

  uint64_t units = 0;
  bool any_empty = false;
  std::vector<NameAgg> aggs;
  std::unordered_map<std::string, size_t, StringHash, std::equal_to<>> index;
  // Cleared NameAggs of earlier units, reused before new ones are made: a log's Emit resets
  // the accumulator after every dropped run, and making each run's aggregates afresh (their
  // strings, value lists and coverage sets) was ≈ 2 % of the instructions of the 64 MiB CI
  // log (issue 19). At most kMaxTrackedNames of them.
  std::vector<NameAgg> spare;

  // Empty, as a new Impl, keeping the aggregates' storage for reuse.
  void Recycle() {
    units = 0;
    any_empty = false;
    for (NameAgg& a : aggs) {
      a.Clear();
      spare.push_back(std::move(a));
    }
    aggs.clear();
    index.clear();
  }
  NameAgg& NewAgg() {
    if (spare.empty()) return aggs.emplace_back();
    aggs.push_back(std::move(spare.back()));
    spare.pop_back();
    return aggs.back();
  }

  // Adds v `weight` (≥ 1) times: the same as weight calls with one. After the first, a
  // value equal to itself changes only the counts: it is already the first value or not,
  // within [min, max], among the distinct values (or they are too wide) and in the coverage
  // set (or that is unusable).
  void AddValue(NameAgg& a, std::string_view v, uint64_t weight) {
    AddValue(a, v);
    if (weight == 1) return;
    a.seen += weight - 1;
    if (a.too_wide) return;
    for (auto& dv : a.distinct) {
      if (dv.first == v) {
        dv.second += weight - 1;
        break;
      }
    }
  }

  void AddValue(NameAgg& a, std::string_view v) {
    bool first = a.seen == 0;
    ++a.seen;
    if (first) {
      a.first.assign(v);
    } else if (a.constant && v != a.first) {
      a.constant = false;
    }
    // A value equal to the first one parses to a number already within [min, max].
    if (a.numeric && (first || v != a.first)) {
      std::optional<double> d = ParseNumber(v);
      if (!d) {
        a.numeric = false;
      } else if (first) {
        a.min_v = a.max_v = *d;
        a.min_s.assign(v);
        a.max_s.assign(v);
      } else {
        if (*d < a.min_v) {
          a.min_v = *d;
          a.min_s.assign(v);
        }
        if (*d > a.max_v) {
          a.max_v = *d;
          a.max_s.assign(v);
        }
      }
    }
    if (!a.too_wide) {
      bool found = false;
      for (auto& dv : a.distinct) {
        if (dv.first == v) {
          ++dv.second;
          found = true;
          break;
        }
      }
      if (!found) {
        if (a.distinct.size() >= kMaxDistinctValues) {
          a.too_wide = true;
          a.distinct.clear();
          a.distinct.shrink_to_fit();
        } else {
          a.distinct.emplace_back(std::string(v), 1);
        }
      }
    }
    // A value already in the coverage set passed the checks below when it was added.
    if (a.cov_usable && a.cov.find(v) == a.cov.end()) {
      if (!IsEnumUsableValue(v) || v == "absent") {
        a.cov_usable = false;
      } else {
        if (a.cov.size() >= kMaxCoverageValues) {
          a.cov_usable = false;
        } else {
          a.cov.emplace(v);
          if (a.cov.size() == 1 || v < std::string_view(a.cov_min)) a.cov_min.assign(v);
          if (a.cov.size() == 1 || v > std::string_view(a.cov_max)) a.cov_max.assign(v);
        }
      }
      if (!a.cov_usable) {
        a.cov.clear();
        std::unordered_set<std::string, StringHash, std::equal_to<>>().swap(a.cov);
      }
    }
  }
};

InvariantAccumulator::InvariantAccumulator() : impl_(std::make_unique<Impl>()) {}
InvariantAccumulator::~InvariantAccumulator() = default;
InvariantAccumulator::InvariantAccumulator(InvariantAccumulator&&) noexcept = default;
InvariantAccumulator& InvariantAccumulator::operator=(InvariantAccumulator&&) noexcept = default;

void InvariantAccumulator::Reset() {
  if (impl_ == nullptr) {
    impl_ = std::make_unique<Impl>();  // moved from
  } else {
    impl_->Recycle();
  }
}
size_t InvariantAccumulator::units() const { return impl_->units; }

void InvariantAccumulator::Add(const FieldList& fields, uint64_t weight) {
  if (weight == 0) return;
  Impl& m = *impl_;
  // The units [units, units + weight) all have these fields; `unit` is the last of them.
  const uint64_t unit = m.units + weight - 1;
  m.units += weight;
  if (fields.empty()) m.any_empty = true;
  if (m.any_empty) return;  // the run gets no summary; stop spending work on it
  for (const Field& f : fields) {
    auto it = m.index.find(f.name);
    size_t idx;
    if (it == m.index.end()) {
      if (m.aggs.size() >= kMaxTrackedNames) continue;
      idx = m.aggs.size();
      m.NewAgg().name.assign(f.name);
      m.index.emplace(std::string(f.name), idx);
    } else {
      idx = it->second;
    }
    Impl::NameAgg& a = m.aggs[idx];
    if (a.last_unit == unit) continue;
    a.last_unit = unit;
    m.AddValue(a, f.value, weight);
  }
}

std::string InvariantAccumulator::Render(int64_t elided_bytes) const {
  const Impl& m = *impl_;
  if (m.units < 2 || m.any_empty) return "";
  const uint64_t n = m.units;
  std::vector<Entry> entries;
  int coverage_entries = 0;
  for (const Impl::NameAgg& a : m.aggs) {
    if (IsSkippedFieldName(a.name)) continue;
    const bool everywhere = a.seen == n;
    const uint64_t absent = n - a.seen;
    if (everywhere && a.constant) {
      if (IsUsableValue(a.first)) entries.push_back({EntryKind::kConstant, a.name + "=" + a.first});
      continue;
    }
    if (everywhere && a.numeric && a.min_s != a.max_s) {
      if (IsUsableValue(a.min_s) && IsUsableValue(a.max_s)) {
        entries.push_back({EntryKind::kRange, a.name + "=" + a.min_s + ".." + a.max_s});
      }
      continue;
    }
    if (!a.too_wide && a.distinct.size() + (absent > 0 ? 1 : 0) <= kMaxDistinctValues) {
      bool ok = true;
      for (const auto& dv : a.distinct) {
        if (!IsEnumUsableValue(dv.first) || dv.first == "absent") ok = false;
      }
      if (ok) {
        std::vector<std::pair<std::string, uint64_t>> buckets = a.distinct;
        std::stable_sort(buckets.begin(), buckets.end(),
                         [](const auto& x, const auto& y) { return x.second > y.second; });
        if (absent > 0) buckets.emplace_back("absent", absent);
        bool all_one = true;
        for (const auto& b : buckets) {
          if (b.second != 1) all_one = false;
        }
        if (!all_one) {
          std::string text = a.name + ":";
          for (const auto& b : buckets) {
            text.push_back(' ');
            text.append(b.first);
            text.append(kTimes);
            text.append(std::to_string(b.second));
          }
          bool weak = 2 * buckets.size() >= n;
          entries.push_back({weak ? EntryKind::kWeakEnum : EntryKind::kEnum, std::move(text)});
          continue;
        }
      }
    }
    if (a.cov_usable && coverage_entries < 2 && a.cov.size() >= 2 && a.cov_min != a.cov_max) {
      ++coverage_entries;
      // Dense form: one prefix, one digit width, contiguous integers, no unit lacking it.
      bool dense = absent == 0;
      std::string_view prefix0;
      size_t width0 = 0;
      uint64_t lo = 0, hi = 0;
      std::string_view lo_s, hi_s;
      bool first = true;
      if (dense) {
        for (const std::string& v : a.cov) {
          std::string_view p;
          uint64_t x;
          size_t w;
          if (!SplitDigitSuffix(v, &p, &x, &w)) {
            dense = false;
            break;
          }
          if (first) {
            prefix0 = p;
            width0 = w;
            lo = hi = x;
            lo_s = hi_s = v;
            first = false;
            continue;
          }
          if (p != prefix0 || w != width0) {
            dense = false;
            break;
          }
          if (x < lo) {
            lo = x;
            lo_s = v;
          }
          if (x > hi) {
            hi = x;
            hi_s = v;
          }
        }
        if (dense && hi - lo + 1 != a.cov.size()) dense = false;
      }
      if (dense) {
        entries.push_back({EntryKind::kDenseCoverage, a.name + ": " + std::string(lo_s) + ".." + std::string(hi_s) +
                                                          " all " + std::to_string(a.cov.size()) + " present"});
      } else {
        std::string text = a.name + ": " + std::to_string(a.cov.size()) + " distinct, " + a.cov_min + ".." + a.cov_max;
        if (absent > 0) text += ", absent" + std::string(kTimes) + std::to_string(absent);
        entries.push_back({EntryKind::kBoundedCoverage, std::move(text)});
      }
    }
  }
  if (entries.empty()) return "";
  const size_t budget = SummaryBudget(elided_bytes);
  std::vector<bool> selected(entries.size(), true);
  size_t shed = 0;
  std::string text = RenderEntries(entries, selected);
  while (text.size() > budget) {
    bool found = false;
    for (EntryKind k : kVictimOrder) {
      for (size_t i = entries.size(); i-- > 0;) {
        if (selected[i] && entries[i].kind == k) {
          selected[i] = false;
          found = true;
          break;
        }
      }
      if (found) break;
    }
    if (!found) break;
    ++shed;
    text = RenderEntries(entries, selected);
  }
  if (text.empty()) return "";
  if (shed > 0) text += "; +" + std::to_string(shed) + " omitted";
  return text;
}

std::string Summarize(const std::vector<FieldList>& units, int64_t elided_bytes) {
  InvariantAccumulator acc;
  for (const FieldList& f : units) acc.Add(f);
  return acc.Render(elided_bytes);
}

bool JsonFieldValue(JsonKind kind, std::string_view text, std::string_view* value) {
  switch (kind) {
    case JsonKind::kString:
    case JsonKind::kNumber: *value = text; break;
    case JsonKind::kTrue: *value = "true"; break;
    case JsonKind::kFalse: *value = "false"; break;
    default: return false;
  }
  return !value->empty();
}

void JsonElementFields(const JsonTree& tree, JsonTree::NodeId element, FieldList* out) {
  out->clear();
  if (tree.kind(element) != JsonKind::kObject) return;
  const uint32_t n = tree.size(element);
  for (uint32_t i = 0; i < n && out->size() < kMaxUnitFields; ++i) {
    JsonTree::NodeId v = tree.member_value(element, i);
    std::string_view value;
    if (JsonFieldValue(tree.kind(v), tree.text(v), &value)) out->push_back({tree.key(element, i), value});
  }
}

void LogfmtFields(std::string_view line, FieldList* out) {
  out->clear();
  // Every match holds a '=': a line without one has no fields (most log lines; RE2's search
  // per line was ≈ 2 % of a CI log's instructions).
  if (line.find('=') == std::string_view::npos) return;
  const RE2& re = LogfmtRe();
  re2::StringPiece input(line.data(), line.size());
  re2::StringPiece groups[3];
  size_t pos = 0;
  while (out->size() < kMaxUnitFields && pos <= line.size()) {
    if (!re.Match(input, pos, line.size(), RE2::UNANCHORED, groups, 3)) break;
    size_t end = static_cast<size_t>(groups[0].data() - line.data()) + groups[0].size();
    std::string_view name(groups[1].data(), groups[1].size());
    std::string_view value(groups[2].data(), groups[2].size());
    if (value.size() >= 2 &&
        ((value.front() == '"' && value.back() == '"') || (value.front() == '\'' && value.back() == '\''))) {
      value = value.substr(1, value.size() - 2);
    }
    if (!value.empty()) out->push_back({name, value});
    if (end == pos) ++end;  // cannot happen (matches are non-empty); guards the loop anyway
    pos = end;
  }
}

void LogLineFields(std::string_view line, FieldScratch* scratch, FieldList* out) {
  out->clear();
  std::string_view t = Trim(line);
  if (t.size() >= 2 && t.front() == '{' && t.back() == '}' && scratch->tree.Parse(t) &&
      scratch->tree.kind(scratch->tree.root()) == JsonKind::kObject) {
    JsonElementFields(scratch->tree, scratch->tree.root(), out);
    if (!out->empty()) return;
  }
  LogfmtFields(line, out);
}

void TableRowFields(const std::vector<std::string_view>& header, const std::vector<std::string_view>& row,
                    FieldList* out) {
  out->clear();
  size_t n = std::min({row.size(), header.size(), kMaxUnitFields});
  for (size_t i = 0; i < n; ++i) {
    std::string_view name = Trim(header[i]);
    std::string_view value = Trim(row[i]);
    if (name.empty() || value.empty()) continue;
    out->push_back({name, value});
  }
}

}  // namespace caveman::internal
