//! Puts the web app into the native binary, for `vantage serve` (src/serve/assets.rs includes the
//! list written here). Where its files come from, first that applies:
//!
//! 1. `VANTAGE_WEB_DIST=DIR`: a `trunk build` output (CI builds the web app once with trunk for the
//!    browser test, and that same build is embedded: nothing is compiled twice).
//! 2. A release build (or `VANTAGE_WEB_BUILD=1` in any profile): the app is compiled here for
//!    `wasm32-unknown-unknown` (a nested `cargo build` into its own target directory, as
//!    substrate's wasm-builder does) and its JS glue written by wasm-bindgen, used as a library
//!    (the `web-app` feature), so a fresh machine needs no trunk and no wasm-bindgen CLI. The
//!    wasm32 target is added with rustup when missing. `VANTAGE_WEB_BUILD=0` skips it.
//! 3. Otherwise (debug builds: the tests, clippy) nothing: the binary serves a plain run list.
//!
//! The files are stored gzip-compressed and sent that way to browsers that take gzip.

use std::path::{Path, PathBuf};

#[path = "src/serve/content_type.rs"]
mod content_type;
use content_type::content_type;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=VANTAGE_WEB_DIST");
    println!("cargo:rerun-if-env-changed=VANTAGE_WEB_BUILD");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let wasm = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "wasm32");
    let files = if wasm {
        Vec::new()
    } else if let Ok(dist) = std::env::var("VANTAGE_WEB_DIST") {
        let dist = PathBuf::from(dist);
        println!("cargo:rerun-if-changed={}", dist.display());
        let files = files_in(&dist);
        assert!(
            files.iter().any(|(name, _)| name == "index.html"),
            "VANTAGE_WEB_DIST={}: no index.html there (a `trunk build --release` output holds one)",
            dist.display()
        );
        files
    } else if wants_build() {
        match build_web(&out) {
            Ok(files) => files,
            Err(why) => {
                println!("cargo:warning=vantage serve will have no web app in this build: {why}");
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    write_list(&out, &files);
}

/// Whether to compile the web app here (see the module documentation).
fn wants_build() -> bool {
    match std::env::var("VANTAGE_WEB_BUILD").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        _ => std::env::var("PROFILE").is_ok_and(|p| p == "release") && cfg!(feature = "web-app"),
    }
}

/// The files of a directory (not below it), by name.
fn files_in(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().is_file())
                .filter_map(|e| Some((e.file_name().to_str()?.to_owned(), e.path())))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Writes `web_assets.rs`: each file gzip-compressed beside it, and the list that includes them.
fn write_list(out: &Path, files: &[(String, PathBuf)]) {
    use std::io::Write as _;
    let dir = out.join("web");
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("OUT_DIR is writable");
    let mut list = String::from(
        "/// The web app's files: name, content type, gzip-compressed bytes.\npub static FILES: &[(&str, &str, &[u8])] = &[\n",
    );
    for (name, path) in files {
        let bytes = read_file(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let packed = dir.join(format!("{name}.gz"));
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(&bytes).expect("gzip into memory");
        write_file(&packed, &encoder.finish().expect("gzip into memory")).expect("OUT_DIR is writable");
        list.push_str(&format!(
            "    ({name:?}, {:?}, include_bytes!({:?})),\n",
            content_type(name),
            packed.display().to_string()
        ));
    }
    list.push_str("];\n");
    write_file(&out.join("web_assets.rs"), list.as_bytes()).expect("OUT_DIR is writable");
}

/// Compiles the web app for wasm32 and writes its page, glue and wasm into `out/web-app/`.
fn build_web(out: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").map_err(|e| e.to_string())?);
    for watched in ["src", "index.html", "Cargo.toml", "Cargo.lock", "assets"] {
        println!("cargo:rerun-if-changed={}", manifest_dir.join(watched).display());
    }
    ensure_wasm_target()?;
    // Its own target directory beside this profile's (the outer build holds this one's lock).
    let profile_dir = out.ancestors().nth(3).ok_or("OUT_DIR has an unexpected layout")?;
    let target_dir = profile_dir.join("web-app-target");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = std::process::Command::new(cargo);
    command
        .args(["build", "--release", "--target", "wasm32-unknown-unknown", "--no-default-features", "--bin", "vantage"])
        .arg("--manifest-path")
        .arg(manifest_dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("VANTAGE_WEB_BUILD");
    if manifest_dir.join("Cargo.lock").is_file() {
        command.arg("--locked");
    }
    let status = command.status().map_err(|e| format!("could not run cargo for wasm32: {e}"))?;
    if !status.success() {
        return Err(format!("the wasm32 build failed ({status})"));
    }
    let wasm = target_dir.join("wasm32-unknown-unknown/release/vantage.wasm");
    let app = out.join("web-app");
    let _: std::io::Result<()> = std::fs::remove_dir_all(&app);
    std::fs::create_dir_all(&app).map_err(|e| e.to_string())?;
    bindgen(&wasm, &app)?;
    let page = read_file(&manifest_dir.join("index.html")).map_err(|e| format!("index.html: {e}"))?;
    let page = page_for(&String::from_utf8_lossy(&page))?;
    write_file(&app.join("index.html"), page.as_bytes()).map_err(|e| e.to_string())?;
    Ok(files_in(&app))
}

/// Adds the wasm32 target with rustup when the toolchain lacks it.
fn ensure_wasm_target() -> Result<(), String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let sysroot = std::process::Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("rustc --print sysroot: {e}"))?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
    if sysroot.join("lib/rustlib/wasm32-unknown-unknown").is_dir() {
        return Ok(());
    }
    let added = std::process::Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]).status();
    match added {
        Ok(status) if status.success() => Ok(()),
        _ => Err("the wasm32-unknown-unknown target is missing (rustup target add wasm32-unknown-unknown)".to_owned()),
    }
}

