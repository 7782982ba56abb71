// Presentation layers of §3.2: line-number gutters and <file> wrappers.
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "compressors/detect.h"
#include "compressors/text_util.h"

namespace caveman {
namespace {

constexpr int kMaxLayers = 4;
constexpr size_t kMinGutterLines = 8;
constexpr int kMaxGutterDigits = 12;

struct GutterLayer {
  // Content of every line with the gutter removed, joined by LF (= the unwrapped body
  // without its trailing LF). Lines are split again only if the output is re-wrapped.
  std::string text;
  std::vector<uint64_t> numbers;  // number of every line (blank lines inherit)

  size_t size() const { return numbers.size(); }
};

struct FileLayer {
  std::string prefix;  // up to and including the opening tag's '>'
  std::string suffix;  // "</file>" plus trailing whitespace
};

using Layer = std::variant<GutterLayer, FileLayer>;

// §3.2 split: a final empty piece (trailing LF) is dropped and remembered.
std::vector<std::string_view> SplitLines(std::string_view s, bool* trailing) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t nl = s.find('\n', start);
    if (nl == std::string_view::npos) {
      out.push_back(s.substr(start));
      break;
    }
    out.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  *trailing = out.size() > 1 && out.back().empty();
  if (*trailing) out.pop_back();
  return out;
}

// Parses the gutter of one line. Returns false if the line has none.
bool ParseGutterLine(std::string_view line, uint64_t* number, std::string_view* content) {
  size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  size_t d0 = i;
  uint64_t n = 0;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9') {
    if (i - d0 >= static_cast<size_t>(kMaxGutterDigits)) return false;
    n = n * 10 + static_cast<uint64_t>(line[i] - '0');
    ++i;
  }
  if (i == d0) return false;
  std::string_view rest = line.substr(i);
  if (rest.empty()) {
    *content = {};
  } else if (rest[0] == '\t') {
    *content = rest.substr(1);
  } else if (rest.substr(0, 3) == " | ") {
    *content = rest.substr(3);
  } else if (rest.substr(0, 2) == ": ") {
    *content = rest.substr(2);
  } else {
    return false;
  }
  *number = n;
  return true;
}

