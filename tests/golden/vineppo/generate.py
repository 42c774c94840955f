#!/usr/bin/env python3
"""Golden cases of VinePPO's own credit code, for tests/it/process_credit.rs.

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0 numpy==2.4.6
    git clone https://github.com/McGill-NLP/VinePPO && git -C VinePPO checkout efe7228
    .venv/bin/python tests/golden/vineppo/generate.py VinePPO > tests/golden/vineppo/cases.json

VinePPO's functions are run as it wrote them, taken from its files by name (its modules import the
whole treetune package, vLLM and datasets, which these functions do not use):
- `MathEpisodeGeneratorWithMCAdvantages._create_value_estimation_requests`
  (src/treetune/episode_generators/math_episode_generator_with_mc_advantages.py): which states get
  Monte-Carlo rollouts (the prompt state, and the states after the first `max_step_for_value_estimation`
  steps but never the last). Run up to the end of its loop over the trajectories, which is where it
  stops deciding: what follows writes the requests to disk and spreads them over processes;
- `_compute_mc_value` (same file): a state's value from its rollouts, a rollout with finish reason
  "length" scored the unfinished-response penalty, no rollouts valued 0;
- `_compute_step_advantages` and `_compute_token_advantages` (same file): the values filled from the
  end, the step advantages, and each token's advantage (here one character is one token, and a
  finished response ends with an EOS that takes the last step's advantage);
- `masked_whiten` (src/treetune/trainers/utils.py, with `masked_mean` and `masked_var`): the PPO
  trainer's whitening, `unbiased_variance=True`, over every response token of the batch.

What `_create_trajectories` does around them is done here the way it does it: the trajectory's score
is the unfinished-response penalty when its finish reason is "length" (and then it has no EOS), the
step rewards are 0 but the last, which is the score.

Each case gives its trajectories (group, step token counts, the rollouts from the prompt and from the
state after each step as [reward, finish], score, finish), the parameters, and each trajectory's
whitened advantage per token (the EOS, when there is one, counted in the last step).

Made on 2026-12-02 with Python 3.11.7, torch 2.15.0 (CPU) and numpy 2.4.6, from VinePPO commit
efe7228469f21bad8cc8d4e44a3f688ed8cc6aac.
"""

import ast
import json
import sys
from pathlib import Path
import types
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import definitions, dump  # noqa: E402  (tests/golden/reference.py)

COMMIT = "efe7228469f21bad8cc8d4e44a3f688ed8cc6aac"
GENERATOR = "src/treetune/episode_generators/math_episode_generator_with_mc_advantages.py"
UTILS = "src/treetune/trainers/utils.py"




def load(repo):
    # masked_whiten imports deepspeed's comm only to ask whether it runs distributed.
    deepspeed = types.ModuleType("deepspeed")
    deepspeed.comm = types.SimpleNamespace(is_initialized=lambda: False)
    sys.modules["deepspeed"] = deepspeed
    ns = {
        "json": json, "np": np, "torch": torch, "Any": Any, "Dict": Dict, "List": List,
        "Optional": Optional, "Tuple": Tuple, "Union": Union, "Path": object, "Dataset": object,
    }
    methods = {n.name: n for n in definitions(
        f"{repo}/{GENERATOR}",
        ["_create_value_estimation_requests", "_compute_mc_value", "_compute_step_advantages", "_compute_token_advantages"],
        cls="MathEpisodeGeneratorWithMCAdvantages",
    )}
    requests = methods["_create_value_estimation_requests"]
    # Up to the end of the loop over the trajectories, then hand back the requests.
    loop = next(i for i, s in enumerate(requests.body) if isinstance(s, ast.For))
    requests.body = requests.body[: loop + 1] + [ast.parse("return all_requests").body[0]]
    nodes = list(methods.values()) + definitions(f"{repo}/{UTILS}", ["masked_mean", "masked_var", "masked_whiten"])
    for node in nodes:
        module = ast.fix_missing_locations(ast.Module(body=[node], type_ignores=[]))
        exec(compile(module, repo, "exec"), ns)
    return ns


class Reward:
    """The task's reward function: a rollout's "answer" is its reward."""

    def __init__(self, penalty):
        self.penalty = penalty

    def __call__(self, query, rollout, data_instance):
        return float(rollout), False

    def get_unfinished_response_penalty(self):
        return self.penalty


EOS, BOS = -2, -1

