#!/usr/bin/env python3
"""Regenerates the seed corpora in tests/fuzz/corpus/<target>/ from the project's own small
fixtures (fixtures/, never the third-party reference inputs) plus a few hand-written edge
cases. Run from the repository root: tests/fuzz/seed_corpus.py. Files found by fuzzing and
worth keeping (crashes fixed, new coverage) are added next to these by hand."""
import hashlib
import os
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fuzz" / "corpus"
MAX = 6 * 1024
# Registry order of compressors/registry.cc plus "auto" (fuzz_engine's byte 0 modulo 17).
TYPES = ["json", "code", "log", "diff", "search-result", "test-report", "html", "toolschema",
         "toolschema-annotations", "toon", "a11y", "tabular", "config", "repetition",
         "terminal", "text", "auto"]


def fixtures():
    """(folder type, bytes) of every small fixture input."""
    for path in sorted((ROOT / "fixtures").rglob("*")):
        if not path.is_file() or path.stat().st_size > MAX:
            continue
        if path.suffix in (".expected", ".query", ".md") or path.name.startswith("README"):
            continue
        rel = path.relative_to(ROOT / "fixtures").parts
        folder = rel[1] if rel[0] == "detect" and len(rel) > 2 else rel[0]
        yield folder, path.read_bytes()


EDGE = [
    b"", b"\n", b"\r\r\r\r", b"\x00\x00\n\x00", b"\xff\xfe\xfd", b"[[[[[[[[[[", b"{\"a\":" * 40,
    "… caveman: 3 identical lines elided …\n".encode() * 5,
    "… 4 lines elided (caveman) …\n".encode() * 5,
    b'[{"__caveman_elided__":2},{"a":1},{"a":1},{"a":1},{"a":1},{"a":1},{"a":1},{"a":1},{"a":1}]',
    b"1\tline one\n2\tline two\n3\tline three\n4\tfour\n5\tfive\n6\tsix\n7\tseven\n8\teight\n",
    b'<file path="x.py">\nimport os\ndef f():\n    return 1\n</file>\n',
    b"\x1b[31mERROR\x1b[0m failed\r\n" * 6,
]


def write(target, name, data):
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{name}-{hashlib.sha1(data).hexdigest()[:12]}").write_bytes(data)


def main():
    inputs = list(fixtures())
    for i, (folder, data) in enumerate(inputs):
        t = TYPES.index(folder) if folder in TYPES else TYPES.index("auto")
        if folder == "seed":
            t = TYPES.index("repetition")
        # Alternate the forced type and auto, and flags (query, chunked read, best-of).
        write("fuzz_engine", folder, bytes([t if i % 2 == 0 else 16, (i * 37) & 0xFF]) + data)
        write("fuzz_detect", folder, data)
        if folder in ("json", "toon", "toolschema", "toolschema-annotations", "a11y"):
            write("fuzz_json", folder, data)
            write("fuzz_toon", folder, data)
        if folder in ("tabular", "config", "test-report"):
            which = {"tabular": [0, 1], "config": [2], "test-report": [3]}[folder]
            for w in which:
                write("fuzz_parsers", folder, bytes([w]) + data)
        if i % 3 == 0:
            write("fuzz_tokens", folder, bytes([i & 0xFF]) + data)
            write("fuzz_store", folder, bytes([i & 0xFF]) + data)
    for j, data in enumerate(EDGE):
        for target in ("fuzz_detect", "fuzz_json", "fuzz_toon", "fuzz_tokens"):
            write(target, "edge", data)
        write("fuzz_engine", "edge", bytes([16, j]) + data)
        write("fuzz_parsers", "edge", bytes([j % 4]) + data)
        write("fuzz_store", "edge", bytes([j]) + data)
    # TOON text for the decoder.
    for data in (b"a: 1\nb:\n  c: x\nitems[2]{id,name}:\n  1,foo\n  2,\"b,r\"\n",
                 b"[3]: 1,2,3", b"{}", b"\"q\\\"uoted\""):
        write("fuzz_toon", "toon-text", data)


if __name__ == "__main__":
    main()
