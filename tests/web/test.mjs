// The web build in headless Chromium: serves dist/ (the Trunk output) and sample_runs/ on
// 127.0.0.1, opens the app with its bundled sample and with a URL plus a deep link, waits for the
// first frames, saves screenshots in tests/web/screenshots/, and checks that the canvas is drawn
// (many distinct colours) and that the deep-linked step is the selected one (the app names the
// selected step in the page title). It also fetches an Inspect `.eval` it writes itself (a ZIP with
// a header, summaries and samples) through `?url=` with a deep link to a step that only the read
// sample has: the app opens it from its summaries, reads the linked sample first and selects the
// step. It opens a vantage Parquet v2 dataset (target/web-v2/run, which run.sh converts) by URL,
// from a server that answers Range requests and from one that does not, and as a folder picked
// with the browser's directory picker: the run opens at a deep-linked step, every Parquet file is
// read in ranges (texts left unread), and the texts of the selected step are fetched once shown.
// Run by tests/web/run.sh, which builds dist/ and the dataset first.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { distinctColours, launchChromium } from "./browser.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const dist = path.join(root, "dist");
const shots = path.join(here, "screenshots");

const types = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm", ".jsonl": "text/plain" };
// A ZIP of stored entries (what the app's reader takes besides deflate and zstd).
function crc32(buf) {
  let c, crc = 0xffffffff;
  for (const b of buf) {
    c = (crc ^ b) & 0xff;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
    crc = (crc >>> 8) ^ c;
  }
  return (crc ^ 0xffffffff) >>> 0;
}
function zip(entries) {
  const locals = [], centrals = [];
  let offset = 0;
  for (const [name, text] of entries) {
    const data = Buffer.from(text), n = Buffer.from(name), crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4); local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18); local.writeUInt32LE(data.length, 22); local.writeUInt16LE(n.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0); central.writeUInt16LE(20, 4); central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16); central.writeUInt32LE(data.length, 20); central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(n.length, 28); central.writeUInt32LE(offset, 42);
    locals.push(local, n, data);
    centrals.push(central, n);
    offset += 30 + n.length + data.length;
  }
  const dir = Buffer.concat(centrals), end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0); end.writeUInt16LE(entries.length, 8); end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12); end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}
function inspectSample(id, epoch, value) {
  const model = (message, stop) => ({ event: "model", output: { choices: [{ message, stop_reason: stop }] } });
  return JSON.stringify({
    id, epoch, input: `What is ${id} * 7?`, target: String(id * 7),
    events: [
      model({ role: "assistant", content: "", tool_calls: [{ id: "c1", function: "calc", arguments: { expr: `${id}*7` } }] }, "tool_calls"),
      { event: "tool", function: "calc", result: String(id * 7) },
      model({ role: "assistant", content: `The answer is ${id * 7}` }, "stop"),
    ],
    scores: { match: { value } },
  });
}
const samples = [[1, 1, "C"], [1, 2, "I"], [2, 1, "C"], [2, 2, "C"], [3, 1, "I"]];
const lazyEval = zip([
  ["header.json", JSON.stringify({ version: 2, status: "success", eval: { task: "arith", model: "m" }, results: { scores: [{ name: "match" }] } })],
  ["summaries.json", JSON.stringify(samples.map(([id, epoch, value]) => ({ id, epoch, scores: { match: { value } }, message_count: 4 })))],
  ...samples.map(([id, epoch, value]) => [`samples/${id}_epoch_${epoch}.json`, inspectSample(id, epoch, value)]),
]);

// A large verl rollout dump (JSON lines), to watch the page stay responsive while it loads.
const bigLines = [];
for (let i = 0; i < 120000; i++) {
  const q = Math.floor(i / 8) % 5000;
  bigLines.push(JSON.stringify({
    input: `user\nWhat is ${q} + ${q}? Think step by step and answer in the tags.`,
    output: `<think>Adding ${q} to itself gives ${2 * q + (i % 3 === 0 ? 1 : 0)}.</think> <answer>${2 * q + (i % 3 === 0 ? 1 : 0)}</answer>`,
    gts: String(2 * q), score: i % 3 === 0 ? 0 : 1, step: 1 + Math.floor(i / 40000),
  }));
}
const bigDump = Buffer.from(bigLines.join("\n") + "\n");

