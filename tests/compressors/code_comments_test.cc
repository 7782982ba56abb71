// Comment elision in the code compressor (issue 16): long comment blocks keep their first
// sentence and become one marker comment in their own syntax; every declaration and every code
// byte stays. Also the project's sniffing fix: "#ifndef X" / "#undef X" hold "def " but do not
// make a C header Python. Real headers from the build's own dependencies (/usr/include) are
// checked when present: smaller, and identical once comments are stripped.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "compressors/code.h"
#include "compressors/compressor.h"

namespace caveman {
namespace {

constexpr char kEll[] = "\xE2\x80\xA6";

std::optional<std::string> Code(const std::string& in) {
  auto c = NewCodeCompressor();
  return RunOnString(*c, in);
}

// C-family source without comments (string and char literals kept), whitespace collapsed.
std::string StripComments(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "/*") == 0) {
      size_t j = s.find("*/", i + 2);
      i = j == std::string::npos ? s.size() : j + 2;
    } else if (s.compare(i, 2, "//") == 0) {
      size_t j = s.find('\n', i);
      i = j == std::string::npos ? s.size() : j;
    } else if (s[i] == '"' || s[i] == '\'') {
      const char q = s[i];
      size_t j = i + 1;
      while (j < s.size() && s[j] != q && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
      out.append(s, i, std::min(s.size(), j + 1) - i);
      i = j + 1;
    } else {
      const bool space = s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r';
      if (!space)
        out.push_back(s[i]);
      else if (!out.empty() && out.back() != ' ')
        out.push_back(' ');
      ++i;
    }
  }
  return out;
}

const char kHeader[] =
    "#ifndef DEMO_H\n"
    "#define DEMO_H\n"
    "#include <stddef.h>\n"
    "\n"
    "/**\n"
    " * Compresses a buffer. This is the simple API.\n"
    " * The destination must be large enough: use\n"
    " * demo_bound() to size it. Returns the size written,\n"
    " * or an error code.\n"
    " * Thread-safety: none.\n"
    " */\n"
    "size_t demo_compress(void* dst, size_t cap, const void* src, size_t n);\n"
    "\n"
    "    // Decompresses a frame.\n"
    "    // The frame must be complete.\n"
    "    // It verifies the checksum when present.\n"
    "    // Large frames need a large buffer.\n"
    "    // See the streaming API below.\n"
    "    // Last line.\n"
    "size_t demo_decompress(void* dst, size_t cap, const void* src, size_t n);\n"
    "/* short */\n"
    "#endif\n";

TEST(CodeComments, LongBlocksKeepTheirFirstSentence) {
  auto out = Code(kHeader);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("/**\n * Compresses a buffer. This is the simple API.\n * " + std::string(kEll) +
                      " caveman: 5 comment lines elided " + kEll + " */\n"),
            std::string::npos)
      << *out;
  EXPECT_NE(out->find("    // Decompresses a frame.\n    // " + std::string(kEll) +
                      " caveman: 5 comment lines elided " + kEll + "\nsize_t demo_decompress"),
            std::string::npos)
      << *out;
  EXPECT_NE(out->find("/* short */"), std::string::npos);  // short comments stay
  EXPECT_EQ(StripComments(*out), StripComments(kHeader));
  // Idempotent: nothing left to elide.
  EXPECT_FALSE(Code(*out).has_value());
}

TEST(CodeComments, AdjacentBlockCommentsAreNotMerged) {
  std::string in = "#include <x.h>\nint a;\n/******** End of a.h ********/\n/******** Begin b.h ********/\n/*\n";
  for (int i = 0; i < 8; ++i) in += "** line " + std::to_string(i) + " of the licence\n";
  in += "*/\nint b;\n";
  auto out = Code(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("/******** End of a.h ********/\n/******** Begin b.h ********/\n/*\n"), std::string::npos)
      << *out;
  EXPECT_EQ(StripComments(*out), StripComments(in)) << *out;
}

TEST(CodeComments, IncludeGuardDoesNotMakeCPython) {
  // Before the fix "#ifndef" matched "def " and the C grammar never ran (declined).
  const std::string in = std::string(kHeader);
  auto out = Code(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->find("..."), std::string::npos);  // no Python body replacement
}

TEST(CodeComments, PythonHashBlocks) {
  std::string in = "import os\n\n";
  for (int i = 0; i < 7; ++i) in += "# Configuration note " + std::to_string(i) + ": keep this in sync.\n";
  in += "def main():\n    return os.getcwd()\n";
  auto out = Code(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("# Configuration note 0: keep this in sync.\n# " + std::string(kEll) +
                      " caveman: 6 comment lines elided " + kEll + "\n"),
            std::string::npos)
      << *out;
  EXPECT_NE(out->find("def main():"), std::string::npos);
}

std::string ReadIfPresent(const char* path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(CodeComments, RealHeadersShrinkAndKeepEveryCodeByte) {
  int checked = 0;
  for (const char* path : {"/usr/include/zstd.h", "/usr/include/hs/hs_common.h", "/usr/include/sqlite3.h",
                           "/usr/include/tree_sitter/api.h"}) {
    const std::string in = ReadIfPresent(path);
    if (in.empty()) continue;
    ++checked;
    auto out = Code(in);
    ASSERT_TRUE(out.has_value()) << path;
    EXPECT_LT(out->size() * 10, in.size() * 9) << path;  // at least 10 % smaller
    EXPECT_EQ(StripComments(*out), StripComments(in)) << path;
    EXPECT_NE(out->find("comment lines elided"), std::string::npos) << path;
  }
  if (checked == 0) GTEST_SKIP() << "no dependency headers installed";
}

}  // namespace
}  // namespace caveman