# Trajectories: (group, step token counts, prompt-state rollouts, rollouts after each step but the
# last, score, finish). A rollout: [reward, finish].
CASES = {
    "worked_example": {
        "trajectories": [
            ("g", [3, 2, 4], [[1, "stop"]] * 4 + [[0, "stop"]] * 5,
             [[[1, "stop"]] * 6 + [[0, "stop"]] * 3, [[1, "stop"]] * 2 + [[0, "stop"]] * 7], 0.0, "stop"),
            ("g", [2, 5], [[1, "stop"]] * 4 + [[0, "stop"]] * 5, [[[1, "stop"]] * 8 + [[0, "stop"]]], 1.0, "stop"),
        ],
    },
    "truncations_and_empty_states": {
        "trajectories": [
            # A rollout cut off by the length limit, a state with no rollouts.
            ("a", [4, 1, 3], [[1, "stop"], [1, "length"], [0, "stop"]], [[[1, "length"], [1, "stop"]], []], 1.0, "stop"),
            # The trajectory itself cut off: scored the penalty, no EOS.
            ("a", [2, 2, 2, 2], [[1, "stop"], [1, "length"], [0, "stop"]],
             [[[0, "stop"], [1, "stop"]], [[1, "stop"]], [[0, "length"], [0, "stop"], [1, "stop"]]], 1.0, "length"),
            ("b", [5], [[0, "stop"], [0, "stop"]], [], 1.0, "stop"),
            ("b", [1, 1], [[0, "stop"], [0, "stop"]], [[[1, "stop"], [0, "stop"], [1, "stop"], [1, "stop"]]], 0.0, "stop"),
        ],
    },
    "long_chains": {
        "trajectories": [
            ("c", [2, 3, 1, 2, 4, 2], [[1, "stop"], [0, "stop"]],
             [[[1, "stop"]], [[0, "stop"], [1, "stop"]], [[1, "stop"], [1, "stop"]], [[0, "stop"]], [[1, "length"]]], 1.0, "stop"),
            ("c", [3, 3, 3, 3], [[1, "stop"], [0, "stop"]], [[[0, "stop"]], [[0, "stop"], [0, "stop"]], [[1, "stop"]]], 0.0, "stop"),
        ],
    },
}
CONFIGS = [(20, 0.0), (2, 0.0), (1, -1.0), (3, 0.5)]


def run_case(ns, trajectories, max_steps, penalty):
    me = types.SimpleNamespace(
        distributed_state=types.SimpleNamespace(process_index=0),
        max_step_for_value_estimation=max_steps,
        reward_function=Reward(penalty),
        reasoning_step_delimiter="",
        tokenizer=types.SimpleNamespace(eos_token_id=EOS, bos_token_id=BOS),
        _create_step_query=lambda traj, step_idx: traj["query_text"] + "".join(traj["steps"][: step_idx + 1]),
    )
    me._compute_step_advantages = lambda traj: ns["_compute_step_advantages"](me, traj)
    trajs = []
    for i, (group, counts, _, _, score, finish) in enumerate(trajectories):
        # One character a token; step k is its counts[k] characters.
        steps = [chr(ord("a") + k) * n for k, n in enumerate(counts)]
        response = "".join(steps)
        query = f"prompt {group}:"
        unfinished = finish == "length"
        if unfinished:
            score = Reward(penalty).get_unfinished_response_penalty()
        step_rewards = [0.0] * len(steps)
        step_rewards[-1] = score
        query_ids = [BOS] + [0] * len(query)
        response_ids = [0] * len(response) + ([] if unfinished else [EOS])
        offsets = [(j, j + 1) for j in range(len(query) + len(response))]
        indices = [0]
        for n in counts:
            indices.append(indices[-1] + n)
        trajs.append({
            "instance_idx": group, "data_instance": {}, "query_text": query, "response_text": response,
            "query_token_ids": query_ids, "response_token_ids": response_ids, "offsets": offsets,
            "steps": steps, "step_indices": indices, "step_rewards": step_rewards,
            "values": [None] * (len(steps) + 1),
        })
    for req in ns["_create_value_estimation_requests"](me, trajs, None):
        t, v = req["traj_idx"], req["value_idx"]
        _, _, prompt_rollouts, state_rollouts, _, _ = trajectories[t]
        rollouts = prompt_rollouts if v == 0 else state_rollouts[v - 1]
        tree = {"children": [{"answer": str(r), "finish_reason": f} for r, f in rollouts]}
        result = {"_treetune__reasoning_tree": json.dumps(tree)}
        trajs[t]["values"][v] = ns["_compute_mc_value"](me, query=req["query"], value_estimation_result=result, data_instance={})
    token_advantages = [ns["_compute_token_advantages"](me, traj) for traj in trajs]
    width = max(len(a) for a in token_advantages)
    values = torch.zeros(len(trajs), width)
    mask = torch.zeros(len(trajs), width)
    for i, a in enumerate(token_advantages):
        values[i, : len(a)] = torch.tensor(a, dtype=torch.float32)
        mask[i, : len(a)] = 1
    whitened = ns["masked_whiten"](values, mask, distributed=True, unbiased_variance=True)
    raw = [[float(x) for x in a] for a in token_advantages]
    return raw, [[float(x) for x in whitened[i, : len(a)]] for i, a in enumerate(token_advantages)]


def main():
    ns = load(sys.argv[1])
    out = {
        "source": {
            "repo": "McGill-NLP/VinePPO",
            "commit": COMMIT,
            "functions": [
                f"{GENERATOR}: MathEpisodeGeneratorWithMCAdvantages._create_value_estimation_requests (its loop), "
                "_compute_mc_value, _compute_step_advantages, _compute_token_advantages",
                f"{UTILS}: masked_mean, masked_var, masked_whiten",
            ],
        },
        "runtime": {"python": sys.version.split()[0], "torch": torch.__version__, "numpy": np.__version__},
        "cases": [],
    }
    for name, case in CASES.items():
        for max_steps, penalty in CONFIGS:
            trajectories = case["trajectories"]
            raw, whitened = run_case(ns, trajectories, max_steps, penalty)
            out["cases"].append({
                "name": name,
                "max_step_for_value_estimation": max_steps,
                "unfinished_response_penalty": penalty,
                "trajectories": [
                    {
                        "group": g, "step_tokens": counts, "prompt_rollouts": prompt, "state_rollouts": states,
                        "score": score, "finish": finish,
                    }
                    for g, counts, prompt, states, score, finish in trajectories
                ],
                "advantages": raw,
                "whitened": whitened,
            })
    dump(out)


if __name__ == "__main__":
    main()
