#!/usr/bin/env python3
"""Golden cases of prime-rl's group algorithms over episodes, for tests/it/trainers_2026.rs.

    git clone https://github.com/PrimeIntellect-ai/prime-rl
    git -C prime-rl worktree add ../prime-rl-559b 559b44772    # hierarchical_grpo.py
    git -C prime-rl worktree add ../prime-rl-8142 8142e69a1    # ngu.py
    git -C prime-rl worktree add ../prime-rl-1366 1366638ea    # gar.py
    python3 tests/golden/prime_grouped/generate.py prime-rl-559b prime-rl-8142 prime-rl-1366 \
        > tests/golden/prime_grouped/cases.json

No torch: these algorithms are plain Python. prime-rl's classes and functions are run as it wrote
them, taken from its files by name (their modules import verifiers and the orchestrator, which
these do not use), with stand-ins for `iter_trainable_traces` (every trace trainable) and
`assign_advantages` (records the trace's value):
- `hierarchical_grpo`: src/prime_rl/orchestrator/algo/hierarchical_grpo.py
  `HierarchicalGRPOAlgorithm.score_group` at 559b4477, one call per group, its `episode_agents` set;
- `ngu`: src/prime_rl/orchestrator/algo/ngu.py `NGUAlgorithm` at 8142e69a (length_penalty unset):
  `score_group` per group, and `score_history` with a prompt's counts summed over its groups in
  training-step order up to and with the group (the history's caller is not in the files read: this
  is how vantage reads "the prompt's history");
- `gar`: src/prime_rl/orchestrator/algo/gar.py at 1366638e: `GARAlgorithm.apply` (with `win_rates`
  and `redistribute`) on a verdict, as `grade_group` calls it: one candidate per episode (its first
  trace), `passed` = its reward above the candidates' mean, every trace of the episode under the
  candidate's label; the records `apply` returns are each trace's `info["gar"]`, as prime-rl logs
  them. `quote_found` is a stand-in that finds every quote (the verdicts cite none).

Made on 2026-12-07 with Python 3.11 from the commits above.
"""

import ast
import asyncio
import sys
import types
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import definitions, dump, prime_rl_algorithm, run  # noqa: E402  (tests/golden/reference.py)

COMMITS = {
    "hierarchical_grpo": "559b44772e471d1538537b8805cc77f3824a5e64",
    "ngu": "8142e69a145e1b6e732d645311e1f76669b88bf6",
    "gar": "1366638ea57cc6889d43a276ca1659b4707c25ac",
}


def episode(eid, group, step, traces):
    """An episode: traces as (trace id, agent, reward)."""
    return {"id": eid, "group": group, "step": step,
            "traces": [{"id": t, "agent": a, "reward": r} for t, a, r in traces]}


def proposer_solver_group(group, step, rows):
    """Episodes of one proposer trace and its solvers' traces: rows of (proposer reward, solver rewards)."""
    out = []
    for e, (proposal, solves) in enumerate(rows):
        eid = f"{group}-e{e}"
        traces = [(f"{eid}-p", "proposer", proposal)] + [(f"{eid}-s{k}", "solver", r) for k, r in enumerate(solves)]
        out.append(episode(eid, group, step, traces))
    return out


HIERARCHICAL = {
    "proposer_solvers": proposer_solver_group("g0", 0, [(0.5, [1.0, 0.0, 1.0]), (0.25, [0.0, 0.0, 1.0, 1.0]), (1.0, [1.0])])
    + proposer_solver_group("g1", 0, [(0.3, [0.7, 0.3]), (0.7, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]), (0.0, [])]),
    "lone_solvers_and_a_judge": [
        episode("h-e0", "h", 1, [("h-e0-p", "proposer", 1.0), ("h-e0-s0", "solver", 1.0), ("h-e0-j", "judge", 0.9)]),
        episode("h-e1", "h", 1, [("h-e1-p", "proposer", 0.0), ("h-e1-s0", "solver", 0.0), ("h-e1-j", "judge", 0.1)]),
        episode("h-e2", "h", 1, [("h-e2-p", "proposer", -0.5), ("h-e2-s0", "solver", 0.3), ("h-e2-s1", "solver", -0.3)]),
    ],
    "sixteen_solvers": proposer_solver_group("b", 2, [(0.6, [((k * 7) % 11) / 10 for k in range(16)]), (0.2, [0.3] * 5)]),
}

# (episode_agents, case) pairs: the advised ["solver"], and two roles scoped to their episode.
HIERARCHICAL_AGENTS = {"solver": ["solver"], "solver,judge": ["solver", "judge"]}


def binary_group(prompt, step, rewards, tag=""):
    return [episode(f"{prompt}{tag}-s{step}-e{i}", f"{prompt}{tag}-s{step}", step, [(f"{prompt}{tag}-s{step}-e{i}-t", "solver", r)])
            for i, r in enumerate(rewards)]


