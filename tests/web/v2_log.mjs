// Writes the vantage JSONL log that tests/web/run.sh converts to the vantage Parquet v2 dataset
// the web test opens by URL: 3 training steps × 96 groups × 8 rollouts of 3 steps each, with
// texts of a few hundred characters that do not compress away, so that each partition's
// `steps` file is far larger than the first read of its end and the texts are read in ranges.
import fs from "node:fs";

let seed = 7;
const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
const words = ["gradient", "reward", "policy", "value", "token", "rollout", "advantage", "critic", "sample", "batch",
  "entropy", "clip", "ratio", "baseline", "group", "prompt", "answer", "proof", "lemma", "check"];
const sentence = (n) => Array.from({ length: n }, () => words[next() % words.length] + (next() % 97)).join(" ");
const lines = ['{"vantage": 1, "name": "v2 web test"}'];
for (let step = 0; step < 3; step++) {
  for (let g = 0; g < 96; g++) {
    for (let r = 0; r < 8; r++) {
      const reward = (g + r + step) % 3 === 0 ? 1 : 0;
      lines.push(JSON.stringify({
        type: "trajectory", id: `s${step}/g${g}/r${r}`, group: `s${step}/g${g}`, train_step: step,
        outcome: { reward, success: reward === 1 },
        steps: [
          { kind: "think", thought: `step ${step} group ${g} rollout ${r}: ${sentence(40)}`, scores: { prm: (next() % 100) / 100 } },
          { kind: "tool", action: `search(${sentence(6)})`, observation: sentence(30), scores: { prm: (next() % 100) / 100 } },
          { kind: "answer", action: `answer ${r}: ${sentence(12)}`, scores: { prm: (next() % 100) / 100 } },
        ],
      }));
    }
  }
}
fs.writeFileSync(process.argv[2], lines.join("\n") + "\n");
