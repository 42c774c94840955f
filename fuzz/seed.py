#!/usr/bin/env python3
"""Writes seed inputs for every fuzz target into SEEDS/<target>/ (default /tmp/vantage-seeds):
from tests/fixtures and the start of each sample run, and, with SHARED=1 when ../shared/data is
present, its small real logs. Seeds are read by the fuzzers beside the kept corpus (fuzz/README.md)
and are not committed; the kept corpus is grown from the repository's own files only (SHARED=0, the
default), so no third-party log is copied into it. A target's first byte picks the file name a load is tried under (see src/fuzzing.rs):
0 .jsonl, 1 .json, 2 .eval, 3 .traj, 4 numbered verl dump, 5 .db, 6 .parquet."""
import gzip
import io
import os
import sqlite3
import tempfile
import zipfile
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent
seeds = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/vantage-seeds")
LIMIT = 48 << 10


def head(data: bytes) -> bytes:
    """At most LIMIT bytes, cut at a line end when there is one."""
    if len(data) <= LIMIT:
        return data
    cut = data.rfind(b"\n", 0, LIMIT)
    return data[: cut + 1] if cut > 0 else data[:LIMIT]


def name_byte(path: pathlib.Path) -> int:
    name = path.name
    for suffix, byte in [(".eval", 2), (".traj", 3), (".traj.json", 3), (".db", 5), (".parquet", 6), (".yaml", 8)]:
        if name.endswith(suffix):
            return byte
    if name[:1].isdigit() and name.endswith(".jsonl"):
        return 4
    if name.startswith("rollout_dump_data.step_"):
        return 7
    return 1 if name.endswith(".json") else 0


files = [p for p in (root / "tests/fixtures").rglob("*") if p.is_file() and p.suffix not in (".py", ".rs", ".md")]
files += sorted((root / "sample_runs").glob("*.jsonl"))
shared = root.parent / "shared/data"
if os.environ.get("SHARED") == "1" and shared.is_dir():
    files += [p for p in shared.rglob("*") if p.is_file() and p.suffix != ".md" and p.stat().st_size <= 4 << 20]

targets = ["detect", "stream", "outcomes"] + [
    "format_" + f
    for f in "vantage processbench tau2 openai_chat prmbench math_shepherd toolbench verl tot math_aps prm800k "
    "swe_agent openhands inspect trackio vantage_parquet trl verifiers nemo_gym nemo_rl vf_eval atif slime tinker skyrl roll open_instruct art otel claude_code codex".split()
]
count = 0
for target in targets + ["zip", "pickle", "decompress", "deeplink", "state", "params", "formula", "tokenizer",
                         "vantage_fast_path"]:
    (seeds / target).mkdir(parents=True, exist_ok=True)
for i, path in enumerate(files):
    raw = path.read_bytes()
    # Containers are kept whole when small (a cut ZIP or SQLite file is only an error path).
    data = raw if name_byte(path) in (2, 5, 6) and len(raw) <= 4 << 20 else head(raw)
    if len(data) > 4 << 20:
        continue
    for target in targets:
        (seeds / target / f"{i:03}-{path.name}").write_bytes(bytes([name_byte(path)]) + data)
        count += 1
    # The fast path of a vantage JSONL line reads lines: a vantage log's first lines, one seed each.
    if path.suffix == ".jsonl" and raw.startswith(b'{"vantage"'):
        for k, line in enumerate(raw.splitlines()[1:9]):
            (seeds / "vantage_fast_path" / f"{i:03}-{k}-{path.name}").write_bytes(line[:64 << 10])
    if path.suffix == ".eval":
        (seeds / "zip" / f"{i:03}-{path.name}").write_bytes(raw)
    if len(data) <= 16 << 10:
        (seeds / "decompress" / f"{i:03}-{path.name}.gz").write_bytes(b"\0" + gzip.compress(data))
# The tokenizer.json files of the golden tokenizer cases.
for path in sorted((root / "tests/golden/tokenizers").glob("*.json")):
    if path.name != "cases.json":
        (seeds / "tokenizer" / path.name).write_bytes(b"\0" + path.read_bytes())
