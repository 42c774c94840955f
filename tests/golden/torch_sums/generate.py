#!/usr/bin/env python3
"""torch's own float32 sums of rows of 1 to 3000 values on the CPU, for
`credit::data::moments::torch_cpu_sum` (src/credit/data/moments.rs, its test
`torch_cpu_sum_gives_torchs_own_float32_sums`).

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0
    .venv/bin/python tests/golden/torch_sums/generate.py > tests/golden/torch_sums/sums.json

Two families of rows, each computable in Rust from its length alone:
- `mod`: xs[i] = float32(((0.37 * i) mod 1.3) + 0.01), values in (0, 1.31);
- `signed`: xs[i] = float32(((i * 7919) mod 10007) / 1000 - 5), values in [-5, 5.007), both signs.
For each n from 1 to 3000, `torch.tensor(xs, dtype=torch.float32).sum()` as the bits of its
float32 (a contiguous row: ATen's cascade sum over 8-wide vectors), on one thread.
"""

import json
import sys

import torch


def family(name, n):
    if name == "mod":
        return [((0.37 * i) % 1.3) + 0.01 for i in range(n)]
    return [((i * 7919) % 10007) / 1000.0 - 5.0 for i in range(n)]


def main():
    torch.set_num_threads(1)
    out = {"source": {"torch": torch.__version__, "python": sys.version.split()[0], "threads": 1}, "sums": {}}
    for name in ("mod", "signed"):
        bits = []
        for n in range(1, 3001):
            total = torch.tensor(family(name, n), dtype=torch.float32).sum()
            bits.append(int(total.view(torch.int32).item()) & 0xFFFFFFFF)
        out["sums"][name] = bits
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
