#!/usr/bin/env python3
"""Golden cases of TreeRL's own credit code, for tests/it/process_credit.rs.

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0 pydantic==2.14.4
    git clone https://github.com/THUDM/TreeRL && git -C TreeRL checkout f0edbea
    .venv/bin/python tests/golden/treerl/generate.py TreeRL > tests/golden/treerl/cases.json

TreeRL's functions are run as it wrote them, taken from its files by name (the modules import
vLLM, Levenshtein and multiprocess, which these functions do not use):
- openrlhf/trainer/ppo_utils/tree_node.py: `MCTSNode`, `leaf_normalize` (leave-one-out centring
  over the forest's leaves, with `leaf_backpropagate` and `normalize_all_steps`),
  `selected_backpropagate`, `compute_weighted_update`;
- openrlhf/trainer/ppo_utils/parallel_mcts.py: `gather_paths` (with `path_from_root_to_node`,
  `fill_in_paths`): each selected leaf's path and the value of each node on it.

The forest is built here as `build_into_tree_format` builds it (its segments are the nodes here):
the m trees hang under one virtual root, and the same calls follow in its order: `leaf_normalize`,
the selection, `selected_backpropagate` and `compute_weighted_update` when `use_weighted_value`.
The selection (`select_terminal` draws at random) is the case's list of selected leaves.
`overall_norm_style` is "none", the training script's default.

Each case gives its leaves (path `root#tree#node…` → [reward, selected]), the flags, and per
selected leaf the value of each node on its path.

Made on 2026-12-02 with Python 3.11.7 and pydantic 2.14.4, from TreeRL commit
f0edbea6f2f6392c46d297f83fb4929a9524266e.
"""

import ast
import contextlib
import io
import json
import math
import random
import sys
from pathlib import Path
from collections import deque
from typing import Any, Callable, Dict, List, Optional

import pydantic
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import definitions, dump  # noqa: E402  (tests/golden/reference.py)

COMMIT = "f0edbea6f2f6392c46d297f83fb4929a9524266e"
NODE = "openrlhf/trainer/ppo_utils/tree_node.py"
MCTS = "openrlhf/trainer/ppo_utils/parallel_mcts.py"




def load(repo):
    ns = {"__name__": "treerl", "math": math, "random": random, "deque": deque, "json": json, "BaseModel": BaseModel,
          "Optional": Optional, "List": List, "Dict": Dict, "Any": Any, "Callable": Callable}
    nodes = definitions(
        f"{repo}/{NODE}",
        ["MCTSNode", "leaf_normalize", "leaf_backpropagate", "normalize_all_steps", "compute_accumulated_value",
         "selected_backpropagate", "compute_weighted_update"],
    ) + definitions(f"{repo}/{MCTS}", ["normalize_selected_terminals", "fill_in_paths", "path_from_root_to_node", "gather_paths"])
    # Both files start with `from __future__ import annotations`.
    future = ast.parse("from __future__ import annotations").body
    for node in nodes:
        exec(compile(ast.Module(body=future + [node], type_ignores=[]), repo, "exec"), ns)
    ns["MCTSNode"].model_rebuild(_types_namespace=ns)
    return ns


# Leaves: path → [reward, selected].
CASES = {
    # The worked example of reference/credit-schemes-process.md §5a, one tree, every leaf selected.
    "worked_example": {"r#T#A#A1": [1, True], "r#T#A#A2": [0, True], "r#T#B#B1": [0, True], "r#T#B#B2": [0, True]},
    # Two trees under the virtual root, chains of single children, two leaves not selected.
    "forest": {
        "r#T1#A#A1#x": [1, True], "r#T1#A#A1#y": [0, False], "r#T1#A#A2": [1, True], "r#T1#B": [0, True],
        "r#T2#C#C1": [0, True], "r#T2#C#C2#z": [1, True], "r#T2#C#C2#w": [1, False], "r#T2#D": [0.5, True],
    },
    # Equal leaves: every value 0.
    "equal_leaves": {"r#T#A#A1": [1, True], "r#T#A#A2": [1, True], "r#T#B": [1, True]},
}
# (use_weighted_value, weighted_value_style, reward flag)
CONFIGS = [
    (True, "sqrt", "use_state_value_reward"),
    (True, "uniform", "use_state_value_reward"),
    (False, "original", "use_state_value_reward"),
    (True, "sqrt", "use_value_only"),
    (True, "sqrt", None),
]


def run_case(ns, leaves, config):
    use_weighted, style, flag = config
    node_cls = ns["MCTSNode"]
    root = node_cls(answer="", answer_token=[])
    made = {}
    all_leaves, by_path = [], {}
    for path, (reward, _) in leaves.items():
        parts = path.split("#")[1:]
        parent = root
        for depth in range(1, len(parts) + 1):
            key = "#".join(parts[:depth])
            if key not in made:
                terminal = depth == len(parts)
                node = node_cls(
                    answer=key, answer_token=[0], parent=parent, depth=parent.depth + 1, terminal=terminal,
                    R=reward if terminal else 0, main_chain=terminal and reward == 1, finish_reason="stop",
                )
                parent.children.append(node)
                made[key] = node
                if terminal:
                    all_leaves.append(node)
                    by_path[path] = node
            parent = made[key]
    with contextlib.redirect_stdout(io.StringIO()):
        ns["leaf_normalize"](all_leaves, root, False, "none", False)
        selected = [by_path[p] for p, (_, chosen) in leaves.items() if chosen]
        if use_weighted:
            for leaf in selected:
                ns["selected_backpropagate"](leaf)
            ns["compute_weighted_update"](root, reweighted_value_style=style)
        paths = ns["gather_paths"](
            root=root, selected_terminals=selected, pass_k=len(selected),
            use_state_value_reward=flag == "use_state_value_reward", use_value_only=flag == "use_value_only",
        )
    chosen = [p for p, (_, c) in leaves.items() if c]
    return {p: [node["value"] for node in path] for p, path in zip(chosen, paths)}


def main():
    ns = load(sys.argv[1])
    out = {
        "source": {
            "repo": "THUDM/TreeRL",
            "commit": COMMIT,
            "functions": [
                f"{NODE}: MCTSNode, leaf_normalize, leaf_backpropagate, normalize_all_steps, selected_backpropagate, compute_weighted_update",
                f"{MCTS}: gather_paths, path_from_root_to_node, fill_in_paths",
            ],
        },
        "runtime": {"python": sys.version.split()[0], "pydantic": pydantic.VERSION},
        "cases": [],
    }
    for name, leaves in CASES.items():
        for config in CONFIGS:
            use_weighted, style, flag = config
            out["cases"].append({
                "name": name,
                "use_weighted_value": use_weighted,
                "weighted_value_style": style,
                "reward": flag or "advantage",
                "leaves": leaves,
                "values": run_case(ns, leaves, config),
            })
    dump(out)


if __name__ == "__main__":
    main()
