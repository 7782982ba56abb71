// The data embedded in the library for the o200k tokenizer: the tiktoken file
// (stream/o200k_vocab.S) and the tables built from it at build time (stream/o200k_tables.S,
// written by internal/o200k_tables_gen.cc), plus the process-wide code point classes over
// those tables. Kept apart from o200k.cc so the table generator links without them.
#include <cstdio>
#include <cstdlib>

#include "stream/internal/o200k.h"
#include "stream/internal/o200k_classes.h"

extern "C" {
extern const char caveman_o200k_vocab_begin[];
extern const char caveman_o200k_vocab_end[];
extern const char caveman_o200k_tables_begin[];
extern const char caveman_o200k_tables_end[];
}

namespace caveman::internal {

std::string_view EmbeddedO200kVocabulary() {
  return std::string_view(caveman_o200k_vocab_begin,
                          static_cast<size_t>(caveman_o200k_vocab_end - caveman_o200k_vocab_begin));
}

std::string_view EmbeddedO200kTables() {
  return std::string_view(caveman_o200k_tables_begin,
                          static_cast<size_t>(caveman_o200k_tables_end - caveman_o200k_tables_begin));
}

const CodePointClasses& CodePointClasses::Get() {
  static const CodePointClasses* const classes = [] {
    const uint16_t* index = nullptr;
    const uint8_t* leaves = nullptr;
    size_t leaf_bytes = 0;
    const Status status = O200kClassTables(EmbeddedO200kTables(), &index, &leaves, &leaf_bytes);
    if (!status.ok()) {
      // The tables are part of this binary and were checked when it was built: a failure
      // here means the binary itself is damaged, and every count would be wrong.
      std::fprintf(stderr, "caveman-engine: %s\n", status.message().c_str());
      std::abort();
    }
    return new CodePointClasses(index, leaves, leaf_bytes);  // never destroyed
  }();
  return *classes;
}

}  // namespace caveman::internal
