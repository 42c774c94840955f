"""The advantages prime-rl's `turn_credit` algorithm gives each turn of
sample_runs/terminal_turn_scores.jsonl, computed by prime-rl's own code (Python 3.11+, the standard
library only; commit 0d6024432 is on prime-rl's branch feat/turn-credit-shaping):

    git clone https://github.com/PrimeIntellect-ai/prime-rl && git -C prime-rl checkout 0d6024432
    python3 generate.py prime-rl > cases.json

`deltas`, `smear` and `TurnCreditAlgorithm.score_group` with its helpers (`_shaped_rewards`,
`_turn_scores`, `_token_advantages`; src/prime_rl/orchestrator/algo/turn_credit.py) and
`iter_trainable_branches` (src/prime_rl/orchestrator/trajectories.py) are taken from the checkout
by name and run as written, with the standard library only. Each trajectory of the sample becomes
a rollout of one linear trace, as verifiers builds it for a chat with tools: a prompt node (not
sampled), then per turn an assistant node (sampled: its thought and command tokens, every one
trainable) and a tool node (its output, not sampled). A turn's `turn_reward` step score is its
entry of `info["turn_rewards"]` (`None` where the step has none); a trajectory none of whose steps
has one carries no `turn_rewards` (prime-rl then trains it as plain GRPO); `reward` is the outcome.
Each group of the sample is one `score_group` call. A turn's advantage is the one assigned to its
sampled tokens (all the same).
"""

import asyncio
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from reference import definitions, dump, run  # noqa: E402

SAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../sample_runs/terminal_turn_scores.jsonl")
METHODS = ["score_group", "_shaped_rewards", "_turn_scores", "_token_advantages"]


class Logger:
    def warning(self, message):
        print("prime-rl warns:", message, file=sys.stderr)


class Node:
    def __init__(self, n_tokens, sampled):
        self.token_ids = list(range(n_tokens))
        self.mask = [sampled] * n_tokens
        self.sampled = sampled


class Branch:
    def __init__(self, nodes):
        self.nodes = nodes


class Rollout:
    """What turn_credit reads of prime-rl's Rollout: nodes, branches, info, reward, num_turns."""

    def __init__(self, trajectory):
        steps = trajectory["steps"]
        self.env_name = "terminal"
        self.reward = trajectory["outcome"]["reward"]
        mask = trajectory["tokens"]["mask"]
        self.nodes = [Node(3, False)]
        for step in steps:
            start, end = step["token_span"]
            sampled = sum(1 for m in mask[start:end] if m)
            self.nodes += [Node(sampled, True), Node(end - start - sampled, False)]
        self.branches = [Branch(self.nodes)]
        self.num_turns = len(steps)
        scores = [step.get("scores", {}).get("turn_reward") for step in steps]
        self.info = {"turn_rewards": scores} if any(s is not None for s in scores) else {}
        self.advantages = None

    def assign_advantages(self, advantages):
        self.advantages = advantages

    def turn_advantages(self):
        if not isinstance(self.advantages, list):
            return [self.advantages] * self.num_turns
        out, offset = [], 0
        for node in self.nodes:
            if node.sampled:
                out.append(self.advantages[offset])
            offset += len(node.token_ids)
        return out


def main(repo):
    future = [__import__("ast").parse("from __future__ import annotations").body[0]]
    ns = {"math": math, "get_logger": Logger}
    trajectories = f"{repo}/src/prime_rl/orchestrator/trajectories.py"
    algo = f"{repo}/src/prime_rl/orchestrator/algo/turn_credit.py"
    run(definitions(trajectories, ["iter_trainable_branches"]), ns, trajectories, future)
    run(definitions(algo, ["deltas", "smear"]), ns, algo, future)
    run(definitions(algo, METHODS, cls="TurnCreditAlgorithm"), ns, algo, future)
    Algorithm = type("TurnCreditAlgorithm", (), {name: ns[name] for name in METHODS})
    groups = {}
    for line in open(SAMPLE):
        record = json.loads(line)
        if record.get("type") == "trajectory":
            groups.setdefault(record["group"], []).append(record)
    cases = []
    for gamma, beta in [(0.9, 1.0), (0.5, 0.25), (1.0, 2.0), (0.0, 1.0), (0.9, 0.0)]:
        algo = Algorithm()
        algo.gamma, algo.beta, algo.length_penalty, algo._warned_missing = gamma, beta, None, False
        advantages = {}
        for members in groups.values():
            rollouts = [Rollout(t) for t in members]
            asyncio.run(algo.score_group(rollouts))
            for t, rollout in zip(members, rollouts):
                advantages[t["id"]] = rollout.turn_advantages()
        cases.append({"gamma": gamma, "beta": beta, "advantages": advantages})
    dump({
        "source": "PrimeIntellect-ai/prime-rl@0d6024432 src/prime_rl/orchestrator/algo/turn_credit.py",
        "sample": "sample_runs/terminal_turn_scores.jsonl",
        "cases": cases,
    })


main(sys.argv[1])
