#include "compressors/html.h"

#include <gumbo.h>

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <re2/re2.h>

#include "compressors/text_util.h"

namespace caveman {
namespace {

using internal::Trim;

bool IsElement(const GumboNode* n) { return n->type == GUMBO_NODE_ELEMENT; }
GumboTag TagOf(const GumboNode* n) { return n->v.element.tag; }

// Elements removed with their subtrees before anything else looks at the page.
bool IsRemoved(const GumboNode* n) {
  if (n->type == GUMBO_NODE_TEMPLATE) return true;
  if (!IsElement(n)) return false;
  switch (TagOf(n)) {
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_NOSCRIPT:
    case GUMBO_TAG_SVG:
    case GUMBO_TAG_IFRAME:
    case GUMBO_TAG_FORM:
    case GUMBO_TAG_BUTTON:
    case GUMBO_TAG_INPUT:
    case GUMBO_TAG_TEMPLATE: return true;
    default: return false;
  }
}

bool IsText(const GumboNode* n) {
  return n->type == GUMBO_NODE_TEXT || n->type == GUMBO_NODE_WHITESPACE || n->type == GUMBO_NODE_CDATA;
}

bool IsHeading(GumboTag t) {
  return t == GUMBO_TAG_H1 || t == GUMBO_TAG_H2 || t == GUMBO_TAG_H3 || t == GUMBO_TAG_H4 || t == GUMBO_TAG_H5 ||
         t == GUMBO_TAG_H6;
}

bool IsScored(GumboTag t) {
  return t == GUMBO_TAG_P || t == GUMBO_TAG_PRE || t == GUMBO_TAG_TD || t == GUMBO_TAG_BLOCKQUOTE ||
         t == GUMBO_TAG_LI || IsHeading(t);
}

bool IsContainer(GumboTag t) {
  return t == GUMBO_TAG_DIV || t == GUMBO_TAG_ARTICLE || t == GUMBO_TAG_MAIN || t == GUMBO_TAG_SECTION ||
         t == GUMBO_TAG_TD;
}

bool IsBlock(GumboTag t) {
  switch (t) {
    case GUMBO_TAG_P:
    case GUMBO_TAG_DIV:
    case GUMBO_TAG_BR:
    case GUMBO_TAG_LI:
    case GUMBO_TAG_UL:
    case GUMBO_TAG_OL:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_BLOCKQUOTE:
    case GUMBO_TAG_SECTION:
    case GUMBO_TAG_ARTICLE:
    case GUMBO_TAG_TR:
    case GUMBO_TAG_TABLE:
    case GUMBO_TAG_HR: return true;
    default: return IsHeading(t);
  }
}

const GumboVector* ChildrenOf(const GumboNode* n) {
  if (n->type == GUMBO_NODE_DOCUMENT) return &n->v.document.children;
  if (n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE) {
    return &n->v.element.children;
  }
  return nullptr;
}

template <class F>
void ForEachChild(const GumboNode* n, F&& f) {
  const GumboVector* c = ChildrenOf(n);
  if (c == nullptr) return;
  for (unsigned i = 0; i < c->length; ++i) {
    const GumboNode* child = static_cast<const GumboNode*>(c->data[i]);
    if (!IsRemoved(child)) f(child);
  }
}

// The walks below recurse once per element level; pages nested deeper than this are declined
// rather than risking the stack (real pages stay far below it).
constexpr size_t kMaxDomDepth = 5000;

// Gumbo's tree construction costs O(elements × open-element depth) (scope checks walk the
// open-element stack): 50,000 nested <div> take 6 s, 400,000 take 7.5 min. So the nesting is
// estimated with one linear scan before parsing, and markup estimated deeper than this is
// declined (the original passes through). The estimate keeps a stack of open element names
// (an end tag closes the nearest open element of its name; stray end tags close nothing),
// ignoring void elements, self-closing tags, elements whose end tag is optional (p, li, td, …:
// the parser closes them itself), comments and script/style text; real pages stay far below.
constexpr size_t kMaxEstimatedDepth = 1000;

// Gumbo checks each new attribute against the element's earlier ones (quadratic: one element
// with 80,000 attributes took 17 s, 300,000 minutes). Markup with a tag carrying more than this
// many attributes is declined after one linear scan (issue 15); real pages stay far below.
constexpr size_t kMaxAttributesPerTag = 1000;

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAlnum(char c) { return IsLetter(c) || (c >= '0' && c <= '9'); }

bool NeverNests(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "area",     "base",  "br",    "col",   "embed",    "hr",      "img", "input", "link", "meta", "source",
      "track",    "wbr",   "param", "p",     "li",       "dt",      "dd",  "tr",    "td",   "th",   "option",
      "optgroup", "thead", "tbody", "tfoot", "colgroup", "caption", "rb",  "rt",    "rp",   "rtc"};
  for (std::string_view n : kNames) {
    if (internal::EqualsAsciiIgnoreCase(name, n)) return true;
  }
  return false;
}

// True if some start tag has more than `limit` attributes. Counts attribute names inside each
// `<letter…>` (a name starts after whitespace or '/'; quoted values are skipped, so '>' or
// spaces inside them do not count). Linear: every byte is looked at once.
bool MoreAttributesThan(std::string_view html, size_t limit) {
  size_t i = 0;
  const size_t n = html.size();
  while ((i = html.find('<', i)) != std::string_view::npos) {
    ++i;
    if (i >= n || !IsLetter(html[i])) continue;
    while (i < n && html[i] != '>' && html[i] != ' ' && html[i] != '\t' && html[i] != '\n' && html[i] != '\r' &&
           html[i] != '\f' && html[i] != '/') {
      ++i;  // tag name
    }
    size_t count = 0;
    bool after_space = false;
    while (i < n && html[i] != '>') {
      const char c = html[i];
      if (c == '"' || c == '\'') {
        const size_t close = html.find(c, i + 1);
        if (close == std::string_view::npos) return false;
        i = close + 1;
        after_space = false;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/') {
        after_space = true;
      } else if (after_space && c != '=') {
        if (++count > limit) return true;
        after_space = false;
      } else {
        after_space = false;
      }
      ++i;
    }
  }
  return false;
}

bool EstimatedDeeperThan(std::string_view html, size_t limit) {
  // Open elements, innermost last. An end tag closes the nearest open element of its name
  // within the top kCloseSearch entries and everything above it, as the parser does; stray end
  // tags (no such open element) close nothing, so `<div></b>` repeated still counts as nesting.
  // Searching only near the top keeps the scan linear; a match deeper down is missed, which
  // only overestimates (declines more), never lets deep markup through.
  constexpr size_t kCloseSearch = 64;
  std::vector<std::string_view> open;
  size_t i = 0;
  while ((i = html.find('<', i)) != std::string_view::npos) {
    if (html.compare(i, 4, "<!--") == 0) {
      size_t end = html.find("-->", i + 4);
      if (end == std::string_view::npos) return false;
      i = end + 3;
      continue;
    }
    bool closing = i + 1 < html.size() && html[i + 1] == '/';
    size_t name_at = i + (closing ? 2 : 1);
    if (name_at >= html.size() || !IsLetter(html[name_at])) {
      ++i;
      continue;
    }
    size_t name_end = name_at;
    while (name_end < html.size() && IsAlnum(html[name_end])) ++name_end;
    std::string_view name = html.substr(name_at, name_end - name_at);
    size_t tag_end = html.find('>', name_end);
    if (tag_end == std::string_view::npos) return false;
    bool self_closing = html[tag_end - 1] == '/';
    i = tag_end + 1;
    if (closing) {
      if (NeverNests(name)) continue;
      for (size_t k = open.size(); k > 0 && open.size() - k < kCloseSearch; --k) {
        if (internal::EqualsAsciiIgnoreCase(open[k - 1], name)) {
          open.resize(k - 1);
          break;
        }
      }
    } else if (internal::EqualsAsciiIgnoreCase(name, "script") || internal::EqualsAsciiIgnoreCase(name, "style")) {
      // Raw text: skip to the matching end tag.
      std::string_view raw = internal::EqualsAsciiIgnoreCase(name, "script") ? "script" : "style";
      size_t end = html.find("</", i);
      while (end != std::string_view::npos && !internal::EqualsAsciiIgnoreCase(html.substr(end + 2, raw.size()), raw)) {
        end = html.find("</", end + 2);
      }
      if (end == std::string_view::npos) return false;
      i = end;
    } else if (!self_closing && !NeverNests(name)) {
      open.push_back(name);
      if (open.size() > limit) return true;
    }
  }
  return false;
}

bool DeeperThan(const GumboNode* root, size_t limit) {
  std::vector<std::pair<const GumboNode*, size_t>> stack = {{root, 0}};
  while (!stack.empty()) {
    auto [n, d] = stack.back();
    stack.pop_back();
    if (d > limit) return true;
    const GumboVector* c = ChildrenOf(n);
    if (c == nullptr) continue;
    for (unsigned i = 0; i < c->length; ++i) {
      stack.push_back({static_cast<const GumboNode*>(c->data[i]), d + 1});
    }
  }
  return false;
}

const GumboNode* FindBody(const GumboNode* n) {
  if (IsElement(n) && TagOf(n) == GUMBO_TAG_BODY) return n;
  const GumboNode* found = nullptr;
  ForEachChild(n, [&](const GumboNode* c) {
    if (!found) found = FindBody(c);
  });
  return found;
}

// The page below body flattened: every node's text content is text_[begin, end).
struct Flat {
  std::string text;
  struct Range {
    size_t begin, end;
  };
  std::unordered_map<const GumboNode*, Range> ranges;
  std::vector<const GumboNode*> elements;  // document (pre)order