// A log that grows while the page follows it (`?url=…&follow=1`), served with Range requests.
const growingLine = (step, r) => JSON.stringify({
  type: "trajectory", id: `s${step}/r${r}`, group: `s${step}/g${r >> 3}`, train_step: step,
  outcome: { reward: r % 2 }, steps: [{ kind: "think", thought: `step ${step}\nrollout ${r}` }, { action: `answer ${r}` }],
}) + "\n";
let growing = Buffer.from('{"vantage": 1, "name": "growing"}\n' + Array.from({ length: 16 }, (_, r) => growingLine(0, r)).join(""));

// The v2 dataset: under /v2/ with Range requests answered, under /v2whole/ without.
const v2root = path.join(root, "target/web-v2/run");
const v2requests = [];
function serveDataset(req, res, rel, ranges) {
  const file = path.join(v2root, rel);
  if (!file.startsWith(v2root) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
    v2requests.push({ at: Date.now(), rel, ranges, range: req.headers.range || null, status: 404, bytes: 0, size: 0 });
    res.writeHead(404);
    res.end("not found");
    return;
  }
  const body = fs.readFileSync(file);
  const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range || "");
  if (!ranges || !m) {
    v2requests.push({ at: Date.now(), rel, ranges, range: req.headers.range || null, status: 200, bytes: body.length, size: body.length });
    res.writeHead(200, { "Content-Length": body.length, "Accept-Ranges": ranges ? "bytes" : "none" });
    res.end(body);
    return;
  }
  let start, end;
  if (m[1] === "") { start = Math.max(0, body.length - Number(m[2])); end = body.length - 1; }
  else { start = Number(m[1]); end = m[2] === "" ? body.length - 1 : Math.min(Number(m[2]), body.length - 1); }
  v2requests.push({ at: Date.now(), rel, ranges, range: req.headers.range, status: 206, bytes: end - start + 1, size: body.length });
  res.writeHead(206, { "Content-Length": end - start + 1, "Content-Range": `bytes ${start}-${end}/${body.length}` });
  res.end(body.subarray(start, end + 1));
}

// Under /v2busy/: the same dataset from a server that is still making it, as `vantage serve` is
// while it converts a run: its first two answers to the manifest are 503 with Retry-After.
let busyAnswers = 0;
const server = http.createServer((req, res) => {
  const url = decodeURIComponent(new URL(req.url, "http://x").pathname);
  if (url.startsWith("/v2busy/run/")) {
    const rel = url.slice("/v2busy/run/".length);
    if (rel === "manifest.json" && busyAnswers < 2) {
      busyAnswers++;
      v2requests.push({ at: Date.now(), rel, ranges: true, range: null, status: 503, bytes: 0, size: 0, busy: true });
      res.writeHead(503, { "Retry-After": "1" });
      res.end("this run is being converted");
      return;
    }
    serveDataset(req, res, rel, true);
    return;
  }
  if (url.startsWith("/v2/run/") || url.startsWith("/v2whole/run/")) {
    const ranges = url.startsWith("/v2/");
    serveDataset(req, res, url.slice(ranges ? "/v2/run/".length : "/v2whole/run/".length), ranges);
    return;
  }
  if (url === "/test/growing.jsonl") {
    const range = /bytes=(\d+)-/.exec(req.headers.range || "");
    if (!range) {
      res.writeHead(200, { "Content-Type": "text/plain", "Content-Length": growing.length });
      res.end(growing);
    } else if (Number(range[1]) >= growing.length) {
      res.writeHead(416, { "Content-Range": `bytes */${growing.length}` });
      res.end();
    } else {
      const from = Number(range[1]);
      res.writeHead(206, {
        "Content-Type": "text/plain", "Content-Length": growing.length - from,
        "Content-Range": `bytes ${from}-${growing.length - 1}/${growing.length}`,
      });
      res.end(growing.subarray(from));
    }
    return;
  }
  if (url === "/test/1.jsonl") {
    res.writeHead(200, { "Content-Type": "text/plain", "Content-Length": bigDump.length });
    res.end(bigDump);
    return;
  }
  if (url === "/test/arith.eval") {
    res.writeHead(200, { "Content-Type": "application/zip", "Content-Length": lazyEval.length });
    res.end(lazyEval);
    return;
  }
  const served = url.startsWith("/sample_runs/") || url.startsWith("/tests/fixtures/trainers/");
  const file = served ? path.join(root, url) : path.join(dist, url === "/" ? "index.html" : url);
  if (!file.startsWith(root) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
    res.writeHead(404);
    res.end("not found");
    return;
  }
  res.writeHead(200, { "Content-Type": types[path.extname(file)] || "application/octet-stream" });
  fs.createReadStream(file).pipe(res);
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const base = `http://127.0.0.1:${server.address().port}`;


const browser = await launchChromium();
fs.mkdirSync(shots, { recursive: true });
let failures = 0;
async function visit(name, url, titlePrefix) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  let slices = 0;
  const workerCredit = [];
  page.on("console", (m) => {
    if (m.type() === "error") console.log(`  [${name}] console: ${m.text()}`);
    const computed = /credit (\S+) computed in the worker in (\d+) ms( \(failed\))?/.exec(m.text());
    if (computed) workerCredit.push(`${computed[1]} ${computed[2]} ms${computed[3] || ""}`);
    const read = /read in (\d+) slice/.exec(m.text());
    if (read) slices = Math.max(slices, Number(read[1]));
  });
  // Every task over 50 ms that blocks the page (the browser's Long Tasks API).
  await page.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push(Math.round(e.duration));
    }).observe({ type: "longtask", buffered: true });
  });
  const started = Date.now();
  await page.goto(base + url);
  try {
    await page.waitForFunction((p) => document.title.startsWith(p), titlePrefix, { timeout: 120000 });
  } catch (e) {
    console.log(`FAIL ${name}: title never became "${titlePrefix}…" (it is "${await page.title()}")`);
    failures++;
  }
  const ready = Date.now() - started;
  const longTasks = await page.evaluate(() => window.__longTasks);
  console.log(`${name}: ready after ${ready} ms; long tasks (ms): ${JSON.stringify(longTasks.slice().sort((a, b) => b - a).slice(0, 12))}`);
  await page.waitForTimeout(3000);
  const png = await page.screenshot({ path: path.join(shots, `${name}.png`) });
  const colours = distinctColours(png);
  const title = await page.title();
  console.log(`${name}: title "${title}", ${colours} distinct colours`);
  if (colours < 50) {
    console.log(`FAIL ${name}: the canvas looks blank (${colours} colours)`);
    failures++;
  }
  await page.close();
  return { title, slices, workerCredit };
}

