#!/usr/bin/env python3
"""The load benchmark (docs/PERFORMANCE.md, "Opening a run").

    python3 bench/load.py gen SIZE OUT_DIR      # writes OUT_DIR/run_SIZE.jsonl (vantage) and run_SIZE_nested.jsonl
    python3 bench/load.py gen SIZE OUT_DIR --profile text-heavy   # run_SIZE_text.jsonl and run_SIZE_text_nested.jsonl
                                                                  # (times them: run OUT_DIR SIZE_text)
    python3 bench/load.py gen SIZE OUT_DIR --profile step-dense   # run_SIZE_dense.jsonl, …_dense_nested.jsonl
    python3 bench/load.py run OUT_DIR [SIZE…]   # times every tool on those files, three runs each
    python3 bench/load.py repeat SRC N OUT      # OUT: SRC's records N times over, ids made distinct (a 10 GiB log from the 1 GiB one)
    python3 bench/load.py repeat SRC N OUT --later-steps   # the same, each copy's training steps after the last's
    python3 bench/load.py follow OUT_DIR        # follow latency (examples/follow_latency)
    python3 bench/load.py verl SRC OUT_DIR      # SRC (a `gen` file) as a verl rollout_data_dir, and times it
    python3 bench/load.py chat SRC OUT          # SRC (a `gen` file) as OpenAI chat lines at OUT, and times them
    python3 bench/load.py convert LOG NESTED OUT_DIR   # `vantage convert LOG` to v2 against pyarrow and polars
                                                       # reading NESTED and writing zstd Parquet

`verl` writes what verl's `rollout_data_dir` would hold for the same run: one `<step>.jsonl` per
training step, a line per response of {input, output, score, step, acc}, the output the steps
joined with <think>, <tool_call> and <tool_response> tags (a directory that already has them is
kept). It then times `vantage check DIR` against pyarrow.json.read_json, polars.read_ndjson and
DuckDB's read_json reading every file of the directory, and `cat` and `wc -l` of the files, three
runs each.

`gen` is deterministic (seeded): a GRPO run of training steps of 51 groups of 8, each trajectory
of 4–40 steps, thoughts of 100–600 characters and tool observations of 50–2,000 characters, with
newlines and quotes in the texts (so the JSON has escapes) — the content of the issue that asked
for this. SIZE is e.g. 100MiB or 1GiB; generation stops at the first training step past it.

`run` times, side by side in one sitting, three runs each, with peak memory from /usr/bin/time -v:
* `vantage check` on the vantage JSONL file (a full load);
* the app's time to its first drawn view (`vantage FILE --exit-after-first-view`, under Xvfb
  when DISPLAY is unset);
* pyarrow.json.read_json, polars.read_ndjson and duckdb's read_json on the nested layout (the
  same content, one JSON object per trajectory with its steps as a list), each loading the whole
  file into memory;
* the floors: one read of the file from the page cache (`cat FILE > /dev/null`) and a parse that
  touches every byte (`wc -l`, which looks at each byte once).
The Python tools are installed into bench/.venv from PyPI on first use.
"""

import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV = os.path.join(HERE, ".venv")

WORDS = (
    "the of to and a in is it you that he was for on are with as I his they be at one have this from or had by "
    "hot word but what some we can out other were all there when up use your how said an each she which do their "
    "time if will way about many then them write would like so these her long make thing see him two has look more "
    "day could go come did number sound no most people my over know water than call first who may down side been "
    "now find any new work part take get place made live where after back little only round man year came show every "
    "good me give our under name very through just form sentence great think say help low line differ turn cause much "
    "mean before move right boy old too same tell does set three want air well also play small end put home read hand "
    "port large spell add even land here must big high such follow act why ask men change went light kind off need "
    "house picture try us again animal point mother world near build self earth father head stand own page should "
    "country found answer school grow study still learn plant cover food sun four between state keep eye never last "
    "let thought city tree cross farm hard start might story saw far sea draw left late run don't while press close "
    "night real life few north open seem together next white children begin got walk example ease paper group always "
    "music those both mark often letter until mile river car feet care second book carry took science eat room friend"
).split()
TOOLS = ["search", "python", "bash", "read_file", "calculator", "browser"]


