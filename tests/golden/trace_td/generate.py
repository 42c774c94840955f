#!/usr/bin/env python3
"""Golden cases of TRACE's turn credit (arXiv 2607.13988) from a third party's port, for
tests/it/process_credit.rs.

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0 numpy
    git clone https://github.com/iOPEN-Xing/agentic-rl && git -C agentic-rl checkout 0bcfbb4ad
    .venv/bin/python tests/golden/trace_td/generate.py agentic-rl > tests/golden/trace_td/cases.json

The port's `compute_grpo_hybrid_advantage` (with `compute_trace_group_outcome_advantage`,
`compute_trace_log_ratio_values`, `compute_trace_turn_rewards`, `_trajectory_outcome_advantage`,
`_hybrid_config_value`) in verl/verl/trainer/ppo/hybrid_advantage.py is run as it wrote it, taken
from the file by name, with torch on the CPU. Its batch is built here: one row a rollout, one
response position a step (padded to the longest), the outcome at the last position, the group as
`index`; each step but the last is a transition span of one position, and the `gold_logprob` of
every step is the prefix scores (one more than the spans); a rollout missing a score has no spans.
Runs: sample_runs/search_qa_rag.jsonl and the hand-made turns of tests/golden/gold_runs.py, at the
port's defaults and at other settings.

Made on 2026-12-07 with Python 3.11, torch 2.15.0 (the PyPI wheel, CPU) and numpy 2.4.6.
"""

import ast
import sys
import types
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from gold_runs import groups, runs  # noqa: E402
from reference import definitions, dump, run  # noqa: E402

COMMIT = "0bcfbb4ad3ee8315b3ca85f613a71aa077d90e99"
NAMES = ["_hybrid_config_value", "compute_trace_log_ratio_values", "compute_trace_turn_rewards",
         "_trajectory_outcome_advantage", "compute_trace_group_outcome_advantage", "compute_grpo_hybrid_advantage"]

SETTINGS = {
    "defaults": ({}, True),
    "h1_g05": ({"outcome_weight": 0.5, "turn_weight": 1.0, "gap_epsilon": 0.05, "td_horizon": 1, "td_gamma": 0.5,
                "terminal_scale": 1.0}, True),
    "h0_nostd": ({"td_horizon": 0, "terminal_scale": 3.0}, False),
    "h6": ({"td_horizon": 6, "td_gamma": 0.9, "turn_weight": 0.5}, True),
}


def main(repo):
    ns = {"torch": torch, "np": np, "math": __import__("math"), "defaultdict": defaultdict, "Any": object,
          "Optional": __import__("typing").Optional, "AlgoConfig": object}
    prefix = [ast.parse("from __future__ import annotations").body[0]]
    run(definitions(f"{repo}/verl/verl/trainer/ppo/hybrid_advantage.py", NAMES), ns, repo, prefix)
    hybrid = ns["compute_grpo_hybrid_advantage"]
    cases = []
    for name, records in runs():
        rows = [(g, key, reward, golds) for g, members in groups(records).items() for key, reward, golds in members]
        width = max(len(golds) for *_, golds in rows)
        for setting, (values, norm) in SETTINGS.items():
            rewards = torch.zeros(len(rows), width)
            mask = torch.zeros(len(rows), width)
            spans, prefixes = [], []
            for i, (_, _, reward, golds) in enumerate(rows):
                mask[i, : len(golds)] = 1
                rewards[i, len(golds) - 1] = reward
                scored = all(g is not None for g in golds)
                spans.append([(k, k + 1) for k in range(len(golds) - 1)] if scored else [])
                prefixes.append(list(golds) if scored else [])
            config = types.SimpleNamespace(hybrid_advantage=dict(values), norm_adv_by_std_in_grpo=norm)
            index = np.array([g for g, *_ in rows], dtype=object)
            advantages, _ = hybrid(rewards, mask, index, spans, prefixes, config=config)
            credit = {key: advantages[i, : len(golds)].tolist() for i, (_, key, _, golds) in enumerate(rows)}
            sets = {k: str(v) for k, v in values.items()}
            sets["norm_by_std"] = "true" if norm else "false"
            case = {"run": name, "setting": setting, "set": sets, "credit": credit}
            if name == "hand":
                case["jsonl"] = "".join(__import__("json").dumps(r) + "\n" for r in records)
            cases.append(case)
    dump({"source": {"iOPEN-Xing/agentic-rl": {"commit": COMMIT, "file": "verl/verl/trainer/ppo/hybrid_advantage.py"}},
          "runtime": {"python": sys.version.split()[0], "torch": torch.__version__, "numpy": np.__version__},
          "cases": cases})


if __name__ == "__main__":
    main(sys.argv[1])
