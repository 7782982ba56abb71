#!/usr/bin/env python3
"""JSON-RPC golden tests of `caveman-engine mcp` (issue 14): malformed requests, unknown
methods and tools, notifications, huge arguments, EOF mid-message, CRLF, non-UTF-8 input and
a binary original. Every session is one process fed a byte string on stdin; the responses
(one JSON line each) are compared exactly with the golden lines below, or field by field
where they carry a handle. The server must exit 0 at end of input and never crash.

  tests/mcp/jsonrpc_test.py CAVEMAN_ENGINE
"""
import base64
import json
import os
import subprocess
import sys
import tempfile

CAVE = os.path.abspath(sys.argv[1])
work = tempfile.mkdtemp()
env = dict(os.environ, CAVEMAN_HOME=os.path.join(work, "home"))
checks = 0


def session(data: bytes):
    p = subprocess.run([CAVE, "mcp"], input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=300)
    assert p.returncode == 0, f"exit {p.returncode}, stderr {p.stderr[-500:]!r}"
    out = p.stdout.decode("utf-8")
    assert out == "" or out.endswith("\n"), "responses end with LF"
    lines = out.splitlines()
    for line in lines:
        json.loads(line)  # every response is one JSON value on one line
    return lines


def golden(name, data: bytes, want):
    global checks
    got = session(data)
    assert got == want, f"{name}:\n got  {got}\n want {want}"
    checks += 1


def err(id_json, code, message):
    return '{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}' % (id_json, code, json.dumps(message))


def req(id_, method, params=None):
    m = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        m["params"] = params
    return (json.dumps(m) + "\n").encode()


PARSE = "Parse error: the message is not one JSON value in UTF-8"
golden("not json", b"hello\n", [err("null", -32700, PARSE)])
golden("truncated object", b'{"jsonrpc":"2.0","id":1,\n', [err("null", -32700, PARSE)])
golden("two values on a line", b'{"jsonrpc":"2.0","id":1,"method":"ping"} {}\n', [err("null", -32700, PARSE)])
golden("invalid UTF-8", b'{"jsonrpc":"2.0","id":1,"method":"p\xffing"}\n', [err("null", -32700, PARSE)])
golden("deep nesting", b"[" * 20000 + b"]" * 20000 + b"\n", [err("null", -32700, PARSE)])
golden("batch", b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n',
       [err("null", -32600, "Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18); send one message per line")])
golden("scalar", b"42\n", [err("null", -32600, "Invalid Request: a message must be a JSON object")])
golden("no jsonrpc", b'{"id":7,"method":"ping"}\n', [err("7", -32600, 'Invalid Request: jsonrpc must be "2.0"')])
golden("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":7,"method":"ping"}\n', [err("7", -32600, 'Invalid Request: jsonrpc must be "2.0"')])
golden("no method", b'{"jsonrpc":"2.0","id":"a"}\n', [err('"a"', -32600, "Invalid Request: no method")])
golden("method not a string", b'{"jsonrpc":"2.0","id":2,"method":5}\n', [err("2", -32600, "Invalid Request: method must be a string")])
golden("id null", b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n', [err("null", -32600, "Invalid Request: id must be a string or an integer")])
golden("id float", b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}\n', [err("null", -32600, "Invalid Request: id must be a string or an integer")])
golden("id object", b'{"jsonrpc":"2.0","id":{},"method":"ping"}\n', [err("null", -32600, "Invalid Request: id must be a string or an integer")])
golden("unknown method", req(3, "resources/list"), [err("3", -32601, "Method not found: resources/list")])
golden("string id kept", req("q\"1", "ping"), ['{"jsonrpc":"2.0","id":"q\\"1","result":{}}'])
golden("notifications get no answer", b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
       b'{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}\n' + req(4, "ping"),
       ['{"jsonrpc":"2.0","id":4,"result":{}}'])
golden("client responses are ignored", b'{"jsonrpc":"2.0","id":9,"result":{}}\n' + req(5, "ping"), ['{"jsonrpc":"2.0","id":5,"result":{}}'])
golden("blank lines, CRLF", b"\n  \r\n" + req(6, "ping").replace(b"\n", b"\r\n"), ['{"jsonrpc":"2.0","id":6,"result":{}}'])
golden("params not an object", req(8, "tools/list", [1]), [err("8", -32602, "Invalid params: params must be an object")])
golden("tools/call without params", req(10, "tools/call"), [err("10", -32602, "Invalid params: tools/call needs params {name, arguments}")])
golden("tools/call without name", req(11, "tools/call", {"arguments": {}}), [err("11", -32602, "Invalid params: tools/call needs 'name' (the tool)")])
golden("tool name not a string", req(12, "tools/call", {"name": 3}), [err("12", -32602, "Invalid params: tools/call 'name' must be a string")])
golden("arguments not an object", req(13, "tools/call", {"name": "caveman_stats", "arguments": "x"}),
       [err("13", -32602, "Invalid params: tools/call 'arguments' must be an object")])
golden("unknown tool", req(14, "tools/call", {"name": "rm_rf", "arguments": {}}),
       [err("14", -32602, "Unknown tool: rm_rf (tools: caveman_compress, caveman_retrieve, caveman_stats)")])
# EOF mid-message: the partial last message is answered as what it is, then exit 0
golden("EOF mid-message", req(15, "ping") + b'{"jsonrpc":"2.0","id":16,"meth', ['{"jsonrpc":"2.0","id":15,"result":{}}', err("null", -32700, PARSE)])
golden("last message without LF", req(17, "ping").rstrip(b"\n"), ['{"jsonrpc":"2.0","id":17,"result":{}}'])
golden("empty input", b"", [])


def tool_result(line, id_):
    m = json.loads(line)
    assert m["id"] == id_ and "result" in m, line[:300]
    return m["result"]


def call(id_, name, args):
    return req(id_, "tools/call", {"name": name, "arguments": args})


# initialize and tools/list shapes
init, tools = session(req(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}) + req(2, "tools/list"))
r = tool_result(init, 1)
assert r["protocolVersion"] == "2025-06-18" and "tools" in r["capabilities"] and r["serverInfo"]["name"] == "caveman-engine", init
t = tool_result(tools, 2)["tools"]
assert [x["name"] for x in t] == ["caveman_compress", "caveman_retrieve", "caveman_stats"], tools
for x in t:
    assert x["inputSchema"]["type"] == "object" and all("description" in p for p in x["inputSchema"]["properties"].values())
