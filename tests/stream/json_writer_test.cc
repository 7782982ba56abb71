// JsonWriter (stream/json_writer.h): the compact form every JSON line of the CLI, MCP server
// and manifest is written in, the indented form of `stats`, and BeginObjectFrom, which
// extends an object another writer made. The escaping itself is checked byte by byte in
// tests/engine/engine_test.cc and tests/compressors/shared_machinery_test.cc.
#include "stream/json_writer.h"

#include <gtest/gtest.h>

#include <string>

namespace caveman {
namespace {

TEST(JsonWriter, CompactCommasBetweenMembersAndElements) {
  JsonWriter w;
  w.BeginObject().Key("a").Uint(1).Key("b").BeginArray().Int(-2).Bool(true).Null().EndArray();
  w.Key("c").BeginObject().EndObject().Key("d").String("x<y").Key("r").Ratio(0.25);
  w.Key("raw").Raw("[1,2]").EndObject();
  EXPECT_EQ(w.str(), R"({"a":1,"b":[-2,true,null],"c":{},"d":"x\u003cy","r":0.25,"raw":[1,2]})");
}

TEST(JsonWriter, TopLevelScalarAndArrayOfObjects) {
  EXPECT_EQ(JsonWriter().String("a\"b").Take(), R"("a\"b")");
  JsonWriter w;
  w.BeginArray().BeginObject().Key("k").Uint(0).EndObject().BeginObject().EndObject().EndArray();
  EXPECT_EQ(w.Take(), R"([{"k":0},{}])");
}

TEST(JsonWriter, IndentedPutsEachMemberOnItsOwnLine) {
  JsonWriter w(2);
  w.BeginObject().Key("totals").BeginObject().Key("count").Uint(3).Key("ratio").Ratio(0.5).EndObject();
  w.Key("empty").BeginObject().EndObject().Key("list").BeginArray().Uint(1).String("two").EndArray();
  w.Key("none").BeginArray().EndArray().EndObject();
  EXPECT_EQ(w.str(),
            "{\n"
            "  \"totals\": {\n"
            "    \"count\": 3,\n"
            "    \"ratio\": 0.5\n"
            "  },\n"
            "  \"empty\": {},\n"
            "  \"list\": [\n"
            "    1,\n"
            "    \"two\"\n"
            "  ],\n"
            "  \"none\": []\n"
            "}");
}

TEST(JsonWriter, BeginObjectFromAddsMembersAfterTheCopiedOnes) {
  JsonWriter w;
  w.BeginObjectFrom(R"({"content_type":"log","tokens":12})").Key("extra").Bool(false).EndObject();
  EXPECT_EQ(w.str(), R"({"content_type":"log","tokens":12,"extra":false})");
  // An empty object has no member the first added one would need a comma after.
  JsonWriter e;
  e.BeginObjectFrom("{}").Key("k").String("v").EndObject();
  EXPECT_EQ(e.str(), R"({"k":"v"})");
  // Nothing added: the object comes back unchanged, also as a member value.
  JsonWriter n;
  n.BeginObject().Key("report").BeginObjectFrom(R"({"a":1})").EndObject().EndObject();
  EXPECT_EQ(n.str(), R"({"report":{"a":1}})");
}

}  // namespace
}  // namespace caveman
