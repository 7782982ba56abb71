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
#include "compressors/internal/elision.h"
#include "compressors/internal/invariants.h"
#include "compressors/internal/lines.h"
#include "compressors/internal/redundancy.h"
#include "compressors/internal/templates.h"
#include "compressors/internal/text_util.h"

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
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
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
bool ParseDelimited(std::string_view body, bool collect, Table* table,
                    size_t max_fields = kMaxCsvFields, std::vector<size_t>* record_ends = nullptr) {
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
constexpr std::string_view kMarkerText = "rows elided (caveman)";

const RE2& AlarmPattern() {
  static const RE2* re = new RE2(
      R"((?i)\b(ERROR|FAIL|FAILED|FATAL|PANIC|EXCEPTION|WARNING|SECURITY|DENIED|REJECTED)\b)");
  return *re;
}

std::string JoinCells(const std::vector<std::string>& row, std::string_view sep) {
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

void AppendDelimitedRow(const std::vector<std::string>& row, char delim, bool crlf,
                        std::string* out) {
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

std::string Encode(const Table& table, const std::vector<std::vector<std::string>>& rows,
                   bool input_ends_lf, bool crlf) {
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

// Row keys: hash of the cell shapes; header rows get none (they are always kept).
std::vector<uint64_t> ShapeKeys(const std::vector<std::vector<std::string>>& rows, size_t header_rows) {
  std::vector<uint64_t> keys(rows.size(), 0);
  for (size_t r = header_rows; r < rows.size(); ++r) {
    std::string joined;
    for (const std::string& cell : rows[r]) {
      joined += CellShape(cell);
      joined.push_back('\x1f');
    }
    uint64_t h = std::hash<std::string>{}(joined);
    keys[r] = h == 0 ? 1 : h;
  }
  return keys;
}

class TabularCompressor final : public InMemoryCompressor {
 public:
  explicit TabularCompressor(TabularOptions options) : options_(options) {}
  std::string_view content_type() const override { return "tabular"; }
  bool query_aware() const override { return true; }

 protected:
  std::optional<std::string> TransformText(std::string_view body, std::string_view query,
                                           TransformMeta*) const override {
    if (internal::Contains(body, kMarkerText)) return std::nullopt;
    Table table;
    if (!ParseTable(body, /*collect=*/true, &table)) return std::nullopt;
    const auto& rows = table.rows;
    const size_t n = rows.size();
    const size_t h = table.header_rows;
    if (n < kMinRows || n <= h + kMinRowsBeyondHeader) return std::nullopt;
    const size_t width = rows[0].size();

    std::vector<std::string> docs_text(n);
    for (size_t i = 0; i < n; ++i) docs_text[i] = JoinCells(rows[i], " ");
    std::vector<std::string_view> docs(docs_text.begin(), docs_text.end());

    std::vector<bool> keep(n, false);
    for (size_t i = 0; i < n; ++i) {
      keep[i] = i < h + kKeepFirstData || i + kKeepLast >= n ||
                RE2::PartialMatch(docs[i], AlarmPattern());
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

    std::vector<std::string_view> header(rows[0].begin(), rows[0].end());
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