def bits(seed, n):
    """n pseudo-random 0/1 rewards (a fixed linear congruential sequence)."""
    out, x = [], seed
    for _ in range(n):
        x = (x * 1103515245 + 12345) % (1 << 31)
        out.append(float((x >> 16) & 1))
    return out


NGU = {
    "groups_1_to_16": [e for n in range(1, 17) for e in binary_group(f"n{n}", 0, bits(n, n))],
    "all_pass_all_fail": binary_group("pass", 0, [1.0] * 4) + binary_group("fail", 0, [0.0] * 6) + binary_group("one", 0, [1.0, 0.0]),
    # A prompt's groups over training steps (its task is the prompt): steps given out of order.
    "history": [e for step, rewards in [(2, [1, 1, 0, 0]), (0, [0, 0, 0, 1]), (1, [1, 0, 0, 0, 0, 0]), (3, [1, 1, 1, 0])]
                for e in binary_group("p", step, [float(r) for r in rewards])]
    + [e for step, rewards in [(0, [1, 1]), (1, [0, 1, 1, 1]), (2, [0, 0])] for e in binary_group("q", step, [float(r) for r in rewards])],
}


# GAR verdicts: per group, the episodes (their traces' rewards), each candidate's hack, the ranking
# (tiers of candidate indices), f_min and lambda_max.
def gar_group(group, rewards, hacks=None, ranking=None, traces_per_episode=1, f_min=0.5, lambda_max=2.0):
    episodes = []
    for e, r in enumerate(rewards):
        rs = r if isinstance(r, list) else [r] * traces_per_episode
        episodes.append(episode(f"{group}-e{e}", group, 0, [(f"{group}-e{e}-t{k}", "solver", x) for k, x in enumerate(rs)]))
    return {"episodes": episodes, "hacks": hacks or {}, "ranking": ranking or [], "f_min": f_min, "lambda_max": lambda_max}


GAR = {
    "hack_and_ranking": gar_group("ga", [1, 1, 1, 0, 0, 1, 0, 0], hacks={1: "confirmed", 4: "suspected"},
                                  ranking=[[5], [0, 1], [2]]),
    "ties": gar_group("gb", [1, 1, 1, 1, 0, 0], ranking=[[0, 1, 2, 3]]),
    "lone_pass": gar_group("gc", [0, 0, 1, 0], ranking=[[2]]),
    "cap_binds": gar_group("gd", [1, 1, 1, 1, 0, 0, 0, 0, 0, 0], ranking=[[3], [2], [1], [0]], f_min=0.1, lambda_max=1.5),
    "all_passes_hacked": gar_group("ge", [1, 1, 0, 0, 0], hacks={0: "confirmed", 1: "confirmed"}, ranking=[[0], [1]]),
    "fractional_sixteen": gar_group("gf", [0.2, 0.9, 0.55, 0.1, 0.75, 0.3, 0.95, 0.05, 0.6, 0.45, 0.8, 0.7, 0.15, 0.65, 0.35, 0.5],
                                    hacks={6: "confirmed", 10: "suspected"}, ranking=[[1], [4, 13], [8, 11], [2, 6], [10]]),
    "unranked_pass": gar_group("gg", [1, 1, 1, 0], ranking=[[0], [2]]),
    "two_traces_an_episode": gar_group("gh", [[1, 0.5], [0, 0.25], [1, 1], [0, 0]], hacks={2: "confirmed"}, ranking=[[0], [2]]),
    "two_candidates": gar_group("gi", [1, 0], ranking=[[0]], f_min=0.25, lambda_max=4.0),
}


def hierarchical(repo, episodes, agents):
    cls, assigned = prime_rl_algorithm(repo, "src/prime_rl/orchestrator/algo/hierarchical_grpo.py", "HierarchicalGRPOAlgorithm",
                                       {"defaultdict": defaultdict, "HierarchicalGRPOAlgoConfig": object})
    algo = cls.__new__(cls)
    algo.episode_agents = set(agents)
    assigned.clear()
    for group in dict.fromkeys(e["group"] for e in episodes):
        eps = [types.SimpleNamespace(id=e["id"], traces=[types.SimpleNamespace(
            id=t["id"], reward=t["reward"], agent=types.SimpleNamespace(name=t["agent"])) for t in e["traces"]])
            for e in episodes if e["group"] == group]
        asyncio.run(algo.score_group(eps))
    return dict(assigned)


