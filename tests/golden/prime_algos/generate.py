#!/usr/bin/env python3
"""Golden cases of prime-rl's own algorithms beyond GRPO, for tests/it/trainers_2026.rs.

    python3 -m venv .venv && .venv/bin/pip install --no-deps torch==2.15.0 numpy
    git clone https://github.com/PrimeIntellect-ai/prime-rl && git -C prime-rl checkout 559b44772
    .venv/bin/python tests/golden/prime_algos/generate.py prime-rl > tests/golden/prime_algos/cases.json

prime-rl's classes are run as it wrote them, taken from its files by name (their modules import
verifiers and the orchestrator, which these methods do not use), with stand-ins for
`iter_trainable_traces` (every trace trainable) and `assign_advantages` (records the trace's value),
one `score_group` call per prompt (a prompt's samples are its group's episodes, one trace each):
- `maxrl`: src/prime_rl/orchestrator/algo/max_rl.py `MaxRLAlgorithm`;
- `rae`: src/prime_rl/orchestrator/algo/rae.py `RAEAlgorithm`, one instance over a case's groups
  in order (its baselines are the run's history), each trace's agent named by the sample's role,
  at `decay` 0.95 (RAEAlgoConfig's default) and 0.5;
- `opd`: src/prime_rl/trainer/rl/loss.py `ref_kl_loss_fn` (with `LossInputs`, `LossOutputs`,
  `compute_importance_ratio_and_mismatch_kl`, `_safe_mean`), the loss OPDAlgorithm's samples train
  with: each token's weight is minus the loss's gradient with respect to the trainer's log-probs,
  on-policy (trainer = inference log-probs), the teacher's log-probs as `ref_logprobs`.

The samples are those of tests/golden/trainers_2026 (groups of 1 to 16, mixed sizes, negative
rewards, interleaved prompts, all-equal groups), with two more cases where the mean is at most 0.

Made on 2026-12-07 with Python 3.11, torch 2.15.0 (the PyPI wheel, on the CPU) and numpy, from the
commit above.
"""

import ast
import asyncio
import sys
from collections import defaultdict
import types
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import definitions, dump, prime_rl_algorithm, run  # noqa: E402  (tests/golden/reference.py)
from trainers_2026.generate import CASES as TRAINER_CASES  # noqa: E402

COMMIT = "559b44772e471d1538537b8805cc77f3824a5e64"

CASES = dict(TRAINER_CASES)
# A group whose rewards sum to 0 and one all below 0 (MaxRL: no signal), beside one above.
CASES["mean_zero_or_below"] = [("a", r) for r in (1.0, -1.0, 0.5, -0.5)] + [("b", r) for r in (-0.2, -0.1)] \
    + [("c", r) for r in (0.0, 0.0, 0.0)] + [("d", r) for r in (0.1, 0.0, 0.0, 0.0)]

# Samples (prompt, role, reward) of multi-agent groups, for `rae`: a zero-sum two-player game (the
# roles' rewards opposite), a proposer and its solvers, and roles that appear late.
ROLE_CASES = {
    "zero_sum_pairs": [(f"g{g}", role, r if role == "player_0" else -r)
                       for g, outcomes in enumerate([(1, -1), (1, 1), (-1, 1), (1, -1), (1, 1), (-1, -1)])
                       for r in outcomes for role in ("player_0", "player_1")],
    "proposer_solvers": [(f"g{g}", role, r) for g, rows in enumerate([
        [("proposer", 0.5), ("solver", 1.0), ("solver", 0.0), ("solver", 1.0)],
        [("proposer", 0.25), ("solver", 0.0), ("solver", 0.0), ("solver", 1.0)],
        [("proposer", 1.0), ("solver", 1.0), ("solver", 1.0), ("solver", 1.0)],
        [("proposer", 0.0), ("solver", 0.3), ("solver", 0.7)],
    ]) for role, r in rows],
    "late_role": [("a", "x", 1.0), ("a", "x", 0.0), ("b", "x", 1.0), ("b", "y", 0.5), ("c", "y", -0.5), ("c", "x", 0.25)]
    + [("d", "y", r / 16) for r in range(16)],
}


