// The first view of a large run through `vantage serve`, side by side with static serving of the
// same files, as `tensorboard --logdir` or `inspect view` serve them (docs/PERFORMANCE.md):
//
//     cargo build --release && (cd tests/web && npm install) && node bench/serve.mjs LOG [RUNS]
//
// LOG is a vantage JSONL log (`python3 bench/load.py gen 1GiB DIR`). First, RUNS times, a fresh
// `vantage serve DIR --convert-beside` and the page opened as soon as the run list gives the run a
// URL, while its log is still converted: the first view timed from the server's start. Then three
// ways to the same run, each opened RUNS times (default 3) in a fresh headless Chromium page, timed
// from navigation to the run's first view (the page's title names a step):
//
// 1. `vantage serve DIR --convert-beside` (target/release/vantage, its web app inside): the log is
//    converted once into a v2 dataset beside it (timed separately: the server's start); the page
//    gets the first view's pieces in one answer (`api/first/<id>`, asked for while its wasm loads),
//    shows the latest step, then reads the other latest steps' columns in byte ranges;
// 2. a static file server (Node's http, answering Range requests) serving dist/ and that same
//    converted dataset: the page opens it by URL (`?url=/run/`), as it would from any static host
//    (the latest step first too, each of its pieces a request);
// 3. a static file server serving dist/ and the log itself: the page downloads it whole and parses
//    it (`?url=/run.jsonl`), what a viewer that serves files as they are does;
// 4. the floor: the same page with no run named, which opens the sample bundled in the app (a few
//    kB): what starting the app costs, with nothing to read.
//
// It prints each time, the medians and their ratios to vantage serve's. VANTAGE_BIN and VANTAGE_DIST
// name another binary and web app (a build before a change, for a side-by-side figure).
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { launchChromium, listedWhen, startServe } from "../tests/web/browser.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const [logArg, runsArg] = process.argv.slice(2);
if (!logArg) {
  console.error("usage: node bench/serve.mjs LOG [RUNS]");
  process.exit(2);
}
const log = path.resolve(logArg);
const runs = Number(runsArg || 3);
const bin = process.env.VANTAGE_BIN || path.join(root, "target/release/vantage");
const dist = process.env.VANTAGE_DIST || path.join(root, "dist");
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const browser = await launchChromium();

// 0. The first view while the log is converted: a fresh server (no converted copy), the page
// opened as soon as the run list gives the run a URL (its first pieces converted), timed from the
// server's start; RUNS times.
const converted = path.join(path.dirname(log), ".vantage", `${path.basename(log)}.v2`);
const whileConverting = [];
for (let i = 0; i < runs && !process.env.WAYS; i++) {
  fs.rmSync(path.join(path.dirname(log), ".vantage"), { recursive: true, force: true });
  const started = Date.now();
  const { server: fresh, base: freshBase } = await startServe(spawn, bin, [path.dirname(log), "--convert-beside", "--port", "0"]);
  const listed = await listedWhen(freshBase, path.basename(log), (r) => r.url, 50);
  const opened = await firstView(`${freshBase}/#run=${listed.url}`, started);
  await listedWhen(freshBase, path.basename(log), (r) => r.status !== "converting", 100);
  const conversionDone = (Date.now() - started) / 1000;
  fresh.kill();
  whileConverting.push([opened, conversionDone]);
  console.log(`while converting: first view ${opened === null ? "-" : (opened / 1000).toFixed(2) + " s"} after the server's start (the list named it ${listed.status}); conversion done after ${conversionDone.toFixed(1)} s`);
}

// 1. vantage serve, on the log's folder.
fs.rmSync(path.join(path.dirname(log), ".vantage"), { recursive: true, force: true });
const startedServe = Date.now();
const { server, base } = await startServe(spawn, bin, [path.dirname(log), "--convert-beside", "--port", "0"]);
const entry = await listedWhen(base, path.basename(log), (r) => r.status !== "converting", 250);
const conversion = (Date.now() - startedServe) / 1000;
console.log(`vantage serve: ${entry.id} ${entry.status} after ${conversion.toFixed(1)} s (its one conversion to v2, at start)`);

