#include "compressors/code.h"

#include <tree_sitter/api.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compressors/internal/grammars.h"
#include "compressors/text_util.h"
#include "compressors/internal/ts_budget.h"

namespace caveman {
namespace {

constexpr std::string_view kBraceReplacement = "{ /* caveman: body elided */ }";
constexpr std::string_view kPythonReplacement = "...";

enum class Language : uint8_t { kGo, kPython, kRust, kJava, kCpp, kC, kTypeScript };

// Node types whose `body` field is a candidate for elision (§5.4).
constexpr std::array<std::string_view, 12> kFunctionTypes = {
    "function_declaration", "method_declaration", "func_literal",        "function_definition",
    "method_definition",    "function",           "function_expression", "generator_function_declaration",
    "generator_function",   "arrow_function",     "function_item",       "constructor_declaration",
};

// Body node types that are blocks; anything else (an arrow function's expression body, a
// Rust closure's expression) is not elided.
constexpr std::array<std::string_view, 5> kBlockTypes = {
    "block", "statement_block", "constructor_body", "compound_statement", "try_statement",
};

template <size_t N>
bool OneOf(std::string_view value, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), value) != set.end();
}

bool Has(std::string_view text, std::string_view needle) { return text.find(needle) != std::string_view::npos; }

bool HasAny(std::string_view text, std::initializer_list<std::string_view> needles) {
  for (std::string_view n : needles) {
    if (Has(text, n)) return true;
  }
  return false;
}

// `word` where the byte before it is not a letter, digit or '_' (project rule: "#ifndef X" and
// "#undef X" hold "def " too, which made every C header with an include guard "Python").
bool HasWord(std::string_view text, std::string_view word) {
  for (size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    if (at == 0) return true;
    const char c = text[at - 1];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return true;
  }
  return false;
}

// The sniffing table of §5.4, first match wins.
std::optional<Language> SniffLanguage(std::string_view b) {
  if (Has(b, "package ") && Has(b, "func ")) return Language::kGo;
  if (HasWord(b, "def ") && Has(b, ":")) return Language::kPython;
  if (Has(b, "fn ") && HasAny(b, {"->", "impl ", "pub ", "let mut "})) return Language::kRust;
  if (Has(b, "public class ") || Has(b, "public static void main") ||
      (Has(b, "import ") && Has(b, "class ") && Has(b, ";") && !Has(b, "#include") &&
       HasAny(b, {"public ", "private ", "protected "}))) {
    return Language::kJava;
  }
  if (Has(b, "#include")) {
    if (HasAny(b, {"std::", "template<", "template <", "namespace ", "::", "public:", "private:"})) {
      return Language::kCpp;
    }
    return Language::kC;
  }
  if (HasAny(b, {"function ", "=>", "const ", "let ", "interface ", "class "})) {
    return Language::kTypeScript;
  }
  return std::nullopt;
}

// RAII owners for the tree-sitter C objects.
struct ParserDeleter {
  void operator()(TSParser* p) const { ts_parser_delete(p); }
};
struct TreeDeleter {
  void operator()(TSTree* t) const { ts_tree_delete(t); }
};
struct CursorOwner {
  explicit CursorOwner(TSNode root) : cursor(ts_tree_cursor_new(root)) {}
  ~CursorOwner() { ts_tree_cursor_delete(&cursor); }
  CursorOwner(const CursorOwner&) = delete;
  CursorOwner& operator=(const CursorOwner&) = delete;
  TSTreeCursor cursor;
};
using ParserPtr = std::unique_ptr<TSParser, ParserDeleter>;
using TreePtr = std::unique_ptr<TSTree, TreeDeleter>;

// Parses `text` with `language`; nullptr when the grammar cannot be loaded, parsing fails,
// or the tree contains an error or missing node (§5.4: any error node declines).
TreePtr ParseClean(TSParser* parser, const TSLanguage* language, std::string_view text) {
  if (!ts_parser_set_language(parser, language)) return nullptr;
  // tree-sitter lengths are uint32_t; larger inputs cannot be parsed at all.
  if (text.size() > UINT32_MAX) return nullptr;
  TreePtr tree(ts_parser_parse_string(parser, nullptr, text.data(), static_cast<uint32_t>(text.size())));
  if (tree == nullptr || ts_node_has_error(ts_tree_root_node(tree.get()))) return nullptr;
  return tree;
}

struct Replacement {
  uint32_t start;
  uint32_t end;
  std::string text;  // empty: the body replacement
};

