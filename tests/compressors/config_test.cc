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

}  // namespace
}  // namespace caveman
