#!/usr/bin/env python3
"""Golden cases of search-and-learn's step-score aggregation, for tests/it/process_credit.rs.

    git clone https://github.com/huggingface/search-and-learn && git -C search-and-learn checkout 6f81cac
    python3 tests/golden/prm_aggregate/generate.py search-and-learn > tests/golden/prm_aggregate/cases.json

`aggregate_scores` (src/sal/utils/score.py) is run as it is written, taken from the file by name
(the module imports datasets and the package's math helpers, which it does not use): a
trajectory's PRM step scores to one score by `min`, `prod` or `last`. `prm_process` with
`form = agg` takes that score before its GRPO.

Made on 2026-12-02 with Python 3.11.7 (standard library only), from search-and-learn commit
6f81cac8b1ca4c4be9fabefc27a856c928f3ae7f.
"""

import ast
import json
import math
import sys
from pathlib import Path
from typing import Literal

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import dump  # noqa: E402  (tests/golden/reference.py)

COMMIT = "6f81cac8b1ca4c4be9fabefc27a856c928f3ae7f"
FILE = "src/sal/utils/score.py"
SCORES = [
    [0.9, 0.6, 0.8],
    [0.95],
    [0.2, 0.99, 0.97, 0.5],
    [0.7, 0.7],
    [0.31, 0.05, 0.88, 0.6, 0.42],
]


def main():
    tree = ast.parse(open(f"{sys.argv[1]}/{FILE}").read())
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "aggregate_scores")
    ns = {"math": math, "Literal": Literal}
    exec(compile(ast.Module(body=[node], type_ignores=[]), FILE, "exec"), ns)
    out = {
        "source": {"repo": "huggingface/search-and-learn", "commit": COMMIT, "functions": [f"{FILE}: aggregate_scores"]},
        "runtime": {"python": sys.version.split()[0]},
        "cases": [{"scores": s, **{agg: ns["aggregate_scores"](s, agg) for agg in ["min", "prod", "last"]}} for s in SCORES],
    }
    dump(out)


if __name__ == "__main__":
    main()
