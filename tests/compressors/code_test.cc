#include "compressors/code.h"

#include <gtest/gtest.h>
#include <tree_sitter/api.h>

#include <fstream>
#include <sstream>

#include "compressors/internal/grammars.h"  // to check that every output is valid code
#include "compressors/registry.h"
#include "stream/spool.h"
#include "caveman/stream/tokens.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

constexpr std::string_view kElided = "{ /* caveman: body elided */ }";

std::optional<std::string> Code(std::string_view in) {
  auto c = NewCodeCompressor();
  return RunOnString(*c, in);
}

bool ParsesWithoutError(const TSLanguage* language, std::string_view text) {
  TSParser* parser = ts_parser_new();
  EXPECT_TRUE(ts_parser_set_language(parser, language)) << "grammar ABI not supported";
  TSTree* tree = ts_parser_parse_string(parser, nullptr, text.data(), static_cast<uint32_t>(text.size()));
  bool ok = tree != nullptr && !ts_node_has_error(ts_tree_root_node(tree));
  ts_tree_delete(tree);
  ts_parser_delete(parser);
  return ok;
}

size_t CountOf(std::string_view text, std::string_view needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string_view::npos; pos = text.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

struct GoldenCase {
  const char* name;
  const TSLanguage* (*grammar)();
};

const GoldenCase kGoldenCases[] = {
    {"go_service", tree_sitter_go},
    {"python_models", tree_sitter_python},
    {"rust_queue", tree_sitter_rust},
    {"java_inventory", tree_sitter_java},
    {"cpp_matrix", tree_sitter_cpp},
    {"c_ring", tree_sitter_c},
    {"typescript_cache", tree_sitter_typescript},
    {"tsx_component", tree_sitter_tsx},
    {"javascript_router", tree_sitter_typescript},
};

class CodeGolden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(CodeGolden, MatchesExpectedOutput) {
  const std::string base = std::string("fixtures/code/") + GetParam().name;
  std::string in = testing::ReadFile(base + ".in");
  std::string expected = testing::ReadFile(base + ".expected");
  ASSERT_FALSE(in.empty());
  auto out = Code(in);
  ASSERT_TRUE(out.has_value()) << "declined";
  EXPECT_EQ(*out, expected);
}

TEST_P(CodeGolden, InputAndOutputParseCleanlyWithTheSniffedGrammar) {
  std::string in = testing::ReadFile(std::string("fixtures/code/") + GetParam().name + ".in");
  auto out = Code(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(ParsesWithoutError(GetParam().grammar(), in));
  EXPECT_TRUE(ParsesWithoutError(GetParam().grammar(), *out));
}

TEST_P(CodeGolden, SecondPassDeclines) {
  std::string in = testing::ReadFile(std::string("fixtures/code/") + GetParam().name + ".in");
  auto out = Code(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_FALSE(Code(*out).has_value());
}

TEST_P(CodeGolden, SpilledSpoolBodyGivesSameOutput) {
  std::string in = testing::ReadFile(std::string("fixtures/code/") + GetParam().name + ".in");
  auto expected = Code(in);
  ASSERT_TRUE(expected.has_value());
  testing::ExpectChunkingInvariant(in, [](const std::vector<std::string_view>& pieces) {
    Spool spool(SpoolOptions{.memory_limit = 64, .temp_dir = {}});  // spills: the body is read back from disk
    for (std::string_view p : pieces) EXPECT_TRUE(spool.Write(p).ok());
    auto c = NewCodeCompressor();
    StringSink sink;
    TransformMeta meta;
    Result<TransformOutcome> r = c->Transform(Body::FromSpool(spool), "", sink, &meta);
    EXPECT_TRUE(r.ok());
    if (!r.ok() || *r != TransformOutcome::kAccepted) return std::string("<declined>");
    return std::string(sink.data());
  });
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CodeGolden, ::testing::ValuesIn(kGoldenCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(CodeCompressor, IsRegisteredForCodeWithNoQuery) {
  Registry registry;
  const Compressor* c = registry.Find("code");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->content_type(), "code");
  EXPECT_FALSE(c->query_aware());
  EXPECT_EQ(c->safety_class(), SafetyClass::kS4);
}

TEST(CodeCompressor, ElidesGoBodiesKeepingSignatures) {
  std::string in = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n";
  auto out = Code(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, "package main\n\nimport \"fmt\"\n\nfunc main() " + std::string(kElided) + "\n");
}

TEST(CodeCompressor, PythonBodyBecomesEllipsisAtItsOwnIndentation) {
  std::string in =
      "class A:\n    def f(self, x):\n        y = x + 1\n        return y\n\n"
      "    def g(self): return 2\n\n\ndef h():\n    \"\"\"Doc.\"\"\"\n    pass\n";
  auto out = Code(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out,
            "class A:\n    def f(self, x):\n        ...\n\n"
            "    def g(self): ...\n\n\ndef h():\n    ...\n");
  EXPECT_TRUE(ParsesWithoutError(tree_sitter_python(), *out));
}

TEST(CodeCompressor, OnlyOutermostBodiesAreReplaced) {
  std::string in =
      "package p\n\nfunc Outer() func() int {\n\tinner := func() int {\n\t\treturn 1\n\t}\n"
      "\treturn inner\n}\n";
  auto out = Code(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(CountOf(*out, kElided), 1u);
  EXPECT_EQ(*out, "package p\n\nfunc Outer() func() int " + std::string(kElided) + "\n");
}

TEST(CodeCompressor, AlreadyElidedBodiesAreSkippedOthersElided) {
  std::string in = "package p\n\nfunc A() " + std::string(kElided) + "\n\nfunc B() int {\n\treturn 2\n}\n";
  auto out = Code(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, "package p\n\nfunc A() " + std::string(kElided) + "\n\nfunc B() int " + std::string(kElided) + "\n");
  EXPECT_FALSE(Code(*out).has_value());
}

TEST(CodeCompressor, ArrowFunctionWithExpressionBodyIsKept) {
  std::string in = "const double = (x: number): number => x * 2;\n";
  EXPECT_FALSE(Code(in).has_value());  // nothing to elide
}

TEST(CodeCompressor, PreservesCrlfOutsideBodies) {
  std::string in = "package p\r\n\r\nfunc F() int {\r\n\treturn 1\r\n}\r\n";
  auto out = Code(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, "package p\r\n\r\nfunc F() int " + std::string(kElided) + "\r\n");
}

TEST(CodeCompressor, DeclinesOnSyntaxErrors) {
  // Go: missing closing brace.
  EXPECT_FALSE(Code("package p\n\nfunc F() int {\n\treturn 1\n").has_value());
  // Python: unbalanced parenthesis in the parameter list.
  EXPECT_FALSE(Code("def f(x:\n    return x\n").has_value());
  // C: stray token.
  EXPECT_FALSE(Code("#include <stdio.h>\nint main(void) { return 0; } }\n").has_value());
  // TypeScript: invalid for both the TypeScript and the TSX grammar.
  EXPECT_FALSE(Code("function f( {\n  return 1;\n}\n").has_value());
}

TEST(CodeCompressor, DeclinesWhenNoLanguageMatches) {
  EXPECT_FALSE(Code("").has_value());
  EXPECT_FALSE(Code("hello world\nthis is plain prose { with braces }\n").has_value());
}

TEST(CodeCompressor, DeclinesWhenThereIsNoBodyToElide) {
  EXPECT_FALSE(Code("package p\n\nfunc F() int\n\ntype T struct{ X int }\n").has_value());
  EXPECT_FALSE(Code("#include <stdio.h>\nint f(int x);\n").has_value());
}

TEST(CodeCompressor, SniffingIsSubstringFirstMatch) {
  // TypeScript with `import `, `class `, `;` and `private ` matches the Java row (4) before the
  // TypeScript row (7); the Java grammar rejects it, so the compressor declines although the
  // TypeScript grammar would have accepted it.
  std::string ts =
      "import { X } from \"x\";\nexport class A {\n  private n = 1;\n  get(): number {\n"
      "    return this.n;\n  }\n}\n";
  EXPECT_TRUE(ParsesWithoutError(tree_sitter_typescript(), ts));
  EXPECT_FALSE(Code(ts).has_value());
  std::string ts_ok = ts;
  ts_ok.replace(ts_ok.find("private "), 8, "");
  auto out = Code(ts_ok);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out,
            "import { X } from \"x\";\nexport class A {\n  n = 1;\n  get(): number " + std::string(kElided) + "\n}\n");
}

TEST(CodeCompressor, CppSniffedBeforeCAndFunctionTryBlockElided) {
  std::string in =
      "#include <stdexcept>\nint F(int v) try {\n  return v;\n} catch (const std::exception&) {\n"
      "  return 0;\n}\n";
  auto out = Code(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, "#include <stdexcept>\nint F(int v) " + std::string(kElided) + "\n");
  EXPECT_TRUE(ParsesWithoutError(tree_sitter_cpp(), *out));
}

TEST(CodeCompressor, DeeplyNestedInputDoesNotOverflow) {
  // 20k nested parentheses inside one body: the walk is iterative and stops at the body.
  std::string expr(20000, '(');
  expr += "1";
  expr.append(20000, ')');
  std::string in = "package p\n\nfunc F() int {\n\treturn " + expr + "\n}\n";
  auto out = Code(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, "package p\n\nfunc F() int " + std::string(kElided) + "\n");
}

// §13: the reference fixtures are read in place when present, never copied into the repo.
struct ReferenceCase {
  const char* file;
  const char* must_contain;
  double min_ratio;
  double max_ratio;
};

class CodeReference : public ::testing::TestWithParam<ReferenceCase> {};

TEST_P(CodeReference, ContainsSignatureAndRatioWithinBand) {
  const std::string dir = testing::ReferenceDir();
  if (dir.empty()) GTEST_SKIP() << "reference fixtures absent";
  const std::string path = dir + GetParam().file;
  std::string in = testing::ReadAbsolute(path);
  auto out = Code(in);
  ASSERT_TRUE(out.has_value()) << "declined";
  EXPECT_NE(out->find(GetParam().must_contain), std::string::npos);
  EXPECT_FALSE(Code(*out).has_value());
  const TokenCounter& counter = DefaultTokenCounter();
  const double before = static_cast<double>(counter.Count(in));
  const double after = static_cast<double>(counter.Count(*out));
  const double ratio = (before - after) / before;
  RecordProperty("ratio", std::to_string(ratio));
  RecordProperty("counter", std::string(counter.name()));
  EXPECT_GE(ratio, GetParam().min_ratio) << counter.name();
  EXPECT_LE(ratio, GetParam().max_ratio) << counter.name();
}

INSTANTIATE_TEST_SUITE_P(Section13, CodeReference,
                         ::testing::Values(ReferenceCase{"sample.go", "func Summarize", 0.40, 0.75},
                                           ReferenceCase{"sample.py", "def summarize", 0.40, 0.80},
                                           ReferenceCase{"sample.ts", "export function summarize", 0.40, 0.80}),
                         [](const auto& info) {
                           std::string name = info.param.file;
                           for (char& ch : name) {
                             if (ch == '.') ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace caveman
