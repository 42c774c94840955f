#!/usr/bin/env python3
"""Golden cases of SPO's own tree credit code, for tests/it/process_credit.rs.

    python3 -m venv .venv && .venv/bin/pip install numpy==2.4.6
    git clone https://github.com/AIFrameResearch/SPO && git -C SPO checkout b9fc6a2
    .venv/bin/python tests/golden/spo_tree/generate.py SPO > tests/golden/spo_tree/cases.json

`TreeEpisodeUtils.extract_edges_from_tree`
(src/treetune/episode_generators/tree_episode_generator.py) is run as SPO wrote it, taken from the
file by name (the module imports the whole treetune package, which it does not use): each edge's
advantage V(n) − V(parent) (`rloo`) or over the parent's children's population std + 1e-8 (`grpo`),
and whether it is kept (`only_adv_greater_than_zero`: an edge whose advantage plus PAV term is 0
is dropped).

Around it, two places that sit inside larger methods are copied as written:
- `HybridInferenceStrategy`'s tree search (src/treetune/inference_strategies/
  hybrid_inference_strategy.py): a node's reward is `np.mean` of its children's rewards and its
  `reward_std` their `np.std`;
- `HybridEpisodeGenerator`'s episodes (src/treetune/episode_generators/hybrid_episode_generator.py):
  with `use_pav`, a segment's advantage is `values[i] + 5 * prover_advantages[i]`, its value V(n)
  plus five times BoK(V(n)) − BoK(V(parent)).

Each case gives its leaves (path `root#node…` → reward) and, per node, its edge advantage under
`rloo`, `grpo` and `use_pav`; a dropped edge is absent (`use_pav` keeps every edge, as its config
sets `only_adv_greater_than_zero: false`).

Made on 2026-12-02 with Python 3.11.7 and numpy 2.4.6, from SPO commit
b9fc6a263dec54e28137fd488a9b9c0e0d026025.
"""

import ast
import copy
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import dump  # noqa: E402  (tests/golden/reference.py)

COMMIT = "b9fc6a263dec54e28137fd488a9b9c0e0d026025"
FILE = "src/treetune/episode_generators/tree_episode_generator.py"


def load(repo):
    tree = ast.parse(open(f"{repo}/{FILE}").read())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TreeEpisodeUtils")
    node = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "extract_edges_from_tree")
    ns = {"copy": copy, "json": json}
    exec(compile(ast.Module(body=[node], type_ignores=[]), FILE, "exec"), ns)
    return ns["extract_edges_from_tree"]


CASES = {
    # reference/credit-schemes-process.md §5a's tree.
    "worked_example": {"r#A#A1": 1, "r#A#A2": 0, "r#B#B1": 0, "r#B#B2": 0},
    # Uneven depths, three children, a lone child, rewards in [0, 1].
    "uneven": {
        "r#A#A1#x": 1, "r#A#A1#y": 0, "r#A#A2": 1, "r#A#A3": 0.5,
        "r#B#B1": 0.2, "r#C#C1#z": 1, "r#C#C1#w": 1, "r#C#C2": 0,
    },
}


def build(leaves):
    root = {"text": "", "full_text": "q", "_request_object": {"_treetune__idx": 0}, "leaf": False, "children": []}
    made = {}
    for path, reward in leaves.items():
        parts = path.split("#")[1:]
        parent = root
        for depth in range(1, len(parts) + 1):
            key = "#".join(parts[:depth])
            if key not in made:
                node = {"text": key, "full_text": "q" + key, "leaf": depth == len(parts), "children": []}
                if node["leaf"]:
                    node["reward"] = float(reward)
                parent["children"].append(node)
                made[key] = node
            parent = made[key]

    # The tree search's node rewards, as written there.
    def score(node):
        if not node["children"]:
            del node["children"]
            return
        for child in node["children"]:
            score(child)
        child_rewards = [child["reward"] for child in node["children"]]
        node["reward"] = np.mean(child_rewards)
        node["reward_std"] = np.std(child_rewards)

    score(root)
    return root


def main():
    extract = load(sys.argv[1])
    out = {
        "source": {"repo": "AIFrameResearch/SPO", "commit": COMMIT, "functions": [f"{FILE}: TreeEpisodeUtils.extract_edges_from_tree"]},
        "runtime": {"python": sys.version.split()[0], "numpy": np.__version__},
        "cases": [],
    }
    for name, leaves in CASES.items():
        tree = build(leaves)
        case = {"name": name, "leaves": leaves}
        for method in ["rloo", "grpo"]:
            edges = extract(None, tree, adv_method=method, only_adv_greater_than_zero=True)
            case[method] = {e["response_text"]: float(e["advantage"]) for e in edges}
        edges = extract(None, tree, adv_method="rloo", only_adv_greater_than_zero=False)
        case["use_pav"] = {e["response_text"]: float(e["value"] + 5 * e["prover_advantage"]) for e in edges}
        out["cases"].append(case)
    dump(out)


if __name__ == "__main__":
    main()
