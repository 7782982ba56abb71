#!/usr/bin/env python3
"""Where a profiled run spends its samples, by stage (issue 19, docs/PERFORMANCE.md).

  perf record -e cpu-clock -F 2000 --call-graph dwarf,16384 -o /tmp/run.perf \\
      build/cli/caveman-engine compress < /tmp/ci64exact > /dev/null
  perf script -i /tmp/run.perf > /tmp/run.txt
  scripts/perf_stages.py /tmp/run.txt                       # the engine's stages
  scripts/perf_stages.py /tmp/run.txt --leaves LogRun::Emit  # the functions sampled under one

Reads `perf script` output (one call stack per sample, innermost frame first). Without
--leaves, prints for each stage of the pipeline the samples whose stack holds its function,
and their share of all samples. A sample counts once per stage; indented lines are parts of
the stages above them (the log compressor also runs inside the stability guard), and the
token count runs on both threads. With --leaves ANCHOR, the innermost functions of the samples
under ANCHOR (a substring of a frame's name), most frequent first.
"""
import collections
import re
import sys

# (label, names): a sample is in a stage when a frame of its stack names one of the functions
# (the name appears in the frame, not followed by more of an identifier: "internal::Select"
# does not match "internal::SelectArrayElements").
STAGES = [
    ("read (ReadStage::Run)", ["ReadStage::Run"]),
    ("select / detection (Select)", ["caveman::internal::Select"]),
    ("transform (Transform)", ["caveman::internal::Transform"]),
    ("  JSON selection (SelectArrayElements)", ["SelectArrayElements"]),
    ("  JSON trees of elements (JsonTree::Parse)", ["JsonTree::Parse"]),
    ("  log compressor (LogCompressor::Transform)", ["LogCompressor::Transform"]),
    ("stability guard (Stabilise)", ["caveman::internal::Stabilise"]),
    ("gate (Gate)", ["caveman::internal::Gate"]),
    ("marker map (MarkerMapBlob)", ["MarkerMapBlob"]),
    ("commit (CommitStage::Commit)", ["CommitStage::Commit"]),
    ("input worker (InputWorker::Run)", ["InputWorker::Run"]),
    ("  SHA-256 (SHA256_Update)", ["SHA256_Update"]),
    ("  zstd frame (FrameEncoder::Pump)", ["FrameEncoder::Pump"]),
    ("token counting, any thread (O200kTokenizer)", ["O200kTokenizer::CountWellFormed", "O200kTokenizer::CountPieces"]),
]


def in_stage(stack, patterns):
    return any(p.search(frame) for frame in stack for p in patterns)


def stacks(path):
    stack = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                if stack:
                    yield stack
                stack = []
                continue
            if line[0] in " \t":
                parts = line.strip().split(" ", 1)
                if len(parts) == 2:
                    stack.append(re.sub(r"\+0x[0-9a-f]+$", "", parts[1].rsplit(" (", 1)[0]))
            elif stack:
                yield stack
                stack = []
    if stack:
        yield stack


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    path = args[0]
    if len(args) == 3 and args[1] == "--leaves":
        anchor = args[2]
        leaves = collections.Counter()
        total = under = 0
        for s in stacks(path):
            total += 1
            if any(anchor in frame for frame in s):
                under += 1
                leaves[s[0].replace("(anonymous namespace)::", "").split("(")[0][-90:]] += 1
        print(f"{under} of {total} samples under {anchor}")
        for name, n in leaves.most_common(25):
            print(f"{n:6d} {name}", flush=True)
        return
    if len(args) != 1:
        sys.exit(__doc__)
    patterns = {label: [re.compile(re.escape(n) + r"(?![A-Za-z0-9_])") for n in names] for label, names in STAGES}
    counts = collections.Counter()
    total = 0
    for s in stacks(path):
        total += 1
        for label, _ in STAGES:
            if in_stage(s, patterns[label]):
                counts[label] += 1
    if total == 0:
        sys.exit("perf_stages: no samples")
    print(f"{total} samples")
    for label, _ in STAGES:
        print(f"{label:48s} {counts[label]:6d} {100.0 * counts[label] / total:5.1f} %")


if __name__ == "__main__":
    main()
