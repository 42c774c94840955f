"""The Python package against the command line and the trainers' golden vectors.

Run by python/tests/run.sh (and so by .ci/run): the wheel built from this checkout, installed in a
fresh virtual environment; VANTAGE_BIN is the `vantage` program of the same checkout.
"""

from __future__ import annotations

import gc
import json
import os
import pathlib
import subprocess

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import vantage

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "sample_runs").glob("*.jsonl"))
SHARED = pathlib.Path(os.environ.get("VANTAGE_SHARED", ROOT.parent / "shared"))
BIN = os.environ.get("VANTAGE_BIN", str(ROOT / "target" / "debug" / "vantage"))
# As the Rust golden tests compare (tests/it/golden_verl.rs).
RTOL, ATOL = 1e-5, 1e-6


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([BIN, *args], capture_output=True, text=True, check=check)


def test_the_program_and_the_samples_are_there():
    assert pathlib.Path(BIN).is_file(), f"no vantage program at {BIN} (build it, or set VANTAGE_BIN)"
    assert len(SAMPLES) >= 6


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_sample_opens_with_the_counts_vantage_check_gives(path):
    run = vantage.open(path)
    checked = json.loads(cli("check", "--json", str(path)).stdout)["runs"][0]
    summary = run.summary()
    assert summary == checked
    counts = checked["summary"]
    assert len(run) == counts["trajectories"]
    assert run.steps().num_rows == counts["steps"]
    assert run.trajectories().num_rows == counts["trajectories"]
    assert run.tokens().num_rows == counts["tokens"]
    assert run.format == checked["format"]
    # The step table's rows are the credit's: the same trajectories, in the same order.
    steps = run.steps(text=True)
    assert steps.column("trajectory").to_pylist() == run.credit("grpo").table().column("trajectory").to_pylist()
    assert {"group", "trajectory", "step", "kind", "reward", "thought", "action", "observation"} <= set(
        steps.column_names
    )


def supported(path):
    return vantage.open(path).summary()["schemes"]["supported"]


CASES = [(path, scheme["id"]) for path in SAMPLES for scheme in vantage.schemes()]


@pytest.mark.parametrize("path,scheme", CASES, ids=lambda x: x.name if isinstance(x, pathlib.Path) else x)
def test_credit_under_every_scheme_equals_vantage_credit_to_the_bit(path, scheme, tmp_path):
    run = vantage.open(path)
    out = tmp_path / "credit.parquet"
    done = cli("credit", str(path), "--scheme", scheme, "--out", str(out), check=False)
    if scheme not in run.summary()["schemes"]["supported"]:
        # Both refuse it, and say why.
        assert done.returncode == 2, done.stderr
    if done.returncode != 0:
        # A scheme the run supports can still refuse its data (pass@k on groups of one): the same words.
        assert done.returncode == 2
        with pytest.raises(vantage.VantageError) as refused:
            run.credit(scheme)
        assert str(refused.value) in done.stderr
        return
    want = pq.read_table(out)
    got = run.credit(scheme).table()
    assert got.column_names == want.column_names
    for name in ("trajectory", "group"):
        assert got.column(name).to_pylist() == want.column(name).to_pylist()
    assert got.column("step").to_pylist() == want.column("step").to_pylist()
    g = got.column("credit").to_numpy().view(np.uint32)
    w = want.column("credit").to_numpy().view(np.uint32)
    assert np.array_equal(g, w), f"{scheme} on {path.name}: credit differs from vantage credit"