# A small Inspect .eval (ZIP) and a small Trackio database, made here from the repository's fixtures.
made = pathlib.Path(tempfile.mkdtemp())
sample = {"id": 1, "epoch": 1, "input": "What is 6*7?", "target": "42",
          "messages": [{"role": "user", "content": "What is 6*7?"}, {"role": "assistant", "content": "42"}],
          "events": [{"event": "model", "output": {"choices": [{"message": {"role": "assistant", "content": "42"}}]}}],
          "scores": {"match": {"value": "C"}}}
import json  # noqa: E402
buffer = io.BytesIO()
with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("header.json", json.dumps({"version": 2, "status": "success", "eval": {"task": "arith", "model": "m"}}))
    z.writestr("samples/1_epoch_1.json", json.dumps(sample))
    z.writestr("summaries.json", "[]")
(made / "arith.eval").write_bytes(buffer.getvalue())
db = made / "small.db"
# Read from a copy: SQLite writes beside a database it opens (its -shm and -wal files).
import shutil  # noqa: E402
for suffix in ("", "-wal"):
    shutil.copy(root / f"tests/fixtures/trackio/grpo-demo.db{suffix}", made / f"source.db{suffix}")
source = sqlite3.connect(made / "source.db")
target = sqlite3.connect(db)
target.execute("PRAGMA page_size = 512")
for table in ("traces", "configs"):
    sql = source.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    if sql:
        target.execute(sql[0])
        rows = source.execute(f"SELECT * FROM {table} LIMIT 6").fetchall()
        if rows:
            target.executemany(f"INSERT INTO {table} VALUES ({','.join('?' * len(rows[0]))})", rows)
target.commit()
target.execute("VACUUM")
target.close()
for path in (made / "arith.eval", db):
    i = len(files)
    files.append(path)
    raw = path.read_bytes()
    (seeds / "zip" / f"{i:03}-{path.name}").write_bytes(raw) if path.suffix == ".eval" else None
    for target_name in targets:
        (seeds / target_name / f"{i:03}-{path.name}").write_bytes(bytes([name_byte(path)]) + raw)
links = [
    "#traj=s0-p00-r0&step=2&a=grpo&b=triage&view=compare",
    "?url=https%3A%2F%2Fexample.org%2Frun.jsonl&group=g1&a=grpo&a.preset=verl&a.epsilon=1e-6&b=treerl&b.value_form=local",
    "#run=x&b=pure&b.baseline=rloo&b.norm=true&view=Tokens&step=-1&traj=%ZZ",
    "#a=custom&a.formula=%24w%20%3D%200.5%0AR%20-%20mean(R%2C%20group)%20%2B%20%24w%20*%20coalesce(prm%2C%200)&b=grpo",
]
state = (
    '{"scheme_a":{"scheme_id":"grpo","preset":"verl","values":[["epsilon","1e-6"]]},'
    '"scheme_b":{"scheme_id":"triage","preset":null,"values":[]},"heat_value":"CreditA",'
    '"heat_whole_run":true,"tree_merge":"Prefix","tree_value":"CreditB","tab":"Compare",'
    '"recent_files":["a.jsonl"],"bookmarks":[]}'
)
(seeds / "state" / "0").write_text(state)
# Formulas that reach every part of the language (fuzz/corpus/formula holds more).
formulas = [
    "(R - mean(R, group)) / (std(R, group, unbiased) + 1e-6)",
    "$w = 0.3 in [0, 1]\nlet a = credit(\"grpo\")\na + $w * revcumsum(coalesce(prm, 0))",
    "if(role == \"progress\", 1, -0.5) * value(node) - value(parent) + children_mean(mc_mean)",
    "whiten(discounted(coalesce(env_reward, 0), 0.9), train_step, biased, by=tokens, eps=1e-6)",
    "rank(R, siblings) + prefix(t) - suffix(depth) + logprob * mask",
]
for target, texts in (("deeplink", links), ("formula", formulas)):
    for i, text in enumerate(texts):
        (seeds / target / f"{i}").write_text(text)
params = [
    (0, "verl\nepsilon=1e-6\nnorm_adv_by_std_in_grpo=false"),
    (16, "\nw=0.5\nfit=true"),
    (28, "\nvalue_form=local\nweighting=sqrt"),
    (29, "\nbaseline=rloo\ngamma=0.99"),
    (12, "\ngamma=1\nlam=0.95"),
]
for i, (pick, text) in enumerate(params):
    (seeds / "params" / f"{i}").write_bytes(bytes([pick]) + text.encode())
print(f"{count} seeds from {len(files)} files in {seeds}")
