#!/usr/bin/env python3
"""Golden cases of Tree-GRPO's own credit code, for tests/it/process_credit.rs.

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0 numpy==2.4.6
    git clone https://github.com/AMAP-ML/Tree-GRPO && git -C Tree-GRPO checkout 90b1709
    .venv/bin/python tests/golden/tree_grpo/generate.py Tree-GRPO > tests/golden/tree_grpo/cases.json

Tree-GRPO's functions are run as it wrote them, taken from its files by name (the modules import
verl's workers and ray, which these functions do not use):
- verl/trainer/ppo/ray_trainer_ts.py: `compute_advantage`, estimators `tree` (inter + intra),
  `tree_2norm` and `tree_inner`;
- verl/trainer/ppo/core_algos.py: `compute_grpo_outcome_advantage`,
  `compute_tree_grpo_outcome_advantage`.

A row is one leaf trajectory, its reward on its last response token, `uid` its prompt and
`tree_uid` its tree, as the tree-search rollout sets them. A `DataProto` stand-in holds the tensors
and fields `compute_advantage` reads.

Each case gives its leaves (prompt, tree, reward) and each leaf's advantage per estimator.

Made on 2026-12-02 with Python 3.11.7, torch 2.15.0 (CPU) and numpy 2.4.6, from Tree-GRPO commit
90b170995d996d772d68117e0c7bd0b8fe00d393.
"""

import ast
import json
import sys
from pathlib import Path
import types
from collections import defaultdict

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import definitions, dump, run  # noqa: E402  (tests/golden/reference.py)

COMMIT = "90b170995d996d772d68117e0c7bd0b8fe00d393"
TRAINER = "verl/trainer/ppo/ray_trainer_ts.py"
ALGOS = "verl/trainer/ppo/core_algos.py"




def load(repo):
    algos = {"torch": torch, "np": np, "defaultdict": defaultdict}
    for node in definitions(f"{repo}/{ALGOS}", ["compute_grpo_outcome_advantage", "compute_tree_grpo_outcome_advantage",
                                                  "compute_rloo_outcome_advantage", "compute_grpo_per_token_advantage",
                                                  "compute_gae_advantage_return"]):
        exec(compile(ast.Module(body=[node], type_ignores=[]), repo, "exec"), algos)
    ns = {"torch": torch, "np": np, "DataProto": object, "core_algos": types.SimpleNamespace(**algos)}
    run(definitions(f"{repo}/{TRAINER}", ["compute_advantage"]), ns, repo)
    return ns


# Leaves: (prompt, tree, reward).
CASES = {
    # reference/credit-schemes-process.md §5d: tree 1 leaves [1, 0], tree 2 [0, 0].
    "worked_example": [("p", "t1", 1.0), ("p", "t1", 0.0), ("p", "t2", 0.0), ("p", "t2", 0.0)],
    # Three trees of uneven size, one of a single leaf; a second prompt with one tree; a prompt
    # with a single leaf.
    "uneven": [
        ("p", "t1", 1.0), ("p", "t1", 0.0), ("p", "t1", 1.0), ("p", "t2", 0.5), ("p", "t2", 0.0), ("p", "t3", 1.0),
        ("q", "u1", 0.0), ("q", "u1", 1.0), ("q", "u1", 0.2),
        ("s", "v1", 1.0),
    ],
}
ESTIMATORS = ["tree", "tree_2norm", "tree_inner"]
WIDTH = 3


def run_case(ns, leaves, estimator):
    bs = len(leaves)
    rewards = torch.zeros(bs, WIDTH)
    attention = torch.zeros(bs, 1 + WIDTH, dtype=torch.long)
    attention[:, 0] = 1
    for i, (_, _, r) in enumerate(leaves):
        n = 1 + i % WIDTH
        attention[i, 1 : 1 + n] = 1
        rewards[i, n - 1] = r
    data = types.SimpleNamespace(
        batch={"token_level_rewards": rewards, "responses": torch.zeros(bs, WIDTH, dtype=torch.long), "attention_mask": attention},
        non_tensor_batch={
            "uid": np.array([p for p, _, _ in leaves], dtype=object),
            "tree_uid": np.array([f"{p}/{t}" for p, t, _ in leaves], dtype=object),
        },
    )
    data = ns["compute_advantage"](data, estimator)
    return [float(data.batch["advantages"][i, 0]) for i in range(bs)]


def main():
    ns = load(sys.argv[1])
    out = {
        "source": {
            "repo": "AMAP-ML/Tree-GRPO",
            "commit": COMMIT,
            "functions": [f"{TRAINER}: compute_advantage", f"{ALGOS}: compute_grpo_outcome_advantage, compute_tree_grpo_outcome_advantage"],
        },
        "runtime": {"python": sys.version.split()[0], "torch": torch.__version__, "numpy": np.__version__},
        "cases": [
            {
                "name": name,
                "leaves": [list(leaf) for leaf in leaves],
                "advantages": {e: run_case(ns, leaves, e) for e in ESTIMATORS},
            }
            for name, leaves in CASES.items()
        ],
    }
    dump(out)


if __name__ == "__main__":
    main()
