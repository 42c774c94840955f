#!/usr/bin/env python3
"""Prints the fuzzing table of docs/RELIABILITY.md from fuzz/runs.tsv (every run, summed per
target) and fuzz/regressions/ (the findings kept, fixed)."""
import collections
import pathlib

here = pathlib.Path(__file__).resolve().parent
runs = collections.defaultdict(lambda: [0, 0, 0, []])
for line in (here / "runs.tsv").read_text().splitlines():
    target, executions, seconds, result = line.split("\t")
    entry = runs[target]
    entry[0] += int(executions)
    entry[1] += int(seconds)
    entry[2] += 1
    if result != "ok":
        entry[3].append(result)
targets = sorted(set(runs) | {p.name for p in (here / "corpus").iterdir() if p.is_dir()})
print("| target | executions | runs | seconds | kept corpus | regression fixtures (fuzz/regressions/) |")
print("|---|---:|---:|---:|---:|---|")
for target in targets:
    executions, seconds, count, _ = runs[target]
    corpus = len(list((here / "corpus" / target).glob("*"))) if (here / "corpus" / target).is_dir() else 0
    found = sorted(p.name for p in (here / "regressions" / target).glob("*")) if (here / "regressions" / target).is_dir() else []
    print(f"| `{target}` | {executions:,} | {count} | {seconds} | {corpus} | {', '.join(found) or 'none'} |")
