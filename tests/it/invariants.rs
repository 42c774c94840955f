//! The invariants of the data model hold on every sample, and no input (however mangled) panics
//! the loader or breaks them.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;

use vantage::load::{LoadReport, load_bytes};
use vantage::model::{NodeId, Run};

/// Checks every structural invariant of DESIGN.md §2 on a loaded run.
fn assert_invariants(run: &Run, name: &str) {
    let nodes = &run.nodes;
    let n = nodes.len();
    for column_len in
        [nodes.group.len(), nodes.kind.len(), nodes.role.len(), nodes.thought.len(), nodes.env_reward.len()]
    {
        assert_eq!(column_len, n, "{name}: node columns have one entry per node");
    }
    for (i, parent) in nodes.parent.iter().enumerate() {
        if let Some(p) = parent.get() {
            assert!(p.index() < i, "{name}: parent {p:?} of node {i} comes after it");
            assert_eq!(nodes.group[p.index()], nodes.group[i], "{name}: a node and its parent share a group");
        }
    }
    for column in nodes.scores.values() {
        assert_eq!(column.len(), n);
    }
    let tr = &run.trajectories;
    let mut keys: Vec<u32> = tr.key.iter().map(|k| k.0).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), tr.len(), "{name}: trajectory ids are unique");
    for t in tr.ids() {
        let path = tr.path(t);
        assert!(!path.is_empty(), "{name}: empty path");
        assert_eq!(nodes.parent[path[0].index()], NodeId::NONE, "{name}: paths start under the prompt");
        for pair in path.windows(2) {
            assert_eq!(nodes.parent[pair[1].index()], pair[0], "{name}: paths follow parent links");
        }
        let leaf = *path.last().unwrap();
        assert_eq!(leaf, tr.leaf[t.index()]);
        assert_eq!(nodes.num_children(leaf), 0, "{name}: trajectories end at leaves");
        let num_tokens = tr.token_range(t).len();
        for &node in path {
            assert_eq!(nodes.group[node.index()], tr.group[t.index()]);
            if let Some([start, end]) = nodes.token_span(node) {
                assert!(start < end && end as usize <= num_tokens, "{name}: token span within the trajectory");
            }
        }
    }
    assert_eq!(tr.token_offsets.last().copied().unwrap_or(0) as usize, run.tokens.len);
    let mut seen = vec![0u32; tr.len()];
    for g in run.groups.ids() {
        for &t in run.groups.members(g) {
            assert_eq!(tr.group[t.index()], g);
            seen[t.index()] += 1;
        }
    }
    assert!(seen.iter().all(|&c| c == 1), "{name}: every trajectory is in exactly one group");
}

fn sample_bytes() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for dir in ["sample_runs", "tests/fixtures"] {
        for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)).unwrap() {
            let path = entry.unwrap().path();
            // Fixture folders (a verl dump directory) contribute each of their files (not the
            // folders inside them, such as the Parquet decoder's fixtures).
            let files = if path.is_dir() {
                std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect()
            } else {
                vec![path]
            };
            for file in files {
                out.push((file.display().to_string(), std::fs::read(&file).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn invariants_hold_on_every_sample_and_fixture() {
    let mut loaded = 0;
    for (name, bytes) in sample_bytes() {
        let mut report = LoadReport::new(&name);
        if let Ok(run) = load_bytes(&name, &bytes, &mut report) {
            assert_invariants(&run, &name);
            loaded += 1;
        }
    }
    assert!(loaded >= 15, "{loaded}");
}

/// `SplitMix64`, so the mutations are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Flips, deletes, duplicates and splices bytes of real files, then loads them: never a panic,
/// and whatever loads still satisfies every invariant.
#[test]
fn mangled_inputs_never_panic_and_keep_the_invariants() {
    const TOKENS: &[&[u8]] = &[
        b"NaN",
        b"null",
        b"\"parent\": \"n0\"",
        b"\"parent\": \"n1\"",
        b"-Infinity",
        b"}",
        b"]",
        b"{",
        b"\"",
        b"\\",
        b"\n",
        b"\xff",
        b"\"token_span\": [5, 2]",
        b"\"id\": \"n1\"",
        b"1e999",
        b"\"type\": \"tree\"",
    ];
    let mut rng = Rng(42);
    let inputs = sample_bytes();
    let (mut loaded_jsonl, mut rounds_jsonl) = (0usize, 0usize);
    for round in 0..1500 {
        let (name, original) = &inputs[round % inputs.len()];
        // Keep inputs small so the test stays quick: a window of lines around a random point.
        let start = rng.below(original.len().saturating_sub(4000));
        let header_end = original.iter().position(|&b| b == b'\n').unwrap_or(original.len());
        let mut bytes = original[..header_end.min(original.len())].to_vec();
        bytes.push(b'\n');
        bytes.extend_from_slice(&original[start..(start + 4000).min(original.len())]);
        for _ in 0..1 + rng.below(6) {
            let at = rng.below(bytes.len());
            match rng.below(4) {
                0 => bytes[at] = rng.next() as u8,
                1 => {
                    let end = (at + rng.below(40)).min(bytes.len());
                    bytes.drain(at..end);
                }
                2 => {
                    let token = TOKENS[rng.below(TOKENS.len())];
                    bytes.splice(at..at, token.iter().copied());
                }
                _ => {
                    let end = (at + rng.below(200)).min(bytes.len());
                    let copy = bytes[at..end].to_vec();
                    let to = rng.below(bytes.len());
                    bytes.splice(to..to, copy);
                }
            }
            if bytes.is_empty() {
                break;
            }
        }
        let mut report = LoadReport::new(name);
        let line_oriented = name.ends_with(".jsonl");
        rounds_jsonl += usize::from(line_oriented);
        if let Ok(run) = load_bytes(name, &bytes, &mut report) {
            assert_invariants(&run, name);
            loaded_jsonl += usize::from(line_oriented);
        }
    }
    // A mangled JSON-lines file loses only the records it breaks; a whole-document JSON file (an
    // array, a tree) may lose everything, which is fine as long as nothing panics.
    assert!(
        loaded_jsonl * 4 > rounds_jsonl,
        "most mangled JSONL files still load something: {loaded_jsonl} of {rounds_jsonl}"
    );
}
