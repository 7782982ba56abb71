#include "compressors/internal/fixed_width.h"

#include <algorithm>
#include <cstdint>

#include "compressors/text_util.h"

namespace caveman::internal {
namespace {

constexpr size_t kMaxHeaderWords = 64;
constexpr size_t kMinSeparatorDashes = 3;

// One line addressed by code point column (its final CR ignored). ASCII lines need no index.
class ColumnLine {
 public:
  explicit ColumnLine(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    text_ = line;
    ascii_ = std::all_of(line.begin(), line.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if (!ascii_) {
      for (size_t i = 0; i < line.size();) {
        offsets_.push_back(static_cast<uint32_t>(i));
        DecodeUtf8(line, &i);
      }
    }
  }
  std::string_view text() const { return text_; }
  size_t width() const { return ascii_ ? text_.size() : offsets_.size(); }
  size_t Byte(size_t col) const {
    if (col >= width()) return text_.size();
    return ascii_ ? col : offsets_[col];
  }
  // A space, or past the end of the line (an empty cell).
  bool SpaceAt(size_t col) const { return col >= width() || text_[Byte(col)] == ' '; }

 private:
  std::string_view text_;
  bool ascii_ = true;
  std::vector<uint32_t> offsets_;
};

struct Word {
  size_t start = 0;  // code point columns [start, end)
  size_t end = 0;
  std::string_view text;
};

std::vector<Word> Words(const ColumnLine& line) {
  std::vector<Word> words;
  const size_t w = line.width();
  for (size_t c = 0; c < w;) {
    if (line.SpaceAt(c)) {
      ++c;
      continue;
    }
    Word word;
    word.start = c;
    while (c < w && !line.SpaceAt(c)) ++c;
    word.end = c;
    word.text = line.text().substr(line.Byte(word.start), line.Byte(c) - line.Byte(word.start));
    words.push_back(word);
  }
  return words;
}

bool IsAsciiUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsAsciiLetter(char c) { return IsAsciiUpper(c) || (c >= 'a' && c <= 'z'); }

// Header words: column names, not code or prose punctuation; mostly capitalised; at least
// one gap of two spaces (prose and code separate words by one).
bool HeaderShape(const ColumnLine& line, const std::vector<Word>& words) {
  if (words.size() < 2 || words.size() > kMaxHeaderWords) return false;
  if (line.text().find('\t') != std::string_view::npos) return false;
  size_t lettered = 0, capitalised = 0;
  bool wide_gap = false;
  for (size_t i = 0; i < words.size(); ++i) {
    std::string_view t = words[i].text;
    if (t.find_first_of("{}[];=\"'<>,`") != std::string_view::npos) return false;
    if (i > 0 && words[i].start - words[i - 1].end >= 2) wide_gap = true;
    auto letter = std::find_if(t.begin(), t.end(), IsAsciiLetter);
    if (letter == t.end()) continue;
    ++lettered;
    if (IsAsciiUpper(*letter)) ++capitalised;
  }
  return wide_gap && lettered >= 2 && lettered * 3 >= words.size() * 2 && capitalised * 3 >= lettered * 2;
}

// `----  ------`, `+++-=====-====`: only - = + | : and spaces, with ≥ 3 dashes or equals.
bool SeparatorLine(std::string_view line) {
  std::string_view t = Trim(line);
  if (t.empty()) return false;
  size_t dashes = 0;
  for (char c : t) {
    if (c == '-' || c == '=') {
      ++dashes;
    } else if (c != '+' && c != '|' && c != ':' && c != ' ') {
      return false;
    }
  }
  return dashes >= kMinSeparatorDashes;
}

bool Mostly(size_t part, size_t whole) { return part * 100 >= whole * kFixedWidthStablePercent; }

bool TryHeader(size_t h, FixedWidthTable* t) {
  const std::vector<std::string_view>& lines = t->split.lines;
  const ColumnLine header(lines[h]);
  const std::vector<Word> words = Words(header);
  if (!HeaderShape(header, words)) return false;
  size_t k = h + 1;
  while (k < lines.size() && !t->synthesized[k] && SeparatorLine(lines[k])) ++k;
  std::vector<ColumnLine> rows;
  for (size_t r = k; r < lines.size(); ++r) {
    if (!t->synthesized[r]) rows.emplace_back(lines[r]);
  }
  if (rows.empty()) return false;

  std::vector<std::string> names{std::string(words[0].text)};
  std::vector<size_t> cuts;
  for (size_t i = 1; i < words.size(); ++i) {
    // The gap before word i, or the column of its first letter (`ss` right-aligns an
    // address up to the header's one-space gap): the position that is a space in the most
    // rows, the rightmost of equals (left-aligned columns start under their header word).
    size_t best = words[i].start - 1, best_count = 0;
    for (size_t p = words[i - 1].end; p <= words[i].start; ++p) {
      size_t count = 0;
      for (const ColumnLine& row : rows) count += row.SpaceAt(p);
      if (count >= best_count) best = p, best_count = count;
    }
    if (!Mostly(best_count, rows.size())) {
      if (words[i].start - words[i - 1].end != 1) return false;  // a wide gap must hold
      names.back().push_back(' ');
      names.back().append(words[i].text);
      continue;
    }
    cuts.push_back(best);
    names.emplace_back(words[i].text);
  }
  if (names.size() < 2) return false;
  // Most rows have a second cell.
  size_t reaching = 0;
  for (const ColumnLine& row : rows) {
    for (size_t c = cuts[0]; c < row.width(); ++c) {
      if (!row.SpaceAt(c)) {
        ++reaching;
        break;
      }
    }
  }
  if (!Mostly(reaching, rows.size())) return false;
  t->header = h;
  t->data_begin = k;
  t->names = std::move(names);
  t->cuts = std::move(cuts);
  t->rows = lines.size() - h;
  return true;
}

}  // namespace

bool IsCavemanLine(std::string_view line) { return StartsWith(line, "\xE2\x80\xA6 ") && Contains(line, "caveman"); }

std::optional<FixedWidthTable> ParseFixedWidth(std::string_view body) {
  if (Trim(body).empty() || !IsValidUtf8(body)) return std::nullopt;
  FixedWidthTable t;
  t.split = SplitLines(body);
  const size_t n = t.split.lines.size();
  t.synthesized.resize(n);
  for (size_t k = 0; k < n; ++k) t.synthesized[k] = IsCavemanLine(t.split.lines[k]);
  for (size_t h = 0; h < std::min(n, kFixedWidthHeaderWindow); ++h) {
    if (t.synthesized[h] || Trim(t.split.lines[h]).empty()) continue;
    if (TryHeader(h, &t)) return t;
  }
  return std::nullopt;
}

bool IsFixedWidthTable(std::string_view body) {
  std::optional<FixedWidthTable> t = ParseFixedWidth(body);
  return t && t->rows >= kFixedWidthMinRows;
}

void FixedWidthCells(const FixedWidthTable& table, std::string_view line, std::vector<std::string_view>* cells) {
  const ColumnLine row(line);
  const size_t w = row.width();
  std::vector<size_t> starts{0};
  for (size_t c : table.cuts) {
    if (!row.SpaceAt(c)) {
      // A word straddles the cut: it goes to the side that holds more of it.
      size_t a = c, b = c;
      while (a > 0 && !row.SpaceAt(a - 1)) --a;
      while (b < w && !row.SpaceAt(b)) ++b;
      c = b - c >= c - a ? a : b;
    }
    starts.push_back(std::max(c, starts.back()));
  }
  cells->clear();
  for (size_t k = 0; k < starts.size(); ++k) {
    const size_t from = row.Byte(starts[k]);
    const size_t to = k + 1 < starts.size() ? row.Byte(starts[k + 1]) : row.text().size();
    cells->push_back(Trim(row.text().substr(from, to - from)));
  }
}

}  // namespace caveman::internal
