#!/usr/bin/env bash
# Builds the web app with Trunk and drives it in headless Chromium (tests/web/test.mjs), then
# `vantage serve` with that app inside it (tests/web/serve.mjs).
# Needs: trunk (cargo install --locked trunk@0.21.14), the wasm32 target, Node.js with npm, and
# Chromium at /usr/bin/chromium (apt-get install chromium). Without them it says SKIPPED and exits 0,
# or, with VANTAGE_WEB_REQUIRED=1 (as .ci/run sets), FAILED and exits 1.
set -euo pipefail
cd "$(dirname "$0")/../.."
missing=()
command -v trunk >/dev/null || missing+=("trunk")
command -v node >/dev/null || missing+=("node")
command -v npm >/dev/null || missing+=("npm")
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || missing+=("chromium")
if [ ${#missing[@]} -gt 0 ] && [ -n "${VANTAGE_WEB_REQUIRED:-}" ]; then
  echo "FAILED: web browser test cannot run (missing: ${missing[*]}; see README, 'Web build')"
  exit 1
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "SKIPPED: web browser test (missing: ${missing[*]}; see README, 'Web build')"
  exit 0
fi
trunk build --release
# The binary with that web app inside it, for `vantage serve` (build.rs embeds dist/: the web app
# is compiled once, by trunk).
VANTAGE_WEB_DIST="$PWD/dist" cargo build -q --bin vantage
# The vantage Parquet v2 dataset the test opens by URL and as a picked folder.
mkdir -p target/web-v2
node tests/web/v2_log.mjs target/web-v2/log.jsonl
rm -rf target/web-v2/run
target/debug/vantage convert target/web-v2/log.jsonl target/web-v2/run/
(cd tests/web && npm install --no-audit --no-fund --silent)
node tests/web/test.mjs
# `vantage serve` in the browser: the run list, a run opened from it, a deep link, a followed log.
node tests/web/serve.mjs
