#!/usr/bin/env python3
"""Whole-process benchmark driver for scripts/bench (see there for usage).

Runs, in one invocation: cat, uniq, zstd -3, jq -c . (JSON) and `caveman-engine compress`
on a generated CI log and a generated kubectl-like JSON dump (64 MiB by default), one input
of every content type built from fixtures/, and the CI log / JSON dump at 1, 4, 16 and 64 MiB
for peak RSS; `compress --follow` on the CI log and on four times it (its peak RSS must not
grow with the input); a 4 KiB input (the CI log's head) run --small-runs times each by cat,
zstd -3 and compress, interleaved (min / p25 / median wall ms); then issue 19's goals, each
judged from this run's figures ("n/a" when --mib is not 64). Every output is checked before its speed is reported: caveman results are
retrieved from the store and compared with the input byte for byte (pass-through outputs
must equal the input) and a second run must produce the same bytes; zstd output is
decompressed and compared; jq output must parse; cat output must equal the input.
Speed is the best wall time of --runs runs (the machine is shared); CPU is user + sys of
that run; RSS is the peak over all runs (ru_maxrss of the measured process); "load" is the
1-minute load average right after the runs (other work on the machine).
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIB = 1 << 20


class CheckFailed(Exception):
    pass


def run_measured(cmd, stdin_path, stdout_path, stderr_path, env=None):
    """Runs cmd (argv) with files as stdin/stdout/stderr; returns (wall, cpu, maxrss_kib, rc)."""
    import time
    with open(stdin_path, "rb") as fi, open(stdout_path, "wb") as fo, open(stderr_path, "wb") as fe:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdin=fi, stdout=fo, stderr=fe, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, p.returncode


def same_file(a, b):
    return subprocess.run(["cmp", "-s", a, b]).returncode == 0


class Bench:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.cave = args.cave
        self.env = dict(os.environ, CAVEMAN_HOME=os.path.join(work, "home"))
        self.env.pop("CAVEMAN_CCR_DB", None)

    def path(self, name):
        return os.path.join(self.work, name)

    def measure(self, name, cmd, inp, check):
        """Best-of-N run of cmd on inp; check(out, err, inp) raises CheckFailed."""
        best = None
        peak = 0
        first_out = None
        for i in range(self.args.runs):
            out, err = self.path("out.%d" % i), self.path("err.%d" % i)
            wall, cpu, rss, rc = run_measured(cmd, inp, out, err, self.env)
            if rc != 0:
                raise CheckFailed("%s: exit %d: %s" % (name, rc, open(err, errors="replace").read()[:300]))
            if i == 0:
                info = check(out, err, inp)
                first_out = out
            elif not same_file(first_out, out):
                raise CheckFailed("%s: run %d produced different bytes" % (name, i + 1))
            peak = max(peak, rss)
            if best is None or wall < best[0]:
                best = (wall, cpu)
        size = os.path.getsize(inp)
        return {
            "name": name, "bytes": size, "wall": best[0], "cpu": best[1],
            "load": os.getloadavg()[0],
            "mbs": size / 1e6 / max(best[0], 1e-6), "rss_mib": peak / 1024.0,
            "out_bytes": os.path.getsize(first_out), **info,
        }

    # ---- checks

    def check_cat(self, out, err, inp):
        if not same_file(out, inp):
            raise CheckFailed("cat output differs")
        return {"ratio": 0.0, "note": ""}

    def check_uniq(self, out, err, inp):
        if os.path.getsize(out) > os.path.getsize(inp):
            raise CheckFailed("uniq grew the input")
        return {"ratio": 1 - os.path.getsize(out) / os.path.getsize(inp), "note": "bytes"}

    def check_zstd(self, out, err, inp):
        back = self.path("zstd.back")
        with open(out, "rb") as fi, open(back, "wb") as fo:
            subprocess.run(["zstd", "-d", "-q", "-c"], stdin=fi, stdout=fo, check=True)
        if not same_file(back, inp):
            raise CheckFailed("zstd round trip differs")
        return {"ratio": 1 - os.path.getsize(out) / os.path.getsize(inp), "note": "bytes"}

    def check_jq(self, out, err, inp):
        if subprocess.run(["jq", "-e", "type", out], stdout=subprocess.DEVNULL).returncode != 0:
            raise CheckFailed("jq output does not parse")
        return {"ratio": 1 - os.path.getsize(out) / os.path.getsize(inp), "note": "bytes"}

    def check_caveman(self, out, err, inp):
        lines = [l for l in open(err, errors="replace").read().splitlines() if l.startswith("{")]
        if not lines:
            raise CheckFailed("no report on stderr")
        rep = json.loads(lines[-1])
        handle = rep.get("recovery_handle")
        if handle:
            back = self.path("retrieved")
            with open(back, "wb") as fo:
                rc = subprocess.run([self.cave, "retrieve", handle], stdout=fo, env=self.env).returncode
            if rc != 0 or not same_file(back, inp):
                raise CheckFailed("round trip via retrieve differs for " + handle)
            if os.path.getsize(out) >= os.path.getsize(inp) and rep["tokens_after"] >= rep["tokens_before"]:
                raise CheckFailed("accepted output does not save tokens")
        elif not same_file(out, inp):
            raise CheckFailed("pass-through output differs from the input")
        return {"ratio": rep.get("ratio", 0), "note": "tokens",
                "type": rep.get("content_type"), "accepted": bool(handle),
                "method": rep.get("method", "")}

    def caveman(self, name, inp, type_=None, follow=False):
        cmd = [self.cave, "compress"] + (["--type", type_] if type_ else []) + (["--follow"] if follow else [])
        return self.measure(name, cmd, inp, self.check_caveman)

    def small(self, inp, commands, runs):
        """Wall time of whole runs on a small input (interleaved_wall_ms); the first run of each
        command is checked like the big ones. One row per command with min / p25 / median ms."""
        checks = {name: (cmd, check) for name, cmd, check in commands}

        def run_once(name, first):
            cmd, check = checks[name]
            out, err = self.path("small.out"), self.path("small.err")
            wall, _, _, rc = run_measured(cmd, inp, out, err, self.env)
            if rc != 0:
                raise CheckFailed("%s: exit %d: %s" % (name, rc, open(err, errors="replace").read()[:300]))
            if first:
                check(out, err, inp)
            return wall * 1000

        times = interleaved_wall_ms([name for name, _, _ in commands], runs, run_once)
        return [{"name": name, "bytes": os.path.getsize(inp), "load": os.getloadavg()[0], **wall_summary(v)}
                for name, v in times.items()]


def interleaved_wall_ms(names, runs, run_once, warm_up=3):
    """Whole runs interleaved (shared with scripts/bench_wall): every name once per round, the
    order alternating, `warm_up` rounds first that are not counted. run_once(name, first) runs
    one and returns its wall milliseconds (`first`: the first round, to check the output).
    Returns {name: sorted milliseconds of the `runs` counted rounds}."""
    times = {name: [] for name in names}
    for r in range(max(runs, 1) + warm_up):
        for name in (names if r % 2 == 0 else names[::-1]):
            ms = run_once(name, r == 0)
            if r >= warm_up:
                times[name].append(ms)
    return {name: sorted(v) for name, v in times.items()}


def wall_summary(v):
    """runs, min, p25 and median of sorted milliseconds."""
    return {"runs": len(v), "min": v[0], "p25": v[len(v) // 4], "median": statistics.median(v)}


def gen(script, mib, dest):
    with open(dest, "wb") as fo:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", script), str(mib)],
                       stdout=fo, check=True)
    if script == "gen_ci_log.py":  # exact size, like the CLI limit
        with open(dest, "r+b") as f:
            f.truncate(int(mib * MIB))


def scaled(src_files, target, dest, keep_header=False):
    """Concatenation of src_files repeated up to `target` bytes (whole copies). With
    keep_header, only the first copy keeps the first line (table header)."""
    data = b"".join(open(f, "rb").read() for f in src_files)
    if not data.endswith(b"\n"):
        data += b"\n"
    body = data.split(b"\n", 1)[1] if keep_header else data
    out = [data]
    size = len(data)
    while size + len(body) <= target:
        out.append(body)
        size += len(body)
    with open(dest, "wb") as f:
        f.write(b"".join(out))
    return dest


def scaled_json(src, target, dest):
    """The JSON document `src` with the elements of its largest array (top level or one level
    down) repeated until the serialisation (2-space indentation) reaches `target` bytes."""
    doc = json.load(open(src))
    holder, key = None, None
    best = doc if isinstance(doc, list) else None
    if isinstance(doc, dict):
        for k, v in doc.items():
            if isinstance(v, list) and v and (best is None or len(v) > len(best)):
                holder, key, best = doc, k, v
    if not best:
        shutil.copyfile(src, dest)
        return dest
    one = len(json.dumps(best, indent=2))
    reps = max(1, target // max(one, 1))
    grown = best * reps
    if holder is None:
        doc = grown
    else:
        holder[key] = grown
    with open(dest, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    return dest


def fx(*parts):
    return os.path.join(ROOT, "fixtures", *parts)


# Content type → (fixture files, how to scale to the target size: "lines" repeats the file,
# "table" repeats it without its header line, "json" repeats its largest array's elements,
# "" keeps the fixture as it is)
TYPE_INPUTS = [
    ("log", None, ""),  # the CI log
    ("json", None, ""),  # the JSON dump
    ("repetition", None, ""),  # the CI log, forced
    ("terminal", [fx("terminal", "build_session.in")], "lines"),
    ("diff", [fx("diff", "long_context.in")], "lines"),
    ("search-result", [fx("search-result", "grep_listing.in")], "lines"),
    ("text", [fx("text", "report.in")], "lines"),
    ("tabular", [fx("tabular", "csv_hosts.in")], "table"),
    ("config", [fx("config", "ini_sections_no_final_newline.in")], "lines"),
    ("code", [fx("code", "python_models.in")], "lines"),
    ("html", [fx("html", "docs_page.in")], "lines"),
    ("test-report", [fx("detect", "test-report", "pytest_json_report.json")], "json"),
    ("toolschema", [fx("toolschema", "openai_functions.in")], "json"),
    ("toolschema-annotations", [fx("toolschema-annotations", "mcp_tools.in")], "json"),
    ("toon", [fx("toon", "catalog.in")], "json"),
    ("a11y", [fx("a11y", "orders_page.in")], ""),  # repeated nodes would repeat node ids
]


def fmt_table(rows, cols):
    head = "| " + " | ".join(c[0] for c in cols) + " |"
    sep = "|" + "|".join("---:" if c[2] else "---" for c in cols) + "|"
    body = ["| " + " | ".join(c[1](r) for c in cols) + " |" for r in rows]
    return "\n".join([head, sep] + body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cave", required=True)
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--type-mib", type=float, default=8)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sizes", default="1,4,16,64")
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "docs", "perf"))
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "PERFORMANCE.md"))
    ap.add_argument("--charts", action="store_true")
    ap.add_argument("--small-runs", type=int, default=100,
                    help="runs of each command on the 4 KiB input (interleaved; median reported)")
    ap.add_argument("--check", action="store_true",
                    help="small inputs, one run, every output verified; no timings reported, "
                         "no docs or charts written (run by ctest as bench.check)")
    args = ap.parse_args()
    if args.check:
        args.mib, args.type_mib, args.runs, args.sizes, args.charts = 1, 0.25, 1, "1", False
        args.small_runs = 2
    work = tempfile.mkdtemp(prefix="caveman-bench-")
    try:
        return run(args, work)
    except CheckFailed as e:
        print("CHECK FAILED: %s" % e, file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args, work):
    b = Bench(args, work)
    ci, js = b.path("ci.log"), b.path("dump.json")
    gen("gen_ci_log.py", args.mib, ci)
    gen("gen_json_dump.py", args.mib, js)
    load = os.getloadavg()[0]
    print("inputs: CI log %d bytes, JSON dump %d bytes; %d runs each, best wall time; "
          "load average %.1f on %d cores" % (os.path.getsize(ci), os.path.getsize(js), args.runs,
                                           load, os.cpu_count()), flush=True)

    def show(r):
        print("  %-38s %8.1f MB/s %7.2f s CPU %7.1f MiB RSS  ratio %.4f %s" % (
            r["name"], r["mbs"], r["cpu"], r["rss_mib"], r["ratio"], r.get("note", "")), flush=True)
        return r

    # 1. The big inputs beside the baselines.
    big = []
    for label, inp in (("CI log", ci), ("JSON dump", js)):
        big.append(show({**b.measure("cat", ["cat"], inp, b.check_cat), "input": label}))
        big.append(show({**b.measure("uniq", ["uniq"], inp, b.check_uniq), "input": label}))
        big.append(show({**b.measure("zstd -3", ["zstd", "-3", "-q", "-c"], inp, b.check_zstd), "input": label}))
        if inp == js:
            big.append(show({**b.measure("jq -c .", ["jq", "-c", "."], inp, b.check_jq), "input": label}))
        big.append(show({**b.caveman("caveman compress", inp), "input": label}))
        if inp == ci:
            big.append(show({**b.caveman("caveman compress --type repetition", inp, "repetition"),
                             "input": label}))
            big.append(show({**b.caveman("caveman compress --follow", inp, follow=True), "input": label}))
    # --follow holds a bounded window: its peak RSS on a log four times as large must stay where
    # it was. (A table row only: the chart compares tools on the same bytes.)
    ci4 = b.path("ci.x4")
    gen("gen_ci_log.py", 4 * args.mib, ci4)
    large_label = "CI log, %d MiB" % (4 * args.mib)
    follow_large = show({**b.caveman("caveman compress --follow", ci4, follow=True), "input": large_label})
    os.unlink(ci4)

    # 2. One input of every content type (forced type).
    # Every type at the same size (--type-mib): the generated inputs are made at that size too,
    # so the chart's bars compare like with like (issue 19); only a11y stays one fixture.
    types = []
    ci_t, js_t = b.path("ci.type"), b.path("json.type")
    gen("gen_ci_log.py", args.type_mib, ci_t)
    gen("gen_json_dump.py", args.type_mib, js_t)
    for t, files, scale in TYPE_INPUTS:
        if t in ("log", "repetition"):
            inp, src = ci_t, "gen_ci_log.py %g" % args.type_mib
        elif t == "json":
            inp, src = js_t, "gen_json_dump.py %g" % args.type_mib
        else:
            target = int(args.type_mib * MIB)
            dest = b.path("type." + t)
            if scale == "json":
                inp = scaled_json(files[0], target, dest)
                src = os.path.relpath(files[0], ROOT) + " (largest array repeated)"
            else:
                inp = scaled(files, target if scale else 0, dest, scale == "table")
                src = os.path.relpath(files[0], ROOT) + (" ×%d" % max(1, round(os.path.getsize(inp) / os.path.getsize(files[0]))) if scale else "")
        r = show({**b.caveman("caveman --type " + t, inp, t), "ctype": t, "source": src})
        types.append(r)

    # 3. Peak RSS against input size.
    sizes = [int(s) for s in args.sizes.split(",")]
    rss = []
    for mib in sizes:
        ci_n, js_n = b.path("ci.%d" % mib), b.path("json.%d" % mib)
        gen("gen_ci_log.py", mib, ci_n)
        gen("gen_json_dump.py", mib, js_n)
        row = {"mib": mib}
        for key, name, inp, type_, follow in (("log", "compress (log)", ci_n, None, False),
                                              ("repetition", "--type repetition", ci_n, "repetition", False),
                                              ("follow", "compress --follow", ci_n, None, True),
                                              ("json", "compress (json)", js_n, None, False)):
            r = b.caveman("caveman %s %d MiB" % (name, mib), inp, type_, follow)
            row[key] = r["rss_mib"]
            row[key + "_mbs"] = r["mbs"]
        z = b.measure("zstd -3 %d MiB" % mib, ["zstd", "-3", "-q", "-c"], ci_n, b.check_zstd)
        row["zstd"] = z["rss_mib"]
        print("  RSS at %3d MiB: log %.1f, repetition %.1f, follow %.1f, json %.1f, zstd %.1f MiB" % (
            mib, row["log"], row["repetition"], row["follow"], row["json"], row["zstd"]), flush=True)
        rss.append(row)

    # 4. A small input: the first 4 KiB of the CI log, whole runs beside cat and zstd -3.
    small_inp = b.path("ci.4k")
    with open(ci, "rb") as fi, open(small_inp, "wb") as fo:
        fo.write(fi.read(4096))
    small = b.small(small_inp, [("cat", ["cat"], b.check_cat),
                                ("zstd -3", ["zstd", "-3", "-q", "-c"], b.check_zstd),
                                ("caveman compress", [b.cave, "compress"], b.check_caveman)],
                    args.small_runs)
    for r in small:
        print("  4 KiB %-32s min %6.1f  p25 %6.1f  median %6.1f ms (%d runs)" % (
            r["name"], r["min"], r["p25"], r["median"], r["runs"]), flush=True)

    goal_rows = goals(big, follow_large, small, args)
    for g in goal_rows:
        print("  goal %-58s %-44s %s" % (g["goal"], g["measured"], g["met"]), flush=True)

    if args.check:
        n = len(big) + 1 + len(types) + 5 * len(rss) + len(small)
        print("bench check ok: %d outputs verified (caveman round trips, baselines' outputs), "
              "%d types" % (n, len(types)))
        return 0

    # Tables.
    t1 = fmt_table(big + [follow_large], [
        ("input", lambda r: r["input"], False),
        ("command", lambda r: "`%s`" % r["name"].replace("caveman", "caveman-engine"), False),
        ("MB/s (wall)", lambda r: "%.1f" % r["mbs"], True),
        ("CPU s", lambda r: "%.2f" % r["cpu"], True),
        ("peak RSS MiB", lambda r: "%.1f" % r["rss_mib"], True),
        ("bytes out", lambda r: "{:,}".format(r["out_bytes"]), True),
        ("ratio", lambda r: ("%.4f %s" % (r["ratio"], r["note"])) if r["note"] else "—", True),
        ("load", lambda r: "%.1f" % r["load"], True),
    ])
    t2 = fmt_table(types, [
        ("type", lambda r: r["ctype"], False),
        ("input", lambda r: "%s (%s bytes)" % (r["source"], "{:,}".format(r["bytes"])), False),
        ("MB/s (wall)", lambda r: "%.1f" % r["mbs"], True),
        ("CPU s", lambda r: "%.2f" % r["cpu"], True),
        ("peak RSS MiB", lambda r: "%.1f" % r["rss_mib"], True),
        ("token ratio", lambda r: "%.4f" % r["ratio"] if r["accepted"] else "pass-through", True),
        ("load", lambda r: "%.1f" % r["load"], True),
    ])
    t3 = fmt_table(rss, [
        ("input MiB", lambda r: str(r["mib"]), True),
        ("compress CI log (log) RSS MiB", lambda r: "%.1f" % r["log"], True),
        ("--type repetition RSS MiB", lambda r: "%.1f" % r["repetition"], True),
        ("compress --follow CI log RSS MiB", lambda r: "%.1f" % r["follow"], True),
        ("compress JSON dump (json) RSS MiB", lambda r: "%.1f" % r["json"], True),
        ("zstd -3 RSS MiB", lambda r: "%.1f" % r["zstd"], True),
    ])
    t4 = fmt_table(small, [
        ("command", lambda r: "`%s`" % r["name"].replace("caveman", "caveman-engine"), False),
        ("runs", lambda r: str(r["runs"]), True),
        ("min ms", lambda r: "%.1f" % r["min"], True),
        ("p25 ms", lambda r: "%.1f" % r["p25"], True),
        ("median ms", lambda r: "%.1f" % r["median"], True),
        ("load", lambda r: "%.1f" % r["load"], True),
    ])
    t5 = fmt_table(goal_rows, [
        ("goal (issue 19)", lambda r: r["goal"], False),
        ("measured in this run", lambda r: r["measured"], False),
        ("met?", lambda r: r["met"], False),
    ])
    header = ("Generated by `scripts/bench` (inputs: `scripts/gen_ci_log.py %d`, "
              "`scripts/gen_json_dump.py %d`; best wall time of %d runs; load average %.1f on "
              "%d cores at the start; binary `%s`)." % (
                  args.mib, args.mib, args.runs, load, os.cpu_count(),
                  os.path.relpath(args.cave, ROOT)))
    text = "\n\n".join([header, "Whole process, 64 MiB-class inputs:", t1,
                        "One input per content type (`--type T`):", t2,
                        "Peak RSS against input size:", t3,
                        "A 4 KiB input (the CI log's first 4,096 bytes), wall time of whole runs "
                        "from fork to exit, interleaved, three warm-up rounds not counted:", t4,
                        "The goals of issue 19, from the tables above:", t5])
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "results.md"), "w") as f:
        f.write(text + "\n")
    print("\n" + text)

    # Results block of docs/PERFORMANCE.md.
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    if os.path.exists(args.doc):
        doc = open(args.doc).read()
        if begin in doc and end in doc:
            doc = doc[:doc.index(begin) + len(begin)] + "\n" + text + "\n" + doc[doc.index(end):]
            open(args.doc, "w").write(doc)
            print("updated %s" % os.path.relpath(args.doc, ROOT))

    if args.charts:
        charts(args.out_dir, big, types, rss, work, args, load)
    return 0


def goals(big, follow_large, small, args):
    """Issue 19's goals, each judged from this run's rows: met or not, with the figures."""
    def row(inp, name):
        return next(r for r in big if r["input"] == inp and r["name"] == name)

    def small_row(name):
        return next(r for r in small if r["name"] == name)

    out = []
    ci, z = row("CI log", "caveman compress"), row("CI log", "zstd -3")
    out.append({"goal": "%d MiB CI log: CPU <= 0.5 s, wall <= 3x zstd -3" % args.mib,
                "measured": "%.2f CPU-s; %.2f s wall = %.1fx zstd's %.2f s" % (
                    ci["cpu"], ci["wall"], ci["wall"] / z["wall"], z["wall"]),
                "met": "yes" if ci["cpu"] <= 0.5 and ci["wall"] <= 3 * z["wall"] else "no"})
    js = row("JSON dump", "caveman compress")
    limit = 1.5 * js["bytes"] / MIB
    out.append({"goal": "%d MiB JSON dump: CPU <= 0.6 s, peak RSS <= 1.5x input" % args.mib,
                "measured": "%.2f CPU-s; %.1f MiB (limit %.1f)" % (js["cpu"], js["rss_mib"], limit),
                "met": "yes" if js["cpu"] <= 0.6 and js["rss_mib"] <= limit else "no"})
    fo, fo4 = row("CI log", "caveman compress --follow"), follow_large
    # Flat: on four times the input, peak RSS grows by less than a sixteenth of the input added
    # (a view or window that grew with the input would add at least all of it).
    added = (fo4["bytes"] - fo["bytes"]) / MIB
    flat = fo4["rss_mib"] - fo["rss_mib"] < added / 16
    out.append({"goal": "--follow on the CI log: >= 150 MB/s, flat RSS",
                "measured": "%.0f MB/s; peak RSS %.1f MiB at %d MiB, %.1f at %d MiB" % (
                    fo["mbs"], fo["rss_mib"], fo["bytes"] // MIB, fo4["rss_mib"], fo4["bytes"] // MIB),
                "met": "yes" if fo["mbs"] >= 150 and flat else "no"})
    if args.mib != 64:  # the goals name the 64 MiB inputs
        for g in out:
            g["met"] = "n/a (--mib %d)" % args.mib
    cave, zs, cat = small_row("caveman compress"), small_row("zstd -3"), small_row("cat")
    out.append({"goal": "4 KiB compress: <= 15 ms wall (median)",
                "measured": "%.1f ms median of %d (zstd -3 %.1f, cat %.1f)" % (
                    cave["median"], cave["runs"], zs["median"], cat["median"]),
                "met": "n/a (--check)" if args.check else "yes" if cave["median"] <= 15 else "no"})
    return out


def log_range(values):
    """A log-scale y range from well below the smallest bar (a bar at the floor is invisible)
    to well above the largest (room for its value label)."""
    positive = [v for v in values if v > 0] or [1.0]
    return "[%g:%g]" % (10 ** math.floor(math.log10(min(positive) / 2.0)),
                        10 ** math.ceil(math.log10(max(positive) * 2.0)))


def size_label(n):
    return "%.1f MiB" % (n / MIB) if n >= MIB / 10 else "%.0f KiB" % (n / 1024.0)


def charts(out_dir, big, types, rss, work, args, load_start):
    """Three charts, each comparing series measured on the same inputs, with the values on the
    bars and the load average (start and end of the run) on every chart."""
    load = "load average %.1f at the start, %.1f at the end, %d cores" % (
        load_start, os.getloadavg()[0], os.cpu_count())
    big_dat = os.path.join(work, "big.dat")
    with open(big_dat, "w") as f:
        for i, r in enumerate(big):
            colour = 2 if r["name"].startswith("caveman") else 1
            f.write('%d "%s: %s" %.1f %d\n' % (i, r["input"], r["name"], r["mbs"], colour))
    type_dat = os.path.join(work, "types.dat")
    with open(type_dat, "w") as f:
        for i, r in enumerate(types):
            f.write('%d "%s (%s)" %.1f\n' % (i, r["ctype"], size_label(r["bytes"]), r["mbs"]))
    rss_dat = os.path.join(work, "rss.dat")
    with open(rss_dat, "w") as f:
        for r in rss:
            f.write("%d %.1f %.1f %.1f %.1f %.1f\n" % (r["mib"], r["log"], r["repetition"], r["json"], r["zstd"],
                                                      r["follow"]))
    tp_png = os.path.join(out_dir, "throughput.png")
    types_png = os.path.join(out_dir, "types.png")
    rss_png = os.path.join(out_dir, "rss.png")
    lines = [
        'set terminal pngcairo size 1200,650 noenhanced',
        'set style fill solid 0.8 border -1',
        'set boxwidth 0.7',
        'set logscale y',
        'set grid ytics',
        'set key off',
        'set xtics rotate by -40 font ",9"',
        'set output "%s"' % tp_png,
        'set title "Whole process, best wall time of %d: the %d MiB CI log and JSON dump, '
        'every tool on the same bytes\\n%s"' % (args.runs, args.mib, load),
        'set ylabel "MB/s (log scale)"',
        'set yrange %s' % log_range([r["mbs"] for r in big]),
        'plot "%s" using 1:3:($4==1?0x888888:0x2a6fb0):xtic(2) with boxes lc rgb variable, \\' % big_dat,
        '     "%s" using 1:3:(sprintf("%%.0f", $3)) with labels offset 0,0.7 font ",9"' % big_dat,
        'set output "%s"' % types_png,
        'set title "caveman-engine --type T, every type on about %g MiB (a11y: one fixture), '
        'best wall time of %d\\n%s"' % (args.type_mib, args.runs, load),
        'set yrange %s' % log_range([r["mbs"] for r in types]),
        'plot "%s" using 1:3:xtic(2) with boxes lc rgb 0x2a6fb0, \\' % type_dat,
        '     "%s" using 1:3:(sprintf("%%.1f", $3)) with labels offset 0,0.7 font ",9"' % type_dat,
        'set output "%s"' % rss_png,
        'set title "Peak RSS against input size (every series on the same sizes)\\n%s"' % load,
        'unset logscale y',
        'set yrange [0:*]',
        'set logscale x 2',
        'set xtics rotate by 0 font ",10"',
        'set xlabel "input MiB"',
        'set ylabel "peak RSS (MiB)"',
        'set key top left',
        'plot "%s" using 1:2 with linespoints lw 2 title "caveman compress, CI log (log, streaming)", \\' % rss_dat,
        '     "%s" using 1:3 with linespoints lw 2 title "caveman --type repetition (streaming)", \\' % rss_dat,
        '     "%s" using 1:4 with linespoints lw 2 title "caveman compress, JSON dump (json, in memory)", \\' % rss_dat,
        '     "%s" using 1:6 with linespoints lw 2 title "caveman compress --follow, CI log", \\' % rss_dat,
        '     "%s" using 1:5 with linespoints lw 2 dt 2 title "zstd -3", \\' % rss_dat,
        '     "%s" using 1:2:(sprintf("%%.0f", $2)) with labels offset 0,0.8 font ",8" notitle, \\' % rss_dat,
        '     "%s" using 1:4:(sprintf("%%.0f", $4)) with labels offset 0,0.8 font ",8" notitle' % rss_dat,
    ]
    gp = subprocess.run(["gnuplot"], input="\n".join(lines) + "\n", text=True, capture_output=True)
    if gp.returncode != 0:
        print("gnuplot failed: " + gp.stderr, file=sys.stderr)
    else:
        print("charts: %s" % ", ".join(os.path.relpath(p, ROOT) for p in (tp_png, types_png, rss_png)))


if __name__ == "__main__":
    sys.exit(main())