await visit("bundled_sample", "/", "vantage — ");
await visit(
  "deep_link",
  "/?url=/sample_runs/tree_rollouts.jsonl#traj=tree-s0-p0/n9&step=3&a=grpo&b=treeps_rag",
  "vantage — tree-s0-p0/n9 · step 3",
);
// The Group view's behaviour graph in a deep link (`view=graph`): drawn on the web build too.
await visit(
  "graph_view",
  "/?url=/sample_runs/alfworld_roles.jsonl#view=graph&group=s0-task1&traj=s0-task1-r5&a=grpo&b=triage",
  "vantage — s0-task1-r5",
);
// The page keeps drawing while a large log loads: the load runs in slices of the event loop.
const big = await visit("big_dump", `/?url=/test/1.jsonl`, "vantage — ");
console.log(`big_dump: read in ${big.slices} slices; credit in the worker: ${big.workerCredit.join(", ")}`);
// Its credit is computed off the page's thread, in the credit worker.
if (big.workerCredit.length < 2) {
  console.log(`FAIL big_dump: schemes A and B should be computed in the credit worker (${big.workerCredit.length} were)`);
  failures++;
}
if (big.slices < 10) {
  console.log(`FAIL big_dump: the load ran in ${big.slices} slice(s) of the event loop; it should yield to the page`);
  failures++;
}
// A credit formula in a deep link, computed in the worker like a built-in scheme.
{
  const formula = encodeURIComponent("$w = 0.5\nlet A = (R - mean(R, group)) / (std(R, group) + 1e-6)\nA * $w");
  const opened = await visit("formula_worker", `/?url=/test/1.jsonl#a=custom&a.formula=${formula}&b=grpo`, "vantage — ");
  console.log(`formula_worker: credit in the worker: ${opened.workerCredit.join(", ")}`);
  if (!opened.workerCredit.some((c) => c.startsWith("custom ") && !c.endsWith("(failed)"))) {
    console.log("FAIL formula_worker: the formula of the link should be computed in the credit worker");
    failures++;
  }
}
await visit("inspect_eval", "/?url=/test/arith.eval#traj=1/epoch2&step=2", "vantage — 1/epoch2 · step 2");
// The 2026 trainers' formats on the web: a verifiers episode stream (a branch of a trace's tree,
// the trainer's advantages against prime-rl's preset) and a slime rollout dump (a torch .pt).
await visit(
  "verifiers_episodes",
  "/?url=/tests/fixtures/trainers/verifiers/episodes.jsonl#traj=e-1/t-a/branch-1&step=2&a=logged&b=grpo&b.preset=prime_rl",
  "vantage — e-1/t-a/branch-1 · step 2",
);
await visit("slime_rollout", "/?url=/tests/fixtures/trainers/slime/dump/rollout_data/3.pt#traj=rollout-3/sample-2&step=1", "vantage — rollout-3/sample-2 · step 1");

