// libFuzzer target for the MCP server (issue 14): any bytes as one message line. The answer
// is empty or one JSON object on one line starting with the JSON-RPC header; never a crash.
// Tool calls run against a private in-memory store. Byte 0 also picks a slicer that reads
// the rest as an original (line, byte and grep slices, JSON pointer): no crash, and a line
// slice of everything is the input itself.
#include <cstdint>
#include <string>
#include <string_view>

#include "cli/internal/mcp_server.h"
#include "compressors/slice.h"
#include "caveman/store/store.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace caveman;
  std::string_view in = fuzz::AsView(data, size);
  static internal::McpServer* server = [] {
    internal::McpServerOptions o;
    o.version = "fuzz";
    o.open_store = [] { return OpenMemoryStore(); };
    return new internal::McpServer(std::move(o));
  }();
  // One message has no LF inside (Serve splits on it).
  std::string_view message = in.substr(0, in.find('\n'));
  std::string r = server->HandleMessage(message);
  if (!r.empty()) {
    FUZZ_CHECK(r.find('\n') == std::string::npos, "response spans lines");
    FUZZ_CHECK(r.rfind("{\"jsonrpc\":\"2.0\",\"id\":", 0) == 0, "response without the JSON-RPC header");
    FUZZ_CHECK(IsJsonDocument(r), "response is not JSON");
  }

  if (size < 2) return 0;
  std::string_view original = in.substr(1);
  StringSink out;
  switch (data[0] % 4) {
    case 0: {
      auto s = NewLineSlice(1, UINT64_MAX, out);
      FUZZ_CHECK(s->Write(original).ok() && s->Finish().ok(), "line slice failed");
      FUZZ_CHECK(out.data() == original, "lines 1: is not the input");
      break;
    }
    case 1: {
      auto s = NewByteSlice(data[1], data[1] + 7u, out);
      FUZZ_CHECK(s->Write(original).ok(), "byte slice failed");
      break;
    }
    case 2: {
      auto s = NewGrepSlice("[A-Z]{3}|^$", data[1] % 3, out);
      if (s.ok()) FUZZ_CHECK((*s)->Write(original).ok() && (*s)->Finish().ok(), "grep slice failed");
      break;
    }
    default: {
      (void)JsonPointerSlice(original, "/0/a~1b");
      break;
    }
  }
  return 0;
}
