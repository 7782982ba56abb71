#!/usr/bin/env python3
"""Peak RSS of `caveman-engine compress --type T` for every registered type (issue 15, item 2).

Each type is forced onto six input shapes, so the figure is the compressor's worst case over
them, not its best: the generated CI log, the generated JSON dump, 2-byte lines ("a\\n", the
most lines per byte), one long line of random words (no line breaks at all), an indented JSON
array of short numbers (the most JSON values per byte) and the type's
own costliest fixture scaled to the size (FIXTURES below; repeated, or its largest JSON array
repeated, as scripts/bench does). Prints a
Markdown table: per type and size, the worst peak RSS over the shapes, the shape it came from,
the bound 3 x input + 64 MiB, and whether the run stayed inside it.

  scripts/memory_table.py BINARY [MiB ...]     (default sizes: 1 8 64)
  scripts/memory_table.py BINARY --check 4     (exit 1 if any run exceeds the bound)
  scripts/memory_table.py BINARY --shapes 8    (one row per type and shape, for calibration)

Not a timing measurement; each run checks that stdout is non-empty (original or a view).
"""
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = ["json", "code", "log", "diff", "search-result", "test-report", "html", "toolschema",
         "toolschema-annotations", "toon", "a11y", "tabular", "config", "repetition",
         "terminal", "text"]


def shape_bytes(shape, mib):
    n = int(mib * 1048576)
    if shape == "ci-log":
        out = subprocess.run([sys.executable, os.path.join(HERE, "gen_ci_log.py"), str(mib)],
                             check=True, capture_output=True).stdout
        return out[:n]
    if shape == "json-dump":
        return subprocess.run([sys.executable, os.path.join(HERE, "gen_json_dump.py"), str(mib)],
                              check=True, capture_output=True).stdout
    if shape == "short-lines":
        return b"a\n" * (n // 2)
    if shape == "one-line":
        rng = random.Random(15)
        words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
                 for _ in range(4096)]
        parts, size = [], 0
        while size < n:
            w = words[rng.randrange(len(words))]
            parts.append(w)
            size += len(w) + 1
        return b" ".join(parts)[:n]
    if shape == "json-numbers":
        # An indented JSON array of millions of short numbers: the most values per byte of a
        # plausible document (metrics, ids), the costliest shape for JSON trees.
        rng = random.Random(5)
        parts, size = [], 4
        while size < n - 12:
            v = str(rng.randint(0, 1000)).encode()
            parts.append(v)
            size += len(v) + 4
        return b"[\n  " + b",\n  ".join(parts) + b"\n]\n"
    raise ValueError(shape)


SHAPES = ["ci-log", "json-dump", "short-lines", "one-line", "json-numbers"]

# The fixture per type whose scaled copy costs its compressor the most memory per byte
# (measured on every fixture of the type; the streaming types have the generated inputs).
FIXTURES = {
    "code": "code/typescript_cache.in", "diff": "diff/no_newline_at_eof.in",
    "search-result": "search-result/grep_listing.in", "test-report": "detect/test-report/pytest_json_report.json",
    "html": "html/docs_page.in", "toolschema": "toolschema/openai_functions.in",
    "toolschema-annotations": "toolschema-annotations/mcp_tools.in", "toon": "toon/tricky.in",
    "a11y": "a11y/orders_page.in", "tabular": "tabular/csv_hosts_query.in",
    "config": "config/fourteen_lines.in", "terminal": "terminal/build_session.in", "text": "text/report.in",
}


def fixture_bytes(ctype, mib, dest):
    sys.path.insert(0, HERE)
    import bench  # scripts/bench.py: the same scaling as the benchmark's per-type inputs
    src = os.path.join(HERE, "..", "fixtures", FIXTURES[ctype])
    try:
        json.load(open(src))
        bench.scaled_json(src, int(mib * 1048576), dest)
    except ValueError:
        bench.scaled([src], int(mib * 1048576), dest)


def peak_rss_kib(binary, path, ctype, home):
    env = dict(os.environ, CAVEMAN_HOME=home, CAVEMAN_CACHE_DIR=os.path.join(home, "cache"))
    with open(path, "rb") as src, tempfile.TemporaryFile() as out:
        p = subprocess.run(["/usr/bin/time", "-v", binary, "compress", "--type", ctype],
                           stdin=src, stdout=out, stderr=subprocess.PIPE, env=env)
        out.seek(0, os.SEEK_END)
        emitted = out.tell()
    err = p.stderr.decode("utf-8", "replace")
    rss = None
    for line in err.splitlines():
        if "Maximum resident set size" in line:
            rss = int(line.rsplit(":", 1)[1])
    if p.returncode != 0 or rss is None or emitted == 0:
        raise SystemExit("compress --type %s failed (exit %d, %d bytes out):\n%s"
                         % (ctype, p.returncode, emitted, err[-2000:]))
    return rss


def main():
    args = sys.argv[1:]
    if not args:
        raise SystemExit(__doc__)
    binary = os.path.abspath(args[0])
    check = "--check" in args
    per_shape = "--shapes" in args
    sizes = [float(a) for a in args[1:] if not a.startswith("--")] or [1, 8, 64]
    failures = []
    with tempfile.TemporaryDirectory() as work:
        home = os.path.join(work, "home")
        print("| type | input | worst peak RSS | worst shape | bound (3x + 64 MiB) | within |")
        print("|---|---:|---:|---|---:|---|")
        for mib in sizes:
            inputs = {}
            for shape in SHAPES:
                path = os.path.join(work, shape)
                with open(path, "wb") as f:
                    f.write(shape_bytes(shape, mib))
                inputs[shape] = path
            for ctype in TYPES:
                worst, worst_shape, worst_size = 0, "", 0
                shapes = dict(inputs)
                if ctype in FIXTURES:
                    shapes["fixture"] = os.path.join(work, "fixture." + ctype)
                    fixture_bytes(ctype, mib, shapes["fixture"])
                for shape, path in shapes.items():
                    rss = peak_rss_kib(binary, path, ctype, home)
                    if per_shape:
                        lines = open(path, "rb").read().count(b"\n")
                        print("  %s %s: %.1f MiB (%d bytes, %d lines)"
                              % (ctype, shape, rss / 1024, os.path.getsize(path), lines), flush=True)
                    if rss > worst:
                        worst, worst_shape, worst_size = rss, shape, os.path.getsize(path)
                bound = (3 * worst_size + (64 << 20)) // 1024
                ok = worst <= bound
                if not ok:
                    failures.append((ctype, mib, worst_shape, worst))
                print("| %s | %g MiB | %.1f MiB | %s | %.0f MiB | %s |"
                      % (ctype, mib, worst / 1024, worst_shape, bound / 1024, "yes" if ok else "NO"),
                      flush=True)
    if check and failures:
        for f in failures:
            print("over the bound: --type %s, %g MiB %s: %d KiB" % (f[0], f[1], f[2], f[3]),
                  file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
