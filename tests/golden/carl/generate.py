#!/usr/bin/env python3
"""Golden cases of CARL's credit (arXiv 2512.04949) from a third party's port, for
tests/it/process_credit.rs.

    git clone https://github.com/RainyFields/Agentic-RL-CA && git -C Agentic-RL-CA checkout 06aa80fc6
    python3 tests/golden/carl/generate.py Agentic-RL-CA > tests/golden/carl/cases.json

The port's `compute_carl_edge_advantages` (with `compute_node_values`) in
credit_assignment/core_carl.py is run as it wrote it, taken from the file by name, on rows built as
its rollout glue builds them: one row a turn, keyed (rollout, turn), from the state before the turn
to the state after it, the rollout's reward on its last row. The states are node ids in the port's
contract, "a hash of the full next policy-visible prompt": here the group's prompt and every turn's
turns so far, each by its kind, texts and state key (`prefix`, as vantage merges identical turns), or
the log's own nodes (`none`: a tree record's node, else the rollout's own turn). Runs: sample_runs/tree_rollouts.jsonl (trees), sample_runs/math_grpo_prm.jsonl (rollouts
sampled apart, some sharing their first turns' text) and the hand-made runs below.

Made on 2026-12-07 with Python 3.11 (standard library only).
"""

import ast
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "golden"))
from reference import definitions, dump, run  # noqa: E402

COMMIT = "06aa80fc650e89412d0fac747d6ac2934e9389fd"


def step(thought, action="", observation=""):
    return {"thought": thought, "action": action, "observation": observation}


def traj(tid, group, reward, steps):
    return {"type": "trajectory", "id": tid, "group": group, "outcome": {"reward": reward}, "steps": steps}


# Hand-made runs: a state that is both where a rollout ended and a parent once identical turns merge
# (pooled, Eq. 10: a2 ends where a0 goes on), a rollout repeating another's turns (one state), a
# lone rollout, rewards that are not 0 or 1, a rollout without an outcome (left out), and a tree.
HAND = [
    {"vantage": 1},
    traj("a0", "a", 1.0, [step("plan", "look"), step("found it", "take")]),
    traj("a1", "a", 0.0, [step("plan", "look"), step("nothing", "wait"), step("still nothing", "give up")]),
    traj("a2", "a", 0.5, [step("plan", "look")]),
    traj("a3", "a", 1.0, [step("plan", "look"), step("found it", "take")]),
    traj("a4", "a", 0.25, [step("other plan", "open")]),
    traj("a5", "a", None, [step("plan", "look")]),
    traj("b0", "b", 0.7, [step("alone", "act"), step("done")]),
    traj("c0", "c", 0.3, [step("x", "1"), step("y", "2")]),
    traj("c1", "c", -0.2, [step("x", "1"), step("z", "3")]),
    traj("c2", "c", 0.9, [step("w", "4")]),
    {"type": "tree", "id": "t", "group": "d", "nodes": [
        {"id": "r", "thought": "start"},
        {"id": "m", "parent": "r", "thought": "middle"},
        {"id": "l1", "parent": "m", "thought": "left", "outcome": {"reward": 1.0}},
        {"id": "l2", "parent": "m", "thought": "right", "outcome": {"reward": 0.0}},
        {"id": "l3", "parent": "r", "thought": "short", "outcome": {"reward": 0.6}},
    ]},
]


def content(s):
    """What makes two turns the same state: kind, the three texts and the state key."""
    return [s.get("kind"), s.get("thought") or "", s.get("action") or "", s.get("observation") or "", s.get("state")]


def rollouts(records):
    """Each rollout with an outcome: (key, group, reward, [(tree node id, texts)] per turn)."""
    out = []
    for rec in records:
        if rec.get("type") == "trajectory":
            reward = (rec.get("outcome") or {}).get("reward")
            turns = [(f"{rec['id']}#{i}", content(s)) for i, s in enumerate(rec["steps"])]
            out.append((rec["id"], rec["group"], reward, turns))
        elif rec.get("type") == "tree":
            nodes = {n["id"]: n for n in rec["nodes"]}
            for n in rec["nodes"]:
                if "outcome" not in n:
                    continue
                path, at = [], n
                while at is not None:
                    path.append(at)
                    at = nodes.get(at.get("parent"))
                path.reverse()
                turns = [(f"{rec['id']}/{p['id']}", content(p)) for p in path]
                out.append((n.get("trajectory") or f"{rec['id']}/{n['id']}", rec["group"], n["outcome"].get("reward"), turns))
    return [r for r in out if r[2] is not None]


def rows_of(group_rollouts, group, identity):
    rows = []
    for key, _, reward, turns in group_rollouts:
        src = f"root:{group}"
        so_far = [group]
        for i, (node, texts) in enumerate(turns):
            so_far.append(texts)
            dst = json.dumps(so_far) if identity == "prefix" else node
            rows.append({"key": (key, i), "src": src, "dst": dst,
                         "terminal_reward": reward if i == len(turns) - 1 else None})
            src = dst
    return rows


def main(repo):
    ns = run(definitions(f"{repo}/credit_assignment/core_carl.py", ["compute_node_values", "compute_carl_edge_advantages"]),
             {"defaultdict": defaultdict}, repo)
    carl = ns["compute_carl_edge_advantages"]
    runs = {
        "tree_rollouts.jsonl": [json.loads(l) for l in open(ROOT / "sample_runs/tree_rollouts.jsonl")],
        "math_grpo_prm.jsonl": [json.loads(l) for l in open(ROOT / "sample_runs/math_grpo_prm.jsonl")],
        "hand": HAND,
    }
    cases = []
    for name, records in runs.items():
        for identity in ("prefix", "none"):
            by_group = defaultdict(list)
            for r in rollouts(records):
                by_group[r[1]].append(r)
            credit = {}
            for group, members in by_group.items():
                advantages, kept, _ = carl(rows_of(members, group, identity))
                for (key, i), a in advantages.items():
                    credit.setdefault(key, []).append([a, kept[(key, i)]])
            case = {"run": name, "merge": identity, "credit": credit}
            if name == "hand":
                case["jsonl"] = "".join(json.dumps(r) + "\n" for r in records)
            cases.append(case)
    dump({"source": {"RainyFields/Agentic-RL-CA": {"commit": COMMIT, "file": "credit_assignment/core_carl.py"}},
          "runtime": {"python": sys.version.split()[0]}, "cases": cases})


if __name__ == "__main__":
    main(sys.argv[1])
