// `vantage serve` in headless Chromium: starts the binary (whose web app is the one build.rs put
// in it: run.sh builds it with VANTAGE_WEB_DIST=dist) on a folder with a growing vantage JSONL log
// and a sample, and on a v2 dataset; opens the page on the run list, opens a run from it with a
// click and sees it drawn, opens a deep link to a step with schemes A and B, and appends a group to
// the followed log and sees it arrive. Screenshots go to tests/web/screenshots/serve_*.png.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { distinctColours, launchChromium, startServe } from "./browser.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const shots = path.join(here, "screenshots");
const bin = process.env.VANTAGE_BIN || path.join(root, "target/debug/vantage");

const served = path.join(root, "target/web-serve");
fs.rmSync(served, { recursive: true, force: true });
fs.mkdirSync(served, { recursive: true });
fs.copyFileSync(path.join(root, "sample_runs/tree_rollouts.jsonl"), path.join(served, "tree_rollouts.jsonl"));
fs.writeFileSync(path.join(served, "config.json"), '{"lr": 1e-6}');
// Labels beside the sample (docs/LABELS.md): the page reads them from /api/labels/<id> when it
// opens the run (read-only).
fs.mkdirSync(path.join(served, ".vantage/labels"), { recursive: true });
fs.writeFileSync(
  path.join(served, ".vantage/labels/tree_rollouts.jsonl.labels.jsonl"),
  JSON.stringify({ vantage_label: 1, name: "hack", trajectory: "tree-s0-p0/n9", step: 2, source: { kind: "person", name: "web" } }) + "\n",
);
const line = (step, r) => JSON.stringify({
  type: "trajectory", id: `s${step}/r${r}`, group: `s${step}/g${r >> 3}`, train_step: step,
  outcome: { reward: r % 2 }, steps: [{ kind: "think", thought: `step ${step}\nrollout ${r}` }, { action: `answer ${r}` }],
}) + "\n";
const growing = path.join(served, "growing.jsonl");
fs.writeFileSync(growing, '{"vantage": 1, "name": "growing"}\n' + Array.from({ length: 16 }, (_, r) => line(0, r)).join(""));
// A log over the conversion size: served as a v2 dataset the server keeps current.
const big = path.join(served, "big.jsonl");
fs.writeFileSync(big, '{"vantage": 1, "name": "big"}\n' + Array.from({ length: 200 }, (_, r) => line(0, r)).join(""));

// The server, on any free port; its request log is kept.
const requests = [];
const { server, base } = await startServe(
  spawn, bin, [served, path.join(root, "target/web-v2/run"), "--port", "0", "--convert-above", "20k"], (l) => requests.push(l),
);
console.log(`vantage serve at ${base}`);
// Until every conversion is done.
for (let i = 0; i < 300; i++) {
  const list = await (await fetch(base + "/api/runs")).json();
  if (list.runs.every((r) => r.status === "ready")) {
    console.log(`serve: ${list.runs.map((r) => `${r.id} (${r.format}, ${r.status}${r.url.endsWith("/") ? ", v2" : ""})`).join(", ")}`);
    break;
  }
  await new Promise((r) => setTimeout(r, 100));
}


const browser = await launchChromium();
fs.mkdirSync(shots, { recursive: true });
let failures = 0;
const fail = (why) => { console.log(`FAIL ${why}`); failures++; };
async function newPage(name, followed) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  page.on("console", (m) => {
    if (m.type() === "error") console.log(`  [${name}] console: ${m.text()}`);
    const grown = /followed: (\d+) trajectories/.exec(m.text());
    if (grown && followed) followed.push(Number(grown[1]));
  });
  page.on("pageerror", (e) => console.log(`  [${name}] page error: ${e}`));
  return page;
}
// Polls the title from here: the page's Content-Security-Policy forbids the string evaluation
// that page.waitForFunction would need (which is as it should be).
async function waitTitle(page, name, test, timeout = 120000) {
  const until = Date.now() + timeout;
  while (Date.now() < until) {
    if (new RegExp(test).test(await page.title())) return true;
    await page.waitForTimeout(100);
  }
  fail(`${name}: the title never matched /${test}/ (it is "${await page.title()}")`);
  return false;
}