def text(rng, low, high):
    """Words up to a length in [low, high], with a newline or a quoted phrase now and then."""
    target = rng.randint(low, high)
    out = []
    n = 0
    while n < target:
        w = rng.choice(WORDS)
        r = rng.random()
        if r < 0.03:
            w = w + "\n"
        elif r < 0.04:
            w = '"' + w + '"'
        out.append(w)
        n += len(w) + 1
    return " ".join(out)[:target]


# Pieces a tool observation or a long thought is full of in an agent log: escapes (newlines, tabs,
# quotes, backslashes) and multi-byte characters (accents, CJK, emoji) that JSON keeps or escapes.
HEAVY = [
    "\n", "\n\n", "\t", '"quoted"', "C:\\Users\\agent", "path\\to\\file", "'single'",
    "café", "naïve", "über", "東京", "数据", "✓", "→", "🙂", "€", "ß", "ñ", "{\"k\": [1, 2]}",
]


def mixed_words(rng, target, pieces):
    """Words up to `target` characters, about one piece in five one of `pieces`."""
    out = []
    n = 0
    while n < target:
        w = rng.choice(pieces) if rng.random() < 0.2 else rng.choice(WORDS)
        out.append(w)
        n += len(w) + 1
    return " ".join(out)


def heavy_text(rng, low, high):
    """Like `text`, but about one piece in five an escape or a multi-byte character."""
    return mixed_words(rng, rng.randint(low, high), HEAVY)


# The step-dense profile's pieces: dense escapes (backslashes, quotes, newlines, tabs) and some non-ASCII.
DENSE = ["\\", '"', "\n", "\t", "C:\\tmp\\out", '"ok"', "a\tb", "line\n  ", "é", "→", "日本"]


def dense_text(rng, low, high, log_uniform=False):
    """Words up to a length in [low, high] (log-uniform when asked: many short texts), about one
    piece in five an escape or a non-ASCII character."""
    target = int(math.exp(rng.uniform(math.log(low), math.log(high)))) if log_uniform else rng.randint(low, high)
    return mixed_words(rng, target, DENSE)[:target]


def dense_step(rng, tool):
    """A step of the step-dense profile: a thought, a tool call, its observation (log-uniform
    length), a `scores` object, an `env_reward` and a state key."""
    return {
        "kind": tool,
        "thought": dense_text(rng, 100, 600),
        "action": f"{tool}(" + text(rng, 10, 60) + ")",
        "observation": dense_text(rng, 50, 2000, log_uniform=True),
        "scores": {"prm": round(rng.random(), 4), "format": round(rng.random(), 3)},
        "env_reward": round(rng.uniform(-0.1, 0.5), 3),
        "state": f"room{rng.randint(0, 40)}/{rng.choice(TOOLS)}",
    }


def parse_size(text_):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMG]i?B?)?", text_.strip(), re.I)
    if not m:
        raise SystemExit(f"not a size: {text_}")
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[(m.group(2) or "")[:1].upper()]
    return int(float(m.group(1)) * scale)


