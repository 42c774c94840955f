// The web build in headless Chromium: serves dist/ (the Trunk output) and sample_runs/ on
// 127.0.0.1, opens the app with its bundled sample and with a URL plus a deep link, waits for the
// first frames, saves screenshots in tests/web/screenshots/, and checks that the canvas is drawn
// (many distinct colours) and that the deep-linked step is the selected one (the app names the
// selected step in the page title). Run by tests/web/run.sh, which builds dist/ first.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { PNG } from "pngjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const dist = path.join(root, "dist");
const shots = path.join(here, "screenshots");
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";

const types = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm", ".jsonl": "text/plain" };
const server = http.createServer((req, res) => {
  const url = decodeURIComponent(new URL(req.url, "http://x").pathname);
  const file = url.startsWith("/sample_runs/") ? path.join(root, url) : path.join(dist, url === "/" ? "index.html" : url);
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

function distinctColours(png) {
  const image = PNG.sync.read(png);
  const seen = new Set();
  for (let i = 0; i < image.data.length; i += 4 * 7) {
    seen.add((image.data[i] << 16) | (image.data[i + 1] << 8) | image.data[i + 2]);
  }
  return seen.size;
}

const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  args: [
    "--no-sandbox", "--use-gl=angle", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
    "--disable-background-networking", "--disable-component-update", "--disable-default-apps",
    "--disable-sync", "--no-first-run",
  ],
});
fs.mkdirSync(shots, { recursive: true });
let failures = 0;
async function visit(name, url, titlePrefix) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on("console", (m) => { if (m.type() === "error") console.log(`  [${name}] console: ${m.text()}`); });
  await page.goto(base + url);
  try {
    await page.waitForFunction((p) => document.title.startsWith(p), titlePrefix, { timeout: 120000 });
  } catch (e) {
    console.log(`FAIL ${name}: title never became "${titlePrefix}…" (it is "${await page.title()}")`);
    failures++;
  }
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
  return title;
}

await visit("bundled_sample", "/", "vantage — ");
await visit(
  "deep_link",
  "/?url=/sample_runs/tree_rollouts.jsonl#traj=tree-s0-p0/n9&step=2&a=grpo&b=treeps_rag",
  "vantage — tree-s0-p0/n9 · step 3",
);
await browser.close();
server.close();
if (failures > 0) {
  console.log(`${failures} failure(s)`);
  process.exit(1);
}
console.log("web test passed");
