#!/usr/bin/env python3
"""The advantages rLLM's per-role estimators give each trajectory of sample_runs/alfworld_roles.jsonl,
computed by rLLM's own code, for tests/it/process_credit.rs:

    git clone https://github.com/rllm-org/rllm && git -C rllm checkout 9beb6e0f
    python3 tests/golden/per_role/generate.py rllm > tests/golden/per_role/cases.json

`collect_reward_and_advantage_from_trajectory_groups` and the registered estimators
(rllm/trainer/algorithms/advantage.py: calculate_grpo_advantages, calculate_reinforce_advantages,
calculate_reinforce_plus_plus_baseline_advantages, calculate_prpo_advantages,
calculate_rloo_advantages) with `calculate_grpo_advantages_per_group` and
`calculate_rloo_advantages_per_group` (rl_algo.py) are taken from their files by name and run as
written (numpy float64). The trajectory groups stand in for rLLM's `TrajectoryGroup`: a group of the
sample split by agent role (a trajectory's role is its first step's role), `group_role` that role,
each trajectory's `reward` its outcome and its `steps` one object per step whose `advantage` the
function sets (broadcast). `AlgorithmConfig` stands in with the fields the function reads.

Made on 2026-12-06 with Python 3.11 and numpy 2, from the commit above.
"""

import ast
import json
import sys
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace as NS

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import definitions, dump, run  # noqa: E402  (tests/golden/reference.py)

SAMPLE = Path(__file__).resolve().parent.parent.parent.parent / "sample_runs/alfworld_roles.jsonl"
SETTINGS = [
    # (estimators, estimator, norm_by_std)
    ("", "grpo", True),
    ("progress=rloo, regression=reinforce, exploration=reinforce_plus_plus_baseline, infrastructure=prpo", "grpo", True),
    ("exploration=rloo", "grpo", False),
    ("", "prpo", True),
]


def main(repo):
    registry = {}

    def register(name):
        def decorator(func):
            registry[getattr(name, "value", name)] = func
            return func

        return decorator

    estimators = NS(GRPO="grpo", REINFORCE="reinforce", REINFORCE_PLUS_PLUS_BASELINE="reinforce_plus_plus_baseline", PRPO="prpo", RLOO="rloo")
    ns = {"np": np, "defaultdict": defaultdict, "logger": NS(warning=print), "register_rllm_adv_estimator": register,
          "rLLMAdvantageEstimator": estimators}
    # The annotations are not evaluated, as rLLM's types are not imported here.
    future = ast.parse("from __future__ import annotations").body
    run(definitions(f"{repo}/rllm/trainer/algorithms/rl_algo.py", ["calculate_grpo_advantages_per_group", "calculate_rloo_advantages_per_group"]), ns, repo, future)
    names = ["get_rllm_adv_estimator", "calculate_grpo_advantages", "calculate_reinforce_advantages",
             "calculate_reinforce_plus_plus_baseline_advantages", "calculate_prpo_advantages", "calculate_rloo_advantages",
             "_collect_precomputed_advantages", "collect_reward_and_advantage_from_trajectory_groups"]
    ns["RLLM_ADV_ESTIMATOR_REGISTRY"] = registry
    run(definitions(f"{repo}/rllm/trainer/algorithms/advantage.py", names), ns, repo, future)

    rows = [json.loads(line) for line in open(SAMPLE)]
    rows = [r for r in rows if r.get("type") == "trajectory"]
    cases = []
    for estimators, estimator, norm in SETTINGS:
        groups, order = {}, []
        trajectories = {}
        for r in rows:
            role = next((s["role"] for s in r["steps"] if s.get("role")), "default")
            key = (r["group"], role)
            if key not in groups:
                groups[key] = NS(group_role=role, trajectories=[])
                order.append(key)
            traj = NS(reward=float(r["outcome"]["reward"]), steps=[NS(advantage=None) for _ in r["steps"]])
            groups[key].trajectories.append(traj)
            trajectories[r["id"]] = traj
        estimator_map = dict((k.strip(), v.strip()) for k, v in (e.split("=") for e in estimators.split(",") if e.strip()))
        config = NS(stepwise_advantage_mode="broadcast", use_precomputed_advantage=False, estimator=estimator,
                    estimator_map=estimator_map, norm_adv_by_std_in_grpo=norm)
        ns["collect_reward_and_advantage_from_trajectory_groups"]([groups[k] for k in order], config)
        cases.append({
            "estimators": estimators, "estimator": estimator, "norm_by_std": norm,
            "advantages": {tid: t.steps[0].advantage for tid, t in trajectories.items()},
        })
    dump({"source": {"rllm": "9beb6e0f"}, "sample": "sample_runs/alfworld_roles.jsonl", "cases": cases})


if __name__ == "__main__":
    main(sys.argv[1])
