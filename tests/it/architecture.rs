//! The layering the code relies on. The core stays headless and web-ready: nothing under
//! `model/`, `load/`, `credit/` or `analysis/` uses egui, the filesystem or threads, except
//! `credit/engine/par.rs`, which computes credit in parts on scoped threads on native (and one
//! after the other on the web). Inside `credit/`: kernels never read the run's model (the engine
//! hands them columns), schemes never import each other (what two share is a kernel or engine
//! code), and the engine names no scheme.
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
    // One exception: `credit/engine/par.rs` computes credit in parts on scoped threads, on native only.
    let par = src.join("credit").join("engine").join("par.rs");
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
    let par = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/credit/engine/par.rs")).unwrap();
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

/// The Rust files directly in `src/credit/<dir>`, with their text.
fn credit_files(dir: &str) -> Vec<(std::path::PathBuf, String)> {
    let mut files = Vec::new();
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/credit").join(dir), &mut files);
    files.sort();
    files.into_iter().map(|f| (f.clone(), std::fs::read_to_string(&f).unwrap())).collect()
}

/// Whether `text` names `word` as a whole identifier.
fn names(text: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

#[test]
fn credit_is_split_into_engine_kernels_schemes_and_formulas() {
    let credit = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/credit");
    let mut top: Vec<String> =
        std::fs::read_dir(&credit).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    top.sort();
    assert_eq!(top, ["engine", "expr", "kernels", "mod.rs", "schemes"], "src/credit holds only these");
    // Every scheme in the registry has its file in schemes/, and every file there is a scheme.
    let schemes = credit_files("schemes");
    let registry = &schemes.iter().find(|(f, _)| f.ends_with("mod.rs")).unwrap().1;
    for (file, _) in &schemes {
        let stem = file.file_stem().unwrap().to_str().unwrap();
        if stem != "mod" {
            assert!(registry.contains(&format!("&{stem}::")), "schemes/{stem}.rs is not in SCHEMES");
        }
    }
    assert!(schemes.len() >= 30, "{}", schemes.len());
}

#[test]
fn kernels_never_read_the_model() {
    let kernels = credit_files("kernels");
    assert!(kernels.len() >= 5, "{}", kernels.len());
    for (file, text) in kernels {
        assert!(!text.contains("crate::model"), "{} names crate::model", file.display());
        for word in ["Run", "NodeId", "TrajectoryId", "GroupId"] {
            assert!(!names(&text, word), "{} names {word}", file.display());
        }
    }
}

#[test]
fn schemes_never_import_each_other_and_the_engine_names_none() {
    let schemes = credit_files("schemes");
    let ids: Vec<String> = schemes
        .iter()
        .map(|(f, _)| f.file_stem().unwrap().to_str().unwrap().to_owned())
        .filter(|s| s != "mod")
        .collect();
    for (file, text) in &schemes {
        if file.ends_with("mod.rs") {
            continue;
        }
        // A scheme file reaches others only through `credit::schemes::` or its parent `super::`
        // (its own tests' `use super::*` is the file itself).
        assert!(!text.contains("schemes::"), "{} names another scheme's module", file.display());
        for line in text.lines().filter(|l| l.trim_start().starts_with("use ")) {
            let outside_tests = !line.starts_with("    ");
            assert!(!(outside_tests && line.contains("super::")), "{}: {line}", file.display());
        }
        for id in &ids {
            assert!(!text.contains(&format!("super::{id}::")), "{} uses {id}", file.display());
        }
    }
    for (file, text) in credit_files("engine").into_iter().chain(credit_files("kernels")) {
        assert!(!text.contains("credit::schemes"), "{} names a scheme", file.display());
    }
}

#[test]
fn one_module_holds_the_f64_sums_and_moments() {
    // The general-purpose sums and moments live in engine/moments.rs; a scheme's loops that sum
    // while they write (PURE's weighted sums, GiGPO's per-state sums) stay with their scheme.
    for (file, text) in credit_files("").into_iter().filter(|(f, _)| !f.ends_with("engine/moments.rs")) {
        for defined in
            ["fn mean_std", "fn group_stats", "struct Moments", "fn lane_sum", "fn sum_f64", "fn weighted_stats"]
        {
            assert!(!text.contains(defined), "{} defines its own `{defined}`", file.display());
        }
    }
}
