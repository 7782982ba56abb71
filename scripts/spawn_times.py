#!/usr/bin/env python3
"""Wall time from spawn to exit of short commands, interleaved (issue 19, docs/PERFORMANCE.md).

  scripts/spawn_times.py 60 /bin/true "build/cli/caveman-engine --version" /tmp/hw /tmp/hws

Runs each command (split on spaces, no shell) RUNS times from this process, round-robin, with
stdout and stderr discarded, and prints the p25 and median milliseconds of each. /tmp/hw and
/tmp/hws above are a C++ hello world linked against the shared libstdc++ and with
-static-libstdc++ -static-libgcc:
  printf '#include <iostream>\\nint main(){std::cout<<"x\\\\n";}\\n' > /tmp/hw.cc
  g++ -O2 -o /tmp/hw /tmp/hw.cc; g++ -O2 -static-libstdc++ -static-libgcc -o /tmp/hws /tmp/hw.cc
Every command must exit 0. Timings only, no thresholds.
"""
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    runs = int(sys.argv[1])
    cmds = [c.split() for c in sys.argv[2:]]
    times = [[] for _ in cmds]
    for _ in range(runs):
        for i, cmd in enumerate(cmds):
            start = time.monotonic()
            rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
            times[i].append((time.monotonic() - start) * 1000)
            if rc != 0:
                sys.exit(f"spawn_times: {' '.join(cmd)} exited {rc}")
    for cmd, t in zip(cmds, times):
        t.sort()
        print(f"{' '.join(cmd)}: p25 {t[len(t) // 4]:.2f} ms, median {statistics.median(t):.2f} ms ({runs} runs)")


if __name__ == "__main__":
    main()
