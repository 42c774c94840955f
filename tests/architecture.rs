//! The core stays headless and web-ready: nothing under `model/`, `load/`, `credit/` or
//! `analysis/` uses egui, the filesystem or threads.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn core_modules_use_no_egui_filesystem_or_threads() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for module in ["model", "load", "credit", "analysis"] {
        rust_files(&src.join(module), &mut files);
    }
    assert!(files.len() >= 20, "{}", files.len());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for forbidden in
            ["egui::", "use egui", "eframe::", "std::fs", "std::thread", "thread::spawn", "rayon::", "File::open"]
        {
            assert!(!text.contains(forbidden), "{} uses {forbidden}", file.display());
        }
    }
}
