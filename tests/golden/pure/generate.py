#!/usr/bin/env python3
"""Golden cases of PURE's own credit code, for tests/it/process_credit.rs.

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0 numpy==2.4.6
    git clone https://github.com/CJReinforce/PURE && git -C PURE checkout 41f9363
    .venv/bin/python tests/golden/pure/generate.py PURE > tests/golden/pure/cases.json

PURE's functions are run as it wrote them, taken from its files by name (its modules import ray,
deepspeed and the models, which these functions do not use):
- `turn_process_reward_logits_to_reward` (openrlhf/utils/utils.py): the PRM's two-class logits per
  step to the min-form weighted step rewards;
- `NaiveExperienceMaker.process_experiences` (openrlhf/trainer/ppo_utils/experience_maker.py): the
  step or token RLOO baseline and the verifiable reward;
- `NaiveExperienceMaker.make_experience_list` (same file): the reward-to-go and the masked
  separators; its two model calls (`generate_samples`, `make_experience`) hand back the samples
  and experiences built here, `torch.distributed.barrier` does nothing, and "cuda" reads "cpu";
- `NaiveReplayBuffer.normalize` (openrlhf/trainer/ppo_utils/replay_buffer.py): the normalization
  over the buffer's action tokens, on each sample without its right padding (what the buffer's
  `remove_padding_in_sequences` leaves), `all_reduce` over one process.

What `make_experience` computes around the PRM is done here the way it does it: the separators at
each step's last token (the last step's last token is the EOS), `num_tokens_per_step` without the
separator, `process_reward_matrix[reward_mask] = process_reward[score_mask]`, and the KL term 0.

Each case gives its samples (group, steps as [tokens, P(correct)], solved), the flags, and each
sample's advantage per token.

Made on 2026-12-02 with Python 3.11.7, torch 2.15.0 (CPU) and numpy 2.4.6, from PURE commit
41f9363b8cc4af044b7fc5f7f9bbbf62139e9553.
"""

import ast
import json
import sys
from pathlib import Path
import types
from copy import deepcopy
from typing import List, Tuple, Union

import torch
from tqdm import tqdm  # noqa: F401  (make_experience_list's progress bar)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import definitions, dump  # noqa: E402  (tests/golden/reference.py)

COMMIT = "41f9363b8cc4af044b7fc5f7f9bbbf62139e9553"




def load(repo):
    ns = {"torch": torch, "List": List, "Tuple": Tuple, "Union": Union, "deepcopy": deepcopy, "tqdm": tqdm}
    unparsed = lambda nodes: {n.name: ast.unparse(n) for n in nodes}  # noqa: E731
    utils = unparsed(definitions(f"{repo}/openrlhf/utils/utils.py", ["turn_process_reward_logits_to_reward", "right_padding"]))
    maker = unparsed(definitions(
        f"{repo}/openrlhf/trainer/ppo_utils/experience_maker.py",
        ["process_experiences", "make_experience_list"],
        cls="NaiveExperienceMaker",
    ))
    buffer = unparsed(definitions(f"{repo}/openrlhf/trainer/ppo_utils/replay_buffer.py", ["normalize"], cls="NaiveReplayBuffer"))
    # The Experience and List annotations need these names only to exist.
    ns["Experience"] = object
    for source in [*utils.values(), *buffer.values(), *maker.values()]:
        source = source.replace("'cuda'", "'cpu'").replace('"cuda"', '"cpu"')
        # The decorators (@torch.no_grad()) are kept: they only turn off autograd.
        exec(compile(source, repo, "exec"), ns)
    return ns


# Samples: (group, [[tokens, p], ...], solved).
CASES = {
    "two_groups": [
        ("a", [[3, 0.9], [2, 0.2]], 1),
        ("a", [[4, 0.8]], 0),
        ("a", [[2, 0.6], [3, 0.7], [2, 0.4]], 1),
        ("a", [[5, 0.3], [1, 0.95]], 0),
        ("b", [[2, 0.5], [2, 0.5]], 1),
        ("b", [[3, 0.99], [4, 0.1]], 1),
        ("b", [[6, 0.2]], 0),
        ("b", [[2, 0.7], [2, 0.8], [3, 0.85]], 0),
    ],
    # A group whose returns are all exactly 0 (one step each, equal scores, all solved) beside one
    # that is not: the zeros are left out of the count and stay 0.
    "all_equal_group": [
        ("a", [[3, 0.7]], 1),
        ("a", [[3, 0.7]], 1),
        ("a", [[5, 0.7]], 1),
        ("a", [[2, 0.7]], 1),
        ("b", [[3, 0.9], [3, 0.1]], 1),
        ("b", [[2, 0.4]], 0),
        ("b", [[4, 0.6], [2, 0.3]], 0),
        ("b", [[3, 0.8], [3, 0.8], [2, 0.2]], 1),
    ],
}
# (reward_baseline, reward_mode, nomask_separator_adv, disable_weighted_reward, disable_advantage_normalization)
CONFIGS = [
    ("step", "PRMVR", False, False, False),
    ("token", "PRMVR", False, False, False),
    ("step", "PRM", False, False, False),
    ("token", "PRMVR", True, False, False),
    ("step", "PRMVR", False, True, False),
    ("token", "PRMVR", False, False, True),
]
N = 4


def logits_for(p):
    """Two-class logits whose softmax gives P(correct) = p."""
    import math

    return [0.0, math.log(p / (1.0 - p))]


