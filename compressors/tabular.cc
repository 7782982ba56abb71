#include "compressors/tabular.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <re2/re2.h>

#include "compressors/internal/bm25.h"
#include "compressors/internal/csv.h"
#include "compressors/elision.h"
#include "compressors/internal/fixed_width.h"
#include "compressors/internal/invariants.h"
#include "compressors/lines.h"
#include "compressors/internal/redundancy.h"
#include "compressors/internal/templates.h"
#include "compressors/text_util.h"

namespace caveman {
namespace {

using internal::Trim;

enum class TableKind : uint8_t { kMarkdown, kCsv, kTsv };

struct Table {
  TableKind kind = TableKind::kCsv;
  char delimiter = ',';
  size_t header_rows = 1;
  std::vector<std::vector<std::string>> rows;
  size_t row_count = 0;  // equals rows.size() when cells were collected
};

constexpr size_t kMinCsvFields = 2;
constexpr size_t kMaxCsvFields = 128;
constexpr size_t kMinMarkdownLines = 3;
constexpr size_t kMinSeparatorDashes = 3;

// `^:?-{3,}:?$`
bool IsSeparatorCell(std::string_view c) {
  if (!c.empty() && c.front() == ':') c.remove_prefix(1);
  if (!c.empty() && c.back() == ':') c.remove_suffix(1);
  if (c.size() < kMinSeparatorDashes) return false;
  for (char ch : c) {
    if (ch != '-') return false;
  }
  return true;
}

// Cells of one Markdown line: TRIM, strip every leading/trailing '|', split on '|', TRIM each.
void MarkdownCells(std::string_view line, std::vector<std::string_view>* cells) {
  cells->clear();
  std::string_view t = Trim(line);
  while (!t.empty() && t.front() == '|') t.remove_prefix(1);
  while (!t.empty() && t.back() == '|') t.remove_suffix(1);
  size_t start = 0;
  while (true) {
    size_t bar = t.find('|', start);
    if (bar == std::string_view::npos) {
      cells->push_back(Trim(t.substr(start)));
      return;
    }
    cells->push_back(Trim(t.substr(start, bar - start)));
    start = bar + 1;
  }
}

// Markdown pipe table. `collect` false only validates and counts rows.
bool ParseMarkdown(std::string_view body, bool collect, Table* table) {
  // CRLF → LF first, then one final LF dropped: a CR before an LF never reaches a cell, so the
  // lines are the LF-split pieces with one trailing CR each removed.
  std::string_view text = body;
  if (!text.empty() && text.back() == '\n') {
    text.remove_suffix(1);
    if (!text.empty() && text.back() == '\r') {
      // "…\r\n" at the end: CRLF became LF, and that LF is the final one dropped.
      text.remove_suffix(1);
    }
  }
  std::vector<std::string_view> cells;
  size_t width = 0;
  size_t line_idx = 0;
  size_t pos = 0;
  while (true) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string_view t = Trim(line);
    if (t.empty() || t.front() != '|' || t.back() != '|') return false;
    MarkdownCells(line, &cells);
    if (line_idx == 0) {
      if (cells.size() < 2) return false;
      width = cells.size();
    } else {
      if (cells.size() != width) return false;
      if (line_idx == 1) {
        for (std::string_view c : cells) {
          if (!IsSeparatorCell(c)) return false;
        }
      }
    }
    if (collect) table->rows.emplace_back(cells.begin(), cells.end());
    ++line_idx;
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  if (line_idx < kMinMarkdownLines) return false;
  table->kind = TableKind::kMarkdown;
  table->delimiter = '|';
  table->header_rows = 2;
  table->row_count = line_idx;
  return true;
}

// CSV/TSV with the §5.9 dialect. `record_ends`, when set, receives the offset just past each
// record's terminator (RetrieveQuery narrowing, §2.6, cuts units at these offsets).
bool ParseDelimited(std::string_view body, bool collect, Table* table, size_t max_fields = kMaxCsvFields,
                    std::vector<size_t>* record_ends = nullptr) {
  std::string_view trimmed = Trim(body);
  std::string_view first = trimmed.substr(0, trimmed.find('\n'));
  size_t tabs = 0, commas = 0;
  for (char c : first) {
    tabs += c == '\t';
    commas += c == ',';
  }
  const char delim = (tabs >= 1 && tabs > commas) ? '\t' : ',';
  if ((delim == '\t' ? tabs : commas) == 0) return false;

  const size_t n = body.size();
  size_t pos = 0;
  size_t width = 0;
  size_t records = 0;
  std::vector<std::string> row;
  std::string cell;
  while (pos < n) {
    // Empty lines (LF or CRLF alone) are skipped.
    if (body[pos] == '\n') {
      ++pos;
      continue;
    }
    if (body[pos] == '\r' && pos + 1 < n && body[pos + 1] == '\n') {
      pos += 2;
      continue;
    }
    size_t fields = 0;
    row.clear();
    bool record_done = false;
    while (!record_done) {
      cell.clear();
      if (pos < n && body[pos] == '"') {
        ++pos;
        bool closed = false;
        while (pos < n) {
          char c = body[pos];
          if (c == '"') {
            if (pos + 1 < n && body[pos + 1] == '"') {
              if (collect) cell.push_back('"');
              pos += 2;
              continue;
            }
            ++pos;
            closed = true;
            break;
          }
          if (c == '\r' && pos + 1 < n && body[pos + 1] == '\n') {
            if (collect) cell.push_back('\n');
            pos += 2;
            continue;
          }
          if (collect) cell.push_back(c);
          ++pos;
        }
        if (!closed) return false;
        // After the closing quote only the delimiter or the record end may follow.
        if (pos == n) {
          record_done = true;
        } else if (body[pos] == delim) {
          ++pos;
        } else if (body[pos] == '\n') {
          ++pos;
          record_done = true;
        } else if (body[pos] == '\r' && pos + 1 < n && body[pos + 1] == '\n') {
          pos += 2;
          record_done = true;
        } else {
          return false;
        }
      } else {
        size_t start = pos;
        while (pos < n && body[pos] != delim && body[pos] != '\n') {
          if (body[pos] == '"') return false;
          ++pos;
        }
        size_t end = pos;
        if (pos == n) {
          record_done = true;
        } else if (body[pos] == '\n') {
          if (end > start && body[end - 1] == '\r') --end;  // record ends at CRLF
          ++pos;
          record_done = true;
        } else {
          ++pos;  // delimiter; a delimiter at the very end still opens an empty last field
        }
        if (collect) cell.assign(body.substr(start, end - start));
      }
      ++fields;
      if (fields > max_fields) return false;
      if (collect) row.push_back(std::move(cell));
    }
    if (records == 0) {
      if (fields < kMinCsvFields) return false;
      width = fields;
    } else if (fields != width) {
      return false;
    }
    ++records;
    if (record_ends != nullptr) record_ends->push_back(pos);
    if (collect) table->rows.push_back(std::move(row));
  }
  if (records < 2) return false;
  table->kind = delim == '\t' ? TableKind::kTsv : TableKind::kCsv;
  table->delimiter = delim;
  table->header_rows = 1;
  table->row_count = records;
  return true;
}

// The §5.9 table parser: Markdown first, then CSV/TSV.
bool ParseTable(std::string_view body, bool collect, Table* table) {
  if (Trim(body).empty() || !internal::IsValidUtf8(body)) return false;
  table->rows.clear();
  if (ParseMarkdown(body, collect, table)) return true;
  table->rows.clear();
  return ParseDelimited(body, collect, table);
}

}  // namespace

std::optional<size_t> TableRowCount(std::string_view body) {
  Table table;
  if (!ParseTable(body, /*collect=*/false, &table)) return std::nullopt;
  return table.row_count;
}

namespace internal {

std::optional<DelimitedRecords> ReadDelimitedRecords(std::string_view body) {
  Table table;
  DelimitedRecords out;
  if (!ParseDelimited(body, /*collect=*/false, &table, SIZE_MAX, &out.record_ends)) {
    return std::nullopt;
  }
  out.delimiter = table.delimiter;
  return out;
}

}  // namespace internal

namespace {

constexpr size_t kMinRows = 12;
constexpr size_t kMinRowsBeyondHeader = 6;
constexpr size_t kKeepFirstData = 3;
constexpr size_t kKeepLast = 2;
constexpr int64_t kQueryLimit = 24;
constexpr double kQueryThreshold = 0.30;
constexpr size_t kNumericPercent = 70;

// Whether a CSV/TSV table has no header row: its first cell starts with a digit, like the
// first cell of at least kNumericPercent % of the other rows (`du -ah`, `git ls-tree`, `wc -l`
// through `tr`, counts from `uniq -c` made TSV). A header's first column names the rows'
// labels; a header starting with a digit (a year) stands over a later column. Such a table's
// first row is data: it counts among the first kept data rows, in the numeric columns'
// minimum and maximum, and summaries name the columns "column 1", "column 2", ...
// (docs/DECISIONS.md, "Tables without a header row").
bool FirstRowIsData(const Table& t) {
  if (t.kind == TableKind::kMarkdown || t.rows.size() < 2) return false;
  auto digit_first = [](std::string_view cell) {
    cell = Trim(cell);
    return !cell.empty() && cell[0] >= '0' && cell[0] <= '9';
  };
  if (!digit_first(t.rows[0][0])) return false;
  size_t digits = 0;
  for (size_t r = 1; r < t.rows.size(); ++r) digits += digit_first(t.rows[r][0]) ? 1 : 0;
  return digits * 100 >= (t.rows.size() - 1) * kNumericPercent;
}

constexpr std::string_view kMarkerText = "rows elided (caveman)";

const RE2& AlarmPattern() {
  static const RE2* re =
      new RE2(R"((?i)\b(ERROR|FAIL|FAILED|FATAL|PANIC|EXCEPTION|WARNING|SECURITY|DENIED|REJECTED)\b)");
  return *re;
}

template <class Cells>
std::string JoinCells(const Cells& row, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < row.size(); ++i) {
    if (i) out.append(sep);
    out.append(row[i]);
  }
  return out;
}

// §5.9 CSV quoting: non-empty and (delimiter, quote, CR or LF inside, `\.`, or a leading
// White_Space character).
bool NeedsQuotes(std::string_view f, char delim) {
  if (f.empty()) return false;
  if (f == "\\.") return true;
  for (char c : f) {
    if (c == delim || c == '"' || c == '\r' || c == '\n') return true;
  }
  size_t i = 0;
  return internal::IsWhiteSpace(internal::DecodeUtf8(f, &i));
}

void AppendDelimitedRow(const std::vector<std::string>& row, char delim, bool crlf, std::string* out) {
  for (size_t i = 0; i < row.size(); ++i) {
    if (i) out->push_back(delim);
    const std::string& f = row[i];
    if (!NeedsQuotes(f, delim)) {
      out->append(f);
      continue;
    }
    out->push_back('"');
    for (char c : f) {
      if (c == '"') {
        out->append("\"\"");
      } else if (crlf && c == '\r') {
        // omitted: every LF below is written as CRLF
      } else if (crlf && c == '\n') {
        out->append("\r\n");
      } else {
        out->push_back(c);
      }
    }
    out->push_back('"');
  }
}

std::string Encode(const Table& table, const std::vector<std::vector<std::string>>& rows, bool input_ends_lf,
                   bool crlf) {
  std::string out;
  if (table.kind == TableKind::kMarkdown) {
    for (const auto& row : rows) {
      out.append("| ");
      out.append(JoinCells(row, " | "));
      out.append(" |\n");
    }
    if (!input_ends_lf && !out.empty()) out.pop_back();
    if (crlf) {
      std::string converted;
      converted.reserve(out.size() + rows.size());
      for (char c : out) {
        if (c == '\n') converted.push_back('\r');
        converted.push_back(c);
      }
      out.swap(converted);
    }
    return out;
  }
  const std::string_view term = crlf ? "\r\n" : "\n";
  for (const auto& row : rows) {
    AppendDelimitedRow(row, table.delimiter, crlf, &out);
    out.append(term);
  }
  if (!input_ends_lf) out.resize(out.size() - term.size());
  return out;
}

// Shape of a cell for template grouping (project extension, docs/DECISIONS.md): empty, number,
// hash/UUID-like id, or its character classes with runs collapsed (`web-01` → `a-9`).
std::string CellShape(std::string_view cell) {
  constexpr size_t kMinHexId = 8;
  constexpr size_t kMaxShape = 24;
  std::string_view t = Trim(cell);
  if (t.empty()) return "E";
  if (internal::ParseNumber(t)) return "N";
  // Hashes and UUIDs: hex digits (and dashes) with at least one digit.
  if (t.size() >= kMinHexId &&
      std::all_of(t.begin(), t.end(),
                  [](char c) { return c == '-' || std::isxdigit(static_cast<unsigned char>(c)); }) &&
      std::any_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return "H";
  }
  std::string shape;
  for (char c : t) {
    const unsigned char u = static_cast<unsigned char>(c);
    char cls = std::isalpha(u) ? 'a' : std::isdigit(u) ? '9' : u >= 0x80 ? 'u' : c;
    if (shape.empty() || shape.back() != cls) shape.push_back(cls);
    if (shape.size() >= kMaxShape) break;
  }
  return shape;
}

// Key of a list of strings, never 0.
template <class Cells>
uint64_t KeyOf(const Cells& cells) {
  std::string joined;
  for (const auto& cell : cells) {
    joined.append(cell);
    joined.push_back('\x1f');
  }
  uint64_t h = std::hash<std::string>{}(joined);
  return h == 0 ? 1 : h;
}

// Row keys: hash of the cell shapes; header rows get none (they are always kept).
std::vector<uint64_t> ShapeKeys(const std::vector<std::vector<std::string>>& rows, size_t header_rows) {
  std::vector<uint64_t> keys(rows.size(), 0);
  std::vector<std::string> shapes;
  for (size_t r = header_rows; r < rows.size(); ++r) {
    shapes.clear();
    for (const std::string& cell : rows[r]) shapes.push_back(CellShape(cell));
    keys[r] = KeyOf(shapes);
  }
  return keys;
}

// ---------------------------------------------------------------------------------------
// Fixed-width tables (project extension, docs/DECISIONS.md "Fixed-width tables"): kept rows
// are the input lines byte for byte, each dropped run becomes one synthesized marker line.

constexpr size_t kFwMinRows = 12;  // header + data rows, as §5.9's floor
constexpr size_t kFwKeepFirst = 3;
constexpr size_t kFwKeepLast = 3;
constexpr size_t kFwMaxLowCardinality = 12;
constexpr size_t kFwMajorityPercent = 60;
constexpr size_t kFwRarePercent = 5;
constexpr size_t kFwRareKeepPerValue = 2;
constexpr size_t kFwRareKeepPerColumn = 6;
constexpr double kFwHighPercent = 90;

// Cell values that are alarms in any column (Kubernetes and Docker states, zombies).
const RE2& FixedWidthAlarmPattern() {
  static const RE2* re =
      new RE2(R"((?i)\b(CrashLoopBackOff|ImagePullBackOff|ErrImagePull|CreateContainerConfigError|)"
              R"(InvalidImageName|Evicted|OOMKilled|ContainerStatusUnknown|unhealthy|NotReady|defunct)\b)");
  return *re;
}

// A status value that is bad whatever the majority says.
const RE2& BadStatusPattern() {
  static const RE2* re = new RE2(R"((?i)(unhealthy|error|err\b|fail|crash|backoff|evict|oomkill|\bdead\b|restarting|)"
                                 R"(terminat|pending|unknown|notready|not-found|inactive|masked|\blost\b|degraded|)"
                                 R"(exited \([1-9]))");
  return *re;
}

// First words of status values that are normal even when they are not the majority.
bool GoodStatusWord(std::string_view w) {
  static constexpr std::string_view kGood[] = {
      "running",   "completed", "succeeded", "active",  "loaded",      "ready",   "bound",
      "available", "up",        "healthy",   "ok",      "established", "estab",   "listen",
      "listening", "time-wait", "mounted",   "plugged", "exited",      "waiting", "true"};
  return std::find(std::begin(kGood), std::end(kGood), w) != std::end(kGood);
}

enum class ColumnRole : uint8_t { kPlain, kStatus, kProcessState, kCounter, kReady, kPercent };

ColumnRole RoleOf(std::string_view name) {
  const std::string n = internal::AsciiLower(name);
  static constexpr std::string_view kStatus[] = {"status", "state", "phase", "health",
                                                 "active", "sub",   "load",  "condition"};
  static constexpr std::string_view kCounter[] = {"restarts", "restart", "errors",  "error", "errs",
                                                  "failures", "failed",  "retries", "drops", "dropped"};
  auto in = [&](const auto& list) { return std::find(std::begin(list), std::end(list), n) != std::end(list); };
  if (in(kStatus)) return ColumnRole::kStatus;
  if (n == "stat" || n == "s") return ColumnRole::kProcessState;  // ps, top
  if (in(kCounter)) return ColumnRole::kCounter;
  if (n == "ready") return ColumnRole::kReady;
  if (!n.empty() && (n.front() == '%' || n.back() == '%')) return ColumnRole::kPercent;
  return ColumnRole::kPlain;
}

std::string FirstWordLower(std::string_view v) { return internal::AsciiLower(v.substr(0, v.find(' '))); }

// Leading decimal integer of `v` ("17 (2m14s ago)" → 17), nullopt if it starts otherwise.
std::optional<uint64_t> LeadingInteger(std::string_view v) {
  uint64_t n = 0;
  size_t i = 0;
  for (; i < v.size() && v[i] >= '0' && v[i] <= '9' && i < 18; ++i) n = n * 10 + (v[i] - '0');
  if (i == 0) return std::nullopt;
  return n;
}

// "12%" → 12.
std::optional<double> PercentValue(std::string_view v) {
  if (v.size() < 2 || v.back() != '%') return std::nullopt;
  return internal::ParseNumber(v.substr(0, v.size() - 1));
}

// The most common non-empty value of column `col` over `cells` (first reached on ties),
// with its count and the number of distinct values (counting stops past `cap`).
struct ColumnValues {
  std::vector<std::pair<std::string_view, size_t>> counts;  // first-appearance order
  bool too_wide = false;
  size_t nonempty = 0;
  // Few values, each repeated twice on average: the column names a category.
  bool Categorical() const { return !too_wide && counts.size() * 2 <= nonempty; }
  size_t Count(std::string_view v) const {
    for (const auto& [value, n] : counts) {
      if (value == v) return n;
    }
    return 0;
  }
  std::pair<std::string_view, size_t> Top() const {
    std::pair<std::string_view, size_t> top{{}, 0};
    for (const auto& c : counts) {
      if (c.second > top.second) top = c;
    }
    return top;
  }
};

ColumnValues CountValues(const std::vector<std::vector<std::string_view>>& cells, size_t col, size_t cap) {
  ColumnValues out;
  for (const auto& row : cells) {
    std::string_view v = row[col];
    if (v.empty()) continue;
    ++out.nonempty;
    auto it = std::find_if(out.counts.begin(), out.counts.end(), [&](const auto& c) { return c.first == v; });
    if (it != out.counts.end()) {
      ++it->second;
    } else if (out.counts.size() == cap) {
      out.too_wide = true;
      return out;
    } else {
      out.counts.emplace_back(v, 1);
    }
  }
  return out;
}

// The anomaly rules over the data rows' cells (docs/DECISIONS.md): sets keep[r] for alarm
// cells, bad statuses, non-zero counters, unready pods, high percentages, per-column minimum
// and maximum, and rare values of low-cardinality columns.
void KeepAnomalies(const std::vector<std::string>& names, const std::vector<std::vector<std::string_view>>& cells,
                   const std::vector<ColumnValues>& column_values, const std::vector<std::string_view>& lines,
                   std::vector<bool>* keep) {
  const size_t d = cells.size();
  const size_t width = names.size();
  std::vector<ColumnRole> roles(width);
  for (size_t c = 0; c < width; ++c) roles[c] = RoleOf(names[c]);
  std::vector<std::string> majority(width);
  for (size_t c = 0; c < width; ++c) {
    if (roles[c] == ColumnRole::kStatus) {
      // Majority of first words ("Up 3 days" and "Up 26 hours" are both "up").
      std::vector<std::pair<std::string, size_t>> words;
      for (const auto& row : cells) {
        std::string w = FirstWordLower(row[c]);
        auto it = std::find_if(words.begin(), words.end(), [&](auto& p) { return p.first == w; });
        if (it == words.end()) {
          words.emplace_back(std::move(w), 1);
        } else {
          ++it->second;
        }
      }
      size_t best = 0;
      for (auto& [w, n] : words) {
        if (n > best && !w.empty()) best = n, majority[c] = w;
      }
    }
  }
  size_t status_col = width;
  for (size_t c = 0; c < width && status_col == width; ++c) {
    if (roles[c] == ColumnRole::kStatus) status_col = c;
  }
  // An alarm word on most rows is the table's norm, not an anomaly: `lsof` run without root
  // says "(readlink: Permission denied)" on every row it cannot resolve, and keeping all of
  // them kept the whole table (docs/DECISIONS.md, "An alarm on most rows is the norm"). Those
  // rows are then kept or elided by the other rules, and the markers' summaries state them.
  std::vector<bool> alarm(d);
  size_t alarms = 0;
  for (size_t r = 0; r < d; ++r) {
    alarm[r] = RE2::PartialMatch(lines[r], AlarmPattern()) || RE2::PartialMatch(lines[r], FixedWidthAlarmPattern());
    if (alarm[r]) ++alarms;
  }
  const bool alarm_is_norm = alarms * 2 > d;
  for (size_t r = 0; r < d; ++r) {
    const auto& row = cells[r];
    bool k = alarm[r] && !alarm_is_norm;
    for (size_t c = 0; c < width && !k; ++c) {
      std::string_view v = row[c];
      if (v.empty()) continue;
      if (std::optional<double> pct = PercentValue(v); pct && *pct >= kFwHighPercent) k = true;
      switch (roles[c]) {
        case ColumnRole::kStatus:
          k = k || RE2::PartialMatch(v, BadStatusPattern()) ||
              (FirstWordLower(v) != majority[c] && !GoodStatusWord(FirstWordLower(v)));
          break;
        case ColumnRole::kProcessState:
          k = k || std::string_view("ZTtDX").find(v.front()) != std::string_view::npos;
          break;
        case ColumnRole::kCounter: {
          std::optional<uint64_t> n = LeadingInteger(v);
          k = k || (n && *n > 0);
          break;
        }
        case ColumnRole::kReady: {
          // "0/1" of a pod that is not done (Completed / Succeeded pods are 0/1 by design).
          size_t slash = v.find('/');
          std::optional<uint64_t> a = LeadingInteger(v), b;
          if (slash != std::string_view::npos) b = LeadingInteger(v.substr(slash + 1));
          std::string status = status_col < width ? FirstWordLower(row[status_col]) : "";
          k = k || (a && b && *a < *b && status != "completed" && status != "succeeded");
          break;
        }
        case ColumnRole::kPercent: {
          std::optional<double> n = internal::ParseNumber(v);
          k = k || (n && *n >= kFwHighPercent);
          break;
        }
        case ColumnRole::kPlain: break;
      }
    }
    if (k) (*keep)[r] = true;
  }
  for (size_t c = 0; c < width; ++c) {
    // Numeric columns (≥ 70% numbers): the first row holding the minimum and the maximum.
    size_t numeric = 0;
    std::optional<double> lo, hi;
    size_t lo_row = 0, hi_row = 0;
    for (size_t r = 0; r < d; ++r) {
      std::optional<double> v = internal::ParseNumber(cells[r][c]);
      if (!v) continue;
      ++numeric;
      if (*v != *v) continue;
      if (!lo || *v < *lo) lo = *v, lo_row = r;
      if (!hi || *v > *hi) hi = *v, hi_row = r;
    }
    if (lo && numeric * 100 >= d * kNumericPercent) {
      (*keep)[lo_row] = true;
      (*keep)[hi_row] = true;
    }
    // Low-cardinality columns with a clear majority: rows holding a rare value.
    const ColumnValues& values = column_values[c];
    const size_t distinct = values.counts.size();
    if (values.too_wide || distinct < 2 || distinct * 4 > d || values.Top().second * 100 < d * kFwMajorityPercent) {
      continue;
    }
    size_t kept_here = 0;
    std::vector<std::pair<std::string_view, size_t>> seen;
    for (size_t r = 0; r < d && kept_here < kFwRareKeepPerColumn; ++r) {
      std::string_view v = cells[r][c];
      const size_t count = values.Count(v);
      if (v.empty() || (count != 1 && count * 100 > d * kFwRarePercent)) continue;
      auto it = std::find_if(seen.begin(), seen.end(), [&](auto& p) { return p.first == v; });
      if (it == seen.end()) it = seen.insert(seen.end(), {v, 0});
      if (it->second++ >= kFwRareKeepPerValue) continue;
      (*keep)[r] = true;
      ++kept_here;
    }
  }
}

std::optional<std::string> CompressFixedWidth(std::string_view body, std::string_view query, bool template_grouping) {
  std::optional<internal::FixedWidthTable> table = internal::ParseFixedWidth(body);
  if (!table) return std::nullopt;
  const std::vector<std::string_view>& lines = table->split.lines;
  // Data rows: every line after the header block (the input holds no caveman lines: the
  // caller declined those).
  const size_t first = table->data_begin;
  const size_t d = lines.size() - first;
  if (1 + d < kFwMinRows || d <= kFwKeepFirst + kFwKeepLast + internal::kAlwaysElideCount) {
    return std::nullopt;
  }
  std::vector<std::string_view> rows(lines.begin() + first, lines.end());
  std::vector<std::vector<std::string_view>> cells(d);
  for (size_t r = 0; r < d; ++r) internal::FixedWidthCells(*table, rows[r], &cells[r]);

  std::vector<bool> keep(d, false);
  for (size_t r = 0; r < d; ++r) keep[r] = r < kFwKeepFirst || r + kFwKeepLast >= d;
  std::vector<ColumnValues> values(table->names.size());
  for (size_t c = 0; c < values.size(); ++c) {
    values[c] = CountValues(cells, c, kFwMaxLowCardinality);
  }
  KeepAnomalies(table->names, cells, values, rows, &keep);
  internal::KeepQueryRelevant(&keep, rows, query, kQueryLimit, kQueryThreshold);
  std::vector<std::string> docs_text(d);
  for (size_t r = 0; r < d; ++r) {
    docs_text[r] = JoinCells(cells[r], " ");
  }
  std::vector<std::string_view> docs(docs_text.begin(), docs_text.end());
  if (template_grouping) {
    // Template grouping for columns: rows with the same value in every categorical column
    // and the same kind (empty, number, text) elsewhere are represented by one shown row.
    std::vector<uint64_t> keys(d);
    std::vector<std::string_view> key_cells(values.size());
    for (size_t r = 0; r < d; ++r) {
      for (size_t c = 0; c < values.size(); ++c) {
        std::string_view v = cells[r][c];
        key_cells[c] = values[c].Categorical()    ? v
                       : v.empty()                ? std::string_view("\x01E")
                       : internal::ParseNumber(v) ? std::string_view("\x01N")
                                                  : std::string_view("\x01T");
      }
      keys[r] = KeyOf(key_cells);
    }
    internal::KeepNonRedundantGrouped(docs, keys, &keep);
  } else {
    internal::KeepNonRedundant(docs, &keep);
  }

  const bool crlf = internal::IsMajorityCrlf(body);
  std::vector<std::string_view> header(table->names.begin(), table->names.end());
  std::vector<std::string> out_lines(lines.begin(), lines.begin() + first);
  internal::FieldList fields;
  uint64_t elided_total = 0;
  size_t markers = 0;
  for (size_t i = 0; i < d;) {
    if (keep[i]) {
      out_lines.emplace_back(rows[i++]);
      continue;
    }
    size_t j = i;
    uint64_t run_bytes = 0;
    internal::InvariantAccumulator acc;
    for (; j < d && !keep[j]; ++j) {
      run_bytes += rows[j].size() + 1;
      internal::TableRowFields(header, cells[j], &fields);
      acc.Add(fields);
    }
    const uint64_t count = j - i;
    const std::string summary = acc.Render(static_cast<int64_t>(run_bytes));
    std::string text = internal::ElisionMarker(count, kMarkerText, summary);
    if (internal::WorthEliding(count, text.size(), run_bytes, summary)) {
      out_lines.push_back(internal::SynthesizedLine(text, crlf));
      elided_total += run_bytes;
      ++markers;
    } else {
      for (size_t k = i; k < j; ++k) out_lines.emplace_back(rows[k]);
    }
    i = j;
  }
  if (markers == 0) return std::nullopt;
  if (elided_total >= internal::kNoteMinElidedBytes) {
    out_lines.push_back(internal::SynthesizedLine(internal::ContractNote("rows"), crlf));
  }
  std::string out = internal::JoinLines(out_lines, table->split.trailing);
  if (out.size() >= body.size()) return std::nullopt;
  return out;
}

class TabularCompressor final : public InMemoryCompressor {
 public:
  explicit TabularCompressor(TabularOptions options) : options_(options) {}
  std::string_view content_type() const override { return "tabular"; }
  // Working set (issue 15 ceiling; scripts/memory_table.py --shapes): cells and column profiles,
  // 16.4 bytes per byte of fixtures/tabular/csv_hosts_query.in.
  MemoryModel memory_model() const override { return {.per_byte = 18, .per_line = 0}; }
  bool query_aware() const override { return true; }