def gen(size_text, out_dir, profile="default"):
    """`default`: the profile above. `text-heavy`: an agent log as #41 tried it: long thoughts
    (300–3,000 characters) and tool observations (200–4,000) dense with escapes and multi-byte
    characters, 12–28 steps per trajectory; its files are `run_SIZE_text.jsonl` and
    `run_SIZE_text_nested.jsonl`. `step-dense`: what many agent trainers write, as #67 measured it:
    8–40 steps per trajectory, thoughts of 100–600 characters, observations of 50–2,000 characters
    log-uniform (many short ones), a `scores` object, an `env_reward` and a state key on each
    step, dense escapes and some non-ASCII kept as UTF-8; `run_SIZE_dense.jsonl` and
    `run_SIZE_dense_nested.jsonl`."""
    target = parse_size(size_text)
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(20261201)
    heavy = profile == "text-heavy"
    dense = profile == "step-dense"
    if profile not in ("default", "text-heavy", "step-dense"):
        raise SystemExit(f"no profile {profile} (default, text-heavy, step-dense)")
    stem = f"run_{size_text}" + ("_text" if heavy else "_dense" if dense else "")
    native_path = os.path.join(out_dir, f"{stem}.jsonl")
    nested_path = os.path.join(out_dir, f"{stem}_nested.jsonl")
    words = heavy_text if heavy else text
    thought, observation, turns = ((300, 3000), (200, 4000), (12, 28)) if heavy else ((100, 600), (50, 2000), (4, 40))
    if dense:
        turns = (8, 40)
    written = 0
    with open(native_path, "w", encoding="utf-8") as native, open(nested_path, "w", encoding="utf-8") as nested:
        header = {"vantage": 1, "name": f"generated GRPO run ({size_text}, {profile})", "meta": {"trainer": "bench/load.py gen"}}
        native.write(json.dumps(header) + "\n")
        step = 0
        trajectories = 0
        steps_total = 0
        while written < target:
            for g in range(51):
                task = f"task{rng.randint(0, 9999)}"
                group = f"s{step}/g{g}"
                prompt = "Solve: " + text(rng, 80, 300)
                for r in range(8):
                    steps = []
                    for k in range(rng.randint(*turns)):
                        tool = rng.choice(TOOLS)
                        if dense:
                            steps.append(dense_step(rng, tool))
                            continue
                        steps.append({
                            "kind": tool,
                            "thought": words(rng, *thought),
                            "action": f"{tool}(" + text(rng, 10, 60) + ")",
                            "observation": words(rng, *observation),
                            "scores": {"prm": round(rng.random(), 4)},
                        })
                    reward = 1.0 if rng.random() < 0.4 else 0.0
                    record = {
                        "type": "trajectory",
                        "id": f"{group}/r{r}",
                        "group": group,
                        "task": task,
                        "train_step": step,
                        "prompt": prompt,
                        "outcome": {"reward": reward, "success": reward > 0.5},
                        "steps": steps,
                    }
                    # The text-heavy log keeps its non-ASCII as UTF-8, as most trainers write it.
                    line = json.dumps(record, ensure_ascii=not (heavy or dense))
                    native.write(line + "\n")
                    del record["type"]
                    nested.write(json.dumps(record, ensure_ascii=not (heavy or dense)) + "\n")
                    written += len(line.encode()) + 1
                    trajectories += 1
                    steps_total += len(steps)
            step += 1
    print(f"{native_path}: {os.path.getsize(native_path)} bytes, {step} training steps, {step * 51} groups, "
          f"{trajectories} trajectories, {steps_total} steps")
    print(f"{nested_path}: {os.path.getsize(nested_path)} bytes")


def venv_python():
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "pyarrow", "polars", "duckdb"], check=True)
    return python


def timed(cmd, env=None):
    """Seconds and peak RSS (bytes) of `cmd`, from /usr/bin/time -v."""
    start = time.perf_counter()
    result = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", result.stderr)
    if result.returncode not in (0, 1):
        print("  failed:", " ".join(cmd), result.stderr[-600:], file=sys.stderr)
    return seconds, int(peak.group(1)) * 1024 if peak else 0, result.stdout


PY_TOOLS = {
    "pyarrow.json.read_json": "import pyarrow.json as j, sys; t = j.read_json(sys.argv[1]); print(t.num_rows)",
    "polars.read_ndjson": "import polars as pl, sys; d = pl.read_ndjson(sys.argv[1]); print(d.height)",
    "duckdb read_json": (
        "import duckdb, sys; c = duckdb.connect(); "
        "c.execute(\"create table t as select * from read_json(?, format='newline_delimited')\", [sys.argv[1]]); "
        "print(c.execute('select count(*) from t').fetchone()[0])"
    ),
}