  void Build(const GumboNode* n) {
    size_t begin = text.size();
    if (IsText(n)) {
      text += n->v.text.text;
    } else if (IsElement(n)) {
      elements.push_back(n);
      ForEachChild(n, [&](const GumboNode* c) { Build(c); });
    }
    ranges[n] = {begin, text.size()};
  }
  std::string_view Of(const GumboNode* n) const {
    Range r = ranges.at(n);
    return std::string_view(text).substr(r.begin, r.end - r.begin);
  }
};

const RE2& PositiveClass() {
  static const RE2* re = new RE2("(?i)(article|body|content|entry|main|page|post|story|text|blog)");
  return *re;
}
const RE2& NegativeClass() {
  static const RE2* re = new RE2(
      "(?i)(comment|nav|sidebar|footer|header|menu|promo|banner|ad-|share|social|related|"
      "breadcrumb|cookie|popup|modal|widget)");
  return *re;
}

int ClassWeight(const GumboNode* n) {
  std::string s;
  const GumboVector& attrs = n->v.element.attributes;
  for (unsigned i = 0; i < attrs.length; ++i) {
    const GumboAttribute* a = static_cast<const GumboAttribute*>(attrs.data[i]);
    std::string_view name = a->name;
    if (name == "class" || name == "id") {
      s += ' ';
      s += a->value;
    }
  }
  int w = 0;
  if (RE2::PartialMatch(s, PositiveClass())) w += 25;
  if (RE2::PartialMatch(s, NegativeClass())) w -= 25;
  return w;
}

// Total TRIM length of the text of the outermost `a` descendants of n.
size_t AnchorTextLength(const GumboNode* n, const Flat& flat) {
  size_t total = 0;
  ForEachChild(n, [&](const GumboNode* c) {
    if (!IsElement(c)) return;
    if (TagOf(c) == GUMBO_TAG_A) {
      total += Trim(flat.Of(c)).size();
    } else {
      total += AnchorTextLength(c, flat);
    }
  });
  return total;
}

class Renderer {
 public:
  explicit Renderer(const Flat& flat) : flat_(flat) {}
  std::string out;
  std::vector<std::string> pres;

