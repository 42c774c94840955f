#!/usr/bin/env python3
"""Golden cases of the 2026 trainers' own outcome advantages, for tests/it/trainers_2026.rs.

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0 numpy
    git clone https://github.com/NVIDIA-NeMo/RL && git -C RL checkout 7ea279abf
    git clone https://github.com/PrimeIntellect-ai/prime-rl && git -C prime-rl checkout 559b44772
    git clone https://github.com/THUDM/slime && git -C slime checkout 624b824a8
    git clone https://github.com/radixark/miles && git -C miles checkout 31f1ca961
    .venv/bin/python tests/golden/trainers_2026/generate.py RL prime-rl slime miles \
        > tests/golden/trainers_2026/cases.json

Each trainer's functions are run as it wrote them, taken from its files by name (their modules
import the trainers' workers, Ray and Megatron, which these functions do not use):
- NeMo-RL, nemo_rl/algorithms/utils.py `calculate_baseline_and_std_per_prompt` and
  nemo_rl/algorithms/advantage_estimator.py `GRPOAdvantageEstimator`, with
  `use_leave_one_out_baseline` true (the default) and false, `normalize_rewards` true. The prompt
  ids are one token per prompt (the function compares whole prompt rows);
- prime-rl, src/prime_rl/orchestrator/algo/grpo.py `GRPOAlgorithm.score_group` without a length
  penalty; stand-ins for `iter_trainable_traces` (every trace trainable and clean) and
  `assign_advantages` (records the trace's value);
- slime, slime/ray/rollout.py `RolloutManager._post_process_rewards` with
  `advantage_estimator = "grpo"`, `rewards_normalization` and `grpo_std_normalization` true (false
  for one sample per prompt, whose torch std is NaN), `n_samples_per_prompt` the largest prompt's
  sample count and `rollout_batch_size` the number of prompts, the samples in the case's order;
- miles, miles/ray/rollout/train_data_conversion.py `_post_process_rewards`,
  `_normalize_rewards_by_rollout`, `_reward_group_segments`, samples carrying their prompt as
  `group_index`.

A case gives each sample's prompt and reward, and each trainer's advantage per sample.

Made on 2026-12-05 with Python 3.11, torch 2.15.0 (CPU) and numpy, from the commits above.
"""

import json
import sys
import types
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import definitions, dump, prime_rl_algorithm, run  # noqa: E402  (tests/golden/reference.py)

COMMITS = {
    "nemo_rl": "7ea279abfbeb698b092856d0dab61e7cf39bc909",
    "prime_rl": "559b44772e471d1538537b8805cc77f3824a5e64",
    "slime": "624b824a898ab0ec1fcb4d373004c7f3852bf515",
    "miles": "31f1ca961a94cb860cec3b2dea34ec332bfa8f76",
}

# Samples (prompt, reward), prompts contiguous as the trainers lay them out.
CASES = {
    # Four prompts of four samples: mixed, all equal, one right, fractional rewards.
    "four_by_four": [("a", r) for r in (1, 0, 1, 0)] + [("b", r) for r in (1, 1, 1, 1)]
    + [("c", r) for r in (0, 0, 1, 0)] + [("d", r) for r in (0.25, 0.5, 1.0, 0.75)],
    # Two samples per prompt: the leave-one-out std of one other sample is 0.
    "pairs": [("a", 1.0), ("a", 0.0), ("b", 0.0), ("b", 0.0), ("c", 0.3), ("c", 0.9)],
    # Negative and large rewards, eight samples.
    "signed_eight": [("a", r) for r in (-1.0, 1.0, 0.0, -1.0, 2.5, 0.0, 1.0, -0.5)],
    # One sample per prompt.
    "singletons": [("a", 1.0), ("b", 0.0), ("c", 0.5)],
    # Sixteen samples of one prompt, rewards in tenths.
    "sixteen": [("a", r / 10) for r in (3, 7, 0, 10, 5, 5, 2, 9, 1, 8, 4, 6, 10, 0, 7, 3)],
    # Groups of 1, 2, 4, 8 and 16 in one batch (what dynamic sampling or filtering leaves).
    "mixed_sizes": [("a", 0.5)] + [("b", r) for r in (1.0, 0.0)] + [("c", r) for r in (0.2, 0.4, 0.4, 0.9)]
    + [("d", r) for r in (1, 0, 0, 1, 1, 1, 0, 1)] + [("e", r / 16) for r in range(16)],
    # Negative rewards, groups of four.
    "negative": [("a", r) for r in (-1.0, -0.5, -0.25, -2.0)] + [("b", r) for r in (-3.0, 1.5, -0.75, 0.0)],
    # All-equal groups of rewards that are not dyadic: eight of 0.1, sixteen of 0.9, eight of 0.3
    # and of 0.7 (float32's mean can miss the reward by an ulp).
    "equal_octet": [("a", 0.1)] * 8,
    "equal_sixteen": [("a", 0.9)] * 16,
    "equal_pairs_of_octets": [("a", 0.3)] * 8 + [("b", 0.7)] * 8,
    # Two prompts of four samples, interleaved (slime's rows of n_samples_per_prompt cut across them).
    "interleaved": [(p, r) for (p, r) in zip("abababab", (1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0))],
}