def run(out_dir, sizes):
    vantage = os.path.join(ROOT, "target", "release", "vantage")
    if not os.path.exists(vantage):
        raise SystemExit("build it first: cargo build --release")
    python = venv_python()
    sizes = sizes or ["100MiB", "1GiB"]
    rows = []
    for size in sizes:
        native = os.path.join(out_dir, f"run_{size}.jsonl")
        nested = os.path.join(out_dir, f"run_{size}_nested.jsonl")
        file_bytes = os.path.getsize(native)
        subprocess.run(["cat", native, nested], stdout=subprocess.DEVNULL)  # into the page cache
        tools = [
            ("floor: cat (one read from the page cache)", ["sh", "-c", f"cat '{native}' > /dev/null"]),
            ("floor: wc -l (every byte looked at)", ["wc", "-l", native]),
            ("vantage check", [vantage, "check", native]),
        ]
        display = os.environ.get("DISPLAY")
        app = [vantage, native, "--exit-after-first-view"]
        if not display and shutil.which("xvfb-run"):
            app = ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24"] + app
        if display or shutil.which("xvfb-run"):
            tools.append(("vantage app: first view", app))
        for name, code in PY_TOOLS.items():
            tools.append((name, [python, "-c", code, nested]))
        env = dict(os.environ, WGPU_BACKEND=os.environ.get("WGPU_BACKEND", "vulkan"))
        for name, cmd in tools:
            times, peaks = [], []
            for _ in range(3):
                seconds, peak, out = timed(cmd, env)
                m = re.search(r"first view after ([\d.]+) s", out)
                times.append(float(m.group(1)) if m else seconds)
                peaks.append(peak)
            rows.append((size, file_bytes, name, times, max(peaks)))
            print(f"{size:>7} {name:<44} {' '.join(f'{t:6.2f}' for t in times)} s   peak {max(peaks) / 1e9:5.2f} GB "
                  f"({max(peaks) / file_bytes:4.2f}× the file)", flush=True)
    print()
    print("| file | tool | runs (s) | median (s) | peak memory | × file |")
    print("|---|---|---|---|---|---|")
    for size, file_bytes, name, times, peak in rows:
        print(f"| {size} ({file_bytes / 1e9:.2f} GB) | {name} | {', '.join(f'{t:.2f}' for t in times)} | "
              f"{statistics.median(times):.2f} | {peak / 1e9:.2f} GB | {peak / file_bytes:.2f} |")


def repeat(src, n, out, later_steps=False):
    """Writes SRC's header once and its records N times, each copy's ids and groups prefixed c<k>/;
    with later_steps, copy k's training steps follow copy k-1's (a longer run, not a wider one)."""
    key = b'"train_step": '
    with open(src, "rb") as f, open(out, "wb") as w:
        header = f.readline()
        w.write(header)
        steps = 0
        if later_steps:
            for line in f:
                at = line.find(key)
                if at >= 0:
                    end = at + len(key)
                    stop = end
                    while line[stop:stop + 1].isdigit():
                        stop += 1
                    steps = max(steps, int(line[end:stop]) + 1)

        def shift(line, k):
            at = line.find(key)
            if not later_steps or at < 0:
                return line
            end = at + len(key)
            stop = end
            while line[stop:stop + 1].isdigit():
                stop += 1
            return line[:end] + b"%d" % (int(line[end:stop]) + k * steps) + line[stop:]

        for k in range(int(n)):
            f.seek(len(header))
            prefix_id = b'"id": "c%d/' % k
            prefix_group = b'"group": "c%d/' % k
            while True:
                block = f.readlines(64 << 20)
                if not block:
                    break
                w.write(b"".join(
                    shift(line.replace(b'"id": "', prefix_id, 1).replace(b'"group": "', prefix_group, 1), k)
                    for line in block))
    print(f"{out}: {os.path.getsize(out)} bytes")


def follow(out_dir):
    """Appends trajectories to a followed file and times until the app's follower has read them."""
    vantage = os.path.join(ROOT, "target", "release", "examples", "follow_latency")
    if not os.path.exists(vantage):
        raise SystemExit("build it first: cargo build --release --features examples --example follow_latency")
    subprocess.run([vantage, out_dir], check=True)