checks += 2

# argument errors are tool errors (isError) with a clear text
lines = session(call(1, "caveman_compress", {}) + call(2, "caveman_compress", {"text": 5}) +
                call(3, "caveman_retrieve", {"handle": "ccr_x", "lines": "1:2", "grep": "a"}) +
                call(4, "caveman_retrieve", {"handle": "ccr_x", "context": -1, "grep": "a"}) +
                call(5, "caveman_retrieve", {"handle": "ccr_x", "bogus": 1}) + call(6, "caveman_retrieve", {}))
want = ["caveman_compress: the argument 'text' (the tool output to compress) is required",
        "caveman_compress: argument 'text' must be a string, got a number that is not a non-negative integer",
        "caveman_retrieve: use only one of lines, bytes, json_pointer, grep per call",
        "caveman_retrieve: argument 'context' must be a non-negative integer, got a number that is not a non-negative integer",
        "caveman_retrieve: unknown argument 'bogus' (arguments: bytes, context, grep, handle, json_pointer, lines, marker, query)",
        "caveman_retrieve: the argument 'handle' is required: the recovery handle (ccr_ + 32 hex digits) from the caveman_compress result"]
for i, line in enumerate(lines):
    r = tool_result(line, i + 1)
    assert r["isError"] is True and r["content"][0]["text"] == want[i], (line, want[i])
    checks += 1

# huge arguments: over the 16 MiB limit -> -32600 with the request's id (found at the end,
# where the SDK puts it), memory bounded; the next message is still served
big = "x" * (17 * 1024 * 1024)
over = (json.dumps({"method": "tools/call", "params": {"name": "caveman_compress", "arguments": {"text": big}}, "jsonrpc": "2.0", "id": 21}) + "\n").encode()
lines = session(over + req(22, "ping"))
m = json.loads(lines[0])
assert m["id"] == 21 and m["error"]["code"] == -32600 and "over 16777216 bytes" in m["error"]["message"], lines[0][:300]
assert lines[1] == '{"jsonrpc":"2.0","id":22,"result":{}}'
checks += 1
# a large but allowed argument works: 10 MiB of log, compressed and retrieved byte-exact
log = "".join(f"2026-01-01T00:00:{i % 60:02d}Z INFO worker {i % 7} processed batch {i % 13}\n" if i % 997 else f"2026-01-01T00:00:00Z ERROR job {i} failed: disk full\n" for i in range(200000))
assert 9 * 1024 * 1024 < len(log) < 16 * 1024 * 1024
lines = session(call(31, "caveman_compress", {"text": log}))
r = tool_result(lines[0], 31)
h = r["structuredContent"]["recovery_handle"]
assert not r["isError"] and len(r["content"][0]["text"]) < len(log) // 10 and h in r["content"][1]["text"], lines[0][:400]
lines = session(call(32, "caveman_retrieve", {"handle": h}) + call(33, "caveman_retrieve", {"handle": h, "grep": "ERROR", "context": 0}))
assert tool_result(lines[0], 32)["content"][0]["text"] == log
g = tool_result(lines[1], 33)["content"][0]["text"]
assert g.count(":") >= 160 and "--\n" in g and all(":" in l or l == "--" for l in g.splitlines()), g[:300]
checks += 2

# bytes that are not UTF-8 (a byte slice cutting a multi-byte character) come back as a
# base64 resource blob, byte-exact
utf8 = "".join("2026-01-01 INFO café crème brûlée served\n" for i in range(3000)) + "2026-01-01 ERROR échec\n"
raw = utf8.encode()
lines = session(call(40, "caveman_compress", {"text": utf8}))
hb = tool_result(lines[0], 40)["structuredContent"]["recovery_handle"]
cut = raw.index("é".encode()) + 1  # inside the 2-byte é
lines = session(call(41, "caveman_retrieve", {"handle": hb, "bytes": f"{cut}:{cut + 100}"}) +
                call(42, "caveman_retrieve", {"handle": hb, "bytes": f"0:{cut}"}) +
                call(43, "caveman_retrieve", {"handle": hb, "lines": "1:2"}))
for line, id_, want in [(lines[0], 41, raw[cut:cut + 100]), (lines[1], 42, raw[:cut])]:
    r = tool_result(line, id_)
    blob = [c for c in r["content"] if c["type"] == "resource"][0]["resource"]
    assert base64.b64decode(blob["blob"]) == want and blob["uri"] == "caveman://" + hb, line[:300]
    checks += 1
assert tool_result(lines[2], 43)["content"][0]["text"] == "".join(utf8.splitlines(keepends=True)[:2])
checks += 1

# stats and marker
lines = session(call(51, "caveman_stats", {}) + call(52, "caveman_retrieve", {"handle": hb, "marker": "k1"}))
assert tool_result(lines[0], 51)["structuredContent"]["totals"]["count"] >= 2
assert tool_result(lines[1], 52)["isError"] is True
checks += 2
print(f"ok: {checks} JSON-RPC checks")
