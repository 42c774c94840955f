#!/usr/bin/env python3
"""Times verl's own advantage estimators beside vantage's on the same batch and prints the ratios.

Not part of CI. One command sets everything up (a local venv under bench/.venv, from PyPI) and runs:

    python3 bench/vs_verl.py [ROWS] [MAX_LEN]        # default 32768 512

The batch is built from a deterministic formula that vantage's `credit::batch::synthetic_token_batch`
builds the same way: row i has length 1 + (i*2654435761 mod 2^32) mod MAX_LEN, group i // 8, a binary
score at its last valid token (1 when i*40503 mod 7 < 3), values ((31i + 17t) mod 101)/100 - 0.5.
verl gets it right-padded to (ROWS, MAX_LEN) with an int64 mask and a uid string per group, as its
trainer builds it; vantage stores the valid tokens only, with a mask of ones. Both run on one thread;
each figure is the median of 5 runs after one warm-up.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / "bench" / ".venv"
PY = VENV / "bin" / "python"
# verl 0.9.1 imports these at `import verl.trainer.ppo.core_algos`; installed without verl's heavier extras.
PACKAGES = ["numpy", "torch", "packaging", "ray", "tensordict>=0.8,<=0.10", "omegaconf",
            "transformers>=5.5.3,<5.11", "codetiming", "orjson"]


def setup():
    if not PY.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    probe = subprocess.run([str(PY), "-c", "import verl.trainer.ppo.core_algos"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([str(PY), "-m", "pip", "install", "-q", *PACKAGES], check=True)
        subprocess.run([str(PY), "-m", "pip", "install", "-q", "--no-deps", "verl==0.9.1"], check=True)


def median_ms(fn):
    fn()
    times = []
    for _ in range(5):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return times[2], times[0], times[4]


def verl_timings(rows, max_len):
    import numpy as np
    import torch
    from verl.trainer.ppo import core_algos as c

    torch.set_num_threads(1)
    i = np.arange(rows, dtype=np.uint64)
    lengths = (1 + ((i * np.uint64(2654435761)) % np.uint64(1 << 32)) % np.uint64(max_len)).astype(np.int64)
    scores = np.where((i * np.uint64(40503)) % np.uint64(7) < 3, 1.0, 0.0).astype(np.float32)
    t = np.arange(max_len)
    mask = (t[None, :] < lengths[:, None]).astype(np.int64)
    rewards = np.zeros((rows, max_len), dtype=np.float32)
    rewards[np.arange(rows), lengths - 1] = scores
    values = (((31 * i.astype(np.int64))[:, None] + 17 * t[None, :]) % 101).astype(np.float32) / 100.0 - 0.5
    index = np.array([f"uid-{k // 8}" for k in range(rows)], dtype=object)
    r, m, v = torch.from_numpy(rewards), torch.from_numpy(mask), torch.from_numpy(values)

    class Config(dict):
        gamma = 1.0
        lam = 1.0

        def get(self, key, default=None):
            return getattr(self, key, default)

    config = Config()
    calls = {
        "grpo": lambda: c.compute_grpo_outcome_advantage(r, m, index),
        "grpo_vectorized": lambda: c.compute_grpo_vectorized_outcome_advantage(r, m, index),
        "rloo": lambda: c.compute_rloo_outcome_advantage(r, m, index, config=config),
        "rloo_vectorized": lambda: c.compute_rloo_vectorized_outcome_advantage(r, m, index, config=config),
        "gae": lambda: c.compute_gae_advantage_return(r, v, m, gamma=1.0, lam=1.0),
        "reinforce_plus_plus": lambda: c.compute_reinforce_plus_plus_outcome_advantage(r, m, config=config),
    }
    out = {name: median_ms(fn) for name, fn in calls.items()}
    out["_tokens"] = int(mask.sum())
    out["_versions"] = f"verl {__import__('verl').__version__ if hasattr(__import__('verl'), '__version__') else '0.9.1'}, torch {torch.__version__}, numpy {np.__version__}"
    return out


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--verl-only":
        rows, max_len = int(sys.argv[2]), int(sys.argv[3])
        print(json.dumps(verl_timings(rows, max_len)))
        return
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 32768
    max_len = int(sys.argv[2]) if len(sys.argv) > 2 else 512
    setup()
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    verl = json.loads(subprocess.run([str(PY), __file__, "--verl-only", str(rows), str(max_len)],
                                     check=True, capture_output=True, text=True, env=env).stdout.strip().splitlines()[-1])
    cargo = ["cargo", "run", "--quiet", "--release", "--no-default-features", "--features", "examples", "--example", "kernel_timings", "--",
             str(rows), str(max_len)]
    lines = subprocess.run(cargo, cwd=ROOT, check=True, capture_output=True, text=True).stdout.splitlines()
    vantage = {d["estimator"]: d for d in map(json.loads, lines)}
    copy = vantage["plain_copy"]["median_ms"]
    copy_values = vantage["plain_copy_with_values"]["median_ms"]
    print(f"batch {rows} x {max_len}, group 8: verl {verl['_tokens']} valid tokens of {rows * max_len} padded; "
          f"vantage {vantage['plain_copy']['tokens']} tokens · {verl['_versions']} · 1 thread, median of 5")
    print(f"plain copy of vantage's arrays: {copy:.2f} ms (reward + mask), {copy_values:.2f} ms (with values)")
    cores = vantage["grpo"].get("cores", 1)
    print(f"{'estimator':<22}{'verl ms':>10}{'vantage ms':>12}{'verl/vantage':>14}{'vantage/copy':>14}"
          f"{f'{cores} cores ms':>14}{'verl/that':>11}")
    for name in ["grpo", "grpo_vectorized", "rloo", "rloo_vectorized", "gae", "reinforce_plus_plus"]:
        v = verl[name][0]
        ours = vantage[name]["median_ms"]
        all_cores = vantage[name].get("all_cores_ms", ours)
        floor = copy_values if name == "gae" else copy
        print(f"{name:<22}{v:>10.2f}{ours:>12.2f}{v / ours:>13.1f}x{ours / floor:>13.2f}x"
              f"{all_cores:>14.2f}{v / all_cores:>10.1f}x")


if __name__ == "__main__":
    main()
