//! The layering the code relies on, top to bottom:
//!
//! ```text
//! cli, web, fuzzing        launchers: the command line and desktop window, the page
//! api                      the commands the command line, `vantage mcp` and Python share (native)
//! serve                    `vantage serve`: the web app and the runs over HTTP (native)
//! ui                       everything that draws (with the eframe shell)
//! app                      state, commands, loads and credit on workers
//! source                   where runs come from: paths, directories, datasets, following, HTTP
//! analysis                 derived views of a run and its credit
//! load    credit           bytes to a run; a run to credit
//! model   par              the data model; work in parts on threads
//! ```
//!
//! [`LAYERS`] says what each top-level module of `src/` may import; a back-edge or an import
//! circle fails [`each_module_imports_only_the_layers_below_it`]. The core stays headless and
//! web-ready: nothing under `model/`, `load/`, `credit/`, `analysis/` or `par.rs` uses egui or
//! the filesystem, and only `par.rs` starts threads (on native; one part after the other on the
//! web). Inside `credit/`: kernels never read the run's model (the engine hands them columns),
//! schemes never import each other (what two share is a kernel or engine code), and the engine
//! names no scheme.
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
    let par = src.join("par.rs");
    files.push(par.clone());
    assert!(files.len() >= 20, "{}", files.len());
    // One exception: `par.rs` works in parts on scoped threads, on native only.
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
    let par = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/par.rs")).unwrap();
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

/// What each top-level module of `src/` may import (`crate::…`, `super::…` out of it, `$crate::…`
/// in its macros), bottom first: a module imports only modules listed before it.
const LAYERS: &[(&str, &[&str])] = &[
    ("model", &[]),
    ("par", &[]),
    ("load", &["model", "par"]),
    ("credit", &["model", "par"]),
    ("analysis", &["model", "load", "credit"]),
    ("source", &["model", "par", "load"]),
    ("app", &["model", "par", "load", "credit", "analysis", "source"]),
    ("ui", &["model", "load", "credit", "analysis", "source", "app"]),
    ("serve", &["load", "source"]),
    ("api", &["model", "par", "load", "credit", "analysis", "source", "app"]),
    ("cli", &["model", "par", "load", "credit", "analysis", "source", "app", "ui", "serve", "api"]),
    ("web", &["model", "load", "credit", "analysis", "source", "app", "ui"]),
    ("fuzzing", &["model", "load", "credit", "analysis", "app"]),
    // lib.rs and main.rs: the crate's root declares every module.
    (
        "lib",
        &["model", "par", "load", "credit", "analysis", "source", "app", "ui", "serve", "api", "cli", "web", "fuzzing"],
    ),
    ("main", &["cli", "web", "app"]),
];

/// Items of the crate root any module may name: the bundled sample.
const ROOT_ITEMS: [&str; 2] = ["DEMO_RUN", "DEMO_RUN_NAME"];

