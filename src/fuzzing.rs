//! What the fuzz targets run (`fuzz/`, cargo-fuzz) and what `tests/it/fixtures.rs` replays: every
//! entry point that takes bytes from outside, by target name. Each must return, on any input,
//! without a panic, a hang or an allocation past the memory budget; the findings of fuzzing are
//! kept under `fuzz/regressions/<target>/` and replayed by `cargo test`.

use std::sync::OnceLock;

use crate::credit;
use crate::load::{self, LoadReport};
use crate::model::Run;

/// The memory budget a fuzzed load runs under (far below libFuzzer's 2 GiB limit).
pub const FUZZ_BUDGET: u64 = 512 << 20;

/// The entry points that are not one format's loader (`tests/it/fixtures.rs` checks that every
/// binary of `fuzz/fuzz_targets/` is one of these or a format's).
pub const ENTRY_POINTS: &[&str] = &[
    "detect",
    "stream",
    "decompress",
    "zip",
    "pickle",
    "outcomes",
    "tokenizer",
    "deeplink",
    "state",
    "params",
    "formula",
    "vantage_fast_path",
];

/// `data` as a replay of a kept input should see it: where it holds a ZIP archive (from its first
/// byte, or after the byte that picks a file name), each entry's CRC-32 set to its content's, as
/// the fuzzer, which skips the check, saw it (`load::zip::with_true_crcs`).
pub fn replayable(data: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if let Some(fixed) = load::zip::with_true_crcs(data, FUZZ_BUDGET) {
        return std::borrow::Cow::Owned(fixed);
    }
    if let Some((&first, rest)) = data.split_first()
        && let Some(fixed) = load::zip::with_true_crcs(rest, FUZZ_BUDGET)
    {
        return std::borrow::Cow::Owned(std::iter::once(first).chain(fixed).collect());
    }
    std::borrow::Cow::Borrowed(data)
}

/// Every target: the entry points, then `format_<name>` for each loader built in.
pub fn targets() -> Vec<String> {
    ENTRY_POINTS
        .iter()
        .map(|&t| t.to_owned())
        .chain(load::LOADERS.iter().map(|l| format!("format_{}", l.name())))
        .collect()
}

/// File names a detected load is tried under (a name can steer detection), chosen by the first byte.
const NAMES: &[&str] = &[
    "fuzz.jsonl",
    "fuzz.json",
    "fuzz.eval",
    "run.traj",
    "0.jsonl",
    "fuzz.db",
    "fuzz.parquet",
    // A ROLL dump is told by its name when its one line is longer than the head.
    "rollout_dump_data.step_3.jsonl",
    // ART's older logs are YAML, read as such by their name.
    "0003.yaml",
];

/// A small run to compute credit on: the bundled sample's first groups.
fn tiny_run() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| {
        let text = String::from_utf8_lossy(crate::DEMO_RUN);
        let head: String = text.lines().take(20).flat_map(|l| [l, "\n"]).collect();
        load::load_bytes("tiny.jsonl", head.as_bytes(), &mut LoadReport::default()).unwrap_or_default()
    })
}

/// A credit formula (a deep link's, a `--scheme expr:` or a `.vx` file's): parsed, checked and
/// computed on a small run; a slider moved on each parameter.
fn formula(text: &str) {
    // Longer than anyone types: the parser recurses on nesting.
    if text.len() > 4096 {
        return;
    }
    let Ok(parsed) = credit::expr::Formula::parse(text) else { return };
    consume(parsed.credit(tiny_run()));
    for param in parsed.params() {
        consume(parsed.with_param(&param.name, param.value * 2.0 + 1.0).map(|t| credit::expr::Formula::parse(&t)));
    }
}

/// A report for a fuzzed load, its budget [`FUZZ_BUDGET`].
fn report(name: &str) -> LoadReport {
    LoadReport::with_budget(name, FUZZ_BUDGET)
}