def experience_of(samples, ns):
    bs = len(samples)
    lengths = [sum(n for n, _ in steps) for _, steps, _ in samples]
    width = max(lengths)
    max_steps = max(len(steps) for _, steps, _ in samples)
    action_mask = torch.zeros(bs, width, dtype=torch.bool)
    reward_mask = torch.zeros(bs, width, dtype=torch.bool)
    score_ids = torch.full((bs, max_steps), -1, dtype=torch.long)
    logits = torch.zeros(bs, max_steps, 2)
    tokens_per_step = []
    for i, (_, steps, _) in enumerate(samples):
        action_mask[i, : lengths[i]] = True
        at = 0
        counts = []
        for k, (n, p) in enumerate(steps):
            at += n
            # The separator (or, for the last step, the EOS) is the step's last token.
            reward_mask[i, at - 1] = True
            score_ids[i, k] = at
            counts.append(n - 1)
            logits[i, k] = torch.tensor(logits_for(p))
        tokens_per_step.append(torch.tensor(counts))
    score_mask = score_ids != -1
    return action_mask, reward_mask, score_mask, logits, ns["right_padding"](tokens_per_step, 0), lengths


def run_case(ns, samples, config):
    baseline, mode, nomask, unweighted, no_norm = config
    args = types.SimpleNamespace(
        n_samples_per_prompt=N,
        micro_rollout_batch_size=len(samples),
        advantage_estimator="rloo",
        reward_baseline=baseline,
        reward_mode=mode,
        verifiable_reward_coef=1.0,
        nomask_separator_adv=nomask,
        disable_weighted_reward=unweighted,
    )
    strategy = types.SimpleNamespace(args=args, all_reduce=lambda t, op: t)
    action_mask, reward_mask, score_mask, logits, tokens_per_step, lengths = experience_of(samples, ns)
    bs = len(samples)
    # make_experience's PRM part.
    process_reward = ns["turn_process_reward_logits_to_reward"](
        logits, score_mask, return_outcome_reward=False, temperature=0.1, disable_weighted_reward=unweighted
    )
    matrix = torch.zeros(bs, action_mask.size(1))
    matrix[reward_mask] = process_reward[score_mask].to(dtype=matrix.dtype)

    class Exp(types.SimpleNamespace):
        def to_device(self, device):
            return self

    experience = Exp(
        action_mask=action_mask,
        kl=torch.zeros(bs, action_mask.size(1)),
        info={
            "process_reward": matrix,
            "process_reward_mask": reward_mask,
            "response_length": action_mask.float().sum(-1),
            "num_actions": action_mask.size(1),
            "max_num_steps": score_mask.size(1),
            "num_steps": score_mask.float().sum(-1),
            "solved": torch.tensor([s for _, _, s in samples]),
            "have_answers": torch.ones(bs, dtype=torch.bool),
            "num_tokens_per_step": tokens_per_step,
            "score_mask": score_mask,
        },
    )
    maker = types.SimpleNamespace(
        strategy=strategy,
        advantage_estimator="rloo",
        kl_ctl=types.SimpleNamespace(value=0.0),
        generate_samples=lambda data, **kw: [None],
        make_experience=lambda samples: experience,
    )
    maker.process_experiences = lambda experiences: ns["process_experiences"](maker, experiences)
    torch.distributed.barrier = lambda: None
    [experience] = ns["make_experience_list"](maker, None)
    # The buffer's items: one per sample, without its right padding.
    items = [
        types.SimpleNamespace(advantages=experience.advantages[i, : lengths[i]].clone(), action_mask=action_mask[i, : lengths[i]])
        for i in range(bs)
    ]

    class Buffer:
        mask_separator_adv = not nomask

        def __iter__(self):
            return iter(items)

    if not no_norm:
        ns["normalize"](Buffer(), "advantages", strategy)
    return [[float(x) for x in item.advantages] for item in items]


def main():
    ns = load(sys.argv[1])
    out = {
        "source": {
            "repo": "CJReinforce/PURE",
            "commit": COMMIT,
            "functions": [
                "openrlhf/utils/utils.py: turn_process_reward_logits_to_reward",
                "openrlhf/trainer/ppo_utils/experience_maker.py: NaiveExperienceMaker.process_experiences, make_experience_list",
                "openrlhf/trainer/ppo_utils/replay_buffer.py: NaiveReplayBuffer.normalize",
            ],
        },
        "runtime": {"python": sys.version.split()[0], "torch": torch.__version__},
        "cases": [],
    }
    for name, samples in CASES.items():
        assert len(samples) % N == 0
        for config in CONFIGS:
            baseline, mode, nomask, unweighted, no_norm = config
            # The probabilities as the code sees them: softmax of the logits, in f32.
            probs = [
                [[n, float(torch.tensor(logits_for(p)).softmax(-1)[1])] for n, p in steps] for _, steps, _ in samples
            ]
            out["cases"].append({
                "name": name,
                "reward_baseline": baseline,
                "reward_mode": mode,
                "nomask_separator_adv": nomask,
                "disable_weighted_reward": unweighted,
                "disable_advantage_normalization": no_norm,
                "samples": [
                    {"group": g, "steps": p, "solved": s} for (g, _, s), p in zip(samples, probs)
                ],
                "advantages": run_case(ns, samples, config),
            })
    dump(out)


if __name__ == "__main__":
    main()
