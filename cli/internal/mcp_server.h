// `caveman-engine mcp` (issue 14): a Model Context Protocol server over stdio.
//
// Transport: JSON-RPC 2.0, one message per line (LF; a CR before it is ignored), UTF-8,
// protocol revision 2025-06-18. Methods: initialize, notifications/initialized (and any other
// notification: ignored), ping, tools/list, tools/call. Tools: caveman_compress,
// caveman_retrieve, caveman_stats. The server ends with exit status 0 at end of input (a last
// message without LF is still answered).
//
// Errors (docs/DECISIONS.md, "MCP server"): protocol problems are JSON-RPC errors — -32700
// parse error (not JSON, not UTF-8), -32600 invalid request (not an object, batch, missing or
// wrong jsonrpc/method/id, message over max_message_bytes), -32601 unknown method, -32602
// invalid params (params not an object, unknown tool, tool name or arguments of the wrong
// type). A tool that runs and fails — bad handle, bad range, an argument of the wrong type —
// answers a result with isError: true and a sentence saying what to do.
//
// Messages are parsed with simdjson On-Demand after full validation; responses are written
// with JsonWriter (stream/json_writer.h). Thread-safety: one server per thread.
#ifndef CAVEMAN_CLI_INTERNAL_MCP_SERVER_H_
#define CAVEMAN_CLI_INTERNAL_MCP_SERVER_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "caveman/store/store.h"
#include "caveman/stream/status.h"

namespace caveman::internal {

inline constexpr std::string_view kMcpProtocolVersion = "2025-06-18";
// A message longer than this is refused (-32600) without being held: memory stays bounded
// whatever a client sends. 16 MiB; caveman_compress takes text up to the same size.
inline constexpr size_t kMcpMaxMessageBytes = 16 * 1024 * 1024;

struct McpServerOptions {
  std::string version;  // serverInfo.version
  size_t max_message_bytes = kMcpMaxMessageBytes;
  // Opens the recovery store; called once, at the first tool call that needs it. A failure
  // makes every such call a tool error with the message.
  std::function<Result<std::unique_ptr<RecoveryStore>>()> open_store;
};

class McpServer {
 public:
  explicit McpServer(McpServerOptions options);
  ~McpServer();
  McpServer(const McpServer&) = delete;
  McpServer& operator=(const McpServer&) = delete;

  // Answers one message (without its LF). Returns the response line without LF, or empty
  // when nothing is to be sent (notifications, responses, blank lines).
  std::string HandleMessage(std::string_view message);
  // The response to a message that was longer than max_message_bytes; `head`/`tail` are its
  // first and last bytes (up to 4 KiB each), searched for the request id.
  std::string OversizeResponse(std::string_view head, std::string_view tail) const;

  // Reads messages from `in_fd` until end of input, writes responses to `out_fd`. Returns
  // the exit status: 0 at end of input, 1 when reading or writing failed (message on stderr).
  int Serve(int in_fd, int out_fd);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace caveman::internal

#endif  // CAVEMAN_CLI_INTERNAL_MCP_SERVER_H_
