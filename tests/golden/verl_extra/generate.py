#!/usr/bin/env python3
"""verl golden vectors that ../shared/golden/verl lacks, in its schema, for tests/it/golden_verl.rs.

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0 numpy==2.4.6
    git clone https://github.com/volcengine/verl && git -C verl checkout b178a3cd56f58b2d502255daba591e92833930a7
    .venv/bin/python tests/golden/verl_extra/generate.py verl tests/golden/verl_extra

`compute_rloo_vectorized_outcome_advantage` (verl/trainer/ppo/core_algos.py, the commit of
../shared/golden/verl) is run as verl wrote it, taken from the file by name without its registry
decorator (the module imports verl's configs and workers, which it does not use), on CPU with
`torch.set_num_threads(1)`, once in float32 (the run verl does: its `torch.bincount` with weights
is float64, so the result is float64) and once with the inputs cast to float64.

Made on 2026-12-02 with Python 3.11.7, torch 2.15.0 (CPU) and numpy 2.4.6.
"""

import ast
import json
import sys
from typing import Optional

import numpy as np
import torch

COMMIT = "b178a3cd56f58b2d502255daba591e92833930a7"
FILE = "verl/trainer/ppo/core_algos.py"

CASES = {
    # Groups of 4, 3 and 1 (a singleton gets 0), rewards anywhere in the response, negative ones.
    "groups_4_3_1": {
        "rewards": [
            [0.0, 0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.3, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.7, 0.0],
            [0.0, 0.0, -1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.5, 0.0], [0.0, 0.0, 0.0, 0.0, 0.1],
            [0.9, 0.0, 0.0, 0.0, 0.0],
        ],
        "lengths": [3, 5, 2, 4, 3, 4, 5, 1],
        "index": ["a", "a", "a", "a", "b", "b", "b", "c"],
    },
    # Two interleaved groups of two, equal rewards in one.
    "interleaved_pairs": {
        "rewards": [[0.0, 1.0, 0.0], [0.0, 0.0, 0.2], [1.0, 0.0, 0.0], [0.0, 0.0, 0.6]],
        "lengths": [2, 3, 1, 3],
        "index": ["p", "q", "p", "q"],
    },
}


def load(repo):
    tree = ast.parse(open(f"{repo}/{FILE}").read())
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "compute_rloo_vectorized_outcome_advantage")
    node.decorator_list = []
    ns = {"torch": torch, "np": np, "Optional": Optional, "AlgoConfig": object}
    exec(compile(ast.Module(body=[node], type_ignores=[]), FILE, "exec"), ns)
    return ns["compute_rloo_vectorized_outcome_advantage"]


def main():
    torch.set_num_threads(1)
    fn = load(sys.argv[1])
    for name, case in CASES.items():
        rewards = torch.tensor(case["rewards"], dtype=torch.float32)
        mask = torch.zeros(rewards.shape, dtype=torch.int64)
        for i, n in enumerate(case["lengths"]):
            mask[i, :n] = 1
        index = np.array(case["index"], dtype=object)
        adv, ret = fn(token_level_rewards=rewards, response_mask=mask, index=index)
        adv64, ret64 = fn(token_level_rewards=rewards.double(), response_mask=mask, index=index)
        out = {
            "estimator": "rloo_vectorized",
            "case": name,
            "verl_commit": COMMIT,
            "called_via": "verl.trainer.ppo.core_algos.compute_rloo_vectorized_outcome_advantage(token_level_rewards, response_mask, index)",
            "params": {"epsilon": 1e-06},
            "inputs": {
                "token_level_rewards": rewards.tolist(),
                "response_mask": mask.tolist(),
                "index": case["index"],
                "dtypes": {"token_level_rewards": "float32", "response_mask": "int64"},
            },
            "outputs": {"advantages": adv.tolist(), "returns": ret.tolist(), "dtype": str(adv.dtype).replace("torch.", "")},
            "outputs_float64": {"advantages": adv64.tolist(), "returns": ret64.tolist(), "dtype": "float64"},
            "runtime": {"python": sys.version.split()[0], "torch": torch.__version__, "numpy": np.__version__},
            "notes": "made by tests/golden/verl_extra/generate.py",
        }
        with open(f"{sys.argv[2]}/rloo_vectorized__{name}.json", "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