// Following a URL: the page asks for the bytes past what it has every second (Range
// requests); the records appended meanwhile, one written in two pieces, arrive once each.
{
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const followed = [];
  page.on("console", (m) => {
    const grown = /followed: (\d+) trajectories/.exec(m.text());
    if (grown) followed.push(Number(grown[1]));
  });
  await page.goto(base + "/?url=/test/growing.jsonl&follow=1#traj=s0/r3&step=2");
  await page.waitForFunction(() => document.title.startsWith("vantage — s0/r3"), null, { timeout: 120000 });
  const more = Array.from({ length: 16 }, (_, r) => growingLine(1, r)).join("");
  const half = more.length / 2 + 7;
  growing = Buffer.concat([growing, Buffer.from(more.slice(0, half))]);
  await page.waitForTimeout(2500);
  growing = Buffer.concat([growing, Buffer.from(more.slice(half))]);
  const appended = Date.now();
  while (!followed.includes(32) && Date.now() - appended < 15000) await page.waitForTimeout(200);
  const latency = Date.now() - appended;
  await page.screenshot({ path: path.join(shots, "followed_url.png") });
  console.log(`followed_url: trajectories as they arrived ${JSON.stringify(followed)}; the last records after ${latency} ms`);
  if (!followed.includes(32) || followed.some((n) => n > 32)) {
    console.log("FAIL followed_url: the 16 appended records should arrive once each (32 trajectories)");
    failures++;
  }
  if ((await page.title()) !== "vantage — s0/r3 · step 2") {
    console.log(`FAIL followed_url: the selection moved (${await page.title()})`);
    failures++;
  }
  await page.close();
}
// A vantage Parquet v2 dataset by URL: read in ranges, its texts fetched when shown.
{
  const link = "#traj=s2/g5/r3&step=2";
  const opened = await visit("v2_dataset", `/?url=/v2/run/${link}`, "vantage — s2/g5/r3 · step 2");
  const missing = v2requests.filter((r) => r.status === 404);
  if (missing.length > 0) {
    console.log(`FAIL v2_dataset: asked for files the dataset does not have: ${missing.map((r) => r.rel).join(", ")}`);
    failures++;
  }
  const parquet = v2requests.filter((r) => r.ranges && r.status !== 404 && r.rel.endsWith(".parquet"));
  const whole = parquet.filter((r) => r.status !== 206);
  const served = parquet.reduce((n, r) => n + r.bytes, 0);
  const sizes = new Map(parquet.map((r) => [r.rel, r.size]));
  const total = [...sizes.values()].reduce((n, s) => n + s, 0);
  const texts = parquet.filter((r) => r.rel.startsWith("train_step=2/steps-") && r.range && !r.range.startsWith("bytes=-"));
  console.log(`v2_dataset: ${parquet.length} Range requests for ${sizes.size} files, ${served} of ${total} bytes; title "${opened.title}"`);
  if (parquet.length === 0 || whole.length > 0) {
    console.log(`FAIL v2_dataset: every Parquet read should be a Range request (${whole.length} were not)`);
    failures++;
  }
  if (sizes.size !== 9 || served >= total) {
    console.log(`FAIL v2_dataset: the 9 files should be read in part (${sizes.size} files, ${served} of ${total} bytes)`);
    failures++;
  }
  // Its steps file: the footer, the columns but the texts, then the shown step's texts.
  if (texts.length < 2) {
    console.log(`FAIL v2_dataset: the selected step's texts were not fetched (${JSON.stringify(texts.map((r) => r.range))})`);
    failures++;
  }
  const before = v2requests.length;
  await visit("v2_dataset_whole", `/?url=/v2whole/run/${link}`, "vantage — s2/g5/r3 · step 2");
  const plain = v2requests.slice(before).filter((r) => r.status !== 404 && r.rel.endsWith(".parquet"));
  if (plain.length !== 9) {
    console.log(`FAIL v2_dataset_whole: a server without Range requests should serve each file once (${plain.length} reads)`);
    failures++;
  }
  // A server that says to try again (503, Retry-After: 1) while it makes the dataset: the page
  // waits as told and opens the run once the manifest comes.
  const busyFrom = v2requests.length;
  await visit("v2_dataset_busy", `/?url=/v2busy/run/${link}`, "vantage — s2/g5/r3 · step 2");
  const manifests = v2requests.slice(busyFrom).filter((r) => r.rel === "manifest.json").map((r) => [r.status, r.at]);
  console.log(`v2_dataset_busy: the manifest answered ${manifests.map(([status]) => status).join(", ")}`);
  const waits = manifests.slice(1).map(([, at], i) => at - manifests[i][1]);
  if (manifests.length < 3 || manifests[0][0] !== 503 || manifests[1][0] !== 503 || manifests[2][0] !== 200 || waits.slice(0, 2).some((w) => w < 900)) {
    console.log(`FAIL v2_dataset_busy: the page should ask again after each 503 as Retry-After says (${JSON.stringify(manifests)}, waits ${waits} ms)`);
    failures++;
  }
}

