#!/usr/bin/env python3
"""Golden cases of HCAPO (arXiv 2603.08754) from a third party's port, for tests/it/process_credit.rs.

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0 numpy
    git clone https://github.com/RainyFields/Agentic-RL-CA && git -C Agentic-RL-CA checkout 2df17d247
    .venv/bin/python tests/golden/hcapo/generate.py Agentic-RL-CA > tests/golden/hcapo/cases.json

The port's `compute_hcapo_advantage` (with `_group_norm`) in gigpo/core_hcapo.py is run as it wrote
it, taken from the file by name, with torch and numpy on the CPU, on a batch of turn rows as
verl-agent gives it: one row a turn, one response token a row whose policy log-prob is 0 and whose
hindsight log-prob is the turn's `hindsight_logratio` (so the row's mean log-ratio is the score; 0
where a turn has none), the turn's reward the outcome on the last turn (0 before), `uid` the group,
`traj_uid` the rollout, `turn_index` the step. Runs: sample_runs/terminal_turn_scores.jsonl and the
hand-made groups below, at the port's defaults and at other settings.

Made on 2026-12-07 with Python 3.11, torch 2.15.0 (the PyPI wheel, CPU) and numpy 2.4.6.
"""

import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import definitions, dump, run  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
COMMIT = "2df17d247f9a98f97c62ec6f37eeacf9756db4e4"


def traj(tid, group, reward, ratios):
    steps = [{"action": f"turn {k}", "scores": {} if x is None else {"hindsight_logratio": x}} for k, x in enumerate(ratios)]
    return {"type": "trajectory", "id": tid, "group": group, "outcome": {"reward": reward}, "steps": steps}


# One turn, a group of one, equal outcomes (a zero std: centred only), ratios past both clips, a
# turn without a ratio, and a group whose advantages pass the ±5 clip.
HAND = [
    {"vantage": 1},
    traj("a0", "a", 1.0, [0.3, 2.5, -1.0]),
    traj("a1", "a", 0.0, [0.1, -3.0]),
    traj("a2", "a", 0.5, [None]),
    traj("a3", "a", 1.0, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
    traj("b0", "b", 0.7, [0.2, 0.4]),
    traj("c0", "c", 1.0, [0.1, 0.2]),
    traj("c1", "c", 1.0, [0.3, -0.2, 0.0]),
    traj("d0", "d", 1.0, [0.0]),
] + [traj(f"d{i}", "d", 0.0, [0.0]) for i in range(1, 40)]

SETTINGS = {
    "defaults": {},
    "flat": {"use_temporal": False, "gamma": 0.9, "omega": 0.5},
    "sharp": {"t_temp": 1.0, "clip_lo": 0.5, "clip_hi": 2.0, "temporal_alpha": 0.25, "eps": 1e-6, "adv_clip": 0.0},
}


def rows_of(records):
    """Each turn row: (group, rollout, turn, reward on the turn, hindsight log-ratio)."""
    out = []
    for rec in records:
        if rec.get("type") != "trajectory" or (rec.get("outcome") or {}).get("reward") is None:
            continue
        steps = rec["steps"]
        for k, s in enumerate(steps):
            ratio = (s.get("scores") or {}).get("hindsight_logratio")
            out.append((rec["group"], rec["id"], k, rec["outcome"]["reward"] if k == len(steps) - 1 else 0.0,
                        0.0 if ratio is None else ratio))
    return out


def main(repo):
    ns = run(definitions(f"{repo}/gigpo/core_hcapo.py", ["_group_norm", "compute_hcapo_advantage"]),
             {"np": np, "torch": torch}, repo)
    hcapo = ns["compute_hcapo_advantage"]
    sample = [json.loads(line) for line in open(ROOT / "sample_runs/terminal_turn_scores.jsonl")]
    cases = []
    for name, records in [("terminal_turn_scores.jsonl", sample), ("hand", HAND)]:
        rows = rows_of(records)
        for setting, values in SETTINGS.items():
            policy = torch.zeros(len(rows), 1)
            hindsight = torch.tensor([[r[4]] for r in rows], dtype=torch.float32)
            mask = torch.ones(len(rows), 1)
            out, _ = hcapo(policy, hindsight, mask, [r[3] for r in rows], [r[0] for r in rows],
                           [r[1] for r in rows], [r[2] for r in rows], **values)
            credit = defaultdict(list)
            for i, row in enumerate(rows):
                credit[row[1]].append(out[i, 0].item())
            case = {"run": name, "setting": setting, "set": {k: str(v).lower() for k, v in values.items()}, "credit": credit}
            if name == "hand":
                case["jsonl"] = "".join(json.dumps(r) + "\n" for r in records)
            cases.append(case)
    dump({"source": {"RainyFields/Agentic-RL-CA": {"commit": COMMIT, "file": "gigpo/core_hcapo.py"}},
          "runtime": {"python": sys.version.split()[0], "torch": torch.__version__, "numpy": np.__version__},
          "cases": cases})


if __name__ == "__main__":
    main(sys.argv[1])
