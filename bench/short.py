#!/usr/bin/env python3
"""The benchmarks' short mode, which CI runs (.ci/run): a few speed figures of the build the tests
use, each a ratio to a yardstick timed beside it in the same sitting, held against the ratio recorded
in bench/short_ratios.json. A ratio more than twice its recorded one is a regression and fails.

    python3 bench/short.py [VANTAGE]            # checks; VANTAGE defaults to target/debug/vantage
    python3 bench/short.py [VANTAGE] --record   # writes the measured ratios as the recorded ones

The figures, on a 32 MiB run that bench/load.py gen writes (deterministic, the default profile):
- `load`: `vantage check RUN` against `wc -l RUN` (the floor: every byte looked at once);
- `forensics`: `vantage forensics RUN --json` against `vantage check RUN` (both load; the target is
  forensics at no more than half a load, docs/PERFORMANCE.md);
- `credit`: `vantage credit RUN --scheme grpo --out CSV` against `vantage check RUN`.
Each command runs five times in turn with its yardstick (A B A B …); the ratio is the median of the
pairs' ratios. The recorded ratios are those of the dev build (`cargo test`'s) on the 2-core machine
CI runs on: the release figures are docs/PERFORMANCE.md's.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RECORDED = os.path.join(HERE, "short_ratios.json")
PAIRS = 5


def seconds(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def ratio(a, b):
    """The median over PAIRS of time(a) / time(b), run in turn after one warm-up of each."""
    seconds(a)
    seconds(b)
    return statistics.median(seconds(a) / seconds(b) for _ in range(PAIRS))


def main():
    args = [a for a in sys.argv[1:] if a != "--record"]
    vantage = args[0] if args else os.path.join(ROOT, "target", "debug", "vantage")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(HERE, "load.py"), "gen", "32MiB", tmp], check=True,
                       stdout=subprocess.DEVNULL)
        run = os.path.join(tmp, "run_32MiB.jsonl")
        check = [vantage, "check", run]
        measured = {
            "load": ratio(check, ["wc", "-l", run]),
            "forensics": ratio([vantage, "forensics", run, "--json"], check),
            "credit": ratio([vantage, "credit", run, "--scheme", "grpo", "--out", os.path.join(tmp, "c.csv")], check),
        }
    if "--record" in sys.argv:
        with open(RECORDED, "w") as f:
            json.dump({k: round(v, 3) for k, v in measured.items()}, f, indent=1)
            f.write("\n")
        print(f"recorded {measured}")
        return
    recorded = json.load(open(RECORDED))
    failed = []
    for name, value in measured.items():
        limit = 2 * recorded[name]
        verdict = "ok" if value <= limit else "REGRESSION"
        print(f"{name}: {value:.3f}× its yardstick (recorded {recorded[name]:.3f}×, fails above {limit:.3f}×) {verdict}")
        if value > limit:
            failed.append(name)
    if failed:
        print(f"FAILED: {', '.join(failed)} more than twice the recorded ratio")
        sys.exit(1)


if __name__ == "__main__":
    main()