def nemo_rl(repo):
    ns = {"torch": torch, "BaseModel": object, "ClippedPGLossConfig": object, "AdvEstimatorConfig": object}
    run(definitions(f"{repo}/nemo_rl/algorithms/utils.py", ["calculate_baseline_and_std_per_prompt"]), ns, repo)
    run(definitions(f"{repo}/nemo_rl/algorithms/advantage_estimator.py", ["GRPOAdvantageEstimator"]), ns, repo)

    def advantages(samples, leave_one_out):
        prompts = sorted({p for p, _ in samples})
        prompt_ids = torch.tensor([[prompts.index(p)] for p, _ in samples])
        rewards = torch.tensor([r for _, r in samples], dtype=torch.float32)
        config = types.SimpleNamespace(use_leave_one_out_baseline=leave_one_out, normalize_rewards=True)
        estimator = ns["GRPOAdvantageEstimator"](config, None)
        mask = torch.ones(len(samples), 3)
        return estimator.compute_advantage(prompt_ids, rewards, mask)[:, 0].tolist()

    return advantages


def prime_rl(repo):
    cls, assigned = prime_rl_algorithm(repo, "src/prime_rl/orchestrator/algo/grpo.py", "GRPOAlgorithm",
                                       {"torch": torch, "GRPOAlgoConfig": object})
    import asyncio

    def advantages(samples):
        assigned.clear()
        algo = cls.__new__(cls)
        algo.length_penalty = None
        out = [None] * len(samples)
        for prompt in sorted({p for p, _ in samples}):
            rows = [i for i, (p, _) in enumerate(samples) if p == prompt]
            traces = [types.SimpleNamespace(id=i, reward=samples[i][1]) for i in rows]
            episodes = [types.SimpleNamespace(traces=[t]) for t in traces]
            asyncio.run(algo.score_group(episodes))
            for i in rows:
                out[i] = assigned[i]
        return out

    return advantages


def slime(repo):
    ns = {"torch": torch, "Sample": object}
    run(definitions(f"{repo}/slime/ray/rollout.py", ["_post_process_rewards"], cls="RolloutManager"), ns, repo)

    def advantages(samples):
        # The run's configuration as vantage infers it: n_samples_per_prompt the largest prompt's
        # samples, rollout_batch_size the number of prompts (a batch of groups of unequal size then
        # holds fewer rows than their product, and slime normalizes it as one group).
        sizes = {p: sum(1 for q, _ in samples if q == p) for p, _ in samples}
        n = max(sizes.values())
        args = types.SimpleNamespace(advantage_estimator="grpo", rewards_normalization=True,
                                     grpo_std_normalization=n > 1, n_samples_per_prompt=n,
                                     rollout_batch_size=len(sizes))
        manager = types.SimpleNamespace(args=args, custom_reward_post_process_func=None)
        rows = [types.SimpleNamespace(get_reward_value=lambda a, r=r: r) for _, r in samples]
        return ns["_post_process_rewards"](manager, rows)[1]

    return advantages


def miles(repo):
    ns = {"torch": torch, "Any": object, "Sample": object}
    path = f"{repo}/miles/ray/rollout/train_data_conversion.py"
    run(definitions(path, ["_reward_group_segments", "_normalize_rewards_by_rollout", "_post_process_rewards"]), ns, repo)

    def advantages(samples):
        prompts = sorted({p for p, _ in samples})
        n = len(samples)
        args = types.SimpleNamespace(advantage_estimator="grpo", rewards_normalization=True,
                                     grpo_std_normalization=True, n_samples_per_prompt=1, rollout_batch_size=n)
        rows = [types.SimpleNamespace(group_index=prompts.index(p), rollout_id=None, index=i,
                                      get_reward_value=lambda a, r=r: r) for i, (p, r) in enumerate(samples)]
        return ns["_post_process_rewards"](args, rows, None)[1]

    return advantages


def main(rl, prime, slime_repo, miles_repo):
    trainers = {"nemo_rl": nemo_rl(rl), "prime_rl": prime_rl(prime), "slime": slime(slime_repo), "miles": miles(miles_repo)}
    cases = []
    for name, samples in CASES.items():
        out = {
            "nemo_rl": trainers["nemo_rl"](samples, True),
            "nemo_rl_no_loo": trainers["nemo_rl"](samples, False),
            "prime_rl": trainers["prime_rl"](samples),
            "slime": trainers["slime"](samples),
            "miles": trainers["miles"](samples),
        }
        cases.append({"name": name, "samples": [[p, r] for p, r in samples], "advantages": out})
    dump({
        "source": {k: {"commit": v} for k, v in COMMITS.items()},
        "runtime": {"python": sys.version.split()[0], "torch": torch.__version__},
        "cases": cases,
    })


if __name__ == "__main__":
    main(*sys.argv[1:5])
