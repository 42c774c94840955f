//! vantage's own Parquet decoder (`load::parquet_file`, which the app and the web build read v2
//! with) beside polars' reader on the same files, in one sitting (docs/PERFORMANCE.md):
//!
//! ```text
//! cargo run --release --features examples --example parquet_decode -- DIR [REPEATS]
//! ```
//!
//! reads every `.parquet` file under DIR into memory first, then decodes all their columns
//! REPEATS times (default 3) with each reader and prints the best time of each, with the floor
//! of one pass over the same bytes (a checksum). Native, `parquet` feature.

use std::time::Instant;

use vantage::load::parquet_file::{ParquetMeta, decode};

fn files(dir: &std::path::Path, out: &mut Vec<Vec<u8>>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "parquet") {
            out.push(std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())));
        }
    }
}

fn best(repeats: usize, mut f: impl FnMut() -> usize) -> (f64, usize) {
    let mut best = f64::INFINITY;
    let mut out = 0;
    for _ in 0..repeats {
        let started = Instant::now();
        out = f();
        best = best.min(started.elapsed().as_secs_f64());
    }
    (best, out)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: parquet_decode DIR [REPEATS]");
        std::process::exit(2);
    };
    let repeats: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(3);
    let mut all = Vec::new();
    files(std::path::Path::new(&dir), &mut all);
    let bytes: usize = all.iter().map(Vec::len).sum();
    println!("{} files, {:.1} MB", all.len(), bytes as f64 / 1e6);
    let (floor, _) = best(repeats, || {
        let sum: usize = all.iter().map(|f| f.iter().map(|&b| usize::from(b)).sum::<usize>()).sum();
        std::hint::black_box(sum)
    });
    let (ours, slots) = best(repeats, || {
        let mut slots = 0;
        for file in &all {
            let meta = ParquetMeta::of_file(file).unwrap_or_else(|e| panic!("footer: {e}"));
            for leaf in 0..meta.leaves.len() {
                let chunks: Vec<&[u8]> =
                    meta.chunks(leaf).map(|c| &file[c.start as usize..(c.start + c.len) as usize]).collect();
                slots += decode(&meta, leaf, &chunks).unwrap_or_else(|e| panic!("{e}")).slots();
            }
        }
        slots
    });
    let (polars, rows) = best(repeats, || {
        use polars::prelude::{ParquetReader, SerReader as _};
        all.iter()
            .map(|f| {
                ParquetReader::new(std::io::Cursor::new(f)).finish().unwrap_or_else(|e| panic!("polars: {e}")).height()
            })
            .sum()
    });
    println!("floor (one pass over the bytes): {:.1} ms", floor * 1e3);
    println!(
        "vantage decoder: {ours:.3} s ({slots} slots), {:.2}× polars, {:.1}× the floor",
        ours / polars,
        ours / floor
    );
    println!("polars:          {polars:.3} s ({rows} rows)");
}