def test_presets_formulas_parameters_and_tokens_equal_the_command_line(tmp_path):
    path = ROOT / "sample_runs" / "verl_token_batch.jsonl"
    run = vantage.open(path)
    asks = [
        (("grpo", "verl", {}), ["--scheme", "grpo", "--preset", "verl"]),
        (("gae", None, {"gamma": 0.9, "lam": 0.8}), ["--scheme", "gae", "--set", "gamma=0.9", "--set", "lam=0.8"]),
        (("formula:grpo", None, {}), ["--scheme", "formula:grpo"]),
        (("expr:R - mean(R, group)", None, {}), ["--scheme", "expr:R - mean(R, group)"]),
        (("grpo", None, {"norm_by_std": False}), ["--scheme", "grpo", "--set", "norm_by_std=false"]),
    ]
    for (scheme, preset, params), flags in asks:
        out = tmp_path / "c.parquet"
        cli("credit", str(path), *flags, "--out", str(out))
        got = run.credit(scheme, preset, **params).to_numpy()
        assert np.array_equal(got.view(np.uint32), pq.read_table(out).column("credit").to_numpy().view(np.uint32)), flags
    cli("credit", str(path), "--scheme", "gae", "--tokens", "--out", str(tmp_path / "t.parquet"))
    tokens = run.credit("gae", tokens=True)
    assert tokens.level == "token" and len(tokens) == run.tokens().num_rows
    want = pq.read_table(tmp_path / "t.parquet")
    assert tokens.table().column_names == want.column_names
    assert np.array_equal(np.asarray(tokens).view(np.uint32), want.column("credit").to_numpy().view(np.uint32))
    # pyarrow and numpy take a credit as it is: the core's vector, read-only, not copied.
    assert pa.table(tokens).num_rows == len(tokens)
    values = tokens.to_numpy()
    assert values is tokens.to_numpy() and not values.flags.writeable and not values.flags.owndata
    mine = np.array(tokens)
    mine[0] = 1e9
    assert mine.flags.writeable and tokens.to_numpy()[0] != 1e9


def test_compare_equals_vantage_compare():
    path = ROOT / "sample_runs" / "math_grpo_prm.jsonl"
    run = vantage.open(path)
    a, b = run.credit("grpo"), run.credit("prm_process")
    c = vantage.compare(a, b)
    want = json.loads(cli("compare", str(path), "--a", "grpo", "--b", "prm_process", "--json", "--limit", "7").stdout)
    got = c.to_dict(7)
    assert got == want
    assert c.spearman == want["spearman"] and c.paired == want["paired"] > 0
    top = c.top(7)
    assert top.num_rows == len(want["rows"]) and top.column("a").to_pylist() == [r["a"] for r in want["rows"]]
    assert c.groups(3).num_rows == min(3, want["groups_total"])


def test_schemes_list_parameters_requirements_and_citations():
    schemes = {s["id"]: s for s in vantage.schemes()}
    listed = cli("schemes").stdout
    assert all(f"{id} — " in listed for id in schemes)
    grpo = schemes["grpo"]
    assert grpo["citation"] and grpo["needs"] and grpo["from_code"]
    assert any(p["name"] == "epsilon" and p["kind"] == "float" for p in grpo["params"])
    assert {"verl", "trl"} <= {p["name"] for p in grpo["presets"]}
    assert "vantage_jsonl" in vantage.formats() or "vantage" in vantage.formats()


def test_the_docstrings_come_from_the_command_lines_help():
    help_text = cli("credit", "--help").stdout
    assert "Trainer preset" in help_text and "Trainer preset" in vantage.Run.credit.__doc__
    assert "training steps" in vantage.open.__doc__
    stub = (ROOT / "python" / "vantage" / "__init__.pyi").read_text()
    for name in ("def open(", "def credit_batch(", "class Run:", "def credit(", "class Comparison:"):
        assert name in stub


def stub_functions():
    """Each function and method of the type stubs: (its object in the package, the stub's def)."""
    import ast

    stub = ast.parse((ROOT / "python" / "vantage" / "__init__.pyi").read_text())
    for node in stub.body:
        if isinstance(node, ast.FunctionDef):
            yield getattr(vantage, node.name), node
        elif isinstance(node, ast.ClassDef) and hasattr(vantage, node.name):
            for method in node.body:
                if isinstance(method, ast.FunctionDef):
                    yield getattr(getattr(vantage, node.name), method.name), method


