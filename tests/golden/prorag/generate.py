#!/usr/bin/env python3
"""Golden cases of ProRAG's own credit code, for tests/it/process_credit.rs.

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0
    git clone https://github.com/lilinwz/ProRAG && git -C ProRAG checkout c7a6411
    .venv/bin/python tests/golden/prorag/generate.py ProRAG > tests/golden/prorag/cases.json

ProRAG's code is run as it wrote it, taken from its files by AST (the modules import TRL's
trainer, vLLM and the retriever, which this code does not use):
- prorag/rl/reward.py: `format_reward_step`, a step's format term (+1 for the three well-formed
  tag patterns, −2 otherwise);
- prorag/rl/trainer.py: `RAGTrainer._generate_and_score_completions`, its statements from the
  group size (`num_generations`) to the advantages: the outcome GRPO (std + 1e-4) and the step scores
  z-scored over every valid token of the group, `A = A_outcome + prm_beta · z`.

What `rag_rollout_with_prm` (prorag/rl/rollout.py) builds is built here its way: each generated
step's tokens carry `PRM score + format_reward_step(step text)` and are in the mask; the retrieved
documents and the step and end tags that follow carry 0 and are not. The PRM score (`get_prm_score`,
a sigmoid of the PRM's logit) is the case's.

Each case gives its samples (outcome reward, steps as [generated tokens, retrieved tokens, PRM
score, step text]), `prm_beta`, and each step's advantage on its generated tokens.

Made on 2026-12-02 with Python 3.11.7 and torch 2.15.0 (CPU), from ProRAG commit
c7a64110d0c900561fde4292f234b97dfe633e94.
"""

import ast
import json
import re
import sys
from pathlib import Path
import types

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import dump  # noqa: E402  (tests/golden/reference.py)

COMMIT = "c7a64110d0c900561fde4292f234b97dfe633e94"
TRAINER = "prorag/rl/trainer.py"
REWARD = "prorag/rl/reward.py"


def load(repo):
    ns = {"re": re}
    tree = ast.parse(open(f"{repo}/{REWARD}").read())
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "format_reward_step")
    exec(compile(ast.Module(body=[node], type_ignores=[]), repo, "exec"), ns)
    tree = ast.parse(open(f"{repo}/{TRAINER}").read())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "RAGTrainer")
    method = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "_generate_and_score_completions")
    body = method.body
    first = next(i for i, s in enumerate(body) if isinstance(s, ast.Assign) and ast.unparse(s.targets[0]) == "num_generations")
    last = next(i for i, s in enumerate(body) if isinstance(s, ast.If) and ast.unparse(s.test) == "self.prm_beta > 0")
    code = compile(ast.Module(body=body[first : last + 1], type_ignores=[]), f"{repo}/{TRAINER}", "exec")
    return ns["format_reward_step"], code


# Samples of one group: (outcome reward, [[generated tokens, retrieved tokens, PRM score, step text]]).
STEP_Q = "thinking</step>\n<subquery>who</subquery>\n<retrieval>\ndocs\n</retrieval>"
STEP_A = "so</step>\n<subanswer>x</subanswer>"
STEP_F = "done</step>\n<answer>y</answer>"
STEP_BAD = "rambling</step>\n<answer>y"
CASES = {
    "four": [
        (3.0, [[3, 2, 0.8, STEP_Q], [2, 0, 0.9, STEP_A], [2, 0, 0.95, STEP_F]]),
        (-1.0, [[4, 0, 0.3, STEP_BAD]]),
        (1.0, [[2, 3, 0.6, STEP_Q], [3, 0, 0.4, STEP_F]]),
        (0.5, [[1, 2, 0.7, STEP_Q], [2, 2, 0.2, STEP_Q], [2, 0, 0.5, STEP_BAD]]),
    ],
    # Equal rewards: the outcome advantage is 0; only the steps differ.
    "equal_outcomes": [
        (2.0, [[2, 1, 0.9, STEP_Q], [3, 0, 0.8, STEP_F]]),
        (2.0, [[5, 0, 0.6, STEP_F]]),
    ],
}
BETAS = [0.3, 0.5]


def run_case(format_step, code, samples, beta):
    bs = len(samples)
    rows, masks = [], []
    for _, steps in samples:
        prm, mask = [], []
        for gen, ret, p, text in steps:
            score = p + format_step(text)
            prm += [score] * gen + [0.0] * ret
            mask += [1] * gen + [0] * ret
            # The step tag (or the end tag) after the step.
            prm += [0.0]
            mask += [0]
        rows.append(prm)
        masks.append(mask)
    width = max(len(r) for r in rows)
    all_prm = torch.zeros(bs, width)
    all_mask = torch.zeros(bs, width)
    for i, (r, m) in enumerate(zip(rows, masks)):
        all_prm[i, : len(r)] = torch.tensor(r)
        all_mask[i, : len(m)] = torch.tensor(m, dtype=torch.float32)
    ns = {
        "torch": torch, "self": types.SimpleNamespace(prm_beta=beta, num_generations=bs), "mode": "train",
        "rewards": torch.tensor([r for r, _ in samples]), "all_prm_scores": all_prm, "all_completion_mask": all_mask,
    }
    exec(code, ns)
    advantages = ns["advantages"]
    out = []
    for i, (_, steps) in enumerate(samples):
        at, values = 0, []
        for gen, ret, _, _ in steps:
            block = advantages[i, at : at + gen] if advantages.dim() == 2 and advantages.shape[1] > 1 else advantages[i].expand(gen)
            assert torch.all(block == block[0])
            values.append(float(block[0]))
            at += gen + ret + 1
        out.append(values)
    return out


def main():
    format_step, code = load(sys.argv[1])
    out = {
        "source": {
            "repo": "lilinwz/ProRAG",
            "commit": COMMIT,
            "functions": [f"{REWARD}: format_reward_step", f"{TRAINER}: RAGTrainer._generate_and_score_completions (its advantage statements)"],
        },
        "runtime": {"python": sys.version.split()[0], "torch": torch.__version__},
        "cases": [],
    }
    for name, samples in CASES.items():
        for beta in BETAS:
            out["cases"].append({
                "name": name,
                "prm_beta": beta,
                "samples": [
                    {"reward": r, "steps": [{"generated": g, "retrieved": t, "prm": p, "well_formed": format_step(x) > 0} for g, t, p, x in steps]}
                    for r, steps in samples
                ],
                "advantages": run_case(format_step, code, samples, beta),
            })
    dump(out)


if __name__ == "__main__":
    main()
