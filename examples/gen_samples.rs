//! Writes the sample runs in `sample_runs/` and the bundled demo in `assets/`, deterministically.
//!
//! `cargo run --features examples --example gen_samples` regenerates them byte for byte (a fixed seed per file);
//! `tests/it/sample_runs.rs` checks that the committed files equal a fresh generation.

#[path = "gen_samples/mod.rs"]
mod samples;

fn main() -> std::process::ExitCode {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (path, text) in samples::texts() {
        let target = root.join(path);
        if let Err(err) = std::fs::write(&target, &text) {
            eprintln!("gen_samples: {err}: {}", target.display());
            return std::process::ExitCode::FAILURE;
        }
        println!("wrote {} ({} lines)", target.display(), text.lines().count());
    }
    std::process::ExitCode::SUCCESS
}