def test_the_stubs_signatures_are_the_packages():
    import ast
    import inspect

    seen = 0
    for obj, node in stub_functions():
        actual = inspect.signature(obj)
        args = node.args
        stub_names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        if args.kwarg:
            stub_names.append(args.kwarg.arg)
        names = [p for p in actual.parameters if p not in ("self", "cls")]
        assert [n for n in stub_names if n != "self"] == names, (node.name, stub_names, names)
        defaults = dict(zip([a.arg for a in (args.posonlyargs + args.args)][::-1], args.defaults[::-1]))
        defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
        for name, default in defaults.items():
            want = ast.literal_eval(default)
            got = actual.parameters[name].default
            if got is Ellipsis:  # a default the binding's text signature does not spell out
                continue
            assert got == want or (got == () and want == ()), (node.name, name, got, want)
        seen += 1
    assert seen >= 15, seen


def verl_case(name):
    path = SHARED / "golden" / "verl" / name
    assert path.is_file(), f"{path} is missing: the golden vectors are read from ../shared"
    return json.loads(path.read_text())


@pytest.mark.parametrize(
    "name",
    [
        "grpo__binary_two_groups.json",
        "grpo__drgrpo_no_std_fractional_negative.json",
        "rloo__groups_4_3_1.json",
        "reinforce_plus_plus__gamma09_token_rewards.json",
        "gae__gamma099_lam095_token_rewards.json",
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_credit_batch_equals_verl(name, dtype):
    case = verl_case(name)
    inputs, config = case["inputs"], case["params"]["algorithm_config"]
    scheme = case["estimator"]
    declared = {p["name"] for s in vantage.schemes() if s["id"] == scheme for p in s["params"]}
    params = {k: config[k] for k in ("gamma", "lam") if k in declared}
    if scheme == "grpo":
        params["norm_by_std"] = config["norm_adv_by_std_in_grpo"]
    if "epsilon" in case["params"] and "epsilon" in declared:
        params["epsilon"] = case["params"]["epsilon"]
    got = vantage.credit_batch(
        np.array(inputs["token_level_rewards"], dtype=dtype),
        inputs["index"],
        scheme,
        "verl",
        mask=inputs["response_mask"],
        values=inputs.get("values"),
        **params,
    )
    want = case["outputs" if dtype == np.float32 else "outputs_float64"]["advantages"]
    assert got.dtype == dtype and got.shape == np.array(want).shape
    np.testing.assert_allclose(got, np.array(want), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", ["grpo__binary_two_groups.json", "grpo__scale_rewards_none_dr_grpo.json"])
def test_credit_batch_equals_trl(name):
    path = SHARED / "golden" / "trl" / name
    assert path.is_file(), f"{path} is missing"
    case = json.loads(path.read_text())
    config = case["params"]["config"]
    params = {"epsilon": case["params"]["epsilon"]}
    if config["scale_rewards"] in ("none", "false"):
        params["norm_by_std"] = False
    got = vantage.credit_batch(np.array(case["inputs"]["rewards"], dtype=np.float32), case["inputs"]["index"], "grpo", "trl", **params)
    np.testing.assert_allclose(got, case["outputs"]["advantages"], rtol=RTOL, atol=ATOL)


def test_credit_batch_equals_nemo_rl_prime_rl_slime_and_miles():
    golden = json.loads((ROOT / "tests" / "golden" / "trainers_2026" / "cases.json").read_text())
    compared = 0
    for case in golden["cases"]:
        prompts = [s[0] for s in case["samples"]]
        rewards = np.array([s[1] for s in case["samples"]], dtype=np.float32)
        for trainer in ("nemo_rl", "nemo_rl_no_loo", "prime_rl", "slime", "miles"):
            got = vantage.credit_batch(rewards, prompts, "grpo", trainer)
            want = np.array(case["advantages"][trainer])
            same = np.isclose(got, want, rtol=1e-5, atol=1e-5)
            # NeMo-RL's BLAS means leave rounding noise in groups of equal, non-dyadic rewards,
            # measured up to 3.1626e-4 where vantage gives 6e-8 at most (tests/it/trainers_2026.rs,
            # NEMO_RL_NOISE); everything else agrees.
            for i in np.flatnonzero(~same):
                group = rewards[[p == prompts[i] for p in prompts]]
                assert trainer == "nemo_rl" and np.all(group == rewards[i]), (case["name"], trainer, i)
                assert abs(got[i]) <= 1e-5 and abs(want[i]) <= 3.2e-4, (case["name"], trainer, i, got[i], want[i])
            compared += len(got)
    assert compared >= 400


def test_bad_input_raises_clear_exceptions(tmp_path):
    with pytest.raises(vantage.RunNotFound) as missing:
        vantage.open(tmp_path / "nope.jsonl")
    assert isinstance(missing.value, FileNotFoundError) and "nope.jsonl" in str(missing.value)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"vantage": 1}\n{"type": "trajectory", "id": "t", "steps": "not a list"}\n')
    with pytest.raises(vantage.LoadError) as failed:
        vantage.open(bad)
    assert failed.value.file == str(bad) and "bad.jsonl" in str(failed.value)
    too_new = tmp_path / "new.jsonl"
    too_new.write_text('{"vantage": 99}\n')
    with pytest.raises(vantage.LoadError) as unsupported:
        vantage.open(too_new)
    assert unsupported.value.line == 1 and unsupported.value.field
    run = vantage.open(ROOT / "sample_runs" / "math_grpo_prm.jsonl")
    with pytest.raises(vantage.SchemeError, match="no_such_scheme"):
        run.credit("no_such_scheme")
    with pytest.raises(vantage.SchemeError, match="gamma"):
        run.credit("gae", gamma="not a number")
    with pytest.raises(vantage.SchemeError, match="nope"):
        run.credit("grpo", nope=1)
    with pytest.raises(vantage.SchemeError):
        run.credit("grpo", preset="no_such_trainer")
    with pytest.raises(vantage.ShapeError):
        vantage.credit_batch([1.0, 0.0, 1.0], ["a", "a"])
    with pytest.raises(vantage.ShapeError):
        vantage.credit_batch([[1.0, 0.0]], ["a"], mask=[[1, 1, 1]])
    with pytest.raises(vantage.ShapeError):
        vantage.credit_batch(np.zeros((2, 2, 2)), ["a", "b"])
    with pytest.raises(vantage.SchemeError, match="treerl"):
        vantage.credit_batch([1.0, 0.0], ["a", "a"], "treerl")
    with pytest.raises(TypeError):
        vantage.credit_batch([1.0, 0.0], [["unhashable"], ["list"]])
    with pytest.raises(TypeError):
        vantage.compare(run.credit("grpo"), [0.0])
    other = vantage.open(ROOT / "sample_runs" / "math_grpo_prm.jsonl")
    with pytest.raises(vantage.VantageError, match="different runs"):
        vantage.compare(run.credit("grpo"), other.credit("grpo"))
    # Empty, NaN and infinite inputs give numbers or NaN, never a crash.
    assert vantage.credit_batch(np.zeros(0, dtype=np.float32), []).shape == (0,)
    out = vantage.credit_batch([np.nan, 1.0, np.inf, 0.0], ["a", "a", "b", "b"])
    assert out.shape == (4,)
    # The interpreter is still well after the errors.
    gc.collect()
    assert run.credit("grpo").to_numpy().shape == (run.steps().num_rows,)


def test_warnings_carry_file_line_and_field(tmp_path):
    log = tmp_path / "some_bad.jsonl"
    good = '{"type": "trajectory", "id": "t%d", "group": "g", "outcome": {"reward": %d}, "steps": [{"action": "a"}]}'
    log.write_text("\n".join(['{"vantage": 1}', good % (0, 1), '{"type": "trajectory", "id": 5, "steps": 3}', good % (1, 0)]) + "\n")
    run = vantage.open(log)
    assert len(run) == 2
    (warning,) = [w for w in run.warnings if w["skipped"]]
    assert warning["file"] == str(log) and warning["line"] == 3 and warning["field"]
    checked = json.loads(cli("check", "--json", str(log), check=False).stdout)["runs"][0]
    assert run.summary()["warnings"] == checked["warnings"]


def test_a_folder_of_runs_opens_each_and_convert_writes_a_dataset(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    for sample in SAMPLES[:2]:
        (folder / sample.name).write_bytes(sample.read_bytes())
    (folder / "config.json").write_text('{"lr": 1e-6}')
    with pytest.raises(vantage.LoadError, match="open_all"):
        vantage.open(folder)
    runs = vantage.open_all(folder)
    assert sorted(pathlib.Path(r.path).name for r in runs) == [s.name for s in SAMPLES[:2]]
    out = tmp_path / "dataset"
    line = vantage.convert(SAMPLES[0], out)
    assert "training-step partitions" in line and (out / "manifest.json").is_file()
    converted = vantage.open(out)
    assert converted.steps().num_rows == vantage.open(SAMPLES[0]).steps().num_rows
    # `steps` opens some training steps of it, as `--steps` does.
    first = vantage.open(out, steps=0)
    assert set(first.trajectories().column("train_step").to_pylist()) == {0}
    assert 0 < len(first) < len(converted)
    checked = json.loads(cli("check", "--json", "--steps", "0", str(out)).stdout)["runs"][0]
    assert first.summary()["summary"] == checked["summary"]
    before = SAMPLES[0].read_bytes()
    with pytest.raises(vantage.VantageError):
        vantage.convert(SAMPLES[0], SAMPLES[0])
    assert SAMPLES[0].read_bytes() == before


def test_outcomes_are_joined(tmp_path):
    log = tmp_path / "swe.jsonl"
    rows = [
        {"type": "trajectory", "id": f"{i}", "group": f"g{i}", "task": f"repo__issue-{i}", "steps": [{"action": "edit"}]}
        for i in range(2)
    ]
    log.write_text('{"vantage": 1}\n' + "\n".join(json.dumps(r) for r in rows) + "\n")
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"resolved_ids": ["repo__issue-0"], "unresolved_ids": ["repo__issue-1"]}))
    plain = vantage.open(log)
    joined = vantage.open(log, outcomes=[report])
    checked = json.loads(cli("check", "--json", "--outcomes", str(report), str(log), check=False).stdout)["runs"][0]
    assert joined.summary()["summary"] == checked["summary"]
    assert joined.trajectories().column("success").to_pylist() == [True, False]
    assert plain.trajectories().column("success").to_pylist() == [None, None]


