// McpServer::HandleMessage directly (no process): tool results over an in-memory store, and
// seeded random corruption of valid messages — every answer is empty or one JSON object on
// one line, never a crash (this runs under ASan/UBSan in CI).
#include "cli/internal/mcp_server.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "compressors/slice.h"
#include "caveman/engine/engine.h"
#include "stream/json_writer.h"

namespace caveman::internal {
namespace {

McpServer NewServer() {
  McpServerOptions o;
  o.version = "test";
  o.open_store = [] { return OpenMemoryStore(); };
  return McpServer(std::move(o));
}

std::string Log() {
  std::string s;
  for (int i = 0; i < 4000; ++i) {
    s += i % 331 == 0 ? "2026-01-01 ERROR request " + std::to_string(i) + " failed\n"
                      : "2026-01-01 INFO worker " + std::to_string(i % 5) + " ok\n";
  }
  return s;
}

std::string Call(int id, std::string_view tool, std::string_view args_json) {
  return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" +
         std::string(tool) + "\",\"arguments\":" + std::string(args_json) + "}}";
}

// The first text block of a tools/call response, unescaped just enough for this test's
// ASCII payloads.
std::string FirstText(const std::string& response) {
  const std::string key = "\"text\":\"";
  size_t at = response.find(key);
  if (at == std::string::npos) return "";
  std::string out;
  for (size_t i = at + key.size(); i < response.size(); ++i) {
    char c = response[i];
    if (c == '"') break;
    if (c == '\\') {
      char e = response[++i];
      out.push_back(e == 'n' ? '\n' : e);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

TEST(McpServerTest, CompressThenRetrieveSlices) {
  McpServer server = NewServer();
  std::string log = Log();
  std::string r = server.HandleMessage(Call(1, "caveman_compress", JsonQuote(log).insert(0, "{\"text\":") + "}"));
  ASSERT_TRUE(IsJsonDocument(r)) << r.substr(0, 300);
  size_t h = r.find("\"recovery_handle\":\"ccr_");
  ASSERT_NE(h, std::string::npos) << r.substr(0, 300);
  std::string handle = r.substr(h + 19, 36);
  EXPECT_NE(r.find("caveman_retrieve {\\\"handle\\\":\\\"" + handle + "\\\"}"), std::string::npos);
  EXPECT_NE(r.find("caveman-engine retrieve " + handle), std::string::npos);

  std::string whole = server.HandleMessage(Call(2, "caveman_retrieve", "{\"handle\":\"" + handle + "\"}"));
  EXPECT_EQ(FirstText(whole), log);
  std::string lines =
      server.HandleMessage(Call(3, "caveman_retrieve", "{\"handle\":\"" + handle + "\",\"lines\":\"2:3\"}"));
  EXPECT_EQ(FirstText(lines), "2026-01-01 INFO worker 1 ok\n2026-01-01 INFO worker 2 ok\n");
  EXPECT_NE(lines.find("caveman-engine retrieve " + handle + " --lines 2:3"), std::string::npos);
  std::string grep = server.HandleMessage(
      Call(4, "caveman_retrieve", "{\"handle\":\"" + handle + "\",\"grep\":\"ERROR\",\"context\":0}"));
  EXPECT_EQ(FirstText(grep).substr(0, 40), "1:2026-01-01 ERROR request 0 failed\n--\n3");
  std::string missing = server.HandleMessage(Call(5, "caveman_retrieve", "{\"handle\":\"ccr_0123\"}"));
  EXPECT_NE(missing.find("\"isError\":true"), std::string::npos);
}

TEST(McpServerTest, CorruptedMessagesNeverCrashAndAnswerOneJsonLine) {
  McpServer server = NewServer();
  std::vector<std::string> seeds = {
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}})",
      R"({"jsonrpc":"2.0","id":"a","method":"tools/list"})",
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
      Call(7, "caveman_compress", R"({"text":"a\na\na\na\nERROR b\n","query":"b"})"),
      Call(8, "caveman_retrieve",
           R"({"handle":"ccr_00000000000000000000000000000000","lines":"1:2","grep":"x","context":3})"),
      Call(9, "caveman_retrieve", R"({"handle":"ccr_00000000000000000000000000000000","json_pointer":"/a~1b/0"})"),
      Call(10, "caveman_stats", "{}"),
  };
  std::mt19937_64 rng(14);
  const std::string specials =
      "{}[]\":,\\ \n\t\x00\xff\xc3\xe2\x80\xa8"
      "0123456789-+.eE";
  int answered = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    std::string m = seeds[rng() % seeds.size()];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !m.empty(); ++e) {
      size_t at = rng() % m.size();
      switch (rng() % 5) {
        case 0: m.erase(at, 1 + rng() % 3); break;
        case 1: m.insert(at, 1, specials[rng() % specials.size()]); break;
        case 2: m[at] = static_cast<char>(rng() % 256); break;
        case 3: m.resize(at); break;
        case 4: m.insert(at, m.substr(at, rng() % 16)); break;
      }
    }
    std::string r = server.HandleMessage(m);
    if (r.empty()) continue;
    ++answered;
    ASSERT_EQ(r.find('\n'), std::string::npos) << m;
    ASSERT_TRUE(IsJsonDocument(r)) << m << "\n -> " << r.substr(0, 300);
    ASSERT_EQ(r.rfind("{\"jsonrpc\":\"2.0\",\"id\":", 0), 0u) << r;
  }
  EXPECT_GT(answered, 3000);
}

TEST(McpServerTest, OversizeResponseFindsTheIdAtTheEnd) {
  McpServer server = NewServer();
  EXPECT_EQ(server
                .OversizeResponse(R"({"method":"tools/call","params":{"arguments":{"text":"xxxx)",
                                  R"(xxxx"}},"jsonrpc":"2.0","id":42})")
                .rfind("{\"jsonrpc\":\"2.0\",\"id\":42,\"error\":{\"code\":-32600,", 0),
            0u);
  EXPECT_EQ(server.OversizeResponse(R"({"id":"r-7","method":"tools/call","params":{"text":"xx)", R"(xx \"id\":9 "}})")
                .rfind("{\"jsonrpc\":\"2.0\",\"id\":\"r-7\",", 0),
            0u);
  EXPECT_EQ(server.OversizeResponse("xxxx", "yyyy").rfind("{\"jsonrpc\":\"2.0\",\"id\":null,", 0), 0u);
}

}  // namespace
}  // namespace caveman::internal
