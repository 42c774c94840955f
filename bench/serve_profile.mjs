// Where the first view of a served run spends its time, in headless Chromium: the page's timeline
// (its console lines, the requests it made and the steps of the app's start: the wasm compiled,
// the WebGL context made, the first animation frames, each title; each with its time from
// navigation) and a CPU
// profile of the page up to the first view (self time by function: the app's wasm functions by
// name, the browser's own work as "(program)"), beside the same for the page with no run named
// (the served page with no run named, which opens on the run list: the app's start):
//
//     VANTAGE_WEB_DIST=$PWD/dist cargo build --release && node bench/serve_profile.mjs LOG [TOP]
//
// LOG is a vantage JSONL log (`python3 bench/load.py gen 1GiB DIR --profile step-dense`); it is
// converted beside itself once (`vantage serve --convert-beside`), as bench/serve.mjs does. TOP
// functions are listed (default 30). VANTAGE_BIN names another binary.
import path from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { launchChromium, listedWhen, startServe } from "../tests/web/browser.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const [logArg, topArg] = process.argv.slice(2);
if (!logArg) {
  console.error("usage: node bench/serve_profile.mjs LOG [TOP]");
  process.exit(2);
}
const log = path.resolve(logArg);
const top = Number(topArg || 30);
const bin = process.env.VANTAGE_BIN || path.join(root, "target/release/vantage");

const browser = await launchChromium();
const { server, base } = await startServe(spawn, bin, [path.dirname(log), "--convert-beside", "--port", "0"]);
const entry = await listedWhen(base, path.basename(log), (r) => r.status !== "converting", 250);

// One page at `url`, profiled until its title names a step (`wantStep`) or it shows its first
// frame with a title of its own.
async function profiled(url, wantStep) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
  const said = [];
  const started = Date.now();
  page.on("console", (m) => said.push([Date.now() - started, m.text().replace(/\s+/g, " ").slice(0, 140)]));
  // The app's start, as the page sees it: wrapped before any of the page's scripts run.
  await page.addInitScript(() => {
    const marks = (window.__vantageStart = []);
    const mark = (what) => marks.push([Math.round(performance.now()), what]);
    const streaming = WebAssembly.instantiateStreaming;
    WebAssembly.instantiateStreaming = async (...args) => {
      mark("wasm: compiling as it arrives");
      const made = await streaming(...args);
      mark("wasm: compiled and instantiated");
      return made;
    };
    const getContext = HTMLCanvasElement.prototype.getContext;
    HTMLCanvasElement.prototype.getContext = function (...args) {
      const made = getContext.apply(this, args);
      mark(`canvas: ${args[0]} context ${made ? "made" : "refused"}`);
      return made;
    };
    const frame = window.requestAnimationFrame;
    let frames = 0;
    window.requestAnimationFrame = (callback) => frame((t) => {
      if (frames++ < 3) mark(`animation frame ${frames}`);
      callback(t);
    });
    let title = null;
    new MutationObserver(() => {
      if (document.title !== title) mark(`title: ${(title = document.title)}`);
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  await page.goto(url);
  let shown = null;
  while (Date.now() - started < 60_000) {
    const title = await page.title();
    if (wantStep ? /· step \d+$/.test(title) : /^vantage — /.test(title)) {
      shown = Date.now() - started;
      break;
    }
    await page.waitForTimeout(10);
  }
  const { profile } = await cdp.send("Profiler.stop");
  const requests = await page.evaluate(() =>
    performance.getEntriesByType("resource").map((e) => [e.name, Math.round(e.startTime), Math.round(e.responseEnd), e.transferSize]));
  const steps = await page.evaluate(() => window.__vantageStart || []);
  await page.close();
  console.log(`\n${url}\nfirst view after ${shown === null ? "- (not shown in 60 s)" : `${shown} ms`} (profiled: slower than unprofiled)`);
  console.log("requests (from navigation: asked, answered, bytes):");
  const ranged = requests.filter(([name]) => /\.parquet$/.test(name));
  requests.filter(([name]) => !/\.parquet$/.test(name)).forEach(([name, at, end, bytes]) =>
    console.log(`  ${String(at).padStart(6)} ${String(end).padStart(6)} ms ${String(bytes).padStart(9)} B  ${name.replace(base, "")}`));
  if (ranged.length > 0) {
    const first = Math.min(...ranged.map((r) => r[1]));
    const last = Math.max(...ranged.map((r) => r[2]));
    console.log(`  ${String(first).padStart(6)} ${String(last).padStart(6)} ms  ${ranged.length} Parquet pieces read by range`);
  }
  console.log("the app's start (from navigation):");
  steps.forEach(([at, what]) => console.log(`  ${String(at).padStart(6)} ms  ${what}`));
  console.log("the page's console:");
  said.forEach(([at, text]) => console.log(`  ${String(at).padStart(6)} ms  ${text}`));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  profile.samples.forEach((id, i) => {
    const frame = nodes.get(id).callFrame;
    const name = `${frame.functionName || "(anonymous)"}${frame.url ? ` [${frame.url.split("/").pop()}]` : ""}`;
    self.set(name, (self.get(name) || 0) + (profile.timeDeltas[i] || 0));
  });
  console.log(`self time, top ${top}:`);
  [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).forEach(([name, us]) =>
    console.log(`  ${(us / 1000).toFixed(1).padStart(7)} ms  ${name.replace(/::h[0-9a-f]{16}/, "").slice(0, 140)}`));
}

await profiled(`${base}/#run=${entry.url}`, true);
await profiled(`${base}/`, false);
await browser.close();
server.kill();
