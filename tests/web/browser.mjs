// What the browser tests and benchmarks share: headless Chromium as this machine runs it, `vantage
// serve` started and its run list waited on, and a count of a screenshot's colours (a blank canvas
// has few).
import { chromium } from "playwright-core";
import { PNG } from "pngjs";

/// Debian's Chromium (or $CHROMIUM), headless, drawing WebGL2 with SwiftShader; the background
/// networking flags keep it from trying hosts a closed network refuses.
/// `extra` adds flags (`--disable-3d-apis`: a browser without WebGL, as some locked-down machines are).
export function launchChromium(extra = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox", "--use-gl=angle", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
      "--disable-background-networking", "--disable-component-update", "--disable-default-apps",
      "--disable-sync", "--no-first-run", ...extra,
    ],
  });
}

/// How many distinct colours a PNG screenshot has (every 7th pixel).
export function distinctColours(png) {
  const image = PNG.sync.read(png);
  const seen = new Set();
  for (let i = 0; i < image.data.length; i += 4 * 7) {
    seen.add((image.data[i] << 16) | (image.data[i + 1] << 8) | image.data[i + 2]);
  }
  return seen.size;
}

/// Starts `vantage serve ARGS…` (`bin`, with `--port 0` among ARGS) and waits for the address it
/// prints; its stderr (the request log) goes to `onLog` line by line when given.
export async function startServe(spawn, bin, args, onLog) {
  const server = spawn(bin, ["serve", ...args], { stdio: ["ignore", "pipe", onLog ? "pipe" : "ignore"] });
  if (onLog) {
    // A chunk of the pipe can end inside a line: the rest of it waits for the next chunk.
    let partial = "";
    server.stderr.on("data", (d) => {
      const lines = (partial + d.toString()).split("\n");
      partial = lines.pop();
      lines.filter(Boolean).forEach(onLog);
    });
  }
  const base = await new Promise((resolve, reject) => {
    let out = "";
    server.stdout.on("data", (d) => {
      out += d.toString();
      const m = /open (http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
      if (m) resolve(m[1]);
    });
    server.on("exit", (code) => reject(new Error(`vantage serve exited (${code}): ${out}`)));
  });
  return { server, base };
}

/// The entry of the run list of the server at `base` whose id ends with `name`, once `ready` says
/// so of it (the list asked for every `everyMs`).
export async function listedWhen(base, name, ready, everyMs) {
  for (;;) {
    const list = await (await fetch(base + "/api/runs")).json();
    const entry = list.runs.find((r) => r.id.endsWith(name));
    if (entry && ready(entry)) return entry;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
