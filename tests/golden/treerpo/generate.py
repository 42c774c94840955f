#!/usr/bin/env python3
"""Golden cases of omrisapir1/treerpo's own credit code, for tests/it/process_credit.rs.

    python3 -m venv .venv && .venv/bin/pip install torch==2.15.0 numpy==2.4.6
    git clone https://github.com/omrisapir1/treerpo && git -C treerpo checkout 05499ad
    .venv/bin/python tests/golden/treerpo/generate.py treerpo > tests/golden/treerpo/cases.json

(This is the third-party TreeRPO that vantage's `value = leaf_mean, std = false` follows; Yang et
al.'s own code could not be had.)

Its code is run as it wrote it, taken from its files by name (the modules import vLLM and
transformers, which this code does not use):
- treerpo/tree_builder/entropy_tree.py: `NodeState`, `TreeNode` (with `propagate_reward_up`,
  `finalize_interior_reward`), `TreeBuilder._collect_nodes`;
- treerpo/trainers/treerpo_trainer.py: `pad_1d`, `TreeRPOTrainer._convert_tree_to_training_inputs`
  (the sibling sets trained, and each child's advantage).

`TreeBuilder.expand_tree` grows the tree with the model and then scores it in two loops, which are
copied here as they are: every terminal node pushes its reward (0 when it has none) up to its
ancestors, then every other node takes the mean of the leaf rewards below it.

Each case gives its leaves (path `root#node#node…` → reward) and each trained node's advantage;
a node that is in no trained sibling set is absent.

Made on 2026-12-02 with Python 3.11.7, torch 2.15.0 (CPU) and numpy 2.4.6, from treerpo commit
05499ad6def4bc58ae79c3e12cb54aaea60bd263.
"""

import ast
import json
import sys
from pathlib import Path
import types
from dataclasses import dataclass, field
from enum import Enum, auto
from typing import Any, Dict, List, Optional, Union

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import definitions, dump, run  # noqa: E402  (tests/golden/reference.py)

COMMIT = "05499ad6def4bc58ae79c3e12cb54aaea60bd263"
TREE = "treerpo/tree_builder/entropy_tree.py"
TRAINER = "treerpo/trainers/treerpo_trainer.py"




def load(repo):
    ns = {"__name__": "treerpo", "np": np, "torch": torch, "dataclass": dataclass, "field": field, "Enum": Enum,
          "auto": auto, "List": List, "Optional": Optional, "Dict": Dict, "Any": Any, "Union": Union}
    nodes = (
        definitions(f"{repo}/{TREE}", ["NodeState", "TreeNode"])
        + definitions(f"{repo}/{TREE}", ["_collect_nodes"], cls="TreeBuilder")
        + definitions(f"{repo}/{TRAINER}", ["pad_1d"])
        + definitions(f"{repo}/{TRAINER}", ["_convert_tree_to_training_inputs"], cls="TreeRPOTrainer")
    )
    run(nodes, ns, repo)
    return ns


CASES = {
    # The worked example of reference/credit-schemes-process.md §5c.
    "worked_example": {"r#A#A1": 1, "r#A#A2": 0, "r#B#B1": 0, "r#B#B2": 0},
    # A lone child (C) and a branching below it, which the code never reaches; three siblings.
    "lone_children": {
        "r#A#A1": 1, "r#A#A2": 1, "r#A#A3": 0, "r#B#B1#x": 0, "r#B#B1#y": 1, "r#B#B2": 1,
        "r#D#C#C1": 1, "r#D#C#C2": 0,
    },
    # A lone first step: nothing is trained.
    "one_first_step": {"r#A#A1": 1, "r#A#A2": 0},
}


def run_case(ns, leaves):
    node_cls, state = ns["TreeNode"], ns["NodeState"]
    ids = {}
    root = node_cls(prompt_ids=[1])
    made = {}
    for path, reward in leaves.items():
        parts = path.split("#")[1:]
        parent = root
        for depth in range(1, len(parts) + 1):
            key = "#".join(parts[:depth])
            if key not in made:
                ids[key] = len(ids) + 1
                node = node_cls(prompt_ids=[1], depth=depth, parent=parent, completion_ids=[ids[key]])
                if depth == len(parts):
                    node.state = state.TERMINAL
                    node.reward = float(reward)
                parent.add_child(node)
                made[key] = node
            parent = made[key]
    builder = types.SimpleNamespace()
    # expand_tree's scoring, as written there.
    for n in ns["_collect_nodes"](builder, root):
        if n.state is state.TERMINAL:
            n.propagate_reward_up(n.reward or 0.0)
    for n in ns["_collect_nodes"](builder, root):
        n.finalize_interior_reward()
    trainer = types.SimpleNamespace(tokenizer=types.SimpleNamespace(pad_token_id=0))
    groups = ns["_convert_tree_to_training_inputs"](trainer, root)
    by_id = {v: k for k, v in ids.items()}
    out = {}
    for group in groups:
        for row, adv in zip(group["completion_ids"], group["advantages"]):
            out[by_id[int(row[0])]] = float(adv)
    return out


def main():
    ns = load(sys.argv[1])
    out = {
        "source": {
            "repo": "omrisapir1/treerpo",
            "commit": COMMIT,
            "functions": [
                f"{TREE}: NodeState, TreeNode, TreeBuilder._collect_nodes (and expand_tree's scoring loops)",
                f"{TRAINER}: pad_1d, TreeRPOTrainer._convert_tree_to_training_inputs",
            ],
        },
        "runtime": {"python": sys.version.split()[0], "torch": torch.__version__, "numpy": np.__version__},
        "cases": [{"name": name, "leaves": leaves, "advantages": run_case(ns, leaves)} for name, leaves in CASES.items()],
    }
    dump(out)


if __name__ == "__main__":
    main()
