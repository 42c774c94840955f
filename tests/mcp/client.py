"""`vantage mcp` driven by the reference MCP client (the `mcp` package from PyPI), end to end over
stdio: list the tools, open a sample run, compare two schemes, read the step they disagree on most
with every scheme's credit and terms, align its rollout with one of the other outcome, read the
signal budget and the prompts learned between training steps, get the run-health alarms and the
baseline forensics, label a step and split the comparison by it, and bad arguments as tool errors. Run by tests/mcp/run.sh."""
import asyncio
import json
import shutil
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def attr(obj, snake, camel):
    """An attribute by its 2.x (snake_case) or 1.x (camelCase) name."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def payload(result):
    """The tool's JSON (its text content)."""
    assert result.content and result.content[0].type == "text", result
    return json.loads(result.content[0].text)


async def main(vantage):
    server = StdioServerParameters(command=vantage, args=["mcp"])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            info = await session.initialize()
            assert attr(info, "server_info", "serverInfo").name == "vantage", info
            tools = sorted(t.name for t in (await session.list_tools()).tools)
            assert tools == ["budget", "check", "compare", "diff", "forensics", "graph", "health", "label", "open_app", "runs", "step"], tools

            run = "sample_runs/alfworld_roles.jsonl"
            check = payload(await session.call_tool("check", {"path": run}))
            summary = check["runs"][0]["summary"]
            assert summary["trajectories"] == 96 and "triage" in check["runs"][0]["schemes"]["supported"], check

            compare = payload(await session.call_tool("compare", {"path": run, "a": "grpo", "b": "triage", "limit": 3}))
            assert compare["paired"] == 1153 and len(compare["rows"]) == 3, compare
            top = compare["rows"][0]
            assert top["text"] and top["trajectory"].startswith("s"), top
            print(f"compare: rho {compare['spearman']:.4f}; most different: {top['trajectory']} step {top['step'] + 1}: {top['text']}")

            # The step they disagree on most, under both schemes, with the terms behind each number.
            step = payload(await session.call_tool("step", {"path": run, "trajectory": top["trajectory"], "step": top["step"]}))
            by_scheme = {c["scheme"]: c for c in step["credit"]}
            assert abs(by_scheme["grpo"]["value"] - top["a"]) < 1e-6 and abs(by_scheme["triage"]["value"] - top["b"]) < 1e-6, step
            assert {t["name"] for t in by_scheme["grpo"]["terms"]} >= {"r", "mean", "std"}, by_scheme["grpo"]
            assert any(t["name"].startswith("c(") for t in by_scheme["triage"]["terms"]), by_scheme["triage"]
            assert top["text"] in (step["texts"]["action"]["text"], step["texts"]["thought"]["text"]), step
            terms = ", ".join(f"{t['name']} = {t['value']}" for t in by_scheme["triage"]["terms"])
            print(f"step: TRIAGE {by_scheme['triage']['value']:.4f} = {by_scheme['triage']['formula']} with {terms}")
            two = payload(await session.call_tool("step", {"path": run, "trajectory": top["trajectory"], "step": top["step"], "schemes": ["grpo@verl"]}))
            assert [c["scheme"] for c in two["credit"]] == ["grpo@verl"], two

            # Its rollout against one of the other outcome, step by step.
            diff = payload(await session.call_tool("diff", {"path": run, "left": top["trajectory"], "a": "grpo", "b": "triage"}))
            assert diff["left"]["success"] != diff["right"]["success"] and diff["rows_total"] >= diff["matched"] > 0, diff
            print(f"diff: {diff['left']['trajectory']} and {diff['right']['trajectory']} part at row {diff['divergence']['row'] + 1}")

            # The group's behaviour graph: its states, loops and forks, coloured by both schemes.
            group = diff["left"]["trajectory"].rsplit("-r", 1)[0]
            graph = payload(await session.call_tool("graph", {"path": run, "group": group, "a": "grpo", "b": "triage"}))
            assert graph["merge"] == "state" and graph["forks"] > 0 and graph["nodes"][0]["key"] == "start", graph
            print(f"graph: {graph['nodes_total']} states, {graph['cycles']} loops, {graph['forks']} forks in group {group}")

            budget = payload(await session.call_tool("budget", {"path": run, "a": "grpo", "b": "triage"}))
            assert [s["train_step"] for s in budget["steps"]] == [0, 1], budget
            assert budget["steps"][1]["zero_variance_rollouts"] > 0 and budget["steps"][0]["a"]["uncredited"] == 0, budget
            runs = payload(await session.call_tool("runs", {"path": run, "change": ["unclear"]}))
            assert runs["changes"]["still_solved"] == 6 and runs["rows_total"] == 2, runs
            assert all(r["change"] == "unclear" for r in runs["rows"]), runs

            health = payload(await session.call_tool("health", {"path": "sample_runs/tree_rollouts.jsonl"}))
            names = [a["name"] for a in health["runs"][0]["alarms"]]
            assert names == ["truncated"], health
            quiet = payload(await session.call_tool("health", {"path": "sample_runs/tree_rollouts.jsonl", "thresholds": {"truncated": 0.5}}))
            assert quiet["runs"][0]["alarms"] == [], quiet

            # Baseline forensics: the failed rollouts of the fixture, and none on a sample run.
            found = payload(await session.call_tool("forensics", {"path": "tests/fixtures/forensics/failed_rollout.jsonl"}))
            assert [f["kind"] for f in found["findings"]] == ["failed_rollout"], found
            assert found["findings"][0]["trajectories"] == ["s1-p9-r6", "s1-p9-r7"] and found["findings"][0]["trainer_included"], found
            clean = payload(await session.call_tool("forensics", {"path": run}))
            assert clean["findings"] == [] and clean["findings_total"] == 0, clean

            # Labels: the agent labels the step it found on a copy of the run, and the comparison
            # splits by it (docs/LABELS.md).
            with tempfile.TemporaryDirectory() as scratch:
                copy = shutil.copy(run, scratch)
                added = payload(await session.call_tool("label", {"path": copy, "add": "suspicious", "trajectory": top["trajectory"], "step": top["step"], "note": "A and B differ most here"}))
                assert added["added"] == 1 and added["labels"][0]["source"]["kind"] == "agent", added
                split = payload(await session.call_tool("compare", {"path": copy, "a": "grpo", "b": "triage", "by_label": True, "limit": 1}))
                rows = {r["label"]: r for r in split["by_label"]}
                assert rows["suspicious"]["steps"] == 1 and abs(rows["suspicious"]["a"]["mean"] - top["a"]) < 1e-6, split["by_label"]
                print(f"label: {added['labels'][0]['source']['name']} labelled {top['trajectory']} step {top['step']}; by label: {len(rows)} rows")
                refused = await session.call_tool("label", {"path": copy, "add": "x", "trajectory": top["trajectory"], "step": 10**6})
                assert attr(refused, "is_error", "isError") and "past the end" in payload(refused)["error"], refused

            bad = await session.call_tool("compare", {"path": run, "a": "grpo", "b": "no_such_scheme"})
            assert attr(bad, "is_error", "isError") and "no_such_scheme" in payload(bad)["error"], bad
            huge = await session.call_tool("compare", {"path": run, "a": "grpo", "b": "triage", "limit": 10**9})
            assert attr(huge, "is_error", "isError"), huge
            for name, args in [
                ("step", {"path": run, "trajectory": "no-such-rollout", "step": 0}),
                ("step", {"path": run, "trajectory": top["trajectory"], "step": 10**6}),
                ("diff", {"path": run, "left": top["trajectory"], "by": "vibes"}),
                ("runs", {"path": run, "change": ["improved"]}),
                ("budget", {"path": run, "a": "grpo", "colour": "red"}),
                ("forensics", {"path": run, "spike_bound": -1}),
            ]:
                refused = await session.call_tool(name, args)
                assert attr(refused, "is_error", "isError") and payload(refused)["error"], (name, args, refused)
            missing = await session.call_tool("check", {"path": "no/such/run.jsonl"})
            assert "error" in json.dumps(payload(missing)), missing
    print("mcp client test passed")


asyncio.run(main(sys.argv[1]))
