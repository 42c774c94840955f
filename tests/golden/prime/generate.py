#!/usr/bin/env python3
"""Golden cases of PRIME's own credit code, for tests/it/process_credit.rs.

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0 numpy==2.4.6
    git clone https://github.com/PRIME-RL/PRIME && git -C PRIME checkout 18ad596
    .venv/bin/python tests/golden/prime/generate.py PRIME > tests/golden/prime/cases.json

PRIME's functions are run as it wrote them, taken from its files by name (the modules import
verl's workers, ray and flash-attn, which these functions do not use):
- training/verl/trainer/ppo/ray_trainer.py: `RayPRIMETrainer.filter`, the accuracy filter over
  each prompt's samples (its truncation filter off);
- training/verl/workers/actor/dp_prime.py: `DataParallelPRIME.compute_implicit_reward`, the
  process reward q = log π_φ − log π_ref per token or summed on the last token;
- training/verl/trainer/ppo/core_algos.py: `compute_rloo_returns`, RLOO per reward source, the
  discounted returns summed, whitened with verl's `masked_whiten`
  (training/verl/utils/torch_functional.py, with `masked_mean` and `masked_var`).

`update_policy`'s batch normalization of the process rewards sits inside that method among the PRM
updates; its two lines are copied here as they are (the largest |reverse cumulative sum| in the
batch becomes 1). The PRM is not updated (`update: none`), so q is the logged log-probabilities'
difference. The outcome `gt_scores` is the accuracy on the last response token.

Each case gives its samples (log π_φ, log π_ref per token, accuracy; groups of `n_samples` in order),
the parameters, and the advantage and return of each token of the samples the filter keeps.

Made on 2026-12-02 with Python 3.11.7, torch 2.15.0 (CPU) and numpy 2.4.6, from PRIME commit
18ad596f08d487bb546d80d738d99ec697bd2e75.
"""

import ast
import contextlib
import io
import json
import sys
from pathlib import Path
import types
from collections import Counter

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import definitions, dump, run  # noqa: E402  (tests/golden/reference.py)

COMMIT = "18ad596f08d487bb546d80d738d99ec697bd2e75"
TRAINER = "training/verl/trainer/ppo/ray_trainer.py"
ACTOR = "training/verl/workers/actor/dp_prime.py"
ALGOS = "training/verl/trainer/ppo/core_algos.py"
TORCH_F = "training/verl/utils/torch_functional.py"




def load(repo):
    verl_f = {"torch": torch}
    run(definitions(f"{repo}/{TORCH_F}", ["masked_mean", "masked_var", "masked_whiten"]), verl_f, repo)
    ns = {"torch": torch, "Counter": Counter, "verl": types.SimpleNamespace(DataProto=object),
          "verl_F": types.SimpleNamespace(**{k: v for k, v in verl_f.items() if k != "torch"})}
    nodes = (
        definitions(f"{repo}/{TRAINER}", ["filter"], cls="RayPRIMETrainer")
        + definitions(f"{repo}/{ACTOR}", ["compute_implicit_reward"], cls="DataParallelPRIME")
        + definitions(f"{repo}/{ALGOS}", ["compute_rloo_returns"])
    )
    run(nodes, ns, repo)
    return ns


N = 4
PROMPT = 2


def samples(seed):
    """Three groups of N: response lengths 2..6, log-probs in [−3, 0], accuracies per group."""
    rng = np.random.default_rng(seed)
    accs = [[1, 0, 0, 1], [1, 1, 1, 1], [0, 0, 0, 1]]
    out = []
    for group in accs:
        for acc in group:
            n = int(rng.integers(2, 7))
            out.append({
                "prm_logprob": [float(x) for x in np.round(rng.uniform(-3, 0, n), 4)],
                "ref_logprob": [float(x) for x in np.round(rng.uniform(-3, 0, n), 4)],
                "acc": acc,
            })
    return out


# (granularity, reward_model_gamma, verifier_gamma, filter_accuracy)
CONFIGS = [("token", 1.0, 1.0, False), ("token", 0.9, 0.95, False), ("whole", 1.0, 1.0, False), ("token", 1.0, 1.0, True)]
LOWER, UPPER = 0.2, 0.8