// 2 and 3: a static server of dist/, the converted dataset (/run/) and the log (/run.jsonl).
const types = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm", ".json": "application/json" };
const statics = http.createServer((req, res) => {
  const url = decodeURIComponent(new URL(req.url, "http://x").pathname);
  const file = url === "/run.jsonl" ? log
    : url.startsWith("/run/") ? path.join(converted, url.slice("/run/".length))
    : path.join(dist, url === "/" ? "index.html" : url);
  if (!fs.existsSync(file) || fs.statSync(file).isDirectory()) {
    res.writeHead(404);
    res.end();
    return;
  }
  const size = fs.statSync(file).size;
  const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range || "");
  const headers = { "Content-Type": types[path.extname(file)] || "application/octet-stream", "Accept-Ranges": "bytes" };
  if (!m) {
    res.writeHead(200, { ...headers, "Content-Length": size });
    fs.createReadStream(file).pipe(res);
    return;
  }
  let start, end;
  if (m[1] === "") { start = Math.max(0, size - Number(m[2])); end = size - 1; }
  else { start = Number(m[1]); end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1); }
  res.writeHead(206, { ...headers, "Content-Length": end - start + 1, "Content-Range": `bytes ${start}-${end}/${size}` });
  fs.createReadStream(file, { start, end }).pipe(res);
});
await new Promise((resolve) => statics.listen(0, "127.0.0.1", resolve));
const staticBase = `http://127.0.0.1:${statics.address().port}`;

// Milliseconds from navigation (or from `since`) to a title naming a step (null past the time limit).
async function firstView(url, since) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const said = [];
  page.on("console", (m) => { const t = m.text(); if (!/Software rasterizer/.test(t) && /error|could not|failed|budget|memory|bytes/i.test(t)) said.push(t.slice(0, 400)); });
  page.on("crash", () => said.push("the page crashed"));
  const started = since || Date.now();
  await page.goto(url);
  const until = started + 600_000;
  let ms = null;
  while (Date.now() < until) {
    const title = await page.title();
    if (/· step \d+$/.test(title)) {
      ms = Date.now() - started;
      break;
    }
    if (page.isClosed()) {
      console.log(`  the page closed: ${said.join(" | ")}`);
      break;
    }
    // A load that failed says so and stops: no use waiting for it.
    if (said.length > 0 && Date.now() - started > 5000 && !/· step/.test(title)) {
      console.log(`  the page said: ${said.join(" | ")}`);
      break;
    }
    await page.waitForTimeout(50);
  }
  await page.close().catch(() => {});
  return ms;
}

const only = process.env.WAYS ? process.env.WAYS.split(",").map(Number) : [0, 1, 2, 3];
const ways = [
  ["vantage serve", `${base}/#run=${entry.url}`],
  ["static server, the converted v2 dataset", `${staticBase}/?url=/run/`],
  ["static server, the log itself", `${staticBase}/?url=/run.jsonl`],
  ["the floor: the app's bundled sample (no run to read)", `${staticBase}/`],
];
const results = [];
for (const [name, url] of ways.filter((_, i) => only.includes(i))) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const ms = await firstView(url);
    times.push(ms);
    console.log(`${name}: first view after ${ms === null ? "- (it did not open)" : `${(ms / 1000).toFixed(2)} s`}`);
    // A way that takes minutes is timed once.
    if (ms === null || ms > 120_000) break;
  }
  results.push([name, times]);
}
await browser.close();
server.kill();
statics.close();

const serveMedian = median(results[0][1]);
console.log(`\nlog ${(fs.statSync(log).size / 2 ** 30).toFixed(2)} GiB; conversion at the server's start ${conversion.toFixed(1)} s`);
if (whileConverting.length > 0) {
  const views = whileConverting.map(([v]) => v);
  const shown = views.every((v) => v !== null) ? `median ${(median(views) / 1000).toFixed(2)} s` : "-";
  console.log(`first view while converting, from the server's start: ${shown} (${views.map((v) => (v === null ? "-" : (v / 1000).toFixed(2))).join(", ")}); conversions done after ${whileConverting.map(([, c]) => c.toFixed(1)).join(", ")} s`);
}
for (const [name, times] of results) {
  const done = times.filter((t) => t !== null);
  const m = done.length > 0 && done.length === times.length ? median(done) : null;
  const ratio = m === null ? "did not open" : `${(m / serveMedian).toFixed(2)}× vantage serve's`;
  console.log(`${name}: median ${m === null ? "-" : (m / 1000).toFixed(2) + " s"} (${times.map((t) => (t === null ? "-" : (t / 1000).toFixed(2))).join(", ")}); ${ratio}`);
}
