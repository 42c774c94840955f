//! Writing files (native): atomic replacement, the user's saved formulas, and the memory a load
//! may use on this machine.

/// How many bytes of memory a file read whole takes per byte of file while it loads (the bytes
/// themselves and the run with its texts copied; measured at about 2 for vantage JSONL).
pub(crate) const WHOLE_READ_FACTOR: u64 = 3;

/// Writes a file through a temporary one beside it (`.NAME.PID.partial`), renamed into place once
/// `write` has written all of it: an interrupted or failed write never leaves half a file at
/// `path`, and the temporary one is removed.
pub fn replace_atomically(
    path: &std::path::Path,
    write: impl FnOnce(&std::path::Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.{}.partial", std::process::id()));
    let written = write(&temporary).and_then(|()| {
        hold_before_rename(&temporary);
        std::fs::rename(&temporary, path)
    });
    if written.is_err() {
        let _: std::io::Result<()> = std::fs::remove_file(&temporary);
    }
    written
}

/// Under `VANTAGE_TEST_HOLD_WRITE=1` (set by `tests/it/cli.rs`'s kill test, nowhere else): the
/// temporary file written whole, not yet renamed, marks itself with `TEMPORARY.held` and waits a
/// minute, so that the test kills the process there, mid-write, for certain (a kill at a random
/// moment may land before or after the write).
fn hold_before_rename(temporary: &std::path::Path) {
    if std::env::var_os("VANTAGE_TEST_HOLD_WRITE").is_some_and(|v| v == "1") {
        let mut marker = temporary.as_os_str().to_owned();
        marker.push(".held");
        if std::fs::write(&marker, b"").is_ok() {
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
    }
}

/// [`replace_atomically`] with `bytes`.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_atomically(path, |temporary| std::fs::write(temporary, bytes))
}

/// The folder saved formulas live in (`NAME.vx`): `$VANTAGE_FORMULAS`, else `vantage/formulas`
/// in the user's configuration folder (`$XDG_CONFIG_HOME`, `~/.config`, or `%APPDATA%`).
pub fn formulas_dir() -> Option<std::path::PathBuf> {
    if let Some(dir) = std::env::var_os("VANTAGE_FORMULAS") {
        return Some(std::path::PathBuf::from(dir));
    }
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".config")))
        .or_else(|| std::env::var_os("APPDATA").map(std::path::PathBuf::from))?;
    Some(config.join("vantage").join("formulas"))
}

/// The saved formulas: (name, text), by name.
pub fn saved_formulas() -> Vec<(String, String)> {
    let Some(dir) = formulas_dir() else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut found: Vec<(String, String)> = entries
        .flatten()
        .filter_map(|e| {
            let path = e.path();
            (path.extension()? == "vx").then_some(())?;
            let name = path.file_stem()?.to_str()?.to_owned();
            Some((name, std::fs::read_to_string(&path).ok()?))
        })
        .collect();
    found.sort();
    found
}

/// Saves a formula as `NAME.vx` in the formulas folder `dir` (replacing one of that name).
pub fn save_formula(dir: &std::path::Path, name: &str, text: &str) -> std::io::Result<std::path::PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("{name}.vx"));
    write_atomically(&path, text.as_bytes())?;
    Ok(path)
}

/// The memory a load may use on this machine (`OpenOptions::memory_budget`): `VANTAGE_MEMORY_BUDGET`
/// (a size such as `8G`), else the memory available now less a margin of a tenth (at least
/// 512 MB) for the app, else `load::budget::DEFAULT_BUDGET`.
pub fn memory_budget() -> u64 {
    if let Some(bytes) = std::env::var("VANTAGE_MEMORY_BUDGET").ok().and_then(|v| crate::load::budget::parse_size(&v)) {
        return bytes.max(1);
    }
    match available_memory() {
        Some(available) => available.saturating_sub((available / 10).max(512_000_000)).max(256_000_000),
        None => crate::load::budget::DEFAULT_BUDGET,
    }
}

/// The memory available to new allocations (Linux: `MemAvailable`, less a cgroup limit's headroom).
fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    let mut available = kb * 1024;
    let limit = std::fs::read_to_string("/sys/fs/cgroup/memory.max").ok().and_then(|t| t.trim().parse::<u64>().ok());
    let used = std::fs::read_to_string("/sys/fs/cgroup/memory.current").ok().and_then(|t| t.trim().parse::<u64>().ok());
    if let (Some(limit), Some(used)) = (limit, used) {
        available = available.min(limit.saturating_sub(used));
    }
    Some(available)
}

/// The user's cache folder for vantage (`$XDG_CACHE_HOME/vantage`, `~/.cache/vantage`, or
/// `%LOCALAPPDATA%\vantage`; the system's temporary folder when none is set): where `vantage serve`
/// converts runs whose own folder cannot be written.
pub fn cache_dir() -> std::path::PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")))
        .or_else(|| std::env::var_os("LOCALAPPDATA").map(std::path::PathBuf::from))
        .unwrap_or_else(std::env::temp_dir)
        .join("vantage")
}

/// The tokenizer of a run at `path` (a log or a folder): a `tokenizer.json` in its folder, or in
/// the folder above, that `load::tokenizer` can decode with; `None` when there is none or it
/// cannot be read (said in the log).
pub fn tokenizer_beside(path: &std::path::Path) -> Option<crate::load::tokenizer::Vocab> {
    let dir = if path.is_dir() { path } else { path.parent()? };
    let file = [dir.join("tokenizer.json"), dir.parent()?.join("tokenizer.json")].into_iter().find(|f| f.is_file())?;
    let bytes = match std::fs::metadata(&file) {
        Ok(m) if m.len() <= 64 << 20 => std::fs::read(&file).ok()?,
        _ => return None,
    };
    match crate::load::tokenizer::Vocab::from_json(&bytes) {
        Ok(vocab) => Some(vocab),
        Err(why) => {
            log::warn!("{}: not used to decode token ids: {why}", file.display());
            None
        }
    }
}