 protected:
  std::optional<std::string> TransformText(std::string_view body, std::string_view query,
                                           TransformMeta*) const override {
    if (internal::Contains(body, kMarkerText)) return std::nullopt;
    Table table;
    if (!ParseTable(body, /*collect=*/true, &table)) {
      return CompressFixedWidth(body, query, options_.template_grouping);
    }
    const auto& rows = table.rows;
    const size_t n = rows.size();
    const bool headerless = FirstRowIsData(table);
    const size_t h = headerless ? 0 : table.header_rows;
    if (n < kMinRows || n <= table.header_rows + kMinRowsBeyondHeader) return std::nullopt;
    const size_t width = rows[0].size();

    std::vector<std::string> docs_text(n);
    for (size_t i = 0; i < n; ++i) docs_text[i] = JoinCells(rows[i], " ");
    std::vector<std::string_view> docs(docs_text.begin(), docs_text.end());

    std::vector<bool> keep(n, false);
    for (size_t i = 0; i < n; ++i) {
      keep[i] = i < h + kKeepFirstData || i + kKeepLast >= n || RE2::PartialMatch(docs[i], AlarmPattern());
    }
    // Numeric columns (≥ 70% of data cells are numbers): the first row holding the minimum and
    // the first holding the maximum.
    const size_t data_rows = n - h;
    for (size_t col = 0; col < width; ++col) {
      size_t numeric = 0;
      std::optional<double> lo, hi;
      size_t lo_row = 0, hi_row = 0;
      for (size_t r = h; r < n; ++r) {
        std::optional<double> v = internal::ParseNumber(Trim(rows[r][col]));
        if (!v) continue;
        ++numeric;
        if (*v != *v) continue;  // NaN never holds a minimum or maximum
        if (!lo || *v < *lo) lo = *v, lo_row = r;
        if (!hi || *v > *hi) hi = *v, hi_row = r;
      }
      if (numeric * 100 < data_rows * kNumericPercent || !lo) continue;
      keep[lo_row] = true;
      keep[hi_row] = true;
    }
    internal::KeepQueryRelevant(&keep, docs, query, kQueryLimit, kQueryThreshold);
    // §4.2 guard, extended: a row of the same shape as a kept row is represented by it.
    if (options_.template_grouping) {
      internal::KeepNonRedundantGrouped(docs, ShapeKeys(rows, h), &keep);
    } else {
      internal::KeepNonRedundant(docs, &keep);
    }

    std::vector<std::string> names;  // a headerless table's columns: "column 1", ...
    if (headerless) {
      for (size_t col = 0; col < width; ++col) names.push_back("column " + std::to_string(col + 1));
    }
    std::vector<std::string_view> header = headerless ? std::vector<std::string_view>(names.begin(), names.end())
                                                      : std::vector<std::string_view>(rows[0].begin(), rows[0].end());
    std::vector<std::vector<std::string>> out_rows;
    uint64_t elided_total = 0;
    internal::FieldList fields;
    for (size_t i = 0; i < n;) {
      if (keep[i]) {
        out_rows.push_back(rows[i]);
        ++i;
        continue;
      }
      size_t j = i;
      uint64_t run_bytes = 0;
      internal::InvariantAccumulator acc;
      for (; j < n && !keep[j]; ++j) {
        run_bytes += JoinCells(rows[j], ",").size() + 1;
        std::vector<std::string_view> cells(rows[j].begin(), rows[j].end());
        internal::TableRowFields(header, cells, &fields);
        acc.Add(fields);
      }
      const uint64_t count = j - i;
      const std::string summary = acc.Render(static_cast<int64_t>(run_bytes));
      std::string text = internal::ElisionMarker(count, kMarkerText, summary);
      if (internal::WorthEliding(count, text.size(), run_bytes, summary)) {
        std::vector<std::string> marker(width);
        marker[0] = std::move(text);
        out_rows.push_back(std::move(marker));
        elided_total += run_bytes;
      } else {
        for (size_t k = i; k < j; ++k) out_rows.push_back(rows[k]);
      }
      i = j;
    }
    if (out_rows.size() >= n) return std::nullopt;
    if (elided_total >= internal::kNoteMinElidedBytes) {
      std::vector<std::string> note(width);
      note[0] = internal::ContractNote("rows");
      out_rows.push_back(std::move(note));
    }
    const bool ends_lf = !body.empty() && body.back() == '\n';
    std::string out = Encode(table, out_rows, ends_lf, internal::IsMajorityCrlf(body));
    if (out.size() >= body.size()) return std::nullopt;
    return out;
  }

 private:
  TabularOptions options_;
};

}  // namespace

std::unique_ptr<Compressor> NewTabularCompressor(TabularOptions options) {
  return std::make_unique<TabularCompressor>(options);
}

}  // namespace caveman
