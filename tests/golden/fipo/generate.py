#!/usr/bin/env python3
"""Golden influence weights of ms-swift's FIPO (`loss_type = fipo`), for tests/it/trainers_2026.rs.

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0 numpy
    git clone https://github.com/modelscope/ms-swift && git -C ms-swift checkout 3602360a5
    .venv/bin/python tests/golden/fipo/generate.py ms-swift sample_runs/verl_token_batch.jsonl \\
        > tests/golden/fipo/cases.json

ms-swift's `GRPOTrainer._compute_fipo_influence` (swift/rlhf_trainers/grpo_trainer.py) is run as it
wrote it, taken from its syntax tree by name, with torch on the CPU, on the sample's tokens as the
trainer holds them: one row a rollout, padded to the longest; `log_ratio` the trainer's log-prob
minus the sampling policy's (`trainer_logprob` − `logprob`, float32), `coef_1 = exp(log_ratio)`
(importance sampling at token level, ms-swift's default), the completion mask the policy's tokens,
and `advantages` each rollout's reward minus its group's mean on every token (only its sign is read,
by the safety clip). Settings: ms-swift's defaults (fipo_decay_rate 32, fipo_clip_range 0.2,
fipo_clip_high_only, fipo_safety_threshold 4, delta None), delta 3 (the spikes left out of the future KL), a two-sided clip, and a short
decay without the safety clip. Each case gives every token's weight, padding left out.

Made on 2026-12-07 with Python 3.11 and torch 2.15.0 (the PyPI wheel, on the CPU), from the commit above.
"""

import json
import sys
import types
from collections import defaultdict
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import definitions, dump, run  # noqa: E402

COMMIT = "3602360a562313afbf2ef6065fdf61f271a2c5b9"
PATH = "swift/rlhf_trainers/grpo_trainer.py"

SETTINGS = {
    "defaults": {"decay_rate": 32.0, "clip": 0.2, "clip_high_only": True, "safety": 4.0, "delta": None},
    "delta_3": {"decay_rate": 32.0, "clip": 0.2, "clip_high_only": True, "safety": 4.0, "delta": 3.0},
    "two_sided": {"decay_rate": 32.0, "clip": 0.3, "clip_high_only": False, "safety": 4.0, "delta": None},
    "short_no_safety": {"decay_rate": 4.0, "clip": 0.2, "clip_high_only": True, "safety": None, "delta": None},
}


def rollouts(log):
    out = []
    for line in open(log):
        record = json.loads(line)
        if record.get("type") == "trajectory" and "tokens" in record:
            t = record["tokens"]
            out.append((record["id"], record["group"], record["outcome"]["reward"], t["logprob"], t["trainer_logprob"],
                        [bool(m) for m in t["mask"]]))
    return out


def main(repo, log):
    ns = run(definitions(f"{repo}/{PATH}", ["_compute_fipo_influence"], cls="GRPOTrainer"),
             {"torch": torch, "Tuple": tuple, "Dict": dict}, repo,
             [__import__("ast").parse("from __future__ import annotations").body[0]])
    influence = ns["_compute_fipo_influence"]
    rows = rollouts(log)
    width = max(len(r[3]) for r in rows)
    by_group = defaultdict(list)
    for r in rows:
        by_group[r[1]].append(r[2])
    log_ratio = torch.zeros(len(rows), width)
    mask = torch.zeros(len(rows), width, dtype=torch.bool)
    advantages = torch.zeros(len(rows), width)
    for i, (_, group, reward, old, new, m) in enumerate(rows):
        n = len(old)
        log_ratio[i, :n] = torch.tensor(new, dtype=torch.float32) - torch.tensor(old, dtype=torch.float32)
        mask[i, :n] = torch.tensor(m)
        rewards = by_group[group]
        advantages[i, :n] = reward - sum(rewards) / len(rewards)
    coef_1 = torch.exp(log_ratio)
    cases = []
    for name, s in SETTINGS.items():
        trainer = types.SimpleNamespace(args=types.SimpleNamespace(delta=s["delta"]), fipo_gamma=2 ** (-1 / s["decay_rate"]),
                                        fipo_clip_range=s["clip"], fipo_clip_high_only=s["clip_high_only"],
                                        fipo_safety_threshold=s["safety"])
        weight, _ = influence(trainer, log_ratio, coef_1, advantages, mask)
        sets = {"decay_rate": str(s["decay_rate"]), "clip": str(s["clip"]), "clip_high_only": str(s["clip_high_only"]).lower(),
                "safety": str(s["safety"] or 0), "delta": str(s["delta"] or 0)}
        cases.append({"name": name, "set": sets,
                      "weights": {r[0]: weight[i, : len(r[3])].tolist() for i, r in enumerate(rows)}})
    dump({"source": {"modelscope/ms-swift": {"commit": COMMIT, "file": PATH}},
          "runtime": {"python": sys.version.split()[0], "torch": torch.__version__}, "cases": cases})


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