def run_case(ns, rows, config):
    granularity, gamma_rm, gamma_v, filtering = config
    width = max(len(r["prm_logprob"]) for r in rows)
    bs = len(rows)
    attention = torch.zeros(bs, PROMPT + width, dtype=torch.long)
    attention[:, :PROMPT] = 1
    phi = torch.zeros(bs, width)
    ref = torch.zeros(bs, width)
    acc = torch.zeros(bs)
    for i, r in enumerate(rows):
        n = len(r["prm_logprob"])
        attention[i, PROMPT : PROMPT + n] = 1
        phi[i, :n] = torch.tensor(r["prm_logprob"])
        ref[i, :n] = torch.tensor(r["ref_logprob"])
        acc[i] = r["acc"]
    # The accuracy filter.
    trainer = types.SimpleNamespace(config=types.SimpleNamespace(data=types.SimpleNamespace(
        filter_accuracy=filtering, filter_truncated=False, accuracy_lower_bound=LOWER, accuracy_upper_bound=UPPER)))

    class Batch:
        def __len__(self):
            return bs

        def slice(self, mask):
            return [i for i in range(bs) if mask[i]]

    with contextlib.redirect_stdout(io.StringIO()):
        kept = ns["filter"](trainer, acc.unsqueeze(1), Batch(), N)
    kept_t = torch.tensor(kept)
    attention, phi, ref, acc = attention[kept_t], phi[kept_t], ref[kept_t], acc[kept_t]
    bs = len(kept)
    responses = torch.zeros(bs, width, dtype=torch.long)
    micro = {"responses": responses, "attention_mask": attention, "input_ids": torch.zeros(bs, PROMPT + width, dtype=torch.long)}
    actor = types.SimpleNamespace(config=types.SimpleNamespace(prime_granularity=granularity))
    token_level_scores, _ = ns["compute_implicit_reward"](actor, micro, phi, ref)
    # update_policy's batch_norm, as written there.
    reverse_cumsum = torch.cumsum(token_level_scores.flip(dims=[1]), dim=-1).flip(dims=[1])
    token_level_scores = token_level_scores / (reverse_cumsum.abs().max() + 1e-6)
    eos_mask = attention[:, PROMPT:]
    lengths = eos_mask.sum(-1)
    gt = torch.zeros(bs, width)
    gt[torch.arange(bs), lengths - 1] = acc
    data = types.SimpleNamespace(batch={
        "responses": responses, "prompts": torch.zeros(bs, PROMPT, dtype=torch.long), "attention_mask": attention,
        "rm_scores": token_level_scores, "gt_scores": gt,
    })
    config = types.SimpleNamespace(algorithm=types.SimpleNamespace(
        adv_params=types.SimpleNamespace(reward_model_gamma=gamma_rm, verifier_gamma=gamma_v)))
    advantages, returns = ns["compute_rloo_returns"](data, eos_mask, N, config)
    return {
        str(k): {
            "advantages": [float(x) for x in advantages[j, : lengths[j]]],
            "returns": [float(x) for x in returns[j, : lengths[j]]],
        }
        for j, k in enumerate(kept)
    }


def main():
    ns = load(sys.argv[1])
    out = {
        "source": {
            "repo": "PRIME-RL/PRIME",
            "commit": COMMIT,
            "functions": [
                f"{TRAINER}: RayPRIMETrainer.filter",
                f"{ACTOR}: DataParallelPRIME.compute_implicit_reward (and update_policy's batch_norm lines)",
                f"{ALGOS}: compute_rloo_returns",
                f"{TORCH_F}: masked_mean, masked_var, masked_whiten",
            ],
        },
        "runtime": {"python": sys.version.split()[0], "torch": torch.__version__, "numpy": np.__version__},
        "cases": [],
    }
    for seed in [1, 2]:
        rows = samples(seed)
        for config in CONFIGS:
            granularity, gamma_rm, gamma_v, filtering = config
            out["cases"].append({
                "name": f"seed{seed}",
                "n_samples": N,
                "prime_granularity": granularity,
                "reward_model_gamma": gamma_rm,
                "verifier_gamma": gamma_v,
                "filter_accuracy": filtering,
                "accuracy_bounds": [LOWER, UPPER],
                "samples": rows,
                "kept": run_case(ns, rows, config),
            })
    dump(out)


if __name__ == "__main__":
    main()