def write_verl(src, out_dir):
    """Writes SRC's trajectories as a verl rollout_data_dir at OUT_DIR (left as it is when it has files)."""
    if os.path.isdir(out_dir) and any(n.endswith(".jsonl") for n in os.listdir(out_dir)):
        return
    os.makedirs(out_dir, exist_ok=True)
    files = {}
    with open(src) as f:
        f.readline()
        for line in f:
            record = json.loads(line)
            step = record["train_step"]
            if step not in files:
                files[step] = open(os.path.join(out_dir, f"{step}.jsonl"), "w")
            output = "".join(
                f"<think>{s['thought']}</think><tool_call>{s['action']}</tool_call>"
                f"<tool_response>{s['observation']}</tool_response>"
                for s in record["steps"])
            reward = record["outcome"]["reward"]
            files[step].write(json.dumps(
                {"input": record["prompt"], "output": output, "score": reward, "step": step, "acc": reward > 0.5}) + "\n")
    for f in files.values():
        f.close()


def table(tools, total, what="the files"):
    """Times each (name, cmd) three runs in turn and prints a Markdown table row each."""
    print(f"| tool | runs (s) | median (s) | peak memory | × {what} |")
    print("|---|---|---|---|---|")
    for name, cmd in tools:
        times, peaks = [], []
        for _ in range(3):
            seconds, peak, _ = timed(cmd)
            times.append(seconds)
            peaks.append(peak)
        print(f"| {name} | {', '.join(f'{t:.2f}' for t in times)} | {statistics.median(times):.2f} | "
              f"{max(peaks) / 1e9:.2f} GB | {max(peaks) / total:.2f} |", flush=True)


def verl(src, out_dir):
    """Writes SRC's trajectories as a verl rollout_data_dir (unless OUT_DIR has them), then times the tools on it."""
    write_verl(src, out_dir)
    names = sorted(n for n in os.listdir(out_dir) if n.endswith(".jsonl"))
    total = sum(os.path.getsize(os.path.join(out_dir, n)) for n in names)
    print(f"{out_dir}: {len(names)} step files, {total} bytes")
    vantage = os.path.join(ROOT, "target", "release", "vantage")
    python = venv_python()
    glob = os.path.join(out_dir, "*.jsonl")
    tools = [
        ("floor: cat (one read from the page cache)", ["sh", "-c", f"cat {glob} > /dev/null"]),
        ("floor: wc -l (every byte looked at)", ["sh", "-c", f"wc -l {glob} > /dev/null"]),
        ("vantage check", [vantage, "check", out_dir]),
        ("pyarrow.json.read_json", [python, "-c",
                                    "import pyarrow as pa, pyarrow.json as j, glob, sys; "
                                    "t = pa.concat_tables([j.read_json(p) for p in sorted(glob.glob(sys.argv[1]))]); "
                                    "print(t.num_rows)", glob]),
        ("polars.read_ndjson", [python, "-c",
                                "import polars as pl, glob, sys; "
                                "d = pl.concat([pl.read_ndjson(p) for p in sorted(glob.glob(sys.argv[1]))]); "
                                "print(d.height)", glob]),
        ("duckdb read_json", [python, "-c",
                              "import duckdb, sys; c = duckdb.connect(); "
                              "c.execute(\"create table t as select * from read_json(?, format='newline_delimited')\", "
                              "[sys.argv[1]]); print(c.execute('select count(*) from t').fetchone()[0])", glob]),
    ]
    subprocess.run(["sh", "-c", f"cat {glob} > /dev/null"])
    table(tools, total)


