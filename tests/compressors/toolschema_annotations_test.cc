#include "compressors/toolschema_annotations.h"

#include <string>

#include <gtest/gtest.h>

#include "compressors/compressor.h"
#include "compressors/cj.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

std::string Compress(std::string_view in) {
  auto c = NewToolschemaAnnotationsCompressor();
  std::optional<std::string> out = RunOnString(*c, in);
  return out ? *out : std::string("<declined>");
}

TEST(ToolschemaAnnotationsTest, DeletesExactSpans) {
  // First member deleted: from its key to the next key. Later member: from the previous
  // value's end through its value.
  EXPECT_EQ(Compress(R"({"inputSchema": {"title": "T",  "type": "object" , "$schema": "s"}})"),
            R"({"inputSchema": {"type": "object"}})");
  EXPECT_EQ(Compress(R"({"inputSchema": { "title": "T" }})"), R"({"inputSchema": { }})");
  EXPECT_EQ(Compress(R"({"inputSchema":{"a":1,"title":"x","examples":[1],"b":2}})"),
            R"({"inputSchema":{"a":1,"b":2}})");
  EXPECT_EQ(Compress(R"({"inputSchema":{"title":"x","examples":[1],"b":2}})"), R"({"inputSchema":{"b":2}})");
}

TEST(ToolschemaAnnotationsTest, WalksOnlySchemaPositions) {
  // "title" as a property name is never deleted; envelope members other than the schema
  // keys are skipped entirely; "description" and unknown members are left alone.
  EXPECT_EQ(Compress(R"({"title":"env","parameters":{"properties":{"title":{"title":"t"}},"x":{"title":"y"}}})"),
            R"({"title":"env","parameters":{"properties":{"title":{}},"x":{"title":"y"}}})");
  EXPECT_EQ(Compress(R"({"other":{"inputSchema":{"title":"t"}}})"), R"({"other":{"inputSchema":{"title":"t"}}})");
  EXPECT_EQ(Compress("[1, 2]"), "[1, 2]");
  EXPECT_EQ(Compress("{\"inputSchema\":{\"title\":1}"), "<declined>");
}

TEST(ToolschemaAnnotationsTest, GoldenFixturesAndIdempotence) {
  for (std::string name : {"mcp_tools", "nothing"}) {
    std::string in = testing::ReadFile("fixtures/toolschema-annotations/" + name + ".in");
    std::string expected = testing::ReadFile("fixtures/toolschema-annotations/" + name + ".expected");
    std::string out = Compress(in);
    EXPECT_EQ(out, expected) << name;
    EXPECT_TRUE(internal::IsJson(out));
    EXPECT_EQ(Compress(out), out) << name;
  }
}

}  // namespace
}  // namespace caveman
