#include "compressors/config.h"

#include <gtest/gtest.h>

#include <string>

namespace caveman {
namespace {

const char kYaml[] =
    "service:\n"
    "  name: api\n"
    "  port: 8080\n"
    "  replicas: 3\n"
    "database:\n"
    "  host: db\n"
    "  user: app\n";

TEST(IsConfig, AcceptsYamlMapping) { EXPECT_TRUE(IsConfig(kYaml)); }

TEST(IsConfig, RejectsYamlWithDuplicateKeys) {
  EXPECT_FALSE(IsConfig(std::string(kYaml) + "service:\n  x: 1\n"));
  EXPECT_FALSE(IsConfig(std::string(kYaml) + "extra:\n  a: 1\n  a: 2\n"));
}

TEST(IsConfig, DuplicateKeysInDifferentMappingsAreFine) {
  EXPECT_TRUE(IsConfig(std::string(kYaml) + "other:\n  host: x\n  user: y\n"));
}

TEST(IsConfig, RejectsYamlThatDoesNotParse) { EXPECT_FALSE(IsConfig(std::string(kYaml) + "bad: [unclosed\n")); }

TEST(IsConfig, RejectsBlockScalars) { EXPECT_FALSE(IsConfig(std::string(kYaml) + "script: |\n  echo hi\n")); }

TEST(IsConfig, RejectsTooFewKeysOrTooMuchProse) {
  EXPECT_FALSE(IsConfig("a: 1\nb: 2\nc: 3\n"));
  EXPECT_FALSE(IsConfig(std::string(kYaml) + "this is prose\nmore prose here\n"));
}

TEST(IsConfig, AcceptsIniAndToml) {
  EXPECT_TRUE(IsConfig("[server]\nhost = a\nport = 1\n\n[client]\nname = b\nretries = 3\n"));
  EXPECT_TRUE(IsConfig("; comment\n[a.b]  # x\nk=v\nk2 = \"v\"\n[\"c d\"]\nx = 1\ny = 2\n"));
}

TEST(IsConfig, TomlWithMultilineStringsIsNotIni) {
  EXPECT_FALSE(IsConfig("[a]\nk = 1\nj = 2\n[b]\nx = 3\ny = \"\"\"\nz\n\"\"\"\n"));
}

TEST(IsConfig, RejectsEmptyProseAndInvalidUtf8) {
  EXPECT_FALSE(IsConfig(""));
  EXPECT_FALSE(IsConfig("# only\n# comments\n"));
  EXPECT_FALSE(IsConfig("just some words\nand more words\n"));
  EXPECT_FALSE(IsConfig(std::string(kYaml) + "x: \xff\n"));
}

TEST(IsConfig, SequencesOfMappingsCount) {
  EXPECT_TRUE(IsConfig("items:\n- name: a\n  v: 1\n- name: b\n  v: 2\n- name: c\n  v: 3\n"));
}

TEST(IsConfig, MultiDocumentStream) {
  EXPECT_TRUE(IsConfig("a: 1\nb: 2\nc: 3\n---\nd: 4\ne: 5\nf: 6\n"));
  EXPECT_FALSE(IsConfig("a: 1\nb: 2\nc: 3\n---\nd: 4\ne: 5\nf: [\n"));
}

// docs/DECISIONS.md, "Listings with numeric keys are not YAML": `objdump -d` parses as YAML
// (addresses as keys), but a mapping keyed mostly by numbers is a listing.
TEST(IsConfig, MappingKeyedMostlyByNumbersIsAListing) {
  const std::string disassembly =
      "0000000000002000 <.init>:\n"
      "    2000:\t48 83 ec 08          \tsub    $0x8,%rsp\n"
      "    2004:\t48 8b 05 bd 6f 00 00 \tmov    0x6fbd(%rip),%rax\n"
      "    200b:\t48 85 c0             \ttest   %rax,%rax\n"
      "    200e:\t74 02                \tje     2012 <free@plt-0x1e>\n"
      "    2010:\tff d0                \tcall   *%rax\n"
      "    2012:\t48 83 c4 08          \tadd    $0x8,%rsp\n"
      "    2016:\tc3                   \tret\n";
  EXPECT_FALSE(IsConfig(disassembly));
  // Hex-looking words without a digit (`add`, `cafe`) and a minority of number keys (HTTP
  // status codes under `responses:`) are still keys.
  EXPECT_TRUE(IsConfig("add: 1\ncafe: 2\nbead: 3\nface: 4\nfade: 5\nbeef: 6\n"));
  EXPECT_TRUE(
      IsConfig("responses:\n  200:\n    description: ok\n  404:\n    description: missing\n"
               "  500:\n    description: failed\n"));
  // Exactly half number keys is still YAML; more than half is a listing.
  EXPECT_TRUE(IsConfig("k1: x\nk2: y\nk3: z\n10: p\n20: q\n30: r\n"));
  EXPECT_FALSE(IsConfig("k1: x\nk2: y\n10: p\n20: q\n30: r\n40: s\n"));
}

}  // namespace
}  // namespace caveman