// Comment elision (project extension, issue 16): a block of ≥ kMinCommentLines comment lines
// (adjacent comment nodes, nothing but whitespace between them) keeps its first sentence (at
// most kKeptCommentLines lines) and the rest becomes one comment line
// `… caveman: N comment lines elided …` in the block's own syntax, so headers that are mostly
// documentation shrink while every declaration stays.
constexpr uint32_t kMinCommentLines = 6;
constexpr size_t kKeptCommentLines = 2;

bool IsCommentType(std::string_view type) {
  return type == "comment" || type == "line_comment" || type == "block_comment";
}

// Lines of [start, end) of `text` (views, without LF).
std::vector<std::string_view> LinesOf(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

// Whether a comment line ends a sentence (or holds no words at all, like "/**").
bool EndsSentence(std::string_view line) {
  std::string_view t = internal::TrimRight(line);
  while (!t.empty() && (t.back() == '/' || t.back() == '*')) t.remove_suffix(1);  // " */"
  t = internal::TrimRight(t);
  return !t.empty() && (t.back() == '.' || t.back() == ':' || t.back() == '!' || t.back() == '?');
}

bool HasWords(std::string_view line) {
  for (char c : line) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) return true;
  }
  return false;
}

// The replacement of one comment block [start, end) whose first line starts at column
// `indent_col`, or nullopt when it is short or already carries a caveman marker.
// Every line of a line-comment block starts with `prefix` (after indentation).
bool AllLinesStartWith(const std::vector<std::string_view>& lines, std::string_view prefix) {
  for (std::string_view l : lines) {
    if (internal::TrimLeft(l).rfind(prefix, 0) != 0) return false;
  }
  return true;
}

std::optional<Replacement> ElideCommentBlock(std::string_view text, uint32_t start, uint32_t end, bool allow_hash) {
  const std::string_view block = text.substr(start, end - start);
  if (block.find("caveman: ") != std::string_view::npos) return std::nullopt;
  const std::vector<std::string_view> lines = LinesOf(block);
  if (lines.size() < kMinCommentLines) return std::nullopt;
  // The text itself must read as comments of the block's syntax: one /* … */ block, or line
  // comments all with the same marker (a parse with errors may call other text a comment).
  const std::string_view head = internal::TrimLeft(lines[0]);
  const bool slash_star = head.rfind("/*", 0) == 0 && internal::TrimRight(block).size() >= 4 &&
                          internal::TrimRight(block).substr(internal::TrimRight(block).size() - 2) == "*/";
  const bool slashes = AllLinesStartWith(lines, "//");
  const bool hashes = allow_hash && AllLinesStartWith(lines, "#");
  if (!slash_star && !slashes && !hashes) return std::nullopt;
  // The first sentence: lines up to one that ends a sentence, at most kKeptCommentLines lines
  // with words (a bare "/**" or "//" line does not count).
  size_t keep = 0, worded = 0;
  while (keep < lines.size()) {
    const bool words = HasWords(lines[keep]);
    ++keep;
    worded += words ? 1 : 0;
    if ((words && EndsSentence(lines[keep - 1])) || worded >= kKeptCommentLines) break;
  }
  if (keep + 2 > lines.size()) return std::nullopt;  // eliding one line gains nothing
  // The indentation of the block's second line (continuation lines of /* */ blocks are often
  // " * ..."), else of the first line's column.
  size_t line_start = start;
  while (line_start > 0 && text[line_start - 1] != '\n') --line_start;
  const std::string_view first_full = text.substr(line_start, start - line_start);
  const std::string indent(first_full.substr(0, first_full.find_first_not_of(" \t")));
  const std::string_view first = internal::TrimLeft(lines[0]);
  const size_t elided = lines.size() - keep;
  std::string marker = "\xE2\x80\xA6 caveman: " + std::to_string(elided) + " comment lines elided \xE2\x80\xA6";
  std::string out;
  for (size_t k = 0; k < keep; ++k) {
    if (k > 0) out += '\n';
    out.append(lines[k]);
  }
  if (slash_star) {
    // The kept lines may have closed the comment already only if the block ends there, which
    // was excluded above; close it after the marker.
    out += '\n' + indent + " * " + marker + " */";
  } else {
    std::string prefix;
    for (std::string_view p : {"///", "//!", "//", "#"}) {
      if (first.rfind(p, 0) == 0) {
        prefix = std::string(p);
        break;
      }
    }
    if (prefix.empty()) return std::nullopt;
    out += '\n' + indent + prefix + " " + marker;
  }
  return Replacement{start, end, std::move(out)};
}

