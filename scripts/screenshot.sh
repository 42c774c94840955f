#!/usr/bin/env bash
# Runs the real app under Xvfb with software rendering (wgpu on lavapipe) and saves a PNG per
# sample run in screenshots/ (or $OUT). Needs: xvfb imagemagick mesa-vulkan-drivers libvulkan1
# libxkbcommon-x11-0 (apt-get install -y ...). Usage: scripts/screenshot.sh [SAMPLE.jsonl ...]
# With no argument: the bundled sample plus every file in sample_runs/. PROFILE=debug skips the release build.
# VIEWS="group compare overview tokens summary" saves one PNG per view (default: group); EXTRA holds
# more app arguments (e.g. "--scheme-b treeps_rag --meeting"); SIZE=1280x720 sets the screen and
# window size (default 1280x800).
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${PROFILE:-release}"
if [ "$profile" = release ]; then cargo build --release --quiet; else cargo build --quiet; fi
bin="target/$profile/vantage"
out="${OUT:-screenshots}"
mkdir -p "$out"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/xdg-vantage}"
mkdir -m700 -p "$XDG_RUNTIME_DIR"
display=":$((90 + RANDOM % 9))"
size="${SIZE:-1280x800}"
Xvfb "$display" -screen 0 "${size}x24" -nolisten tcp >/dev/null 2>&1 &
xvfb_pid=$!
trap 'kill $xvfb_pid 2>/dev/null || true' EXIT
sleep 1
files=("$@")
if [ ${#files[@]} -eq 0 ]; then files=("" sample_runs/*.jsonl); fi
for file in "${files[@]}"; do
  for view in ${VIEWS:-group}; do
    name=$(basename "${file:-demo_run.jsonl}" .jsonl)
    [ "$view" = group ] || name="$name-$view"
    # shellcheck disable=SC2086
    DISPLAY="$display" WGPU_BACKEND="${WGPU_BACKEND:-vulkan}" "$bin" --view "$view" --window-size "$size" ${EXTRA:-} $file >"$out/$name.log" 2>&1 &
    app_pid=$!
    sleep "${WAIT_SECS:-6}"
    DISPLAY="$display" import -window root "$out/$name.png"
    kill "$app_pid" 2>/dev/null || true
    wait "$app_pid" 2>/dev/null || true
    echo "saved $out/$name.png"
  done
done