// Picks `dir` with the browser's directory picker (the Open folder… button) on a fresh page and
// waits until the title leaves the bundled sample's and passes `opened(title)`; `name` labels the
// messages and the screenshot.
async function pickFolder(name, dir, opened) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on("console", (m) => { if (m.type() === "error") console.log(`  [${name}] console: ${m.text()}`); });
  await page.goto(base + "/");
  await page.waitForFunction(() => document.title.startsWith("vantage — "), null, { timeout: 120000 });
  const sample = await page.title();
  await page.waitForTimeout(1000);
  const chooser = page.waitForEvent("filechooser", { timeout: 15000 }).catch(() => null);
  const button = process.env.VANTAGE_FOLDER_BUTTON || "135,20";
  const [x, y] = button.split(",").map(Number);
  // egui sees a click on a widget the pointer is over: hover first, as a person's pointer does.
  await page.mouse.move(x, y);
  await page.waitForTimeout(300);
  await page.mouse.click(x, y);
  const picker = await chooser;
  if (!picker) {
    console.log(`FAIL ${name}: clicking Open folder… opened no directory picker`);
    failures++;
  } else {
    await picker.setFiles(dir);
    try {
      await page.waitForFunction(([s, test]) => document.title !== s && new RegExp(test).test(document.title), [sample, opened.source], { timeout: 60000 });
    } catch (e) {
      console.log(`FAIL ${name}: the picked folder did not open (title "${await page.title()}")`);
      failures++;
    }
    await page.waitForTimeout(2000);
    await page.screenshot({ path: path.join(shots, `${name}.png`) });
    console.log(`${name}: title "${await page.title()}"`);
  }
  await page.close();
}

// The same dataset as a folder picked with the browser's directory picker.
await pickFolder("v2_folder", v2root, /^vantage — s\d\/g/);
// A run folder that is not a v2 dataset, picked the same way: the folder rule opens its log and
// names its sidecars (tests/fixtures/runs/sidecars: one log, ten files that are not logs).
await pickFolder("run_folder", path.join(root, "tests/fixtures/runs/sidecars"), /^vantage — s0-task0-r0/);
await browser.close();

// A browser without WebGL2: the page says what vantage needs, not "The app has crashed".
{
  const bare = await launchChromium(["--disable-3d-apis", "--disable-webgl", "--disable-webgl2"]);
  const page = await bare.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(base + "/");
  await page.waitForTimeout(8000);
  const said = (await page.textContent("#loading_text").catch(() => "")) || "";
  console.log(`no_webgl: the page says "${said.trim()}"`);
  if (!/WebGL2/.test(said) || /crashed/.test(said)) {
    console.log(`FAIL no_webgl: the page does not say it needs WebGL2 ("${said.trim()}")`);
    failures++;
  }
  await bare.close();
}
server.close();
if (failures > 0) {
  console.log(`${failures} failure(s)`);
  process.exit(1);
}
console.log("web test passed");