// Collects the outermost function bodies in document order. Iterative (tree cursor), so
// deeply nested input cannot overflow the stack and wide nodes stay linear.
std::vector<Replacement> CollectBodies(TSNode root, std::string_view text, std::string_view replacement,
                                       bool keep_trailing_space, bool with_bodies, bool allow_hash) {
  std::vector<Replacement> out;
  CursorOwner owner(root);
  TSTreeCursor* cursor = &owner.cursor;
  // The comment block being gathered (adjacent comment nodes), flushed at its first gap.
  bool in_block = false;
  bool block_is_line = false;
  uint32_t block_start = 0, block_end = 0, block_end_row = 0;
  auto flush_block = [&]() {
    if (in_block) {
      if (auto r = ElideCommentBlock(text, block_start, block_end, allow_hash)) out.push_back(std::move(*r));
    }
    in_block = false;
  };
  while (true) {
    TSNode node = ts_tree_cursor_current_node(cursor);
    bool descend = true;
    if (IsCommentType(ts_node_type(node))) {
      const uint32_t start = ts_node_start_byte(node);
      const uint32_t end = ts_node_end_byte(node);
      const uint32_t row = ts_node_start_point(node).row;
      // Only line comments (`//`, `#`) join into blocks; each /* */ comment is a block of its own.
      const bool line_comment = text.substr(start, 2) == "//" || text.substr(start, 1) == "#";
      const bool adjacent = in_block && block_is_line && line_comment && row == block_end_row + 1 &&
                            internal::Trim(text.substr(block_end, start - block_end)).empty();
      if (!adjacent) {
        flush_block();
        in_block = true;
        block_start = start;
        block_is_line = line_comment;
      }
      block_end = end;
      block_end_row = ts_node_end_point(node).row;
      // A line comment's node may include its LF (tree-sitter C): the block ends before it.
      if (block_end > block_start && text[block_end - 1] == '\n') {
        --block_end;
        --block_end_row;
      }
      descend = false;
    } else if (ts_node_is_named(node) || ts_node_child_count(node) > 0) {
      // Any other node between comments ends the block (declarations separate doc blocks).
      if (ts_node_start_byte(node) >= block_end) flush_block();
    }
    if (with_bodies && ts_node_is_named(node) && OneOf(ts_node_type(node), kFunctionTypes)) {
      TSNode body = ts_node_child_by_field_name(node, "body", 4);
      if (!ts_node_is_null(body) && OneOf(ts_node_type(body), kBlockTypes)) {
        uint32_t start = ts_node_start_byte(body);
        uint32_t end = ts_node_end_byte(body);
        std::string_view body_text = text.substr(start, end - start);
        if (keep_trailing_space) {
          // A Python block may end after its last newline; replacing that newline with `...`
          // would glue the next statement onto this line. Trailing whitespace stays in place.
          end -= static_cast<uint32_t>(body_text.size() - internal::TrimRight(body_text).size());
        }
        if (internal::Trim(body_text) != replacement && end > start) {
          out.push_back({start, end, std::string()});
        }
        // Outermost bodies only: whatever is nested inside goes away with this body (or is
        // already elided).
        descend = false;
      }
    }
    if (descend && ts_tree_cursor_goto_first_child(cursor)) continue;
    while (!ts_tree_cursor_goto_next_sibling(cursor)) {
      if (!ts_tree_cursor_goto_parent(cursor)) {
        flush_block();
        return out;
      }
    }
  }
}

// Appends to `spans` (when not null) what each applied replacement dropped and where its
// marker lies in the output: a body whole; of a comment block only the lines after the kept
// first sentence (the output keeps those lines verbatim before the marker line).
std::string ApplyReplacements(std::string_view text, std::vector<Replacement> replacements,
                              std::string_view replacement, std::vector<ElidedSpan>* spans = nullptr) {
  std::stable_sort(replacements.begin(), replacements.end(),
                   [](const Replacement& a, const Replacement& b) { return a.start < b.start; });
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  for (const Replacement& r : replacements) {
    if (r.start < pos) continue;  // overlaps an earlier replacement
    out.append(text.substr(pos, r.start - pos));
    const size_t view_start = out.size();
    out.append(r.text.empty() ? replacement : std::string_view(r.text));
    if (spans != nullptr) {
      ElidedSpan span;
      if (r.text.empty()) {
        span = {r.start, r.end, view_start, out.size(), "body", 1};
      } else {
        // r.text = the kept lines of the block, LF, the marker line; the original block's
        // lines from the same line on are what the marker replaced.
        const size_t marker_nl = r.text.rfind('\n');
        const size_t kept = marker_nl == std::string::npos ? 0 : marker_nl + 1;
        const std::string_view block = text.substr(r.start, r.end - r.start);
        const uint64_t dropped_from = kept <= block.size() ? r.start + kept : r.end;
        const std::string_view dropped = text.substr(dropped_from, r.end - dropped_from);
        const uint64_t lines = static_cast<uint64_t>(std::count(dropped.begin(), dropped.end(), '\n')) + 1;
        span = {dropped_from, r.end, view_start + kept, out.size(), "comment", lines};
      }
      spans->push_back(std::move(span));
    }
    pos = r.end;
  }
  out.append(text.substr(pos));
  return out;
}

