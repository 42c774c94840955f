// The web build opening a vantage Parquet v2 dataset by URL, timed (docs/PERFORMANCE.md):
//
//     trunk build --release && (cd tests/web && npm install) && node bench/web_v2.mjs RUN_DIR [RUNS]
//
// serves dist/ and RUN_DIR (under /run/, answering HTTP Range requests) on 127.0.0.1, opens
// `/?url=/run/` in headless Chromium (SwiftShader) RUNS times (default 3), each in a fresh page,
// and prints for each: the time from navigation to the run's title (its first view), and the
// requests and bytes the page fetched of the dataset against the bytes of the files it touched.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium } from "../tests/web/browser.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const [runDir, runsArg] = process.argv.slice(2);
if (!runDir) {
  console.error("usage: node bench/web_v2.mjs RUN_DIR [RUNS]");
  process.exit(2);
}
const dataset = path.resolve(runDir);
const dist = path.join(root, "dist");
const types = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm" };

let requests = [];
const server = http.createServer((req, res) => {
  const url = decodeURIComponent(new URL(req.url, "http://x").pathname);
  const inRun = url.startsWith("/run/");
  const file = inRun ? path.join(dataset, url.slice("/run/".length)) : path.join(dist, url === "/" ? "index.html" : url);
  if (!file.startsWith(inRun ? dataset : dist) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
    res.writeHead(404);
    res.end("not found");
    return;
  }
  const size = fs.statSync(file).size;
  const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range || "");
  if (!inRun || !m) {
    if (inRun) requests.push({ file, bytes: size, size });
    res.writeHead(200, { "Content-Type": types[path.extname(file)] || "application/octet-stream", "Content-Length": size });
    fs.createReadStream(file).pipe(res);
    return;
  }
  let start, end;
  if (m[1] === "") { start = Math.max(0, size - Number(m[2])); end = size - 1; }
  else { start = Number(m[1]); end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1); }
  requests.push({ file, bytes: end - start + 1, size });
  res.writeHead(206, { "Content-Length": end - start + 1, "Content-Range": `bytes ${start}-${end}/${size}` });
  fs.createReadStream(file, { start, end }).pipe(res);
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const base = `http://127.0.0.1:${server.address().port}`;
const browser = await launchChromium();
for (let run = 0; run < Number(runsArg || 3); run++) {
  requests = [];
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const started = Date.now();
  await page.goto(`${base}/?url=/run/`);
  await page.waitForFunction(() => document.title.startsWith("vantage — "), null, { timeout: 300000 });
  const ms = Date.now() - started;
  const fetched = requests.reduce((n, r) => n + r.bytes, 0);
  const sizes = new Map(requests.map((r) => [r.file, r.size]));
  const touched = [...sizes.values()].reduce((n, s) => n + s, 0);
  console.log(`first view after ${ms} ms: ${requests.length} requests for ${sizes.size} files, `
    + `${(fetched / 1e6).toFixed(1)} MB fetched of their ${(touched / 1e6).toFixed(1)} MB; title "${await page.title()}"`);
  if (run === 0) await page.screenshot({ path: path.join(root, "target/web_v2.png") });
  await page.close();
}
await browser.close();
server.close();
