#!/usr/bin/env python3
"""Golden cases of LeTS's own credit code, for tests/it/process_credit.rs.

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0 numpy==2.4.6 scipy==1.17.1
    git clone https://github.com/Cheungki/LeTS && git -C LeTS checkout 9ab6e26
    .venv/bin/python tests/golden/lets/generate.py LeTS > tests/golden/lets/cases.json

LeTS's functions are run as it wrote them, taken from its files by name (the modules import verl,
which these functions do not use):
- src/verl/workers/reward_manager/lets.py: `check_content_sim`, `self_check`,
  `cross_chain_of_search_check` (scipy's `linear_sum_assignment`) and
  `LeTSRewardManagerWithSave._stepwise_reward`: each rollout's step rewards from its retrieved
  documents;
- src/verl/trainer/ppo/core_algos.py: `compute_hybrid_grpo_advantage`: GRPO over the group, each
  policy-token block before a search result rescaled by its step reward's z-score, the last block
  (the answer) not.

A rollout's response is laid out as LeTS's rollouts are: a policy block (in the loss mask) before
each search's `<result>` block (not in it), then the answer block. `grouped_info` holds what
`__call__` puts there: (row, score, search path, the documents of each search).

Each case gives its rollouts (score, the documents of each search) and each block's advantage.

Made on 2026-12-02 with Python 3.11.7, torch 2.15.0 (CPU), numpy 2.4.6 and scipy 1.17.1, from LeTS
commit 9ab6e26ea63b41506d80233db19661ca2d200d66.
"""

import ast
import json
import sys
from pathlib import Path
import types
from collections import defaultdict
from typing import List

import numpy as np
import scipy
import torch
from scipy.optimize import linear_sum_assignment

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import definitions, dump, run  # noqa: E402  (tests/golden/reference.py)

COMMIT = "9ab6e26ea63b41506d80233db19661ca2d200d66"
MANAGER = "src/verl/workers/reward_manager/lets.py"
ALGOS = "src/verl/trainer/ppo/core_algos.py"




def load(repo):
    ns = {"np": np, "torch": torch, "List": List, "defaultdict": defaultdict, "linear_sum_assignment": linear_sum_assignment}
    nodes = (
        definitions(f"{repo}/{MANAGER}", ["check_content_sim", "self_check", "cross_chain_of_search_check"])
        + definitions(f"{repo}/{MANAGER}", ["_stepwise_reward"], cls="LeTSRewardManagerWithSave")
        + definitions(f"{repo}/{ALGOS}", ["compute_hybrid_grpo_advantage"])
    )
    run(nodes, ns, repo)
    return ns


# Rollouts of one group: (score, [documents of each search]).
CASES = {
    # reference/credit-schemes-process.md §8: scores [1, .5, 0]; the best searched {d1,d2},{d2,d3},{d4}.
    "worked_example": [
        (1.0, [["d1", "d2"], ["d2", "d3"], ["d4"]]),
        (0.5, [["d1"], ["d5", "d6"]]),
        (0.0, [["d7"], ["d8"]]),
    ],
    # Five rollouts: two best (self-check), knowledge match against better ones, a well-formed
    # wrong answer (0.1), a format failure (0), one search only.
    "five": [
        (1.0, [["a", "b"], ["c"], ["a", "b", "c"]]),
        (0.6, [["a"], ["c", "d"], ["e"]]),
        (0.1, [["b", "c"], ["x"]]),
        (0.0, [["a"], ["b"]]),
        (1.0, [["d"], ["e", "f"]]),
        (0.6, [["f"]]),
    ],
    # The best scores below 1: only the best get step rewards.
    "no_perfect": [
        (0.8, [["a"], ["a", "b"], ["c"]]),
        (0.5, [["a"], ["b"]]),
        (0.8, [["b"], ["c", "d"]]),
    ],
}
GAMMAS = [1.0, 0.5]
BLOCK, RESULT = 2, 2


def run_case(ns, rollouts, gamma):
    grouped = [[i, score, [f"q{k}" for k in range(len(docs))], docs] for i, (score, docs) in enumerate(rollouts)]
    manager = types.SimpleNamespace()
    stepwise = ns["_stepwise_reward"](manager, grouped, None)
    bs = len(rollouts)
    lengths = [len(docs) * (BLOCK + RESULT) + BLOCK for _, docs in rollouts]
    width = max(lengths)
    loss_mask = torch.zeros(bs, width, dtype=torch.long)
    response_mask = torch.zeros(bs, width)
    rewards = torch.zeros(bs, width)
    blocks = []
    for i, (score, docs) in enumerate(rollouts):
        starts = []
        at = 0
        for _ in docs:
            loss_mask[i, at : at + BLOCK] = 1
            starts.append(at)
            at += BLOCK + RESULT
        loss_mask[i, at : at + BLOCK] = 1
        starts.append(at)
        response_mask[i, : lengths[i]] = 1
        rewards[i, lengths[i] - 1] = score
        blocks.append(starts)
    index = np.array(["g"] * bs, dtype=object)
    advantages, _ = ns["compute_hybrid_grpo_advantage"](rewards, stepwise, loss_mask, response_mask, index, gamma)
    out = []
    for i, starts in enumerate(blocks):
        values = []
        for s in starts:
            block = advantages[i, s : s + BLOCK]
            assert torch.all(block == block[0])
            values.append(float(block[0]))
        out.append(values)
    return [list(map(float, s)) for s in stepwise], out


def main():
    ns = load(sys.argv[1])
    out = {
        "source": {
            "repo": "Cheungki/LeTS",
            "commit": COMMIT,
            "functions": [
                f"{MANAGER}: check_content_sim, self_check, cross_chain_of_search_check, LeTSRewardManagerWithSave._stepwise_reward",
                f"{ALGOS}: compute_hybrid_grpo_advantage",
            ],
        },
        "runtime": {"python": sys.version.split()[0], "torch": torch.__version__, "numpy": np.__version__, "scipy": scipy.__version__},
        "cases": [],
    }
    for name, rollouts in CASES.items():
        for gamma in GAMMAS:
            stepwise, blocks = run_case(ns, rollouts, gamma)
            out["cases"].append({
                "name": name,
                "gamma": gamma,
                "rollouts": [{"score": s, "docs": d} for s, d in rollouts],
                "stepwise_rewards": stepwise,
                "block_advantages": blocks,
            })
    dump(out)


if __name__ == "__main__":
    main()
