// temporary profiler (not committed)
import { spawn } from "node:child_process";
import { launchChromium, startServe } from "./browser.mjs";
const bin = "/work/main/target/release/vantage";
const { server, base } = await startServe(spawn, bin, ["/tmp/sd", "--convert-beside", "--port", "0"]);
let entry;
for (;;) {
  const list = await (await fetch(base + "/api/runs")).json();
  entry = list.runs[0];
  if (entry && entry.status === "ready") break;
  await new Promise((r) => setTimeout(r, 250));
}
const browser = await launchChromium();
const url = process.env.URLX ? base + process.env.URLX : `${base}/#run=${entry.url}`;
const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
const cdp = await page.context().newCDPSession(page);
await cdp.send("Profiler.enable");
await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
await cdp.send("Profiler.start");
const started = Date.now();
await page.goto(url);
for (;;) {
  const title = await page.title();
  if (/· step \d+$/.test(title)) { console.log("first view", (Date.now() - started) / 1000, title); break; }
  await page.waitForTimeout(10);
}
const { profile } = await cdp.send("Profiler.stop");
const self = new Map();
const dt = profile.timeDeltas; const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const counts = new Map();
for (let i = 0; i < profile.samples.length; i++) counts.set(profile.samples[i], (counts.get(profile.samples[i]) || 0) + (dt[i] || 0));
// inclusive times: walk parents
const parent = new Map(); for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
const incl = new Map();
for (const [id, t] of counts) {
  const n = byId.get(id); const k = n.callFrame.functionName || `(${n.callFrame.url.slice(-30)})`;
  self.set(k, (self.get(k) || 0) + t);
  const seen = new Set(); let cur = id;
  while (cur !== undefined) { const m = byId.get(cur); const kk = m.callFrame.functionName || "(anon)"; if (!seen.has(kk)) { incl.set(kk, (incl.get(kk) || 0) + t); seen.add(kk); } cur = parent.get(cur); }
}
const top = (m, n) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${(v / 1000).toFixed(0).padStart(6)} ms  ${k.slice(0, 150)}`).join("\n");
console.log("SELF\n" + top(self, 25));
console.log("INCLUSIVE\n" + top(incl, 60));
await browser.close(); server.kill();
