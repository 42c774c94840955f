"""`vantage mcp` driven by the reference MCP client (the `mcp` package from PyPI), end to end over
stdio: list the tools, open a sample run, compare two schemes, read the step they disagree on most,
get the run-health alarms, and an unknown scheme as a tool error. Run by tests/mcp/run.sh."""
import asyncio
import json
import sys

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
            assert tools == ["check", "compare", "health", "open_app"], tools

            run = "sample_runs/alfworld_roles.jsonl"
            check = payload(await session.call_tool("check", {"path": run}))
            summary = check["runs"][0]["summary"]
            assert summary["trajectories"] == 96 and "triage" in check["runs"][0]["schemes"]["supported"], check

            compare = payload(await session.call_tool("compare", {"path": run, "a": "grpo", "b": "triage", "limit": 3}))
            assert compare["paired"] == 1153 and len(compare["rows"]) == 3, compare
            top = compare["rows"][0]
            assert top["text"] and top["trajectory"].startswith("s"), top
            print(f"compare: rho {compare['spearman']:.4f}; most different: {top['trajectory']} step {top['step'] + 1}: {top['text']}")

            health = payload(await session.call_tool("health", {"path": "sample_runs/tree_rollouts.jsonl"}))
            names = [a["name"] for a in health["runs"][0]["alarms"]]
            assert names == ["truncated"], health
            quiet = payload(await session.call_tool("health", {"path": "sample_runs/tree_rollouts.jsonl", "thresholds": {"truncated": 0.5}}))
            assert quiet["runs"][0]["alarms"] == [], quiet

            bad = await session.call_tool("compare", {"path": run, "a": "grpo", "b": "no_such_scheme"})
            assert attr(bad, "is_error", "isError") and "no_such_scheme" in payload(bad)["error"], bad
            huge = await session.call_tool("compare", {"path": run, "a": "grpo", "b": "triage", "limit": 10**9})
            assert attr(huge, "is_error", "isError"), huge
            missing = await session.call_tool("check", {"path": "no/such/run.jsonl"})
            assert "error" in json.dumps(payload(missing)), missing
    print("mcp client test passed")


asyncio.run(main(sys.argv[1]))
