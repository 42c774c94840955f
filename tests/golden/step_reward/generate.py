#!/usr/bin/env python3
"""The per-step advantages verifiers' `StepRewardRubric` gives each step of
sample_runs/terminal_turn_scores.jsonl, computed by verifiers' own code, for tests/it/process_credit.rs
(Python 3.11+, the standard library only):

    git clone https://github.com/PrimeIntellect-ai/verifiers && git -C verifiers checkout b6ca919fb
    python3 tests/golden/step_reward/generate.py verifiers > tests/golden/step_reward/cases.json

`compute_discounted_returns` and `apply_step_advantages` (verifiers/utils/step_reward_utils.py, which
`StepRewardRubric.score_group` calls after summing each rollout's step rewards into its reward) are
taken from the file by name and run as written. Each trajectory of the sample is a state whose
`trajectory` steps carry the step's `env_reward` as the step reward an `@vf.step_reward` handler
wrote (`State.add_step_reward`); each group of the sample is one `score_group` call. A case gives
each step's `advantage` under one γ.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reference import definitions, dump, run  # noqa: E402  (tests/golden/reference.py)

SAMPLE = Path(__file__).resolve().parent.parent.parent.parent / "sample_runs/terminal_turn_scores.jsonl"


def main(repo):
    path = f"{repo}/verifiers/utils/step_reward_utils.py"
    ns = run(definitions(path, ["compute_discounted_returns", "apply_step_advantages"]), {"State": dict}, path)
    groups = {}
    for line in open(SAMPLE):
        record = json.loads(line)
        if record.get("type") == "trajectory":
            groups.setdefault(record["group"], []).append(record)
    cases = []
    for gamma in [1.0, 0.9, 0.5, 0.0]:
        advantages = {}
        for members in groups.values():
            states = [{"trajectory": [{"reward": s["env_reward"]} for s in t["steps"]]} for t in members]
            ns["apply_step_advantages"](states, gamma=gamma)
            for t, state in zip(members, states):
                advantages[t["id"]] = [step["advantage"] for step in state["trajectory"]]
        cases.append({"gamma": gamma, "advantages": advantages})
    dump({
        "source": "PrimeIntellect-ai/verifiers@b6ca919fb verifiers/utils/step_reward_utils.py",
        "sample": "sample_runs/terminal_turn_scores.jsonl",
        "cases": cases,
    })


main(sys.argv[1])
