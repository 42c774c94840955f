#!/usr/bin/env python3
"""Golden masks of ms-swift's high-entropy token training (`top_entropy_quantile`), for
tests/it/trainers_2026.rs (`entropy_mask`).

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0 numpy
    git clone https://github.com/modelscope/ms-swift && git -C ms-swift checkout 3602360a5
    .venv/bin/python tests/golden/ms_swift/generate.py ms-swift sample_runs/verl_token_batch.jsonl \\
        > tests/golden/ms_swift/entropy_mask.json

ms-swift's own statements are run as it wrote them: the `if self.args.top_entropy_quantile < 1.0:`
block of swift/rlhf_trainers/grpo_trainer.py (GRPOTrainer._compute_loss_and_metrics), taken from
its syntax tree, on the sample's tokens as that method holds them (`entropies`, the padding, here
the tokens outside the completion mask, filled with NaN first, as the lines before it do), at
`top_entropy_quantile` 0.2, 0.5 and 1.0 (1.0: the block does not run, and every token counts).
The batch is every token of the sample, in the order the log gives its trajectories.

Made on 2026-12-07 with Python 3.11 and torch 2.15.0 (the PyPI wheel, on the CPU), from the commit above.
"""

import ast
import json
import sys
import types
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import dump  # noqa: E402  (tests/golden/reference.py)

COMMIT = "3602360a562313afbf2ef6065fdf61f271a2c5b9"
PATH = "swift/rlhf_trainers/grpo_trainer.py"


def entropy_block(repo):
    """The statements that compute ms-swift's entropy mask, compiled."""
    source = open(f"{repo}/{PATH}").read()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and "top_entropy_quantile" in ast.get_source_segment(source, node.test):
            module = ast.fix_missing_locations(ast.Module(body=[node], type_ignores=[]))
            return compile(module, PATH, "exec")
    raise SystemExit(f"{PATH}: no top_entropy_quantile block")


def tokens(log):
    """Every token's entropy and mask, in the log's order of trajectories."""
    entropy, mask = [], []
    for line in open(log):
        record = json.loads(line)
        if record.get("type") == "trajectory" and "tokens" in record:
            entropy.extend(record["tokens"]["entropy"])
            mask.extend(bool(m) for m in record["tokens"]["mask"])
    return entropy, mask


def main(repo, log):
    block = entropy_block(repo)
    entropy, mask = tokens(log)
    cases = []
    for quantile in (0.2, 0.5, 1.0):
        entropies = torch.tensor(entropy, dtype=torch.float32).unsqueeze(0)
        completion_mask = torch.tensor(mask).unsqueeze(0)
        entropies = entropies.masked_fill(completion_mask == 0, float("nan"))
        args = types.SimpleNamespace(top_entropy_quantile=quantile)
        ns = {"torch": torch, "self": types.SimpleNamespace(args=args, top_entropy_quantile=quantile),
              "entropies": entropies, "entropy_metrics": {}, "entropy_mask": None}
        exec(block, ns)
        kept = ns["entropy_mask"]
        cases.append({
            "quantile": quantile,
            "threshold": ns["entropy_metrics"].get("entropy_threshold"),
            "mask": [bool(k) for k in kept.flatten().tolist()] if kept is not None else [True] * len(mask),
        })
    dump({
        "source": {"ms_swift": {"commit": COMMIT, "path": PATH}},
        "runtime": {"python": sys.version.split()[0], "torch": torch.__version__},
        "log": Path(log).name,
        "tokens": len(mask),
        "cases": cases,
    })


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