/// A file's text without its comments (line comments and doc comments; `://` in a URL stays).
fn code_of(text: &str) -> String {
    text.lines()
        .map(|line| {
            let cut = line.match_indices("//").map(|(i, _)| i).find(|&i| i == 0 || line.as_bytes()[i - 1] != b':');
            &line[..cut.unwrap_or(line.len())]
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules `file` (at module path `path`, from `src/`) imports, with the first
/// line naming each.
fn imports_of(path: &[String], code: &str) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    let mut add = |module: String, line: &str| {
        if !found.iter().any(|(m, _)| *m == module) {
            found.push((module, line.trim().to_owned()));
        }
    };
    for line in code.lines() {
        for prefix in ["crate::", "$crate::"] {
            for (at, _) in line.match_indices(prefix) {
                if prefix == "crate::" && line[..at].ends_with('$') {
                    continue;
                }
                let rest = &line[at + prefix.len()..];
                let names: Vec<String> = if let Some(group) = rest.strip_prefix('{') {
                    group.split('}').next().unwrap_or("").split(',').map(|n| n.trim().to_owned()).collect()
                } else {
                    vec![rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("").to_owned()]
                };
                for name in names {
                    let name = name.split("::").next().unwrap_or("").trim().to_owned();
                    if !name.is_empty() && name != "self" {
                        add(name, line);
                    }
                }
            }
        }
        // `super::` chains that climb out of the file's top-level module.
        for (at, _) in line.match_indices("super::") {
            if line[..at].ends_with("super::") {
                continue;
            }
            let mut rest = &line[at..];
            let mut depth = 0;
            while let Some(r) = rest.strip_prefix("super::") {
                depth += 1;
                rest = r;
            }
            // An indented `super::` is inside an inline module (`mod tests`), one level deeper.
            let inline = usize::from(line.starts_with(' '));
            if depth >= path.len() + inline {
                let name = rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
                add(name.to_owned(), line);
            }
        }
    }
    found
}

#[test]
fn each_module_imports_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let layer = |name: &str| LAYERS.iter().position(|(m, _)| *m == name);
    // The table itself goes one way: each module's imports are listed before it.
    for (i, (module, allowed)) in LAYERS.iter().enumerate() {
        for a in *allowed {
            assert!(layer(a).is_some_and(|j| j < i), "LAYERS: {module} may import {a}, which is not below it");
        }
    }
    let mut edges: Vec<(String, String)> = Vec::new();
    let mut back_edges = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let mut path: Vec<String> = relative.iter().map(|c| c.to_string_lossy().into_owned()).collect();
        let last = path.pop().unwrap();
        if last != "mod.rs" {
            path.push(last.trim_end_matches(".rs").to_owned());
        }
        let top = path[0].clone();
        let Some((_, allowed)) = LAYERS.iter().find(|(m, _)| *m == top) else {
            panic!("{}: src/{top} is not in LAYERS: say which layer it is", relative.display());
        };
        // The file's module path, for `super::` (a file directly in src/ is at depth 1).
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        for (module, line) in imports_of(&path, &code) {
            if module == top || ROOT_ITEMS.contains(&module.as_str()) {
                continue;
            }
            if !edges.contains(&(top.clone(), module.clone())) {
                edges.push((top.clone(), module.clone()));
            }
            if !allowed.contains(&module.as_str()) {
                back_edges.push(format!("{}: {top} imports {module} ({line})", relative.display()));
            }
        }
    }
    assert!(back_edges.is_empty(), "imports against the layers:\n{}", back_edges.join("\n"));
    // No circle among the top-level modules (implied by the layers; checked on the edges found).
    for (from, _) in &edges {
        let mut stack = vec![from.clone()];
        let mut seen: Vec<String> = Vec::new();
        while let Some(at) = stack.pop() {
            for (a, b) in edges.iter().filter(|(a, _)| *a == at) {
                assert!(b != from, "an import circle through {from} ({a} imports {b})");
                if !seen.contains(b) {
                    seen.push(b.clone());
                    stack.push(b.clone());
                }
            }
        }
    }
    // The imports are read: the app imports the source layer and the core.
    for edge in [("app", "source"), ("source", "load"), ("ui", "app"), ("load", "par"), ("cli", "app")] {
        assert!(edges.contains(&(edge.0.to_owned(), edge.1.to_owned())), "{edge:?} not found");
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
    assert_eq!(
        top,
        ["data", "engine", "expr", "kernels", "listing.rs", "mod.rs", "params", "scheme.rs", "schemes"],
        "src/credit holds only these"
    );
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

/// `text` without its unit tests (the `#[cfg(test)]` module a file ends with).
fn without_tests(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod tests").map_or(text, |at| &text[..at])
}

#[test]
fn parameters_as_text_values_stop_at_the_scheme_face() {
    // Inside credit/, `Params` (the text values) is named only by the registry, the scheme face
    // and params/: every scheme, engine function and kernel reads typed knobs.
    let mut checked = 0;
    for (file, text) in credit_files("") {
        let at = file.strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/credit")).unwrap().to_owned();
        let allowed = at == Path::new("mod.rs") || at == Path::new("scheme.rs") || at.starts_with("params");
        if !allowed {
            assert!(!names(without_tests(&text), "Params"), "src/credit/{} names Params", at.display());
            checked += 1;
        }
    }
    assert!(checked >= 60, "{checked} files");
}

#[test]
fn a_scheme_file_declares_itself_once_and_computes_once() {
    // Each scheme is declared by scheme! or estimator! and computes in one function: no
    // hand-written Scheme implementation, accessor or compute/compute_explained twin.
    for (file, text) in credit_files("schemes") {
        if file.ends_with("mod.rs") {
            continue;
        }
        let text = without_tests(&text);
        assert!(text.contains("scheme!(") || text.contains("estimator!("), "{} declares no scheme", file.display());
        for written in
            ["impl Scheme for", "fn compute(&self", "fn compute_explained(&self", "fn info(&self)", "fn params(&self)"]
        {
            assert!(!text.contains(written), "{} writes `{written}` by hand", file.display());
        }
    }
}

#[test]
fn credit_is_layered_data_kernels_engine_face_schemes() {
    // Each layer of credit/ imports only the layers below it: data (batches, floats, sums, parts
    // of outputs) at the bottom, then params (the declarations), kernels (pure maths), engine
    // (run → batch plumbing), the scheme face, and the schemes on top.
    let above = |dir: &str| -> &[&str] {
        match dir {
            "data" => &["params", "kernels", "engine", "scheme", "schemes", "expr", "listing"],
            "kernels" => &["engine", "scheme", "schemes", "expr", "listing"],
            "engine" => &["scheme", "schemes", "expr", "listing"],
            _ => &[],
        }
    };
    for dir in ["data", "kernels", "engine"] {
        for (file, text) in credit_files(dir) {
            for layer in above(dir) {
                for prefix in ["crate::credit::", "$crate::credit::"] {
                    let path = format!("{prefix}{layer}::");
                    assert!(
                        !without_tests(&text).contains(&path),
                        "{} ({dir}) imports {layer}, a layer above it",
                        file.display()
                    );
                }
            }
        }
    }
}

#[test]
fn a_folder_format_is_one_file_and_one_line_in_one_table() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/source/folders");
    let table = std::fs::read_to_string(dir.join("mod.rs")).unwrap();
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
        if stem == "mod" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("pub static FORMAT: FolderFormat"), "{} declares no FORMAT", path.display());
        assert!(table.contains(&format!("&{stem}::FORMAT,")), "source/folders/{stem}.rs is not in FOLDERS");
        let name = text.split("name: \"").nth(1).and_then(|rest| rest.split('"').next()).unwrap().to_owned();
        names.push(name);
    }
    assert!(names.len() >= 10, "{names:?}");
    // No other file of the openers spells a folder format's name: they read the table.
    for folder in ["src/source", "src/serve"] {
        let mut files = Vec::new();
        rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join(folder), &mut files);
        for file in files.iter().filter(|f| !f.starts_with(&dir)) {
            let text = std::fs::read_to_string(file).unwrap();
            for name in &names {
                assert!(
                    !text.contains(&format!("Some(\"{name}\")")),
                    "{} matches the folder format {name:?} by name",
                    file.display()
                );
            }
        }
    }
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
    // The general-purpose sums and moments live in data/moments.rs; a scheme's loops that sum
    // while they write (PURE's weighted sums, GiGPO's per-state sums) stay with their scheme.
    for (file, text) in credit_files("").into_iter().filter(|(f, _)| !f.ends_with("data/moments.rs")) {
        for defined in
            ["fn mean_std", "fn group_stats", "struct Moments", "fn lane_sum", "fn sum_f64", "fn weighted_stats"]
        {
            assert!(!text.contains(defined), "{} defines its own `{defined}`", file.display());
        }
    }
}

