"""The cost of crossing into Python (docs/PERFORMANCE.md, "vantage from Python").

    python3 bench/python.py OUT_DIR [STEPS]

Writes a vantage JSONL run of STEPS steps (default 10⁶: 125 000 trajectories of 8 steps, groups
of 8), then, on one warm run each, the median of 15 calls of:
- `run.credit("grpo")` and `.to_numpy()` in Python, against `Computation::compute` in Rust
  (examples/embed_timing.rs, release build, same file);
- `run.steps()` in Python, against `tables::steps` in Rust, and against pyarrow reading the same
  table from a Parquet file (written by pyarrow from `run.steps()`, zstd, one row group per 2²⁰ rows).

Needs the package installed from a release build (`pip install .`) and
`cargo build --release --features examples --example embed_timing`.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

import pyarrow.parquet as pq

import vantage

ROOT = pathlib.Path(__file__).resolve().parents[1]


def write_run(path: pathlib.Path, steps: int) -> None:
    per, group = 8, 8
    with path.open("w") as out:
        out.write(json.dumps({"vantage": 1, "name": f"bench/python.py: {steps} steps"}) + "\n")
        for t in range(steps // per):
            g = t // group
            reward = ((t * 7919) % 13) / 12
            row = {
                "type": "trajectory",
                "id": f"t{t}",
                "group": f"g{g}",
                "train_step": g // 64,
                "outcome": {"reward": reward, "success": reward > 0.5},
                "steps": [
                    {"kind": "think" if k < per - 1 else "answer", "action": f"step {k}", "scores": {"prm": ((t + k) % 10) / 10}}
                    for k in range(per)
                ],
            }
            out.write(json.dumps(row) + "\n")


def median(f, repeats: int = 15) -> float:
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        seconds.append(time.perf_counter() - start)
    return sorted(seconds)[len(seconds) // 2]


def main() -> None:
    out_dir = pathlib.Path(sys.argv[1])
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    out_dir.mkdir(parents=True, exist_ok=True)
    log = out_dir / f"python_bench_{steps}.jsonl"
    if not log.exists():
        write_run(log, steps)
    run = vantage.open(log)
    table = run.steps()
    parquet = out_dir / f"python_bench_{steps}_steps.parquet"
    pq.write_table(table, parquet, compression="zstd", row_group_size=1 << 20)
    python = {
        "credit_s": median(lambda: run.credit("grpo")),
        "credit_numpy_s": median(lambda: run.credit("grpo").to_numpy()),
        "steps_table_s": median(lambda: run.steps()),
        "pyarrow_parquet_s": median(lambda: pq.read_table(parquet)),
    }
    rust_bin = ROOT / "target" / "release" / "examples" / "embed_timing"
    rust = json.loads(subprocess.run([str(rust_bin), str(log), "grpo", "15"], capture_output=True, text=True, check=True).stdout)
    print(
        json.dumps(
            {
                "steps": table.num_rows,
                "python": python,
                "rust": rust,
                "credit_python_over_rust": python["credit_s"] / rust["credit_s"],
                "credit_numpy_python_over_rust": python["credit_numpy_s"] / rust["credit_s"],
                "steps_python_over_rust": python["steps_table_s"] / rust["steps_table_s"],
                "steps_python_over_pyarrow_parquet": python["steps_table_s"] / python["pyarrow_parquet_s"],
                "cpus": os.cpu_count(),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