/// Runs `target` on `data`; `false` when there is no such target.
pub fn run(target: &str, data: &[u8]) -> bool {
    let (first, rest) = data.split_first().map_or((0, data), |(&b, rest)| (b, rest));
    let name = NAMES[first as usize % NAMES.len()];
    match target {
        "detect" => {
            if let Ok(run) = load::load_bytes(name, rest, &mut report(name)) {
                exercise(&run, first);
            }
        }
        "stream" => stream(name, rest, first),
        "decompress" => {
            let kind =
                if first % 2 == 0 { load::compressed::Compression::Gzip } else { load::compressed::Compression::Zstd };
            consume(load::compressed::inflate_all(kind, rest, FUZZ_BUDGET));
        }
        "zip" => {
            if let Ok(archive) = load::zip::Archive::open(data, FUZZ_BUDGET) {
                for entry in archive.entries.iter().take(64) {
                    consume(archive.read(entry));
                }
            }
        }
        "pickle" => {
            consume(load::torch_pickle::unpickle(data));
        }
        "outcomes" => {
            if let Some(outcomes) = load::formats::outcomes::parse(name, rest) {
                let mut run = tiny_run().clone();
                let joined = load::formats::outcomes::join(&mut run, &[&outcomes]);
                consume(load::formats::outcomes::warnings(&joined, &[&outcomes]));
                consume(load::formats::outcomes::notes(&joined, &[&outcomes]));
            }
        }
        "tokenizer" => {
            // A tokenizer.json beside a run; its ids taken from the first bytes.
            if let Ok(vocab) = load::tokenizer::Vocab::from_json(rest) {
                let ids: Vec<u64> = data.iter().take(64).map(|&b| u64::from(b) * 37).collect();
                consume(vocab.decode(&ids));
            }
        }
        "deeplink" => {
            let link = crate::app::deeplink::DeepLink::parse(&String::from_utf8_lossy(data));
            for choice in [link.scheme_a, link.scheme_b].into_iter().flatten() {
                if let Some(text) = choice.formula() {
                    formula(text);
                } else if let Ok(scheme) = credit::scheme(&choice.scheme_id) {
                    consume(credit::Params::resolve(scheme, choice.preset.as_deref(), &choice.values));
                }
            }
        }
        "formula" => formula(&String::from_utf8_lossy(data)),
        // Each line: the fast path of a vantage JSONL line reads what serde_json reads, or leaves it.
        "vantage_fast_path" => {
            for line in String::from_utf8_lossy(data).lines() {
                assert!(
                    load::formats::vantage_jsonl::fast_path_agrees(line),
                    "the fast path and serde_json read this line differently: {line}"
                );
            }
        }
        "state" => {
            consume(crate::app::state::AppState::restore(Some(&String::from_utf8_lossy(data))));
        }
        "params" => params(first, rest),
        _ => match target.strip_prefix("format_").and_then(load::loader) {
            Some(loader) => {
                if let Ok(run) = load::load_bytes_as(loader.name(), name, rest, &mut report(name)) {
                    exercise(&run, first);
                }
            }
            None => return false,
        },
    }
    true
}

/// What the app does with a run it loaded: its summary, and one scheme's credit (chosen by `pick`).
fn exercise(run: &Run, pick: u8) {
    consume(crate::analysis::RunSummary::of(run).lines());
    let scheme = credit::SCHEMES[pick as usize % credit::SCHEMES.len()];
    consume(credit::compute(scheme, run, None, &Vec::new()));
}

/// The log read as a live stream: whole lines fed in pieces (sizes from `seed`), a snapshot
/// between pieces, then the finished run.
fn stream(name: &str, data: &[u8], seed: u8) {
    let head = &data[..data.len().min(1 << 16)];
    let Ok(Some(mut feed)) = load::line_feed(name, head, None, &report(name)) else { return };
    let lines_per_piece = usize::from(seed % 7) + 1;
    let (mut start, mut offset, mut lines) = (0, 0u64, 0);
    for (i, &b) in data.iter().enumerate() {
        if b == b'\n' {
            lines += 1;
            if lines % lines_per_piece == 0 {
                feed.feed(&data[start..=i], offset);
                offset += (i + 1 - start) as u64;
                start = i + 1;
                if lines % (2 * lines_per_piece) == 0 {
                    consume(feed.snapshot());
                }
            }
        }
    }
    if start < data.len() {
        feed.feed(&data[start..], offset);
    }
    consume(feed.finish_into(&mut report(name)));
}

/// `--set` lines (`NAME=VALUE`, one per line) and a preset for the scheme `pick` chooses, then its
/// credit on a small run when they resolve.
fn params(pick: u8, data: &[u8]) {
    let scheme = credit::SCHEMES[pick as usize % credit::SCHEMES.len()];
    let text = String::from_utf8_lossy(data);
    let mut lines = text.lines();
    let preset = lines.next().filter(|p| !p.is_empty());
    let sets: credit::ParamValues = lines
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .take(16)
        .collect();
    if credit::Params::resolve(scheme, preset, &sets).is_ok() {
        consume(credit::compute(scheme, tiny_run(), preset, &sets));
    }
}

/// Uses `value` so the work that made it is not optimized away; errors are expected answers.
fn consume<T>(value: T) {
    std::hint::black_box(value);
}
