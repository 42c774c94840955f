#!/usr/bin/env python3
"""Golden cases of prime-rl's own algorithms beyond GRPO, for tests/it/trainers_2026.rs.

    python3 -m venv .venv && .venv/bin/pip install --no-deps torch==2.15.0 numpy
    git clone https://github.com/PrimeIntellect-ai/prime-rl && git -C prime-rl checkout 559b44772
    .venv/bin/python tests/golden/prime_algos/generate.py prime-rl > tests/golden/prime_algos/cases.json

prime-rl's classes are run as it wrote them, taken from its files by name (their modules import
verifiers and the orchestrator, which these methods do not use), with stand-ins for
`iter_trainable_traces` (every trace trainable) and `assign_advantages` (records the trace's value),
one `score_group` call per prompt (a prompt's samples are its group's episodes, one trace each):
- `maxrl`: src/prime_rl/orchestrator/algo/max_rl.py `MaxRLAlgorithm`.

The samples are those of tests/golden/trainers_2026 (groups of 1 to 16, mixed sizes, negative
rewards, interleaved prompts, all-equal groups), with two more cases where the mean is at most 0.

Made on 2026-12-07 with Python 3.11, torch 2.15.0 (the PyPI wheel, on the CPU) and numpy, from the
commit above.
"""

import asyncio
import sys
import types
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import dump, prime_rl_algorithm  # noqa: E402  (tests/golden/reference.py)
from trainers_2026.generate import CASES as TRAINER_CASES  # noqa: E402

COMMIT = "559b44772e471d1538537b8805cc77f3824a5e64"

CASES = dict(TRAINER_CASES)
# A group whose rewards sum to 0 and one all below 0 (MaxRL: no signal), beside one above.
CASES["mean_zero_or_below"] = [("a", r) for r in (1.0, -1.0, 0.5, -0.5)] + [("b", r) for r in (-0.2, -0.1)] \
    + [("c", r) for r in (0.0, 0.0, 0.0)] + [("d", r) for r in (0.1, 0.0, 0.0, 0.0)]


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


def main(repo):
    maxrl = prime_rl_algorithm(repo, "src/prime_rl/orchestrator/algo/max_rl.py", "MaxRLAlgorithm", {"torch": torch})
    cases = []
    for name, samples in CASES.items():
        cases.append({
            "name": name,
            "samples": [[p, r] for p, r in samples],
            "advantages": {"maxrl": per_prompt(*maxrl, samples)},
        })
    dump({
        "source": {"prime_rl": {"commit": COMMIT}},
        "runtime": {"python": sys.version.split()[0], "torch": torch.__version__},
        "cases": cases,
    })


if __name__ == "__main__":
    main(sys.argv[1])
