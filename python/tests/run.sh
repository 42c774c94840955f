#!/usr/bin/env bash
# The Python package as a user installs it: `pip install .` of this checkout into a fresh virtual
# environment under target/ (the native module built with the dev profile, into the target folder
# `cargo test` already filled, so only this package's own code is compiled), then the pytest suite
# against the `vantage` program of the same checkout. Needs python3 with venv and pip, and PyPI.
# Without them it says SKIPPED and exits 0, or, with VANTAGE_PYTHON_REQUIRED=1 (as .ci/run sets),
# FAILED and exits 1.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="$PWD/target/python-venv"
rm -rf "$venv"
fail() {
  if [ -n "${VANTAGE_PYTHON_REQUIRED:-}" ]; then echo "FAILED: $1"; exit 1; fi
  echo "SKIPPED: the Python package test ($1)"
  exit 0
}
python3 -m venv "$venv" || fail "no python3 venv"
"$venv/bin/pip" install -q "pytest>=7" || fail "could not install pytest"
cargo build -q --bin vantage
# `pip install .` as the README says; the dev profile keeps CI from compiling the core for release.
MATURIN_PEP517_ARGS="--profile dev" CARGO_TARGET_DIR="$PWD/target" "$venv/bin/pip" install -q . || fail "pip install . failed"
# Run from outside the checkout: the installed package, not python/vantage, is what is imported.
cd target
VANTAGE_BIN="$PWD/debug/vantage" "$venv/bin/python" -m pytest -q -p no:cacheprovider ../python/tests
