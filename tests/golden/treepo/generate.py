#!/usr/bin/env python3
"""Golden cases of TreePO's own segment-advantage code, for tests/it/process_credit.rs.

    python3 -m venv .venv && .venv/bin/pip install numpy==2.4.6
    git clone https://github.com/multimodal-art-projection/TreePO && git -C TreePO checkout b86ce51
    .venv/bin/python tests/golden/treepo/generate.py TreePO/verl/trainer/ppo/core_algos.py > tests/golden/treepo/cases.json

The functions are run as TreePO wrote them: `tree_group_wise_reward`, `calculate_rewards_iterative`,
`normalize_sibling_rewards` and `calculate_segment_advantage` are taken from the file by name (the
module itself imports torch and verl, which these pure-Python functions do not use) and executed
with numpy. They are what `compute_spo_advantage` (the SPO re-implementation, no whitening) and
`compute_tree_rfpp_progress_outcome_advantage` (the segment estimator, before its token whitening)
call. Leaf paths are `root#segment#segment…`; each case gives the leaves' rewards and, per leaf,
the advantage of each segment on its path.

Made on 2026-12-02 with Python 3.11.7 and numpy 2.4.6, from TreePO commit
b86ce51dfccfe062beda572f860308413f375664 (the file is unchanged at f05552394e734ea2838cf9e3b8191f5093319dcf).
"""

import ast
import json
import sys
from pathlib import Path
from collections import defaultdict
from typing import Dict, List

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import dump  # noqa: E402  (tests/golden/reference.py)

FUNCTIONS = ["tree_group_wise_reward", "calculate_rewards_iterative", "normalize_sibling_rewards", "calculate_segment_advantage"]

CASES = {
    # The tree of reference/credit-schemes-process.md §5a: root → A, B; A → A1 (1), A2 (0); B → B1, B2 (0).
    "worked_example": {"r#A#A1": 1.0, "r#A#A2": 0.0, "r#B#B1": 0.0, "r#B#B2": 0.0},
    # Uneven depths and a lone child.
    "uneven": {"r#A#A1#A1a": 1.0, "r#A#A1#A1b": 0.0, "r#A#A2": 1.0, "r#B#B1": 0.5, "r#C": 0.0},
    # Three levels, three children here and there, rewards in [0, 1].
    "three_levels": {
        "r#A#A1#x": 0.2, "r#A#A1#y": 0.9, "r#A#A2#x": 0.4, "r#A#A3#x": 1.0, "r#A#A3#y": 0.0, "r#A#A3#z": 0.3,
        "r#B#B1#x": 0.7, "r#B#B1#y": 0.7,
    },
}
ETAS = [-1.0, 0.9, 0.5]


def load(path):
    source = open(path).read()
    tree = ast.parse(source)
    namespace = {"np": np, "defaultdict": defaultdict, "Dict": Dict, "List": List}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in FUNCTIONS:
            exec(compile(ast.Module(body=[node], type_ignores=[]), path, "exec"), namespace)
    missing = [f for f in FUNCTIONS if f not in namespace]
    if missing:
        raise SystemExit(f"{path} lacks {missing}")
    return namespace


def main():
    ns = load(sys.argv[1])
    out = {
        "source": {
            "repo": "multimodal-art-projection/TreePO",
            "commit": "b86ce51dfccfe062beda572f860308413f375664",
            "file": "verl/trainer/ppo/core_algos.py",
            "functions": FUNCTIONS,
        },
        "runtime": {"python": sys.version.split()[0], "numpy": np.__version__},
        "cases": [],
    }
    for name, leaves in CASES.items():
        spo = ns["calculate_segment_advantage"](dict(leaves), seg_node_subling_norm=True)
        modified = ns["tree_group_wise_reward"](dict(leaves))
        segment = {str(eta): ns["calculate_segment_advantage"](dict(modified), adv_eta=eta) for eta in ETAS}
        out["cases"].append({
            "name": name,
            "leaves": leaves,
            "spo": {k: [float(x) for x in v] for k, v in spo.items()},
            "segment": {eta: {k: [float(x) for x in v] for k, v in adv.items()} for eta, adv in segment.items()},
        })
    dump(out)


if __name__ == "__main__":
    main()
