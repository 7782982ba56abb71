// Regression (reliability, found by fuzz_parsers): yaml-cpp 0.7 reported empty documents
// forever on this ~1 KB input, so IsConfig (detection rule 11, reached by any unmatched
// text) and therefore `detect` and `compress` never returned. The document loop is now
// bounded (a real YAML stream has at most size/3 + 1 documents).
#include <string>

#include <gtest/gtest.h>

#include "compressors/config.h"
#include "compressors/detect.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

TEST(YamlEndlessDocuments, DetectionTerminates) {
  // The corpus file starts with fuzz_parsers' selector byte.
  std::string in = testing::ReadFile("tests/fuzz/corpus/fuzz_parsers/yaml-endless-documents");
  ASSERT_GT(in.size(), 1u);
  in.erase(0, 1);
  EXPECT_FALSE(IsConfig(in));
  EXPECT_EQ(Detect(in), "text");
}

TEST(YamlEndlessDocuments, YamlStillAccepted) {
  std::string yaml = "service:\n";
  for (int i = 0; i < 14; ++i) yaml += "  key_" + std::to_string(i) + ": " + std::to_string(i) + "\n";
  EXPECT_TRUE(IsConfig(yaml));
}

}  // namespace
}  // namespace caveman