def per_prompt(cls, assigned, samples, setup=lambda algo: None):
    """Each sample's advantage, one `score_group` call per prompt in the order prompts first appear."""
    algo = cls.__new__(cls)
    setup(algo)
    assigned.clear()
    prompts = list(dict.fromkeys(p for p, _ in samples))
    for prompt in prompts:
        rows = [i for i, (p, _) in enumerate(samples) if p == prompt]
        episodes = [types.SimpleNamespace(id=i, traces=[types.SimpleNamespace(id=i, reward=samples[i][1])]) for i in rows]
        asyncio.run(algo.score_group(episodes))
    return [assigned[i] for i in range(len(samples))]


# Rows of tokens for `opd`: (policy log-probs, teacher log-probs, mask), float32 values.
def opd_rows():
    gen = torch.Generator().manual_seed(20261207)
    rows = []
    for n in (1, 2, 5, 16, 40):
        logprob = -torch.rand(n, generator=gen) * 3
        teacher = -torch.rand(n, generator=gen) * 3
        mask = torch.rand(n, generator=gen) > 0.2
        mask[0] = True
        rows.append((logprob.tolist(), teacher.tolist(), mask.tolist()))
    return rows


def opd_weights(repo, rows):
    """Each token's weight under ref_kl_loss_fn: minus the gradient of the loss with respect to the
    trainer's log-probs, on-policy."""
    from dataclasses import dataclass, field
    ns = {"torch": torch, "Tensor": torch.Tensor, "dataclass": dataclass, "field": field}
    names = ["LossInputs", "LossOutputs", "_safe_mean", "compute_importance_ratio_and_mismatch_kl", "ref_kl_loss_fn"]
    prefix = [ast.parse("from __future__ import annotations").body[0]]
    run(definitions(f"{repo}/src/prime_rl/trainer/rl/loss.py", names), ns, repo, prefix)
    out = []
    for logprob, teacher, mask in rows:
        trainer = torch.tensor(logprob, dtype=torch.float32, requires_grad=True)
        inputs = ns["LossInputs"](trainer_logprobs=trainer, inference_logprobs=torch.tensor(logprob, dtype=torch.float32),
                                  ref_logprobs=torch.tensor(teacher, dtype=torch.float32),
                                  advantages=torch.zeros(len(logprob)), loss_mask=torch.tensor(mask))
        ns["ref_kl_loss_fn"](inputs).loss.backward()
        out.append((-trainer.grad).tolist())
    return out


def rae_history(cls, assigned, samples, decay):
    """Each sample's `rae` advantage: one instance scores the case's groups in order."""
    algo = cls.__new__(cls)
    algo.decay = decay
    algo.baselines = defaultdict(float)
    assigned.clear()
    for prompt in dict.fromkeys(p for p, _, _ in samples):
        rows = [i for i, (p, _, _) in enumerate(samples) if p == prompt]
        episodes = [types.SimpleNamespace(id=i, traces=[types.SimpleNamespace(
            id=i, reward=samples[i][2], agent=types.SimpleNamespace(name=samples[i][1]))]) for i in rows]
        asyncio.run(algo.score_group(episodes))
    return [assigned[i] for i in range(len(samples))]


def main(repo):
    maxrl = prime_rl_algorithm(repo, "src/prime_rl/orchestrator/algo/max_rl.py", "MaxRLAlgorithm", {"torch": torch})
    rae = prime_rl_algorithm(repo, "src/prime_rl/orchestrator/algo/rae.py", "RAEAlgorithm",
                             {"torch": torch, "defaultdict": defaultdict, "RAEAlgoConfig": object})
    cases = []
    for name, samples in CASES.items():
        with_role = [(p, "default", r) for p, r in samples]
        cases.append({
            "name": name,
            "samples": [[p, "default", r] for p, r in samples],
            "advantages": {"maxrl": per_prompt(*maxrl, samples), "rae": rae_history(*rae, with_role, 0.95),
                           "rae_decay_0.5": rae_history(*rae, with_role, 0.5)},
        })
    for name, samples in ROLE_CASES.items():
        cases.append({
            "name": name,
            "samples": [[p, role, r] for p, role, r in samples],
            "advantages": {"rae": rae_history(*rae, samples, 0.95), "rae_decay_0.5": rae_history(*rae, samples, 0.5)},
        })
    rows = opd_rows()
    opd = [{"logprob": lp, "teacher": t, "mask": m, "weights": w}
           for (lp, t, m), w in zip(rows, opd_weights(repo, rows))]
    dump({
        "source": {"prime_rl": {"commit": COMMIT}},
        "opd": opd,
        "runtime": {"python": sys.version.split()[0], "torch": torch.__version__},
        "cases": cases,
    })


if __name__ == "__main__":
    main(sys.argv[1])
