//! A bit-for-bit snapshot of credit: one line per sample run × scheme × preset (the defaults and
//! each preset), with a hash of every step value and every token value (FNV-1a over their f32 bits,
//! every NaN counted as one) and the first values. A refactor or a speed change that moves one bit
//! of any scheme on any sample fails here. `UPDATE_SNAPSHOTS=1 cargo test --test it credit_snapshot::`
//! writes the file anew, for a change meant to move numbers (say why in the commit).
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::fmt::Write as _;
use std::path::Path;

use vantage::credit::{self, Params, Support};
use vantage::load::{LoadReport, load_bytes};

const SNAPSHOT: &str = "tests/snapshots/credit.txt";

/// FNV-1a over the values' bits, NaN as one value.
fn fingerprint(values: &[f32]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for v in values {
        let bits = if v.is_nan() { 0x7fc0_0000 } else { v.to_bits() };
        for byte in bits.to_le_bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

fn snapshot() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = std::fs::read_dir(root.join("sample_runs")).unwrap().map(|e| e.unwrap().path()).collect();
    files.push(root.join("assets/demo_run.jsonl"));
    files.sort();
    let mut out = String::new();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut report = LoadReport::new(&name);
        let run = load_bytes(&name, &std::fs::read(&path).unwrap(), &mut report).unwrap();
        for scheme in credit::SCHEMES {
            if scheme.supports(&run) != Support::Yes {
                continue;
            }
            let presets = std::iter::once(None).chain(scheme.presets().iter().map(|p| Some(p.name)));
            for preset in presets {
                let params = Params::resolve(*scheme, preset, &[]).unwrap();
                let id = scheme.info().id;
                let label = preset.unwrap_or("defaults");
                match scheme.compute(&run, &params) {
                    Ok(c) => {
                        let head: Vec<String> = c.step.iter().take(3).map(|v| format!("{v:?}")).collect();
                        let tokens =
                            c.token.as_deref().map_or_else(|| "-".to_owned(), |t| format!("{:016x}", fingerprint(t)));
                        writeln!(
                            out,
                            "{name} {id} {label} steps={:016x} tokens={tokens} head=[{}]",
                            fingerprint(&c.step),
                            head.join(", ")
                        )
                        .unwrap();
                    }
                    Err(err) => writeln!(out, "{name} {id} {label} error: {err}").unwrap(),
                }
            }
        }
    }
    out
}

#[test]
fn credit_on_every_sample_is_the_snapshot_bit_for_bit() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(SNAPSHOT);
    let now = snapshot();
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &now).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    let changed: Vec<String> =
        now.lines().filter(|line| !committed.lines().any(|c| c == *line)).map(str::to_owned).collect();
    let gone: Vec<&str> = committed.lines().filter(|line| !now.lines().any(|n| n == *line)).collect();
    assert!(
        changed.is_empty() && gone.is_empty(),
        "credit moved on {} line(s) of {SNAPSHOT} (UPDATE_SNAPSHOTS=1 rewrites it when that is meant):\nnow:\n{}\nwas:\n{}",
        changed.len() + gone.len(),
        changed.join("\n"),
        gone.join("\n")
    );
    assert!(now.lines().count() >= 140, "{} lines", now.lines().count());
    // The same bits when the work is cut into many parts on other threads.
    let split = vantage::par::with_split(1, 7, snapshot);
    assert!(split == now, "credit depends on how the work is split over threads");
}