/// The circles of imports inside a folder of `src/` that are known and not yet broken, each as
/// its folder and its members: no other may appear, and none of these may grow.
const KNOWN_CIRCLES: &[(&str, &[&str])] = &[("app", &["credit_worker", "open_run"])];

/// The module paths a file at module path `path` imports (`crate::a::b`, `$crate::a::b`, and
/// `super::` chains resolved; a `{…}` group gives each of its first names), with the first line
/// naming each.
fn import_paths(path: &[String], code: &str) -> Vec<(Vec<String>, String)> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut found: Vec<(Vec<String>, String)> = Vec::new();
    let mut add = |target: Vec<String>, line: &str| {
        if !target.is_empty() && !found.iter().any(|(t, _)| *t == target) {
            found.push((target, line.trim().to_owned()));
        }
    };
    // `a::b::{c, d}` after a base: the segments up to a group, then each first name in the group.
    let segments = |rest: &str| -> Vec<Vec<String>> {
        let mut base = Vec::new();
        let mut rest = rest;
        loop {
            if let Some(group) = rest.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or("");
                return inner
                    .split(',')
                    .map(|item| {
                        let first: String = item.trim().chars().take_while(|&c| ident(c)).collect();
                        let mut t = base.clone();
                        if !first.is_empty() && first != "self" {
                            t.push(first);
                        }
                        t
                    })
                    .collect();
            }
            let name: String = rest.chars().take_while(|&c| ident(c)).collect();
            if name.is_empty() {
                return vec![base];
            }
            rest = &rest[name.len()..];
            base.push(name);
            match rest.strip_prefix("::") {
                Some(r) => rest = r,
                None => return vec![base],
            }
        }
    };
    // The indents of the inline modules (`mod tests {`) the line is in.
    let mut inline: Vec<usize> = Vec::new();
    for line in code.lines() {
        let indent = line.len() - line.trim_start().len();
        if inline.last().is_some_and(|&i| indent == i && line.trim() == "}") {
            inline.pop();
        }
        let trimmed = line.trim_start().trim_start_matches("pub ").trim_start_matches("pub(crate) ");
        if trimmed.starts_with("mod ") && trimmed.trim_end().ends_with('{') {
            inline.push(indent);
            continue;
        }
        for (at, _) in line.match_indices("crate::") {
            if line[..at].ends_with(|c: char| ident(c)) {
                continue;
            }
            for target in segments(&line[at + "crate::".len()..]) {
                add(target, line);
            }
        }
        for (at, _) in line.match_indices("super::") {
            if line[..at].ends_with("super::") || line[..at].ends_with(|c: char| ident(c)) {
                continue;
            }
            let mut rest = &line[at..];
            let mut depth = 0usize;
            while let Some(r) = rest.strip_prefix("super::") {
                depth += 1;
                rest = r;
            }
            // Inside inline modules (`mod tests`), each is one level deeper.
            let depth = depth.saturating_sub(inline.len());
            if depth == 0 || depth > path.len() {
                continue;
            }
            let base = &path[..path.len() - depth];
            for target in segments(rest) {
                add(base.iter().cloned().chain(target).collect(), line);
            }
        }
    }
    found
}

