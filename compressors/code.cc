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
#include "compressors/internal/text_util.h"

namespace caveman {
namespace {

constexpr std::string_view kBraceReplacement = "{ /* caveman: body elided */ }";
constexpr std::string_view kPythonReplacement = "...";

enum class Language : uint8_t { kGo, kPython, kRust, kJava, kCpp, kC, kTypeScript };

// Node types whose `body` field is a candidate for elision (§5.4).
constexpr std::array<std::string_view, 12> kFunctionTypes = {
    "function_declaration",  "method_declaration",
    "func_literal",          "function_definition",
    "method_definition",     "function",
    "function_expression",   "generator_function_declaration",
    "generator_function",    "arrow_function",
    "function_item",         "constructor_declaration",
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

bool Has(std::string_view text, std::string_view needle) {
  return text.find(needle) != std::string_view::npos;
}

bool HasAny(std::string_view text, std::initializer_list<std::string_view> needles) {
  for (std::string_view n : needles) {
    if (Has(text, n)) return true;
  }
  return false;
}

// The sniffing table of §5.4, first match wins.
std::optional<Language> SniffLanguage(std::string_view b) {
  if (Has(b, "package ") && Has(b, "func ")) return Language::kGo;
  if (Has(b, "def ") && Has(b, ":")) return Language::kPython;
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
  TreePtr tree(ts_parser_parse_string(parser, nullptr, text.data(),
                                      static_cast<uint32_t>(text.size())));
  if (tree == nullptr || ts_node_has_error(ts_tree_root_node(tree.get()))) return nullptr;
  return tree;
}

struct Replacement {
  uint32_t start;
  uint32_t end;
};

// Collects the outermost function bodies in document order. Iterative (tree cursor), so
// deeply nested input cannot overflow the stack and wide nodes stay linear.
std::vector<Replacement> CollectBodies(TSNode root, std::string_view text,
                                       std::string_view replacement, bool keep_trailing_space) {
  std::vector<Replacement> out;
  CursorOwner owner(root);
  TSTreeCursor* cursor = &owner.cursor;
  while (true) {
    TSNode node = ts_tree_cursor_current_node(cursor);
    bool descend = true;
    if (ts_node_is_named(node) && OneOf(ts_node_type(node), kFunctionTypes)) {
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
          out.push_back({start, end});
        }
        // Outermost bodies only: whatever is nested inside goes away with this body (or is
        // already elided).
        descend = false;
      }
    }
    if (descend && ts_tree_cursor_goto_first_child(cursor)) continue;
    while (!ts_tree_cursor_goto_next_sibling(cursor)) {
      if (!ts_tree_cursor_goto_parent(cursor)) return out;
    }
  }
}

std::string ApplyReplacements(std::string_view text, std::vector<Replacement> replacements,
                              std::string_view replacement) {
  std::stable_sort(replacements.begin(), replacements.end(),
                   [](const Replacement& a, const Replacement& b) { return a.start < b.start; });
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  for (const Replacement& r : replacements) {
    if (r.start < pos) continue;  // overlaps an earlier replacement
    out.append(text.substr(pos, r.start - pos));
    out.append(replacement);
    pos = r.end;
  }
  out.append(text.substr(pos));
  return out;
}

class CodeCompressor final : public InMemoryCompressor {
 public:
  std::string_view content_type() const override { return "code"; }

 protected:
  std::optional<std::string> TransformText(std::string_view body, std::string_view /*query*/,
                                           TransformMeta* /*meta*/) const override {
    std::optional<Language> language = SniffLanguage(body);
    if (!language) return std::nullopt;

    ParserPtr parser(ts_parser_new());
    if (parser == nullptr) return std::nullopt;
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
    if (tree == nullptr) return std::nullopt;

    const bool python = *language == Language::kPython;
    const std::string_view replacement = python ? kPythonReplacement : kBraceReplacement;
    std::vector<Replacement> bodies =
        CollectBodies(ts_tree_root_node(tree.get()), body, replacement, python);
    if (bodies.empty()) return std::nullopt;
    std::string out = ApplyReplacements(body, std::move(bodies), replacement);

    // The output must itself be valid code of the same grammar, else the model would be
    // shown something the original was not (and the second pass could not decline cleanly).
    if (ParseClean(parser.get(), grammar, out) == nullptr) return std::nullopt;
    return out;
  }
};

}  // namespace

std::unique_ptr<Compressor> NewCodeCompressor() { return std::make_unique<CodeCompressor>(); }

}  // namespace caveman
