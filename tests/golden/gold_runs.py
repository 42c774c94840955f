"""The runs the `gold_logprob` generators (tests/golden/igpo, tests/golden/trace_td) share: the
search sample, and hand-made turns, read as each rollout's group, outcome and per-step scores."""

import json
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def traj(tid, group, reward, golds):
    """A trajectory record whose steps carry `gold_logprob` (None: the step has none)."""
    steps = [{"action": f"turn {k}", "scores": {} if g is None else {"gold_logprob": g}} for k, g in enumerate(golds)]
    return {"type": "trajectory", "id": tid, "group": group, "outcome": {"reward": reward}, "steps": steps}


# Hand-made turns: a group of one, a one-turn rollout, a rollout without scores, equal outcomes (a
# zero std), long rollouts beside short ones, and a gold probability that falls.
HAND = [
    {"vantage": 1},
    traj("a0", "a", 1.0, [-2.3, -1.1, -0.4, -0.2]),
    traj("a1", "a", 0.0, [-2.3, -2.9, -3.4]),
    traj("a2", "a", 0.5, [-2.3]),
    traj("a3", "a", 0.25, [None, None, None]),
    traj("a4", "a", 1.0, [-2.3, -1.7, -1.2, -0.9, -0.6, -0.3, -0.05]),
    traj("b0", "b", 0.7, [-1.5, -1.0, -0.2]),
    traj("c0", "c", 1.0, [-3.0, -2.0, -1.0]),
    traj("c1", "c", 1.0, [-3.0, -2.5, -0.5, -0.1]),
]


def groups(records):
    """Each group's rollouts with an outcome, in order: (key, reward, [gold_logprob or None per step])."""
    out = defaultdict(list)
    for rec in records:
        if rec.get("type") != "trajectory":
            continue
        reward = (rec.get("outcome") or {}).get("reward")
        if reward is None:
            continue
        golds = [(s.get("scores") or {}).get("gold_logprob") for s in rec["steps"]]
        out[rec["group"]].append((rec["id"], reward, golds))
    return out


def runs():
    """(name, records) of the sample and of the hand-made turns."""
    sample = [json.loads(line) for line in open(ROOT / "sample_runs/search_qa_rag.jsonl")]
    return [("search_qa_rag.jsonl", sample), ("hand", HAND)]