/// The modules of one folder, each with the modules of the folder it imports and a line that does.
type Graph = std::collections::BTreeMap<String, Vec<(String, String)>>;

/// The import circles inside each folder below `src`: for each folder, the groups of its modules
/// (files and subfolders) that import each other round, with an import that closes each.
fn circles_in_folders(src: &Path) -> Vec<(String, Vec<String>, Vec<String>)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    // folder → (module → modules of the same folder it imports, with a line for each).
    let mut edges: std::collections::BTreeMap<Vec<String>, Graph> = std::collections::BTreeMap::new();
    let mut modules: std::collections::BTreeSet<Vec<String>> = std::collections::BTreeSet::new();
    let mut parsed = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(src).unwrap();
        let mut path: Vec<String> = relative.iter().map(|c| c.to_string_lossy().into_owned()).collect();
        let last = path.pop().unwrap();
        if last != "mod.rs" && last != "lib.rs" && last != "main.rs" {
            path.push(last.trim_end_matches(".rs").to_owned());
        }
        for i in 1..=path.len() {
            modules.insert(path[..i].to_vec());
        }
        parsed.push((relative.display().to_string(), path.clone(), code_of(&std::fs::read_to_string(file).unwrap())));
    }
    for (shown, path, code) in &parsed {
        for (target, line) in import_paths(path, code) {
            // Each folder the file is below, and the module of that folder it is in.
            for depth in 0..path.len() {
                let (folder, mine) = (&path[..depth], &path[depth]);
                if target.len() <= depth || target[..depth] != *folder || target[depth] == *mine {
                    continue;
                }
                if !modules.contains(&target[..=depth]) {
                    continue;
                }
                let entry = edges.entry(folder.to_vec()).or_default().entry(mine.clone()).or_default();
                if !entry.iter().any(|(t, _)| *t == target[depth]) {
                    entry.push((target[depth].clone(), format!("{shown}: {line}")));
                }
            }
        }
    }
    let mut circles = Vec::new();
    for (folder, graph) in &edges {
        // The modules each one reaches.
        let reach = |from: &str| -> std::collections::BTreeSet<String> {
            let mut seen = std::collections::BTreeSet::new();
            let mut stack = vec![from.to_owned()];
            while let Some(at) = stack.pop() {
                for (to, _) in graph.get(&at).into_iter().flatten() {
                    if seen.insert(to.clone()) {
                        stack.push(to.clone());
                    }
                }
            }
            seen
        };
        let mut done: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        for module in graph.keys() {
            if done.contains(module) || !reach(module).contains(module) {
                continue;
            }
            let mine = reach(module);
            let mut members: Vec<String> = mine.iter().filter(|other| reach(other).contains(module)).cloned().collect();
            members.sort();
            let lines: Vec<String> = members
                .iter()
                .flat_map(|m| graph.get(m).into_iter().flatten().filter(|(t, _)| members.contains(t)))
                .map(|(_, line)| line.clone())
                .collect();
            done.extend(members.iter().cloned());
            circles.push((folder.join("/"), members, lines));
        }
    }
    circles
}