def test_show_prints_the_command_when_there_is_no_app(capsys, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("VANTAGE_BIN", BIN)
    run = vantage.open(SAMPLES[0])
    command = vantage.show(run, "grpo", "treerl", view="compare")
    assert command.endswith(f"{run.path} --scheme-a grpo --scheme-b treerl --view compare")
    printed = capsys.readouterr().out
    assert command in printed and "#view=compare&a=grpo&b=treerl" in printed
    with pytest.raises(vantage.SchemeError, match="not a scheme"):
        vantage.show(run, "no_such_scheme")


def test_show_starts_the_app_with_the_run_and_both_schemes(tmp_path, monkeypatch):
    seen = tmp_path / "args.txt"
    program = tmp_path / "vantage"
    program.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {seen}\n')
    program.chmod(0o755)
    monkeypatch.setenv("VANTAGE_BIN", str(program))
    monkeypatch.setenv("DISPLAY", ":99")
    run = vantage.open(SAMPLES[0])
    vantage.show(run, "grpo", "treerl")
    for _ in range(100):
        if seen.exists() and seen.read_text().count("\n") >= 5:
            break
        __import__("time").sleep(0.05)
    assert seen.read_text().split("\n")[:5] == [run.path, "--scheme-a", "grpo", "--scheme-b", "treerl"]


FORENSICS = sorted((ROOT / "tests" / "fixtures" / "forensics").glob("*.jsonl"))


@pytest.mark.parametrize("path", FORENSICS, ids=lambda p: p.name)
def test_forensics_gives_the_findings_vantage_forensics_gives(path):
    """Run.forensics() and `vantage forensics --json` list the same findings (docs/FORENSICS.md)."""
    found = vantage.open(path).forensics()
    printed = json.loads(cli("forensics", "--json", "--limit", "1000", str(path)).stdout)
    assert found["findings"] == printed["findings"]
    assert found["counts"] == printed["counts"]
    kind = path.stem
    if kind == "clean":
        assert found["findings"] == []
    else:
        assert {f["kind"] for f in found["findings"]} == {kind}
        assert all(f["source"] for f in found["findings"])


def test_labels_made_in_python_and_by_the_command_line_are_one_set(tmp_path):
    import shutil

    path = tmp_path / "alfworld_roles.jsonl"
    shutil.copy(ROOT / "sample_runs" / "alfworld_roles.jsonl", path)
    run = vantage.open(path)
    written = run.label("hack", trajectory="s0-task1-r5", step=2, note="reads the answer", by="agent:notebook")
    assert written.endswith("alfworld_roles.jsonl.labels.jsonl") and ".vantage" in written
    cli("label", str(path), "--add", "severity=high", "--trajectory", "s0-task1-r0")
    run.label("confidence", 0.8, trajectory="s0-task1-r0")
    table = run.labels()
    assert table.column("name").to_pylist() == ["hack", "severity", "confidence"]
    assert table.column("step").to_pylist() == [2, None, None]
    assert table.column("source_kind").to_pylist() == ["agent", "person", "person"]
    assert table.column("value").to_pylist()[1:] == ["high", "0.8"]
    assert table.column("number").to_pylist()[0] == 1.0 and table.column("number").to_pylist()[1] is None
    listed = json.loads(cli("label", str(path), "--list", "--json").stdout)
    assert [(l["name"], l["trajectory"], l["step"]) for l in listed["labels"]] == [
        ("hack", "s0-task1-r5", 2),
        ("severity", "s0-task1-r0", None),
        ("confidence", "s0-task1-r0", None),
    ]
    assert listed["labels"][0]["note"] == "reads the answer" and listed["labels"][0]["source"]["name"] == "notebook"
    with pytest.raises(vantage.VantageError, match="past the end"):
        run.label("x", trajectory="s0-task1-r5", step=500)
    with pytest.raises(vantage.VantageError, match="no trajectory"):
        run.label("x", trajectory="no-such-rollout")
    run.unlabel("hack", trajectory="s0-task1-r5", step=2)
    assert vantage.open(path).labels().column("name").to_pylist() == ["severity", "confidence"]
    assert path.read_bytes() == (ROOT / "sample_runs" / "alfworld_roles.jsonl").read_bytes()


def test_the_comparison_split_by_label_is_the_command_lines(tmp_path):
    import shutil

    path = tmp_path / "alfworld_roles.jsonl"
    shutil.copy(ROOT / "sample_runs" / "alfworld_roles.jsonl", path)
    cli("label", str(path), "--add", "regress", "--rule", 'role == "regression"')
    cli("label", str(path), "--add", "hack=high", "--trajectory", "s0-task1-r5")
    run = vantage.open(path)
    rows = vantage.compare(run.credit("grpo"), run.credit("triage")).by_label()
    want = json.loads(cli("compare", str(path), "--a", "grpo", "--b", "triage", "--by-label", "--json").stdout)["by_label"]
    assert rows == want
    assert [(r["label"], r["word"]) for r in rows] == [("regress", None), ("hack", None), ("hack", "high"), (None, None)]


def test_labels_export_with_the_steps_table(tmp_path):
    import shutil

    path = tmp_path / "alfworld_roles.jsonl"
    shutil.copy(ROOT / "sample_runs" / "alfworld_roles.jsonl", path)
    run = vantage.open(path)
    run.label("hack", "high", trajectory="s0-task1-r5", step=2)
    run.label("loop", trajectory="s0-task1-r5")
    steps = run.steps(labels=True)
    assert "label.hack" in steps.column_names and "label.loop" in steps.column_names
    rows = [r for r in steps.to_pylist() if r["trajectory"] == "s0-task1-r5"]
    assert [r["label.hack"] for r in rows[:4]] == [None, None, "high", None]
    assert all(r["label.loop"] == "true" for r in rows)
    assert "label.hack" not in run.steps().column_names