  void Render(const GumboNode* n) {
    if (IsText(n)) {
      out += n->v.text.text;
      return;
    }
    if (!IsElement(n)) return;
    GumboTag t = TagOf(n);
    if (t == GUMBO_TAG_PRE) {
      std::string_view body = flat_.Of(n);
      while (!body.empty() && body.front() == '\n') body.remove_prefix(1);
      while (!body.empty() && body.back() == '\n') body.remove_suffix(1);
      out += '\n';
      // NUL never survives HTML parsing (it becomes U+FFFD), so it cannot clash with text.
      out += '\0';
      out += std::to_string(pres.size());
      out += '\0';
      out += '\n';
      pres.emplace_back(body);
      return;
    }
    const char* sep = IsBlock(t) ? "\n" : " ";
    out += sep;
    ForEachChild(n, [&](const GumboNode* c) { Render(c); });
    out += sep;
  }

 private:
  const Flat& flat_;
};

// The whitespace collapse of §5.8 (placeholders are not White_Space, so they survive).
std::string Collapse(std::string_view s) {
  std::string joined;
  size_t start = 0;
  bool first = true;
  while (start <= s.size()) {
    size_t nl = s.find('\n', start);
    if (nl == std::string_view::npos) nl = s.size();
    std::string line;
    bool in_run = false;
    for (size_t i = start; i < nl; ++i) {
      char c = s[i];
      if (c == ' ' || c == '\t') {
        if (!in_run) line += ' ';
        in_run = true;
      } else {
        line += c;
        in_run = false;
      }
    }
    if (!first) joined += '\n';
    first = false;
    joined += Trim(line);
    start = nl + 1;
  }
  // Lines are already trimmed, so \n[ \t]*\n[ \t]*(\n[ \t]*)* is a run of two or more LFs.
  std::string out;
  for (size_t i = 0; i < joined.size();) {
    if (joined[i] == '\n') {
      size_t j = i;
      while (j < joined.size() && joined[j] == '\n') ++j;
      out += (j - i >= 2) ? "\n\n" : "\n";
      i = j;
    } else {
      out += joined[i++];
    }
  }
  return std::string(Trim(out));
}

std::optional<std::string> Extract(std::string_view input) {
  if (Trim(input).empty() || !internal::IsValidUtf8(input)) return std::nullopt;
  // Gumbo copies the open-element stack into every recorded parse error, which is quadratic on
  // deeply nested, unclosed markup; the errors are not needed, so none are recorded.
  if (EstimatedDeeperThan(input, kMaxEstimatedDepth)) return std::nullopt;
  if (MoreAttributesThan(input, kMaxAttributesPerTag)) return std::nullopt;
  GumboOptions options = kGumboDefaultOptions;
  options.max_errors = 0;
  GumboOutput* doc = gumbo_parse_with_options(&options, input.data(), input.size());
  struct Free {
    GumboOutput* d;
    ~Free() { gumbo_destroy_output(&kGumboDefaultOptions, d); }
  } free_doc{doc};

  if (DeeperThan(doc->document, kMaxDomDepth)) return std::nullopt;
  const GumboNode* body = FindBody(doc->document);
  if (body == nullptr) return std::nullopt;
  Flat flat;
  flat.Build(body);

  struct Score {
    long long raw = 0;
    bool credited = false;
  };
  std::unordered_map<const GumboNode*, Score> scores;
  for (const GumboNode* e : flat.elements) {
    if (!IsScored(TagOf(e))) continue;
    std::string_view text = flat.Of(e);
    if (Trim(text).size() < 25) continue;
    long long base = 1;
    for (char c : text) base += c == ',';
    base += std::min<long long>(static_cast<long long>(text.size() / 100), 3);
    for (const GumboNode* a = e->parent; a != nullptr && a != body; a = a->parent) {
      if (!IsElement(a) || !IsContainer(TagOf(a))) continue;
      Score& s = scores[a];
      if (!s.credited) {
        s.credited = true;
        s.raw += ClassWeight(a);
      }
      s.raw += base;
    }
  }

  const GumboNode* winner = nullptr;
  long long best = 0;
  size_t winner_t = 0, winner_a = 0;
  for (const GumboNode* e : flat.elements) {
    auto it = scores.find(e);
    if (it == scores.end() || it->second.raw <= 0) continue;
    long long raw = it->second.raw;
    size_t t = Trim(flat.Of(e)).size();
    size_t a = AnchorTextLength(e, flat);
    long long final_score = t == 0 ? raw
                                   : static_cast<long long>(static_cast<__int128>(raw) *
                                                            (static_cast<long long>(t) - static_cast<long long>(a)) /
                                                            static_cast<long long>(t));
    if (final_score > best) {
      best = final_score;
      winner = e;
      winner_t = t;
      winner_a = a;
    }
  }
  if (winner == nullptr || winner == body || winner_t == 0 || 2 * winner_a >= winner_t) {
    return std::nullopt;
  }

  Renderer r(flat);
  r.Render(winner);
  std::string collapsed = Collapse(r.out);
  std::string text;
  text.reserve(collapsed.size());
  for (size_t i = 0; i < collapsed.size(); ++i) {
    if (collapsed[i] != '\0') {
      text += collapsed[i];
      continue;
    }
    size_t end = collapsed.find('\0', i + 1);
    size_t idx = std::stoul(collapsed.substr(i + 1, end - i - 1));
    text += r.pres[idx];
    i = end;
  }
  if (text.size() < 200 || text.size() >= input.size()) return std::nullopt;
  return text;
}

class HtmlCompressor final : public InMemoryCompressor {
 public:
  std::string_view content_type() const override { return "html"; }
  // Working set (issue 15 ceiling; scripts/memory_table.py --shapes): the gumbo DOM,
  // 12.8 bytes per byte of fixtures/html/docs_page.in.
  MemoryModel memory_model() const override { return {.per_byte = 14, .per_line = 0}; }

 protected:
  std::optional<std::string> TransformText(std::string_view body, std::string_view, TransformMeta*) const override {
    return Extract(body);
  }
};

}  // namespace

std::unique_ptr<Compressor> NewHtmlCompressor() { return std::make_unique<HtmlCompressor>(); }

}  // namespace caveman
