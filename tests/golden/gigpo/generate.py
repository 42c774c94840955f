#!/usr/bin/env python3
"""Golden cases of GiGPO's own credit code (verl-agent), for tests/it/process_credit.rs.

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0 numpy==2.4.6
    git clone https://github.com/zhangyun04/verl-agent && git -C verl-agent checkout 24dda38
    .venv/bin/python tests/golden/gigpo/generate.py verl-agent > tests/golden/gigpo/cases.json

(zhangyun04/verl-agent is a fork of langfengQ/verl-agent, whose own history could not be fetched
here; the fork's gigpo/core_gigpo.py is the upstream file.)

verl-agent's functions are run as it wrote them, taken from its files by name (the modules import
verl and ray, which these functions do not use):
- gigpo/core_gigpo.py: `compute_step_discounted_returns` (each step's discounted return of the
  environment rewards), `compute_gigpo_outcome_advantage` with `episode_norm_reward`,
  `build_step_group`, `step_norm_reward` and `to_hashable`;
- verl/trainer/ppo/ray_trainer.py: `apply_invalid_action_penalty`, which takes κ off an invalid
  step's episode score and its step return.

A batch row is one step, as in verl-agent. A `DataProto` stand-in holds the tensors and the
non-tensor fields these functions read; the row's episode score sits on its last response token,
as agent_system/reward_manager/episode.py puts it; no KL in the reward. The paper's statistics (one
sample per trajectory) are `episode_norm_reward(..., compute_mean_std_cross_all_data=False)` plus
ω times `step_norm_reward`, the two terms `compute_gigpo_outcome_advantage` adds.

Each case gives its trajectories (group, steps as [state, env reward, valid]), the parameters, and
each step's advantage.

Made on 2026-12-02 with Python 3.11.7, torch 2.15.0 (CPU) and numpy 2.4.6, from verl-agent commit
24dda38c49d622f3eadaedf8737e5e9107de78c7.
"""

import ast
import json
import sys
from pathlib import Path
import uuid
from collections import Counter, defaultdict

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import definitions, dump, run  # noqa: E402  (tests/golden/reference.py)

COMMIT = "24dda38c49d622f3eadaedf8737e5e9107de78c7"
CORE = "gigpo/core_gigpo.py"
TRAINER = "verl/trainer/ppo/ray_trainer.py"




def load(repo):
    ns = {"np": np, "torch": torch, "defaultdict": defaultdict, "Counter": Counter, "uuid": uuid, "DataProto": object}
    nodes = definitions(
        f"{repo}/{CORE}",
        ["to_hashable", "summarize_group_size", "compute_step_discounted_returns", "compute_gigpo_outcome_advantage",
         "episode_norm_reward", "build_step_group", "step_norm_reward"],
    ) + definitions(f"{repo}/{TRAINER}", ["apply_invalid_action_penalty"])
    run(nodes, ns, repo)
    return ns


class Item:
    def __init__(self, batch, non_tensor_batch):
        self.batch = batch
        self.non_tensor_batch = non_tensor_batch


class Data:
    """The part of verl's DataProto these functions use."""

    def __init__(self, batch, non_tensor_batch):
        self.batch = batch
        self.non_tensor_batch = non_tensor_batch

    def __len__(self):
        return len(next(iter(self.non_tensor_batch.values())))

    def __getitem__(self, i):
        return Item({k: v[i] for k, v in self.batch.items()}, {k: v[i : i + 1] if k == "is_action_valid" else v[i] for k, v in self.non_tensor_batch.items()})


# Trajectories: (group, [[state, env reward, valid], ...]).
CASES = {
    # The worked example's shape: two rollouts meet in state "s1".
    "anchor_states": [
        ("g", [["s0", 0.0, True], ["s1", 0.0, True], ["s2", 1.0, True]]),
        ("g", [["s0", 0.0, True], ["s1", 0.0, True], ["s3", 0.0, True]]),
        ("g", [["s0", 0.0, True], ["s4", 0.5, True]]),
    ],
    # Invalid actions, rewards on the way, a group of one trajectory with several steps, and a
    # group of one single-step trajectory.
    "invalid_actions": [
        ("a", [["x", 0.0, True], ["y", 0.2, False], ["z", 1.0, True]]),
        ("a", [["x", 0.0, False], ["y", 0.0, True]]),
        ("a", [["x", 0.1, True], ["w", 0.0, True], ["y", 0.0, False], ["z", 0.0, True]]),
        ("b", [["p", 0.0, True], ["q", 1.0, False], ["p", 0.5, True]]),
        ("c", [["r", 1.0, True]]),
    ],
}
# (mode, ω, γ, κ, statistics over step rows)
CONFIGS = [
    ("mean_norm", 1.0, 0.95, 0.1, True),
    ("mean_std_norm", 1.0, 0.95, 0.1, True),
    ("mean_std_norm", 0.5, 0.9, 0.3, True),
    ("mean_norm", 1.0, 1.0, 0.0, True),
    ("mean_std_norm", 1.0, 0.95, 0.1, False),
]
PROMPT, RESPONSE = 2, 4