bool TryGutter(std::string_view input, std::string* body, GutterLayer* layer) {
  // §3.2 split: a final empty piece (trailing LF) is dropped and remembered.
  bool trailing = input.size() > 0 && input.back() == '\n';
  std::string_view rest = trailing ? input.substr(0, input.size() - 1) : input;
  GutterLayer g;
  g.text.reserve(rest.size());
  uint64_t prev = 0;
  bool have_prev = false;
  size_t numbered = 0;
  size_t start = 0;
  // Lines are parsed one by one so that a body without a gutter fails at its first line.
  for (;;) {
    size_t nl = rest.find('\n', start);
    std::string_view line = rest.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    uint64_t n;
    std::string_view content;
    if (ParseGutterLine(line, &n, &content)) {
      if (have_prev && n <= prev) return false;
      prev = n;
      have_prev = true;
      ++numbered;
    } else {
      if (!internal::Trim(line).empty()) return false;
      content = {};
      n = prev;
    }
    if (!g.numbers.empty()) g.text.push_back('\n');
    g.text.append(content);
    g.numbers.push_back(n);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  if (g.size() < kMinGutterLines || numbered < kMinGutterLines) return false;
  *body = g.text;
  if (trailing) body->push_back('\n');
  *layer = std::move(g);
  return true;
}

size_t CountOccurrences(std::string_view s, std::string_view needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string_view::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

bool TryFile(std::string_view input, std::string* body, FileLayer* layer) {
  std::string_view left = internal::TrimLeft(input);
  std::string_view t = internal::TrimRight(left);
  if (t.size() < 9 || t.substr(0, 5) != "<file") return false;
  char sixth = t[5];
  if (sixth != ' ' && sixth != '\t' && sixth != '>') return false;
  if (!internal::EndsWith(t, "</file>")) return false;
  if (CountOccurrences(t, "<file") != 1 || CountOccurrences(t, "</file>") != 1) return false;
  size_t close = t.size() - 7;  // start of "</file>"
  // The opening tag ends at the first '>' outside quotes.
  char quote = 0;
  size_t gt = std::string_view::npos;
  for (size_t i = 5; i < t.size(); ++i) {
    char c = t[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '>') {
      gt = i;
      break;
    }
  }
  if (gt == std::string_view::npos || gt >= close) return false;
  std::string_view inner = t.substr(gt + 1, close - gt - 1);
  if (internal::Trim(inner).empty()) return false;
  size_t lead = input.size() - left.size();
  size_t t_end = lead + t.size();
  layer->prefix.assign(input.substr(0, lead + gt + 1));
  layer->suffix.assign(input.substr(lead + close, input.size() - (lead + close)));
  (void)t_end;
  body->assign(inner);
  return true;
}

std::string RestoreGutter(const GutterLayer& g, std::string_view output) {
  bool trailing;
  std::vector<std::string_view> lines = SplitLines(output, &trailing);
  if (g.size() == 0) return std::string(output);
  bool unused;
  std::vector<std::string_view> source = SplitLines(g.text, &unused);
  source.resize(g.size());  // "" + LF… splits like the original lines
  std::unordered_map<std::string_view, std::vector<size_t>> positions;
  positions.reserve(g.size());
  for (size_t i = 0; i < g.size(); ++i) positions[source[i]].push_back(i);
  const size_t last = g.size() - 1;
  size_t cursor = 0, tracked = 0, traced = 0;
  std::vector<uint64_t> numbers(lines.size());
  for (size_t k = 0; k < lines.size(); ++k) {
    uint64_t n = g.numbers[std::min(cursor, last)];
    if (!internal::Trim(lines[k]).empty()) {
      ++tracked;
      auto it = positions.find(lines[k]);
      if (it != positions.end()) {
        const std::vector<size_t>& pos = it->second;
        auto p = std::lower_bound(pos.begin(), pos.end(), cursor);
        if (p != pos.end()) {
          n = g.numbers[*p];
          cursor = *p + 1;
          ++traced;
        }
      }
    }
    numbers[k] = n;
  }
  // Re-serialized content (JSON) no longer lines up with the source: drop the gutter.
  if (tracked > 0 && traced * 2 < tracked) return std::string(output);
  std::string out;
  out.reserve(output.size() + lines.size() * 8);
  for (size_t k = 0; k < lines.size(); ++k) {
    if (k > 0) out.push_back('\n');
    out.append(std::to_string(numbers[k]));
    out.push_back('\t');
    out.append(lines[k]);
  }
  if (trailing) out.push_back('\n');
  return out;
}

}  // namespace

struct PresentationLayers::Impl {
  std::vector<Layer> layers;  // outermost first
};

PresentationLayers::PresentationLayers() = default;
PresentationLayers::~PresentationLayers() = default;
PresentationLayers::PresentationLayers(PresentationLayers&&) noexcept = default;
PresentationLayers& PresentationLayers::operator=(PresentationLayers&&) noexcept = default;

bool PresentationLayers::empty() const { return impl_ == nullptr || impl_->layers.empty(); }

std::string PresentationLayers::Rewrap(std::string_view output) const {
  std::string cur(output);
  if (empty()) return cur;
  for (auto it = impl_->layers.rbegin(); it != impl_->layers.rend(); ++it) {
    if (const auto* g = std::get_if<GutterLayer>(&*it)) {
      cur = RestoreGutter(*g, cur);
    } else {
      const auto& f = std::get<FileLayer>(*it);
      cur = f.prefix + cur + f.suffix;
    }
  }
  return cur;
}

bool MayHavePresentationLayer(std::string_view prefix) {
  std::string_view left = internal::TrimLeft(prefix);
  if (left.empty()) return true;  // only whitespace seen so far: cannot rule anything out
  if (left.size() < 5)
    return std::string_view("<file").substr(0, left.size()) == left || (left[0] >= '0' && left[0] <= '9');
  if (left.substr(0, 5) == "<file") return true;
  // A gutter starts with blank lines or a numbered line.
  size_t start = 0;
  while (start < prefix.size()) {
    size_t nl = prefix.find('\n', start);
    std::string_view line = prefix.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (!internal::Trim(line).empty()) {
      uint64_t n;
      std::string_view content;
      if (ParseGutterLine(line, &n, &content)) return true;
      // The prefix may end inside a long run of digits: be conservative.
      if (nl == std::string_view::npos) {
        size_t i = 0;
        while (i < line.size() && line[i] == ' ') ++i;
        while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
        return i == line.size() || line.substr(i) == " " || line.substr(i) == " |" || line.substr(i) == ":";
      }
      return false;
    }
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return true;
}

Unwrapped Unwrap(std::string_view input) {
  Unwrapped result;
  result.body.assign(input);
  for (int k = 0; k < kMaxLayers; ++k) {
    std::string inner;
    GutterLayer g;
    FileLayer f;
    if (TryGutter(result.body, &inner, &g)) {
      if (!result.layers.impl_) result.layers.impl_ = std::make_unique<PresentationLayers::Impl>();
      result.layers.impl_->layers.emplace_back(std::move(g));
    } else if (TryFile(result.body, &inner, &f)) {
      if (!result.layers.impl_) result.layers.impl_ = std::make_unique<PresentationLayers::Impl>();
      result.layers.impl_->layers.emplace_back(std::move(f));
    } else {
      break;
    }
    result.body = std::move(inner);
  }
  return result;
}

}  // namespace caveman
