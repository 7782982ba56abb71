// Build-time tool: o200k_tables_gen TIKTOKEN OUT. Parses and verifies (SHA-256) the tiktoken
// vocabulary, builds the code point class tables from ICU, and writes both in the
// O200kTokenizer::FromTables format to OUT (stream/o200k_tables.S embeds it).
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "stream/internal/o200k.h"
#include "stream/internal/o200k_classes.h"

namespace caveman::internal {

// The generator has no embedded tables: its classes come straight from ICU.
const CodePointClasses& CodePointClasses::Get() {
  static const CodePointClasses* const classes = new CodePointClasses(Build());
  return *classes;
}

}  // namespace caveman::internal

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: o200k_tables_gen TIKTOKEN OUT\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    std::fprintf(stderr, "o200k_tables_gen: cannot read %s\n", argv[1]);
    return 1;
  }
  auto tokenizer = caveman::internal::O200kTokenizer::Create(text);
  if (!tokenizer.ok()) {
    std::fprintf(stderr, "o200k_tables_gen: %s\n", tokenizer.status().message().c_str());
    return 1;
  }
  std::string tables;
  tokenizer.value()->SerializeTables(&tables);
  const std::string tmp = std::string(argv[2]) + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr || std::fwrite(tables.data(), 1, tables.size(), f) != tables.size() || std::fclose(f) != 0 ||
      std::rename(tmp.c_str(), argv[2]) != 0) {
    std::fprintf(stderr, "o200k_tables_gen: cannot write %s\n", argv[2]);
    return 1;
  }
  return 0;
}
