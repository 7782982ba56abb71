// Entry points of the tree-sitter grammars built from third_party/tree-sitter-grammars and
// linked into caveman_compressors: the code compressor (§5.4) parses with them, and its test
// parses every output with the same grammar to check that the output is still valid code.
// Declared once here so the two lists cannot drift apart.
#ifndef CAVEMAN_COMPRESSORS_INTERNAL_GRAMMARS_H_
#define CAVEMAN_COMPRESSORS_INTERNAL_GRAMMARS_H_

#include <tree_sitter/api.h>

// The grammars are C; their symbols live outside any namespace.
extern "C" {
const TSLanguage* tree_sitter_go(void);
const TSLanguage* tree_sitter_python(void);
const TSLanguage* tree_sitter_rust(void);
const TSLanguage* tree_sitter_java(void);
const TSLanguage* tree_sitter_cpp(void);
const TSLanguage* tree_sitter_c(void);
const TSLanguage* tree_sitter_typescript(void);
const TSLanguage* tree_sitter_tsx(void);
}

#endif  // CAVEMAN_COMPRESSORS_INTERNAL_GRAMMARS_H_
