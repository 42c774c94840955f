//! The core stays headless and web-ready: nothing under `model/`, `load/`, `credit/` or
//! `analysis/` uses egui, the filesystem or threads, except `credit/par.rs`, which computes credit
//! in parts on scoped threads on native (and one after the other on the web).
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
    // One exception: `credit/par.rs` computes credit in parts on scoped threads, on native only.
    let par = src.join("credit").join("par.rs");
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for forbidden in
            ["egui::", "use egui", "eframe::", "std::fs", "std::thread", "thread::spawn", "rayon::", "File::open"]
        {
            let allowed = file == par && forbidden == "std::thread";
            assert!(allowed || !text.contains(forbidden), "{} uses {forbidden}", file.display());
        }
    }
}

#[test]
fn the_core_uses_threads_only_in_functions_the_web_build_leaves_out() {
    let par = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/credit/par.rs")).unwrap();
    let uses: Vec<usize> = par.match_indices("std::thread").map(|(i, _)| i).collect();
    assert!(!uses.is_empty());
    for use_at in uses {
        // The function this use is in, and the attribute just above it.
        let fn_at = par[..use_at].rfind("\nfn ").unwrap();
        let attribute = par[..fn_at].lines().last().unwrap();
        assert_eq!(attribute, "#[cfg(not(target_arch = \"wasm32\"))]", "std::thread at byte {use_at} runs on the web");
        // It has a web twin of the same name.
        let name = par[fn_at + 4..].split('<').next().unwrap().split('(').next().unwrap();
        assert!(par.contains(&format!("#[cfg(target_arch = \"wasm32\")]\nfn {name}")), "no web {name}");
    }
}
