// Real MCP client test (issue 14): the official TypeScript SDK (@modelcontextprotocol/sdk,
// pinned in package.json / package-lock.json) spawns `caveman-engine mcp` over stdio
// (StdioClientTransport), lists the tools, compresses a large log and retrieves it by handle
// (whole, lines, bytes, grep, query, marker), comparing bytes with the original.
//   node client_test.mjs CAVEMAN_ENGINE STORE_DIR LOG EXPECTED_GREP_C2 MCP_JSON
// The server is started with the command and args of examples/agents/.mcp.json (MCP_JSON),
// its command "caveman-engine" replaced by the built binary.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const [bin, home, logPath, grepPath, mcpJson] = process.argv.slice(2);
const server = JSON.parse(fs.readFileSync(mcpJson, "utf8")).mcpServers.caveman;
assert.equal(server.command, "caveman-engine", ".mcp.json starts caveman-engine");
const log = fs.readFileSync(logPath);
const logText = log.toString("utf8");
assert.ok(Buffer.from(logText, "utf8").equals(log), "the test log must be UTF-8");

const transport = new StdioClientTransport({
  command: bin,
  args: server.args,
  env: { ...process.env, ...(server.env ?? {}), CAVEMAN_HOME: home },
  stderr: "inherit",
});
const client = new Client({ name: "caveman-engine-test", version: "1.0.0" });
await client.connect(transport);
let checks = 0;
const ok = (cond, msg) => { assert.ok(cond, msg); checks++; };

ok(client.getServerVersion()?.name === "caveman-engine", "serverInfo.name");
ok(client.getServerCapabilities()?.tools !== undefined, "capabilities.tools");
await client.ping();

const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
assert.deepEqual(names, ["caveman_compress", "caveman_retrieve", "caveman_stats"]);
for (const t of tools) {
  ok(t.inputSchema.type === "object" && typeof t.description === "string" && t.description.length > 40, `${t.name} schema`);
}
ok(tools.find((t) => t.name === "caveman_retrieve").inputSchema.required.includes("handle"), "handle required");

// compress the large log
const c = await client.callTool({ name: "caveman_compress", arguments: { text: logText } });
ok(!c.isError, "compress is not an error");
const view = c.content[0].text;
ok(typeof view === "string" && view.length > 0 && view.length < logText.length / 4, `view is smaller (${view.length} vs ${logText.length})`);
const handle = c.structuredContent.recovery_handle;
ok(/^ccr_[0-9a-f]{32}$/.test(handle), `handle ${handle}`);
ok(c.structuredContent.content_type === "log", "content_type log");
ok(c.content[1].text.includes(handle) && c.content[1].text.includes(`caveman-engine retrieve ${handle}`), "handle and command in the result text");
ok(c.structuredContent.retrieve_command === `caveman-engine retrieve ${handle}`, "retrieve_command");

const retrieve = async (args) => {
  const r = await client.callTool({ name: "caveman_retrieve", arguments: { handle, ...args } });
  assert.ok(!r.isError, `retrieve ${JSON.stringify(args)}: ${r.content?.[0]?.text}`);
  assert.ok(r.content[1].text.includes(handle), "handle in the retrieve result");
  return Buffer.from(r.content[0].text, "utf8");
};

// whole original, byte for byte
ok((await retrieve({})).equals(log), "whole original equals the log");

// line ranges against a split of the original (lines keep their LF)
const lines = logText.split(/(?<=\n)/);
for (const [a, b] of [[100, 180], [1, 1], [lines.length - 5, lines.length + 10]]) {
  const want = Buffer.from(lines.slice(a - 1, b).join(""), "utf8");
  ok((await retrieve({ lines: `${a}:${b}` })).equals(want), `lines ${a}:${b}`);
}
ok((await retrieve({ lines: "200:" })).equals(Buffer.from(lines.slice(199).join(""), "utf8")), "lines 200:");
// byte ranges (ASCII log: byte offsets are character offsets)
ok((await retrieve({ bytes: "1000:5000" })).equals(log.subarray(1000, 5000)), "bytes 1000:5000");
// grep with context, against grep -n -E -C 2 run by the shell on the same file
ok((await retrieve({ grep: "ERROR|FAIL", context: 2 })).equals(fs.readFileSync(grepPath)), "grep -C 2 equals grep -n -E -C 2");
// a broad query (what the JSON note's "one broad caveman_retrieve" implies)
const narrowed = await retrieve({ query: "billing timeout" });
ok(narrowed.length > 0 && narrowed.length < log.length, "broad query narrows");

// tool errors: isError with a clear text
const bad = await client.callTool({ name: "caveman_retrieve", arguments: { handle: "ccr_00000000000000000000000000000000" } });
ok(bad.isError === true && /not found/.test(bad.content[0].text), "unknown handle is a tool error");
const badRange = await client.callTool({ name: "caveman_retrieve", arguments: { handle, lines: "9:3" } });
ok(badRange.isError === true && /ends before it starts/.test(badRange.content[0].text), "bad range is a tool error");
// by marker: each of the first markers of the map (from the CLI, same store) gives exactly the
// original bytes of its range
const map = JSON.parse(execFileSync(bin, ["retrieve", handle, "--map", "--format", "json"],
                                    { env: { ...process.env, CAVEMAN_HOME: home } }).toString("utf8"));
ok(map.handle === handle && map.markers.length >= 3, `marker map has ${map.markers.length} markers`);
for (const m of map.markers.slice(0, 5)) {
  const got = await retrieve({ marker: m.marker });
  ok(got.equals(log.subarray(m.byte_begin, m.byte_end)), `marker ${m.marker} (${m.kind}, lines ${m.first_line}-${m.last_line})`);
}
const marker = await client.callTool({ name: "caveman_retrieve", arguments: { handle, marker: "m1" } });
ok(marker.isError === true && marker.content[0].text.length > 20, "a non-integer marker is a clear tool error");
const past = await client.callTool({ name: "caveman_retrieve", arguments: { handle, marker: map.markers.length + 1 } });
ok(past.isError === true && /marker/.test(past.content[0].text), "a marker past the last one is a tool error");
// unknown tool: a JSON-RPC error (-32602)
await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), (e) => e instanceof McpError && e.code === -32602);
checks++;

const s = await client.callTool({ name: "caveman_stats", arguments: {} });
ok(!s.isError && s.structuredContent.totals?.count >= 1, "stats count the record");

await client.close();
console.log(`ok: ${checks} MCP client checks (SDK client, handle ${handle})`);
