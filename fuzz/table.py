#!/usr/bin/env python3
"""Prints the fuzzing table of docs/RELIABILITY.md from fuzz/runs.tsv (every run, summed per
target, with what each build covered) and fuzz/regressions/ (the findings kept, fixed).

fuzz/runs.tsv: target, executions, seconds, result, build (`default`: the library without the
Parquet readers; `parquet`: built with FEATURES=parquet, which `detect` then reaches too)."""
import collections
import pathlib

here = pathlib.Path(__file__).resolve().parent
runs = collections.defaultdict(lambda: [0, 0, 0, []])
builds = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0, 0]))
for line in (here / "runs.tsv").read_text().splitlines():
    target, executions, seconds, result, build = line.split("\t")
    entry = runs[target]
    entry[0] += int(executions)
    entry[1] += int(seconds)
    entry[2] += 1
    if result != "ok":
        entry[3].append(result)
    # Per build: executions, runs, and the executions of its runs that ended clean.
    covered = builds[target][build]
    covered[0] += int(executions)
    covered[1] += 1
    covered[2] += int(executions) if result == "ok" else 0
NAMES = {"default": "default build", "parquet": "with the Parquet readers"}


def covered(target):
    parts = []
    for build, (executions, count, clean) in sorted(builds[target].items()):
        parts.append(f"{NAMES.get(build, build)}: {executions:,} in {count} run(s), {clean:,} in clean ones")
    return "; ".join(parts) or "not run"
targets = sorted(set(runs) | {p.name for p in (here / "corpus").iterdir() if p.is_dir()})
print("| target | executions | runs | seconds | what the runs covered | kept corpus | regression fixtures (fuzz/regressions/) |")
print("|---|---:|---:|---:|---|---:|---|")
for target in targets:
    executions, seconds, count, _ = runs[target]
    corpus = len(list((here / "corpus" / target).glob("*"))) if (here / "corpus" / target).is_dir() else 0
    found = sorted(p.name for p in (here / "regressions" / target).glob("*")) if (here / "regressions" / target).is_dir() else []
    print(f"| `{target}` | {executions:,} | {count} | {seconds} | {covered(target)} | {corpus} | {', '.join(found) or 'none'} |")
