#!/usr/bin/env python3
"""The advantages NeMo-RL's turn-level credit gives each turn of
sample_runs/terminal_turn_scores.jsonl, computed by NeMo-RL's own code, for tests/it/process_credit.rs:

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0 pydantic
    git clone https://github.com/NVIDIA-NeMo/RL && git -C RL checkout 63af7444e
    .venv/bin/python tests/golden/turn_return/generate.py RL > tests/golden/turn_return/cases.json

The research package `research/turn_level_credit/turn_level_credit` is imported as it is
(`TurnLevelGRPOAdvantageEstimator`, `TurnCreditConfig`, and in `trace.py` `TurnBatch`,
`compute_environment_credit`, `scatter_turn_credit`, `validate_raw_reward_sums`); its base estimator is
NeMo-RL's `GRPOAdvantageEstimator` (nemo_rl/algorithms/advantage_estimator.py) with
`calculate_baseline_and_std_per_prompt` (nemo_rl/algorithms/utils.py), taken from their files by
name (their modules import NeMo-RL's workers), with NeMo-RL's defaults `use_leave_one_out_baseline`
and `normalize_rewards` true. The whole sample is one batch, in file order; a group is a prompt
(`prompt_ids`: one token per group). Each trajectory is a row: its token mask (0 past its end), its
rewards (the outcome, float32), and one turn per step: the step's `env_reward` as the turn's
native reward, its policy tokens (the first of its span) as the assistant span, every turn observed
and trainable, the last terminated. A turn's advantage is the one on its assistant tokens (all the
same). The raw rewards are checked to sum to the outcome first, as the research entrypoint does.

Made on 2026-12-05 with Python 3.11, torch 2.15.0 (CPU) and pydantic 2, from the commit above.
"""

import json
import os
import sys
import types
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import definitions, dump, run  # noqa: E402  (tests/golden/reference.py)

SAMPLE = Path(__file__).resolve().parent.parent.parent.parent / "sample_runs/terminal_turn_scores.jsonl"
SETTINGS = [
    # (environment_mode, discount, macro_weight, turn_weight)
    ("immediate", 1.0, 1.0, 0.2),
    ("return_to_go", 1.0, 1.0, 0.2),
    ("return_to_go", 0.5, 1.0, 1.0),
    ("immediate", 1.0, 0.5, 2.0),
    ("immediate", 1.0, 1.0, 0.0),
]


def main(repo):
    sys.path.insert(0, os.path.join(repo, "research/turn_level_credit"))
    from turn_level_credit import TurnCreditConfig, TurnLevelGRPOAdvantageEstimator
    from turn_level_credit.trace import TurnBatch, validate_raw_reward_sums

    ns = {"torch": torch, "BaseModel": object, "ClippedPGLossConfig": object, "AdvEstimatorConfig": object}
    run(definitions(f"{repo}/nemo_rl/algorithms/utils.py", ["calculate_baseline_and_std_per_prompt"]), ns, repo)
    run(definitions(f"{repo}/nemo_rl/algorithms/advantage_estimator.py", ["GRPOAdvantageEstimator"]), ns, repo)

    rows = [json.loads(line) for line in open(SAMPLE)]
    rows = [r for r in rows if r.get("type") == "trajectory"]
    groups = sorted({r["group"] for r in rows})
    width = max(len(r["tokens"]["mask"]) for r in rows)
    turns = max(len(r["steps"]) for r in rows)
    batch = len(rows)
    mask = torch.zeros(batch, width)
    turn_rewards = torch.zeros(batch, turns)
    turn_mask = torch.zeros(batch, turns, dtype=torch.bool)
    spans = torch.zeros(batch, turns, 2, dtype=torch.int64)
    terminated = torch.zeros(batch, turns, dtype=torch.bool)
    for i, r in enumerate(rows):
        token_mask = r["tokens"]["mask"]
        for k, m in enumerate(token_mask):
            mask[i, k] = 1.0 if m else 0.0
        for k, step in enumerate(r["steps"]):
            start, end = step["token_span"]
            policy = sum(1 for m in token_mask[start:end] if m)
            turn_rewards[i, k] = step["env_reward"]
            turn_mask[i, k] = True
            spans[i, k] = torch.tensor([start, start + policy])
        terminated[i, len(r["steps"]) - 1] = True
    turn_batch = {
        "turn_rewards": turn_rewards,
        "turn_mask": turn_mask,
        "turn_trainable_mask": turn_mask.clone(),
        "assistant_turn_spans": spans,
        "turn_terminateds": terminated,
    }
    prompt_ids = torch.tensor([[groups.index(r["group"])] for r in rows])
    rewards = torch.tensor([r["outcome"]["reward"] for r in rows], dtype=torch.float32)
    validate_raw_reward_sums(
        TurnBatch(turn_rewards, turn_mask, turn_mask.clone(), spans, terminated), rewards, atol=1e-6
    )
    base = ns["GRPOAdvantageEstimator"](types.SimpleNamespace(use_leave_one_out_baseline=True, normalize_rewards=True), None)
    cases = []
    for mode, discount, macro_weight, turn_weight in SETTINGS:
        config = TurnCreditConfig(enabled=True, environment_mode=mode, discount=discount,
                                  macro_weight=macro_weight, turn_weight=turn_weight)
        estimator = TurnLevelGRPOAdvantageEstimator(base_estimator=base, config=config)
        advantages = estimator.compute_advantage(prompt_ids, rewards, mask, repeated_batch=turn_batch)
        per_turn = {}
        for i, r in enumerate(rows):
            per_turn[r["id"]] = [advantages[i, int(spans[i, k, 0])].item() for k in range(len(r["steps"]))]
        cases.append({"mode": mode, "discount": discount, "macro_weight": macro_weight,
                      "turn_weight": turn_weight, "advantages": per_turn})
    dump({
        "source": "NVIDIA-NeMo/RL@63af7444e research/turn_level_credit over GRPOAdvantageEstimator",
        "sample": "sample_runs/terminal_turn_scores.jsonl",
        "cases": cases,
    })


main(sys.argv[1])
