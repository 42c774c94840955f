#!/usr/bin/env python3
"""Golden cases of GRPO-CARE's own credit code, for tests/it/process_credit.rs.

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0
    git clone https://github.com/TencentARC/GRPO-CARE && git -C GRPO-CARE checkout b0628fc
    .venv/bin/python tests/golden/grpo_care/generate.py GRPO-CARE > tests/golden/grpo_care/cases.json

GRPO-CARE computes its credit inside `Qwen2VLGRPOTrainerRefEMA.compute_loss`
(src/r1-v/src/open_r1/trainer/grpo_trainer_ref_ema.py), between the model calls. The statements
are run as it wrote them, taken from that method by AST: the `if self.use_care:` block (the answer
likelihood, the accurate and consistent sets, the bonus) and the three that follow it
(`mean_grouped_rewards`, `std_grouped_rewards`, `advantages`). What they read is given:
`rewards_per_func` (accuracy, then format), `rewards` (their sum), `ref_per_token_logps`, and the
answer-span mask that its `get_thinking_answer_masks` finds from the `<answer>` tag in the
tokenizer's tokens (here the case's answer span).

Each case gives its samples (accuracy, format reward, the reference log-probabilities of the answer
span's tokens), the parameters, and each sample's advantage.

Made on 2026-12-02 with Python 3.11.7 and torch 2.15.0 (CPU), from GRPO-CARE commit
b0628fcca665042c6812fc65596cbaf7b2fac886.
"""

import ast
import json
import os
import sys
from pathlib import Path
import types

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import dump  # noqa: E402  (tests/golden/reference.py)

COMMIT = "b0628fcca665042c6812fc65596cbaf7b2fac886"
TRAINER = "src/r1-v/src/open_r1/trainer/grpo_trainer_ref_ema.py"
TARGETS = {"mean_grouped_rewards", "std_grouped_rewards", "advantages"}


def statements(repo):
    tree = ast.parse(open(f"{repo}/{TRAINER}").read())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Qwen2VLGRPOTrainerRefEMA")
    method = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "compute_loss")
    care = next(
        s for s in method.body
        if isinstance(s, ast.If) and ast.unparse(s.test) == "self.use_care" and "get_thinking_answer_masks" in ast.unparse(s)
    )
    start = method.body.index(care)
    body = [care]
    for s in method.body[start + 1 :]:
        target = [t.id for t in getattr(s, "targets", []) if isinstance(t, ast.Name)]
        if target and target[0] in TARGETS:
            body.append(s)
            if target[0] == "advantages":
                break
    return compile(ast.Module(body=body, type_ignores=[]), f"{repo}/{TRAINER}", "exec")


# Samples: (accuracy, format, reference log-probabilities of the answer's tokens).
CASES = {
    # reference/credit-schemes-process.md §10: acc [1, 1, 0, 1], answer likelihoods .9, .6, .8, .97.
    "worked_example": [
        (1.0, 0.0, [-0.10536052]), (1.0, 0.0, [-0.51082562]), (0.0, 0.0, [-0.22314355]), (1.0, 0.0, [-0.03045921]),
    ],
    # Eight samples, fractional accuracy, format rewards, answer spans of 0 to 4 tokens.
    "eight": [
        (1.0, 1.0, [-0.05, -0.1, -0.02]), (0.6, 1.0, [-0.3, -0.2]), (0.0, 1.0, [-1.2]), (1.0, 0.0, []),
        (0.05, 1.0, [-0.01]), (0.8, 1.0, [-0.04, -0.05, -0.06, -0.07]), (1.0, 1.0, [-0.5, -0.9]), (0.0, 0.0, [-2.0, -0.1]),
    ],
    # No accurate sample: no bonus.
    "none_accurate": [(0.0, 1.0, [-0.1]), (0.05, 1.0, [-0.2]), (0.0, 0.0, [-0.3]), (0.1, 1.0, [-0.4])],
}
# (bonus_coefficient, consistency_margin, confidence_upper_bound)
CONFIGS = [(0.5, 0.01, 0.95), (1.0, 0.0, 0.95), (0.5, 0.1, 0.8)]


def run_case(code, samples, config):
    bonus, margin, cap = config
    bs = len(samples)
    think = 2
    width = think + max(len(s[2]) for s in samples)
    ref = torch.zeros(bs, width)
    mask_answer = torch.zeros(bs, width, dtype=torch.bool)
    for i, (_, _, lp) in enumerate(samples):
        ref[i, :think] = -0.7
        ref[i, think : think + len(lp)] = torch.tensor(lp)
        mask_answer[i, think : think + len(lp)] = True
    rewards_per_func = torch.tensor([[a, f] for a, f, _ in samples], dtype=torch.float32)
    me = types.SimpleNamespace(
        use_care=True, confidence_upper_bound=cap, consistency_margin=margin, bonus_coefficient=bonus, num_generations=bs,
    )
    ns = {
        "torch": torch, "os": os, "self": me, "rewards_per_func": rewards_per_func, "rewards": rewards_per_func.sum(dim=1),
        "ref_per_token_logps": ref, "prompt_completion_ids": None, "prompt_length": 0, "sequence_indices": None,
        "completion_mask": None, "inputs": [{}], "prompts": None, "completions": None,
        "get_thinking_answer_masks": lambda *args: (~mask_answer, mask_answer),
    }
    exec(code, ns)
    return [float(x) for x in ns["advantages"]]


def main():
    code = statements(sys.argv[1])
    out = {
        "source": {
            "repo": "TencentARC/GRPO-CARE",
            "commit": COMMIT,
            "functions": [f"{TRAINER}: Qwen2VLGRPOTrainerRefEMA.compute_loss, its CARE block and group normalization"],
        },
        "runtime": {"python": sys.version.split()[0], "torch": torch.__version__},
        "cases": [],
    }
    for name, samples in CASES.items():
        for config in CONFIGS:
            bonus, margin, cap = config
            out["cases"].append({
                "name": name,
                "bonus_coefficient": bonus,
                "consistency_margin": margin,
                "confidence_upper_bound": cap,
                "samples": [{"accuracy": a, "format": f, "answer_ref_logprobs": lp} for a, f, lp in samples],
                "advantages": run_case(code, samples, config),
            })
    dump(out)


if __name__ == "__main__":
    main()