class CodeCompressor final : public InMemoryCompressor {
 public:
  std::string_view content_type() const override { return "code"; }
  // Working set (issue 15 ceiling): the output and the replacements (1 byte per byte) here;
  // the tree-sitter trees, from a few bytes per source byte (comment-heavy headers) to 66
  // (dense TypeScript), are metered while parsing instead (TreeSitterBudget below).
  MemoryModel memory_model() const override { return {.per_byte = 1, .per_line = 0}; }

 protected:
  std::optional<std::string> TransformText(std::string_view body, std::string_view /*query*/,
                                           TransformMeta* meta) const override {
    std::vector<ElidedSpan>* spans = meta != nullptr ? &meta->elided : nullptr;
    if (spans != nullptr) spans->clear();
    std::optional<Language> language = SniffLanguage(body);
    if (!language) return std::nullopt;

    // The ceiling's allowance less this compressor's own model: what the trees may hold.
    internal::TreeSitterBudget budget(
        static_cast<uint64_t>((kWorkingSetPerInputByte - memory_model().per_byte) * static_cast<double>(body.size())) +
        kWorkingSetFloor);
    auto over_budget = [&]() -> std::optional<std::string> {
      if (budget.exceeded() && meta != nullptr) meta->over_memory_ceiling = true;
      if (spans != nullptr) spans->clear();
      return std::nullopt;
    };
    ParserPtr parser(ts_parser_new());
    if (parser == nullptr) return std::nullopt;
    ts_parser_set_cancellation_flag(parser.get(), budget.flag());
    const TSLanguage* grammar = nullptr;
    TreePtr tree;
    switch (*language) {
      case Language::kGo: grammar = tree_sitter_go(); break;
      case Language::kPython: grammar = tree_sitter_python(); break;
      case Language::kRust: grammar = tree_sitter_rust(); break;
      case Language::kJava: grammar = tree_sitter_java(); break;
      case Language::kCpp: grammar = tree_sitter_cpp(); break;
      case Language::kC: grammar = tree_sitter_c(); break;
      case Language::kTypeScript: grammar = tree_sitter_typescript(); break;
    }
    tree = ParseClean(parser.get(), grammar, body);
    if (tree == nullptr && *language == Language::kTypeScript) {
      grammar = tree_sitter_tsx();
      tree = ParseClean(parser.get(), grammar, body);
    }
    if (budget.exceeded()) return over_budget();
    const bool python = *language == Language::kPython;
    const std::string_view replacement = python ? kPythonReplacement : kBraceReplacement;
    if (tree == nullptr) {
      // The grammar does not parse it cleanly (unknown macros in real headers, say): bodies
      // stay (§5.4 declines), but long /* */ and // comment blocks may still go — only
      // comment text is replaced, every code byte stays where it was (project extension,
      // docs/DECISIONS.md). Not for Python: `#` starts preprocessor lines in the C headers the
      // §5.4 sniffing calls Python (`#undef ` holds "def ").
      if (python) return std::nullopt;
      if (*language == Language::kTypeScript) grammar = tree_sitter_typescript();
      if (!ts_parser_set_language(parser.get(), grammar) || body.size() > UINT32_MAX) return std::nullopt;
      TreePtr rough(ts_parser_parse_string(parser.get(), nullptr, body.data(), static_cast<uint32_t>(body.size())));
      if (rough == nullptr) return over_budget();
      std::vector<Replacement> comments =
          CollectBodies(ts_tree_root_node(rough.get()), body, replacement, python, /*with_bodies=*/false,
                        /*allow_hash=*/false);
      if (comments.empty()) return std::nullopt;
      return ApplyReplacements(body, std::move(comments), replacement, spans);
    }

    std::vector<Replacement> bodies =
        CollectBodies(ts_tree_root_node(tree.get()), body, replacement, python, /*with_bodies=*/true,
                      /*allow_hash=*/python);
    if (bodies.empty()) return std::nullopt;
    std::string out = ApplyReplacements(body, std::move(bodies), replacement, spans);

    // The output must itself be valid code of the same grammar, else the model would be
    // shown something the original was not (and the second pass could not decline cleanly).
    if (ParseClean(parser.get(), grammar, out) == nullptr) return over_budget();
    return out;
  }
};

}  // namespace

std::unique_ptr<Compressor> NewCodeCompressor() { return std::make_unique<CodeCompressor>(); }

}  // namespace caveman