def run_case(ns, trajectories, config):
    mode, omega, gamma, kappa, rows_stats = config
    rows = [(t, g, step) for t, (g, steps) in enumerate(trajectories) for step in steps]
    bs = len(rows)
    episode = [sum(s[1] for s in trajectories[t][1]) for t, _, _ in rows]
    # Response lengths 1..RESPONSE, so the score sits at different places.
    lengths = [1 + i % RESPONSE for i in range(bs)]
    attention = torch.zeros(bs, PROMPT + RESPONSE, dtype=torch.long)
    attention[:, :PROMPT] = 1
    scores = torch.zeros(bs, RESPONSE)
    for i, n in enumerate(lengths):
        attention[i, PROMPT : PROMPT + n] = 1
        scores[i, n - 1] = episode[i]
    data = Data(
        {
            "input_ids": torch.zeros(bs, PROMPT + RESPONSE, dtype=torch.long),
            "prompts": torch.zeros(bs, PROMPT, dtype=torch.long),
            "attention_mask": attention,
            "token_level_scores": scores,
        },
        {
            "rewards": np.array([s[1] for _, _, s in rows], dtype=np.float32),
            "traj_uid": np.array([f"t{t}" for t, _, _ in rows], dtype=object),
            "active_masks": np.ones(bs, dtype=bool),
            "is_action_valid": np.array([s[2] for _, _, s in rows], dtype=bool),
            "uid": np.array([g for _, g, _ in rows], dtype=object),
            "anchor_obs": np.array([s[0] for _, _, s in rows], dtype=object),
        },
    )
    data.batch["step_rewards"] = ns["compute_step_discounted_returns"](batch=data, gamma=gamma)
    data, _ = ns["apply_invalid_action_penalty"](data, invalid_action_penalty_coef=kappa)
    response_mask = attention[:, PROMPT:].float()
    remove_std = mode == "mean_norm"
    index, traj_index = data.non_tensor_batch["uid"], data.non_tensor_batch["traj_uid"]
    if rows_stats:
        advantages, _ = ns["compute_gigpo_outcome_advantage"](
            token_level_rewards=data.batch["token_level_scores"],
            step_rewards=data.batch["step_rewards"],
            response_mask=response_mask,
            anchor_obs=data.non_tensor_batch["anchor_obs"],
            index=index,
            traj_index=traj_index,
            step_advantage_w=omega,
            mode=mode,
        )
    else:
        episode_adv = ns["episode_norm_reward"](
            data.batch["token_level_scores"], response_mask, index, traj_index, 1e-6, remove_std,
            compute_mean_std_cross_all_data=False,
        )
        groups = ns["build_step_group"](data.non_tensor_batch["anchor_obs"], index)
        step_adv = ns["step_norm_reward"](data.batch["step_rewards"], response_mask, groups, 1e-6, remove_std)
        advantages = episode_adv + omega * step_adv
    out = [[] for _ in trajectories]
    for i, (t, _, _) in enumerate(rows):
        # Every response token of the row holds its advantage.
        assert torch.all(advantages[i, : lengths[i]] == advantages[i, 0])
        out[t].append(float(advantages[i, 0]))
    return out


def main():
    ns = load(sys.argv[1])
    out = {
        "source": {
            "repo": "zhangyun04/verl-agent",
            "commit": COMMIT,
            "functions": [
                f"{CORE}: compute_step_discounted_returns, compute_gigpo_outcome_advantage, episode_norm_reward, build_step_group, step_norm_reward",
                f"{TRAINER}: apply_invalid_action_penalty",
            ],
        },
        "runtime": {"python": sys.version.split()[0], "torch": torch.__version__, "numpy": np.__version__},
        "cases": [],
    }
    import contextlib
    import io

    for name, trajectories in CASES.items():
        for config in CONFIGS:
            mode, omega, gamma, kappa, rows_stats = config
            with contextlib.redirect_stdout(io.StringIO()):  # build_step_group prints the group sizes
                advantages = run_case(ns, trajectories, config)
            out["cases"].append({
                "name": name,
                "mode": mode,
                "step_advantage_w": omega,
                "gamma": gamma,
                "invalid_action_penalty_coef": kappa,
                "stats_over_step_rows": rows_stats,
                "trajectories": [{"group": g, "steps": steps} for g, steps in trajectories],
                "advantages": advantages,
            })
    dump(out)


if __name__ == "__main__":
    main()