def write_chat(src, out):
    """Writes SRC's trajectories (a `gen` file) as OpenAI chat lines at OUT (`openai_chat`: `{task_id,
    trial, reward, messages}`, each step an assistant turn with its thought and a tool call, then
    the tool's result)."""
    heavy = "_text" in os.path.basename(src) or "_dense" in os.path.basename(src)
    with open(src, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
        f.readline()
        for line in f:
            record = json.loads(line)
            messages = [{"role": "system", "content": "You are an agent with tools."},
                        {"role": "user", "content": record["prompt"]}]
            for k, step in enumerate(record["steps"]):
                call = {"id": f"call_{k}", "type": "function",
                        "function": {"name": step["kind"], "arguments": json.dumps({"input": step["action"]})}}
                messages.append({"role": "assistant", "content": step["thought"], "tool_calls": [call]})
                messages.append({"role": "tool", "tool_call_id": f"call_{k}", "content": step["observation"]})
            group, r = record["id"].rsplit("/r", 1)
            o.write(json.dumps({"task_id": group, "trial": int(r), "reward": record["outcome"]["reward"],
                                "messages": messages}, ensure_ascii=not heavy) + "\n")


def chat(src, out):
    """Writes SRC's trajectories as OpenAI chat lines at OUT (`write_chat`), unless OUT exists, then
    times `vantage check OUT` against pyarrow.json.read_json and the floors on it, three runs each."""
    if not os.path.exists(out):
        write_chat(src, out)
    total = os.path.getsize(out)
    print(f"{out}: {total} bytes")
    vantage = os.path.join(ROOT, "target", "release", "vantage")
    python = venv_python()
    tools = [
        ("floor: cat (one read from the page cache)", ["sh", "-c", f"cat '{out}' > /dev/null"]),
        ("floor: wc -l (every byte looked at)", ["wc", "-l", out]),
        ("vantage check", [vantage, "check", out]),
        ("pyarrow.json.read_json", [python, "-c", PY_TOOLS["pyarrow.json.read_json"], out]),
    ]
    subprocess.run(["cat", out], stdout=subprocess.DEVNULL)
    table(tools, total, "the file")


def convert(log, nested, out_dir):
    """Times `vantage convert LOG` to a v2 dataset against pyarrow and polars reading the nested layout
    of the same content and writing it as one zstd Parquet file (the codec vantage writes), and the
    floor of reading and writing the bytes once (`cp`)."""
    vantage = os.path.join(ROOT, "target", "release", "vantage")
    python = venv_python()
    os.makedirs(out_dir, exist_ok=True)
    total = os.path.getsize(log)
    v2 = os.path.join(out_dir, "v2")
    tools = [
        ("floor: cp (one read and one write of the bytes)",
         ["sh", "-c", f"cp '{log}' '{out_dir}/copy' && rm '{out_dir}/copy'"]),
        ("vantage convert", ["sh", "-c", f"rm -rf '{v2}' && exec '{vantage}' convert '{log}' '{v2}' >/dev/null"]),
        ("pyarrow read_json + write_table (zstd)", [python, "-c",
                                                  "import pyarrow.json as j, pyarrow.parquet as pq, sys; "
                                                  "pq.write_table(j.read_json(sys.argv[1]), sys.argv[2], compression='zstd')",
                                                  nested, os.path.join(out_dir, "pyarrow.parquet")]),
        ("polars read_ndjson + write_parquet (zstd)", [python, "-c",
                                                     "import polars as pl, sys; "
                                                     "pl.read_ndjson(sys.argv[1]).write_parquet(sys.argv[2], compression='zstd')",
                                                     nested, os.path.join(out_dir, "polars.parquet")]),
    ]
    subprocess.run(["cat", log, nested], stdout=subprocess.DEVNULL)
    table(tools, total, "the log")
    for name in ("pyarrow.parquet", "polars.parquet"):
        os.remove(os.path.join(out_dir, name))
    written = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(v2) for n in ns)
    print(f"vantage wrote {written} bytes ({written / total:.2f}× the log)")
    shutil.rmtree(v2)


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "gen":
        profile = sys.argv[5] if len(sys.argv) >= 6 and sys.argv[4] == "--profile" else "default"
        gen(sys.argv[2], sys.argv[3], profile)
    elif len(sys.argv) >= 3 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) >= 4 and sys.argv[1] == "verl":
        verl(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 4 and sys.argv[1] == "chat":
        chat(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 5 and sys.argv[1] == "convert":
        convert(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) >= 5 and sys.argv[1] == "repeat":
        # `repeat SRC N OUT --later-steps`: copy k's training steps after copy k-1's.
        repeat(sys.argv[2], sys.argv[3], sys.argv[4], "--later-steps" in sys.argv[5:])
    elif len(sys.argv) >= 3 and sys.argv[1] == "follow":
        follow(sys.argv[2])
    else:
        print(__doc__)
        sys.exit(2)
