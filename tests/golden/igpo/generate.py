#!/usr/bin/env python3
"""Golden cases of IGPO (arXiv 2510.14967) from its authors' code, for tests/it/process_credit.rs.

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0 numpy
    git clone https://github.com/GuoqingWang1/IGPO && git -C IGPO checkout bff163b72
    .venv/bin/python tests/golden/igpo/generate.py IGPO > tests/golden/igpo/cases.json

IGPO's `compute_grpo_outcome_advantage` (verl/trainer/ppo/core_algos.py) is run as it wrote it,
taken from the file by name, with torch on the CPU, on a batch built as IGPO builds it, one response
position a turn: the turn rewards are those `info_gain.compute_score` places (each turn's
information gain at the turn's end, `alpha * f1` at the last, the gain list's length one less than
the turns, else the outcome alone), the gains as `run_llm_loop` computes them in
scrl/llm_agent/generation.py (`torch.exp(log_probs.mean()).item()` before each turn, each gain the
difference of two such floats), from each step's `gold_logprob` (a turn's mean gold log-probability);
the response mask covers each rollout's turns (verl's `compute_response_mask`: multi_turn off, as
IGPO's script runs), the group is the `index`. Runs: sample_runs/search_qa_rag.jsonl and the
hand-made turns of tests/golden/gold_runs.py, at alpha 1 (the code's) and 0.5.

Made on 2026-12-07 with Python 3.11, torch 2.15.0 (the PyPI wheel, CPU) and numpy 2.4.6.
"""

import contextlib
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from gold_runs import groups, runs  # noqa: E402
from reference import definitions, dump, run  # noqa: E402

COMMIT = "bff163b72718a8b8f9175ce019ec7114ad6bd59a"


def turn_rewards(golds, reward, alpha):
    """The rewards info_gain.compute_score places, one per turn, from run_llm_loop's gains."""
    scores = [0.0] * len(golds)
    if len(golds) > 1 and all(g is not None for g in golds):
        probs = [torch.exp(torch.tensor(g, dtype=torch.float32)).item() for g in golds]
        gains = [probs[k + 1] - probs[k] for k in range(len(golds) - 1)]
        scores[: len(gains)] = gains
    scores[-1] = alpha * reward
    return scores


def main(repo):
    ns = run(definitions(f"{repo}/verl/trainer/ppo/core_algos.py", ["compute_grpo_outcome_advantage"]),
             {"torch": torch, "np": np, "defaultdict": defaultdict}, repo)
    advantage = ns["compute_grpo_outcome_advantage"]
    cases = []
    for name, records in runs():
        rows = [(g, key, reward, golds) for g, members in groups(records).items() for key, reward, golds in members]
        width = max(len(golds) for *_, golds in rows)
        for alpha in (1.0, 0.5):
            rewards = torch.zeros(len(rows), width)
            mask = torch.zeros(len(rows), width)
            for i, (_, _, reward, golds) in enumerate(rows):
                mask[i, : len(golds)] = 1
                rewards[i, : len(golds)] = torch.tensor(turn_rewards(golds, reward, alpha))
            index = np.array([g for g, *_ in rows], dtype=object)
            with contextlib.redirect_stdout(sys.stderr):  # the function prints its tensors
                out, _ = advantage(rewards, mask, index)
            credit = {key: out[i, : len(golds)].tolist() for i, (_, key, _, golds) in enumerate(rows)}
            case = {"run": name, "set": {"alpha": str(alpha)}, "credit": credit}
            if name == "hand":
                case["jsonl"] = "".join(json.dumps(r) + "\n" for r in records)
            cases.append(case)
    dump({"source": {"GuoqingWang1/IGPO": {"commit": COMMIT}},
          "runtime": {"python": sys.version.split()[0], "torch": torch.__version__, "numpy": np.__version__},
          "cases": cases})


if __name__ == "__main__":
    main(sys.argv[1])