// 1. The page opens on the run list; a click on a run opens it.
{
  const page = await newPage("serve_list");
  await page.goto(base + "/");
  if (await waitTitle(page, "serve_list", "^vantage — 4 runs on this server$")) {
    await page.waitForTimeout(1000);
    await page.screenshot({ path: path.join(shots, "serve_list.png") });
    // The list's first row (the v2 dataset `run`, first by id): under the top bar and the heading.
    const [x, y] = (process.env.VANTAGE_SERVE_ROW || "30,100").split(",").map(Number);
    await page.mouse.move(x, y);
    await page.waitForTimeout(300);
    await page.mouse.click(x, y);
    if (await waitTitle(page, "serve_open", "^vantage — (?!4 runs).+", 60000)) {
      await page.waitForTimeout(3000);
      const png = await page.screenshot({ path: path.join(shots, "serve_open.png") });
      const colours = distinctColours(png);
      console.log(`serve_open: title "${await page.title()}", ${colours} distinct colours`);
      if (colours < 50) fail(`serve_open: the run looks undrawn (${colours} colours)`);
      const ranges = requests.filter((r) => /"GET \/runs\/run\/train_step=\d+\/\S+\.parquet" 206/.test(r)).length;
      console.log(`serve_open: ${ranges} Range requests for the dataset's Parquet files`);
      if (ranges === 0) fail("serve_open: the dataset was not read in ranges");
      // The address follows the run opened: its fragment is the deep link to the step shown.
      const url = page.url();
      console.log(`serve_open: the address is ${url}`);
      if (!/#run=runs(%2F|\/)run/.test(url) || !/[#&]step=[1-9]\d*/.test(url)) {
        fail(`serve_open: the address does not follow the run opened (${url})`);
      }
    }
  }
  await page.close();
}

// 2. A deep link against the server (to a log it converted): the run, the step and schemes A and B.
{
  const page = await newPage("serve_deep_link");
  await page.goto(base + "/#run=runs/web-serve/tree_rollouts.jsonl/&traj=tree-s0-p0/n9&step=3&a=grpo&b=treeps_rag");
  if (await waitTitle(page, "serve_deep_link", "^vantage — tree-s0-p0/n9 · step 3$")) {
    await page.waitForTimeout(2000);
    const png = await page.screenshot({ path: path.join(shots, "serve_deep_link.png") });
    const colours = distinctColours(png);
    console.log(`serve_deep_link: ${colours} distinct colours`);
    if (colours < 50) fail(`serve_deep_link: the run looks undrawn (${colours} colours)`);
    // Its labels came with it, from beside it.
    const labels = requests.filter((r) => /"GET \/api\/labels\/web-serve\/tree_rollouts\.jsonl" 200/.test(r)).length;
    console.log(`serve_deep_link: ${labels} request(s) for the run's labels`);
    if (labels === 0) fail("serve_deep_link: the page did not read the run's labels");
    // Its first view came in one answer, asked for by the page's script while the wasm loaded.
    const asked = () => requests.filter((r) => /"GET \/api\/first\/web-serve\/tree_rollouts\.jsonl" 200/.test(r)).length;
    // The server logs a request once answered; its line may reach this process a moment later.
    for (let i = 0; i < 50 && asked() === 0; i++) await page.waitForTimeout(100);
    const packs = asked();
    console.log(`serve_deep_link: ${packs} request(s) for the run's first view in one answer`);
    if (packs !== 1) {
      fail(`serve_deep_link: the page asked ${packs} times for the run's first view (once is right): ${requests.filter((r) => r.includes("/api/first")).join(" | ")}`);
    }
  }
  await page.close();
}

// Opens `url` at rollout s0/r3, appends 16 rollouts of step 1 to `file` once the page is in, and
// waits for the page to hold `total` trajectories (15 s: a guard against a page that never gets
// them, not a speed target; the latency is printed, aimed at `aim` ms); `stays`: the selection must
// not move.
async function followCase(name, url, file, total, aim, stays) {
  const followed = [];
  const page = await newPage(name, followed);
  await page.goto(base + url);
  if (await waitTitle(page, name, "^vantage — s0/r3")) {
    await page.waitForTimeout(2500);
    fs.appendFileSync(file, Array.from({ length: 16 }, (_, r) => line(1, r)).join(""));
    const appended = Date.now();
    while (!followed.includes(total) && Date.now() - appended < 15000) await page.waitForTimeout(100);
    const latency = Date.now() - appended;
    await page.screenshot({ path: path.join(shots, `${name}.png`) });
    console.log(`${name}: trajectories as they arrived ${JSON.stringify(followed)}; the new groups after ${latency} ms`);
    if (!followed.includes(total)) fail(`${name}: the appended groups never arrived`);
    else if (latency > aim) console.log(`${name}: slower than the aim of ${aim} ms on this machine`);
    if (stays && !(await page.title()).startsWith("vantage — s0/r3")) fail(`${name}: the selection moved (${await page.title()})`);
  }
  await page.close();
}

// 3. A followed log: a group appended on disk appears on the page.
await followCase("serve_follow", "/#run=runs/web-serve/growing.jsonl&traj=s0/r3&step=2", growing, 32, 2000, false);
// 4. A converted log that grows: the server writes what it gained into the dataset, and the page,
// which looks at the manifest every second, opens it again.
await followCase("serve_follow_converted", "/#run=runs/web-serve/big.jsonl/&traj=s0/r3&step=2", big, 216, 3000, true);

await browser.close();
server.kill();
console.log(`serve: ${requests.length} requests logged, e.g. ${requests.slice(0, 2).join(" | ")}`);
if (failures > 0) {
  console.log(`${failures} failure(s)`);
  process.exit(1);
}
console.log("serve web test passed");
