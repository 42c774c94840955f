#!/usr/bin/env bash
# `vantage mcp` with the reference MCP client from PyPI (tests/mcp/client.py), in a virtual
# environment under target/. Needs python3 with venv and pip, and PyPI. Without them it says
# SKIPPED and exits 0, or, with VANTAGE_MCP_REQUIRED=1 (as .ci/run sets), FAILED and exits 1.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=target/mcp-venv
if ! [ -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import mcp" 2>/dev/null; then
  if ! python3 -m venv "$venv" || ! "$venv/bin/pip" install -q "mcp>=1.9,<3"; then
    if [ -n "${VANTAGE_MCP_REQUIRED:-}" ]; then echo "FAILED: could not install the MCP client"; exit 1; fi
    echo "SKIPPED: the MCP client test (no python3 venv or no PyPI)"
    exit 0
  fi
fi
cargo build -q --bin vantage
"$venv/bin/python" tests/mcp/client.py target/debug/vantage