#[test]
fn no_import_circle_inside_any_folder_but_the_known_ones() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let circles = circles_in_folders(&src);
    let mut unknown = Vec::new();
    for (folder, members, lines) in &circles {
        let known =
            KNOWN_CIRCLES.iter().any(|(f, m)| f == folder && m.iter().copied().eq(members.iter().map(String::as_str)));
        if !known {
            unknown.push(format!(
                "in src/{folder}: {} import each other round:\n  {}",
                members.join(", "),
                lines.join("\n  ")
            ));
        }
    }
    assert!(unknown.is_empty(), "import circles inside a folder:\n{}", unknown.join("\n"));
    // A known circle that is broken leaves the list.
    for (folder, members) in KNOWN_CIRCLES {
        let there =
            circles.iter().any(|(f, m, _)| f == folder && m.iter().map(String::as_str).eq(members.iter().copied()));
        assert!(there, "src/{folder}: {members:?} no longer import each other round: take them out of KNOWN_CIRCLES");
    }
}

#[test]
fn a_circle_inside_a_folder_is_found() {
    // A `source/` whose dispatcher and joined-run reader import each other, as it once did.
    let dir = std::env::temp_dir().join(format!("vantage-circle-{}", std::process::id()));
    let source = dir.join("source");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(source.join("mod.rs"), "pub mod joined;\npub mod path;\npub mod listing;\n").unwrap();
    std::fs::write(source.join("path.rs"), "use super::joined::load_joined;\nuse crate::source::listing::head;\n")
        .unwrap();
    std::fs::write(source.join("joined.rs"), "use super::path::{LOG_EXTENSIONS, load_path};\n").unwrap();
    std::fs::write(source.join("listing.rs"), "pub fn head() {}\n    use super::*;\n").unwrap();
    std::fs::write(dir.join("lib.rs"), "pub mod source;\n").unwrap();
    let circles = circles_in_folders(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(circles.len(), 1, "{circles:?}");
    assert_eq!((circles[0].0.as_str(), circles[0].1.clone()), ("source", vec!["joined".to_owned(), "path".to_owned()]));
}

/// The Rust files under `dirs` (relative to the package), each with its code (comments left out).
fn code_under(dirs: &[&str]) -> Vec<(std::path::PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in dirs {
        rust_files(&root.join(dir), &mut files);
    }
    files.into_iter().map(|f| (f.clone(), code_of(&std::fs::read_to_string(&f).unwrap()))).collect()
}

#[test]
fn colours_are_chosen_only_in_the_theme() {
    for (file, code) in code_under(&["src"]).iter().filter(|(f, _)| !f.ends_with("ui/theme.rs")) {
        for (at, _) in code.match_indices("Color32::") {
            let rest = &code[at + "Color32::".len()..];
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            // An image drawn as it is (tinted white) chooses no colour.
            let line = code[..at].rsplit('\n').next().unwrap_or_default();
            let untinted_image = name == "WHITE" && line.contains("painter.image(");
            assert!(
                untinted_image || name.is_empty() || name == "TRANSPARENT",
                "{}: Color32::{name}: colours are chosen in ui/theme.rs",
                file.display()
            );
        }
    }
}

#[test]
fn the_one_file_the_core_opens_by_path_is_the_trackio_database() {
    for (file, code) in code_under(&["src/model", "src/load", "src/credit", "src/analysis"]) {
        if let Some(word) = ["rusqlite", "open_with_flags", "memmap", "Mmap"].iter().find(|w| code.contains(*w)) {
            assert!(
                file.ends_with("load/formats/trackio.rs"),
                "{}: {word}: the core reads bytes it is given",
                file.display()
            );
        }
    }
}

#[test]
fn the_python_package_binds_to_the_api_layer_not_the_command_line() {
    let files = code_under(&["python/src"]);
    assert!(!files.is_empty());
    for (file, code) in &files {
        assert!(!code.contains("vantage::cli"), "{}: binds to the command line's launcher", file.display());
    }
    assert!(files.iter().any(|(_, code)| code.contains("vantage::api")), "python/src does not bind to vantage::api");
}