/// Writes `vantage.js` and `vantage_bg.wasm` for the page.
#[cfg(feature = "web-app")]
fn bindgen(wasm: &Path, app: &Path) -> Result<(), String> {
    let mut bindgen = wasm_bindgen_cli_support::Bindgen::new();
    bindgen.input_path(wasm).typescript(false).out_name("vantage");
    bindgen.web(true).map_err(|e| e.to_string())?;
    bindgen.generate(app).map_err(|e| format!("wasm-bindgen: {e:#}"))
}

#[cfg(not(feature = "web-app"))]
fn bindgen(_wasm: &Path, _app: &Path) -> Result<(), String> {
    Err("built without the `web-app` feature, which runs wasm-bindgen".to_owned())
}

/// The page: the repository's `index.html` with Trunk's line replaced by what Trunk writes there.
fn page_for(page: &str) -> Result<String, String> {
    let start = page.find("<link data-trunk").ok_or("index.html has no <link data-trunk …> line")?;
    let end = start + page[start..].find('>').ok_or("index.html: unclosed <link data-trunk")? + 1;
    let loader = "<link rel=\"modulepreload\" href=\"./vantage.js\" crossorigin=\"anonymous\">\
                  <link rel=\"preload\" href=\"./vantage_bg.wasm\" crossorigin=\"anonymous\" as=\"fetch\" type=\"application/wasm\">\n\
                  <script type=\"module\">\n\
                  import init, * as bindings from './vantage.js';\n\
                  const wasm = await init({ module_or_path: './vantage_bg.wasm' });\n\
                  window.wasmBindings = bindings;\n\
                  </script>";
    Ok(format!("{}{loader}{}", &page[..start], &page[end..]))
}

/// A file's bytes (through `OpenOptions`: the wasm lint config, which also checks this host-only
/// script, names `std::fs::read`).
fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::OpenOptions::new().read(true).open(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Writes a file whole.
fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    std::fs::OpenOptions::new().write(true).create(true).truncate(true).open(path)?.write_all(bytes)
}