def ngu(repo, episodes, history):
    cls, assigned = prime_rl_algorithm(repo, "src/prime_rl/orchestrator/algo/ngu.py", "NGUAlgorithm",
                                       {"NGUAlgoConfig": object, "LengthPenaltyConfig": object, "InferenceClient": object})
    ns = run(definitions(f"{repo}/src/prime_rl/orchestrator/algo/ngu.py", ["anchored_advantages", "length_penalized_advantages"]),
             {"vf": None, "LengthPenaltyConfig": object}, repo, [ast.parse("from __future__ import annotations").body[0]])
    cls.score_history.__globals__.update(ns)
    algo = cls.__new__(cls)
    algo.length_penalty = None
    assigned.clear()
    groups = list(dict.fromkeys(e["group"] for e in episodes))
    if history:
        groups.sort(key=lambda g: next(e["step"] for e in episodes if e["group"] == g))
    counts = defaultdict(lambda: [0, 0])
    for group in groups:
        eps = [types.SimpleNamespace(id=e["id"], traces=[types.SimpleNamespace(id=t["id"], reward=t["reward"], info={})
                                                          for t in e["traces"]])
               for e in episodes if e["group"] == group]
        if history:
            prompt = group.split("-s")[0]
            rewards = [t.reward for e in eps for t in e.traces]
            counts[prompt][0] += len(rewards)
            counts[prompt][1] += int(sum(rewards))
            algo.score_history(eps, *counts[prompt])
        else:
            asyncio.run(algo.score_group(eps))
    return dict(assigned)


def gar(repo, case):
    path = f"{repo}/src/prime_rl/orchestrator/algo/gar.py"
    assigned = {}
    ns = {"assign_advantages": lambda trace, value: assigned.__setitem__(trace.id, value),
          "quote_found": lambda turns, evidence: True, "Any": object, "vf": None,
          "GroupVerdict": object, "GroupGradeData": object}
    prefix = [ast.parse("from __future__ import annotations").body[0]]
    run(definitions(path, ["win_rates", "redistribute"]), ns, repo, prefix)
    run(definitions(path, ["apply"], cls="GARAlgorithm"), ns, repo, prefix)
    # As grade_group: one candidate per episode, its first trace; passed = above the candidates' mean.
    members = [(e["traces"][0], e["traces"]) for e in case["episodes"]]
    rewards = [c["reward"] for c, _ in members]
    mean = sum(rewards) / len(rewards)
    labels = [f"c{i:02d}" for i in range(len(members))]
    data = types.SimpleNamespace(candidates=[types.SimpleNamespace(label=l, passed=r > mean, turns=[]) for l, r in zip(labels, rewards)])
    verdict = types.SimpleNamespace(
        candidates=[types.SimpleNamespace(label=l, hack=case["hacks"].get(i, "none"), evidence=[]) for i, l in enumerate(labels)],
        ranking=[[labels[i] for i in tier] for tier in case["ranking"]])
    objects = {}
    traces_by_label = {}
    for label, (_, traces) in zip(labels, members):
        traces_by_label[label] = [objects.setdefault(t["id"], types.SimpleNamespace(id=t["id"], reward=t["reward"], record_metric=lambda *a: None))
                                  for t in traces]
    algo = types.SimpleNamespace(config=types.SimpleNamespace(f_min=case["f_min"], lambda_max=case["lambda_max"]))
    info = ns["apply"](algo, verdict, data, traces_by_label, {"fallback_reason": None, "grader_trace_id": "grade"})
    records = {t["id"]: info[label] for label, (_, traces) in zip(labels, members) for t in traces}
    return assigned, records


def main(repo_559b, repo_8142, repo_1366):
    cases = []
    for name, episodes in HIERARCHICAL.items():
        for agents_key, agents in HIERARCHICAL_AGENTS.items():
            cases.append({"scheme": "hierarchical_grpo", "name": f"{name} [{agents_key}]", "set": {"episode_agents": agents_key},
                          "episodes": episodes, "advantages": hierarchical(repo_559b, episodes, agents)})
    for name, episodes in NGU.items():
        for history in (False, True):
            cases.append({"scheme": "ngu", "name": f"{name} [{'run' if history else 'group'}]",
                          "set": {"history": "run" if history else "group"},
                          "episodes": episodes, "advantages": ngu(repo_8142, episodes, history)})
    for name, case in GAR.items():
        advantages, records = gar(repo_1366, case)
        for e in case["episodes"]:
            for t in e["traces"]:
                t["info"] = {"gar": records[t["id"]]}
        cases.append({"scheme": "gar", "name": name, "set": {"f_min": str(case["f_min"]), "lambda_max": str(case["lambda_max"])},
                      "episodes": case["episodes"], "advantages": advantages})
    dump({"source": {"prime_rl": COMMITS}, "runtime": {"python": sys.version.split()[0]}, "cases": cases})


if __name__ == "__main__":
    main(*sys.argv[1:4])
