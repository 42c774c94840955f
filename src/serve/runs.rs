//! The runs `vantage serve` offers: found under the paths given by the folder rule
//! (`source::folder`), each served as it is (a v2 dataset, or a log the web build reads whole and
//! follows) or converted once into a v2 dataset that the page reads in byte ranges, kept current
//! while the log grows.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
#[cfg(feature = "parquet")]
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// How a run reaches the page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Served {
    /// The file itself, fetched whole (and followed by Range requests when it is vantage JSONL).
    Raw,
    /// A v2 dataset: its directory on disk (the run itself, or its converted copy).
    Dataset(PathBuf),
    /// Being converted into the dataset at this directory, which lists the log's first pieces
    /// already: the page may open them, and follows the dataset as the rest is converted.
    Growing(PathBuf),
    /// Being converted into the dataset at this directory (nothing of it written yet).
    Converting(PathBuf),
    /// Conversion failed, why.
    Failed(String),
}

/// One run found.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Its id: the root's name and its path below the root, `/`-separated (`sample_runs/a.jsonl`).
    pub id: String,
    /// Where it is (canonical).
    pub path: PathBuf,
    /// Its format, as far as its name and first lines tell.
    pub format: String,
    /// Bytes (a directory's files together).
    pub size: u64,
    /// When it last changed (its newest file, for a directory).
    pub modified: SystemTime,
    /// How it is served.
    pub served: Served,
}

impl Entry {
    /// The URL path the page fetches the run from (relative to the page: `runs/…`, ending in `/`
    /// for a dataset).
    pub fn url(&self) -> Option<String> {
        let encoded: Vec<String> =
            self.id.split('/').map(|s| percent_encoding::utf8_percent_encode(s, SEGMENT).to_string()).collect();
        let base = format!("runs/{}", encoded.join("/"));
        match &self.served {
            Served::Raw => Some(base),
            Served::Dataset(_) | Served::Growing(_) => Some(format!("{base}/")),
            Served::Converting(_) | Served::Failed(_) => None,
        }
    }

    /// Whether the page should follow it: a vantage JSONL log served raw (by its new bytes), a
    /// dataset (by its manifest: a converted one is kept current here, and a dataset on disk may
    /// be written by `vantage convert --follow`).
    pub fn follow(&self) -> bool {
        match self.served {
            Served::Raw => self.format == "vantage",
            Served::Dataset(_) | Served::Growing(_) => true,
            Served::Converting(_) | Served::Failed(_) => false,
        }
    }

    /// The entry as the run list's JSON (`/api/runs`; docs/SERVE.md).
    pub fn to_json(&self) -> serde_json::Value {
        let modified = self.modified.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let (status, detail) = match &self.served {
            Served::Raw | Served::Dataset(_) => ("ready", String::new()),
            Served::Converting(_) => ("converting", String::new()),
            Served::Growing(_) => ("converting", "its first steps can be opened".to_owned()),
            Served::Failed(why) => ("failed", why.clone()),
        };
        serde_json::json!({
            "id": self.id,
            "url": self.url(),
            "format": self.format,
            "size": self.size,
            "modified": modified,
            "status": status,
            "detail": detail,
            "follow": self.follow(),
        })
    }
}

/// Characters escaped in a URL path segment.
const SEGMENT: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// The options of the catalog.
#[derive(Clone, Debug)]
pub struct CatalogOptions {
    /// Logs larger than this are converted to v2 (the page reads them in ranges); smaller ones of
    /// a format the web build reads are served as they are.
    pub convert_above: u64,
    /// Where converted datasets go when the run's folder cannot be written (and always, when
    /// `beside` is false).
    pub cache: PathBuf,
    /// Convert beside the run (`<folder>/.vantage/<name>.v2/`) when its folder can be written.
    pub beside: bool,
    /// Runs found at most (the rest are named as left out).
    pub max_runs: usize,
}

/// The runs under the served paths, found again at most once a second.
pub struct Catalog {
    roots: Vec<PathBuf>,
    options: CatalogOptions,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    entries: BTreeMap<String, Entry>,
    scanned: Option<Instant>,
    /// Conversions started, by run id: the job's shared status and what it converted.
    #[cfg(feature = "parquet")]
    jobs: BTreeMap<String, Arc<Job>>,
    /// What the last scan could not offer (more runs than `max_runs`).
    left_out: usize,
    /// Each run's format, told once from its first lines (a scan a second would read them again).
    formats: BTreeMap<PathBuf, (String, bool)>,
}

/// A conversion, running on its own thread.
#[cfg(feature = "parquet")]
struct Job {
    /// The dataset written.
    out: PathBuf,
    /// The size and time of the log when it was converted (a log read whole is converted again
    /// when they change; a followed one is kept current by its thread).
    source: (u64, SystemTime),
    followed: bool,
    /// Whether the log as it was at the start is converted (a followed log's dataset lists its
    /// first pieces before then, and the page may open them).
    caught_up: std::sync::atomic::AtomicBool,
    failed: Mutex<Option<String>>,
}

impl Catalog {
    /// A catalog of the runs under `roots` (canonical paths that exist).
    pub fn new(roots: Vec<PathBuf>, options: CatalogOptions) -> Self {
        Self { roots, options, state: Mutex::new(State::default()) }
    }

    /// The runs found (found again when the last look is older than a second), and how many were
    /// left out past the limit.
    pub fn list(&self) -> (Vec<Entry>, usize) {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if state.scanned.is_none_or(|t| t.elapsed() > Duration::from_secs(1)) {
            self.scan(&mut state);
        } else {
            Self::refresh_conversions(&mut state);
        }
        (state.entries.values().cloned().collect(), state.left_out)
    }

    /// The run whose id is the longest prefix of `segments`, and the segments after it.
    pub fn resolve(&self, segments: &[String]) -> Option<(Entry, Vec<String>)> {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if state.scanned.is_none() {
            self.scan(&mut state);
        }
        let longest = |state: &State| {
            (1..=segments.len()).rev().find_map(|cut| {
                let entry = state.entries.get(&segments[..cut].join("/"))?;
                Some((entry.clone(), segments[cut..].to_vec()))
            })
        };
        if let Some(found) = longest(&state) {
            return Some(found);
        }
        // A run found since the last look (a page opening a link to a new run).
        if state.scanned.is_some_and(|t| t.elapsed() > Duration::from_millis(200)) {
            self.scan(&mut state);
            return longest(&state);
        }
        None
    }

    /// Between two scans, the runs being converted say how far their conversion came (a run
    /// whose first steps were just written can be opened at once, not a second later).
    fn refresh_conversions(state: &mut State) {
        #[cfg(feature = "parquet")]
        for (id, entry) in &mut state.entries {
            if let (Served::Converting(_) | Served::Growing(_), Some(job)) = (&entry.served, state.jobs.get(id)) {
                entry.served = job.served();
            }
        }
        #[cfg(not(feature = "parquet"))]
        let _: &mut State = state;
    }

    fn scan(&self, state: &mut State) {
        let mut found: Vec<(String, PathBuf)> = Vec::new();
        let mut names: BTreeMap<String, usize> = BTreeMap::new();
        for root in &self.roots {
            // Two roots of the same name are told apart by a number.
            let base = root.file_name().map_or_else(|| "root".to_owned(), |n| n.to_string_lossy().into_owned());
            let seen = names.entry(base.clone()).or_default();
            *seen += 1;
            let name = if *seen > 1 { format!("{base}-{seen}") } else { base };
            if !crate::source::folder::is_plain(root) {
                found.push((name, root.clone()));
                continue;
            }
            for log in crate::source::folder::read(root, true).logs {
                // A log reached through a link out of the root is not served.
                let Ok(real) = log.canonicalize() else { continue };
                if !real.starts_with(root) {
                    continue;
                }
                let below = log.strip_prefix(root).unwrap_or(&log);
                let rel: Vec<String> =
                    below.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                // An id must survive the request path's checks (no hidden or odd segments).
                if rel.iter().any(|s| s.starts_with('.') || s.contains(['\\', ':'])) {
                    continue;
                }
                found.push((format!("{name}/{}", rel.join("/")), real));
            }
        }
        state.left_out = found.len().saturating_sub(self.options.max_runs);
        found.truncate(self.options.max_runs);
        let mut entries = BTreeMap::new();
        for (id, path) in found {
            let (size, modified) = size_and_time(&path);
            let (format, lines) = if let Some(known) = state.formats.get(&path) {
                known.clone()
            } else {
                let told = crate::source::path::format_of(&path);
                // Not told yet (a log just created, still empty) is asked again next time.
                if told.0 != "json" {
                    state.formats.insert(path.clone(), told.clone());
                }
                told
            };
            let served = self.served(state, &id, &path, (&format, lines), size, modified);
            entries.insert(id.clone(), Entry { id, path, format, size, modified, served });
        }
        state.entries = entries;
        state.scanned = Some(Instant::now());
    }

    /// How the run at `path` (of `format`, JSON lines or not) is served, starting its conversion
    /// when it needs one: a log the page can read and follow as it is (vantage JSONL, or a format
    /// that does not grow by lines) up to the size limit is served raw; a JSON-lines log of another
    /// format is converted at any size, so that what it gains reaches the page.
    fn served(
        &self,
        state: &mut State,
        id: &str,
        path: &Path,
        (format, lines): (&str, bool),
        size: u64,
        modified: SystemTime,
    ) -> Served {
        if crate::source::listing::is_v2_dataset(path) {
            return Served::Dataset(path.to_path_buf());
        }
        let web_reads = path.is_file() && !matches!(format, "parquet" | "trackio");
        let followed_raw = !lines || format == "vantage";
        if web_reads && followed_raw && size <= self.options.convert_above {
            return Served::Raw;
        }
        self.converted(state, id, path, (format, lines), size, modified)
    }

    #[cfg(not(feature = "parquet"))]
    fn converted(
        &self,
        _state: &mut State,
        _id: &str,
        _path: &Path,
        _format: (&str, bool),
        _size: u64,
        _modified: SystemTime,
    ) -> Served {
        let _: &Self = self;
        Served::Failed("this build has no Parquet writer (built without the `parquet` feature)".to_owned())
    }

    #[cfg(feature = "parquet")]
    fn converted(
        &self,
        state: &mut State,
        id: &str,
        path: &Path,
        (format, lines): (&str, bool),
        size: u64,
        modified: SystemTime,
    ) -> Served {
        if let Some(job) = state.jobs.get(id) {
            let failed = job.failed.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
            // A log read whole is converted again when it changed; a followed one is kept current
            // by its thread, unless that stopped (the log was truncated or replaced): then again.
            let stale = (!job.followed || failed.is_some()) && job.source != (size, modified);
            if !stale {
                return job.served();
            }
        }
        let out = self.out_dir(path);
        // Followed (converted as a stream, kept current as it grows): a JSON-lines log (not a
        // compressed one: its format is `compressed (…)`), or a folder of a format read file by
        // file. Any other run (a run folder, a folder read joined, an Inspect `.eval`) is converted
        // whole, and again when it changes: following one failed at once ("only a JSON-lines log or
        // a verl or TRL directory can be followed").
        let followed = if path.is_dir() {
            crate::source::folders::named(format).is_some_and(crate::source::folders::FolderFormat::streams)
        } else {
            lines
        };
        let job = Arc::new(Job {
            out: out.clone(),
            source: (size, modified),
            followed,
            caught_up: std::sync::atomic::AtomicBool::new(false),
            failed: Mutex::new(None),
        });
        state.jobs.insert(id.to_owned(), Arc::clone(&job));
        let input = path.to_path_buf();
        let spawned = std::thread::Builder::new().name(format!("convert {id}")).spawn(move || {
            let result = convert_job(&input, &job);
            if let Err(err) = result {
                log::warn!("{}: conversion failed: {err:#}", input.display());
                *job.failed.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(format!("{err:#}"));
            }
        });
        match spawned {
            Ok(_) => Served::Converting(out),
            Err(err) => Served::Failed(format!("could not start its conversion: {err}")),
        }
    }

    /// Where the converted copy of `path` goes: beside it (`.vantage/<name>.v2/` in its folder)
    /// when that folder can be written, else under the cache directory.
    #[cfg(feature = "parquet")]
    fn out_dir(&self, path: &Path) -> PathBuf {
        let name = path.file_name().map_or_else(|| "run".to_owned(), |n| n.to_string_lossy().into_owned());
        if self.options.beside
            && let Some(parent) = path.parent()
        {
            let dir = parent.join(crate::source::folder::CONVERTED_DIR);
            if std::fs::create_dir_all(&dir).is_ok() && writable(&dir) {
                return dir.join(format!("{name}.v2"));
            }
        }
        // The cache keeps one copy per source path (its hash tells same-named runs apart).
        let mut hash = crc32fast::Hasher::new();
        hash.update(path.as_os_str().as_encoded_bytes());
        self.options.cache.join(format!("{:08x}", hash.finalize())).join(format!("{name}.v2"))
    }
}

#[cfg(feature = "parquet")]
impl Job {
    /// How its run is served as the conversion stands.
    fn served(&self) -> Served {
        if let Some(why) = self.failed.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone() {
            return Served::Failed(why);
        }
        let listed = self.out.join(crate::load::formats::vantage_v2::MANIFEST).is_file();
        match (listed, self.caught_up.load(std::sync::atomic::Ordering::Relaxed)) {
            (true, true) => Served::Dataset(self.out.clone()),
            (true, false) => Served::Growing(self.out.clone()),
            (false, _) => Served::Converting(self.out.clone()),
        }
    }
}

/// Whether a file can be created in `dir`.
#[cfg(feature = "parquet")]
fn writable(dir: &Path) -> bool {
    let probe = dir.join(format!(".probe-{}", std::process::id()));
    let ok = std::fs::write(&probe, b"").is_ok();
    let _: std::io::Result<()> = std::fs::remove_file(&probe);
    ok
}

/// Converts the log at `input` into the job's dataset (following it when it is read as a stream).
#[cfg(feature = "parquet")]
fn convert_job(input: &Path, job: &Job) -> anyhow::Result<()> {
    let out = &job.out;
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if out.exists() {
        std::fs::remove_dir_all(out)?;
    }
    let options = crate::source::OpenOptions {
        memory_budget: crate::source::disk::memory_budget(),
        ..crate::source::OpenOptions::default()
    };
    let mut report = options.report(&input.display().to_string());
    // Each conversion holds about one piece of the log at a time; a folder of many large runs
    // converts them side by side, so the pieces are kept small.
    let piece = 64 << 20;
    let caught_up = || job.caught_up.store(true, std::sync::atomic::Ordering::Relaxed);
    if job.followed {
        let following = crate::source::convert::Following { piece, until_idle: None, caught_up: &mut { caught_up } };
        crate::source::convert::follow(input, out, &options, None, following, &mut report)?;
    } else {
        crate::source::convert::convert(input, out, &options, None, piece, &mut report)?;
        caught_up();
    }
    Ok(())
}

/// A file's size and time, or a directory's files' total and the newest time.
fn size_and_time(path: &Path) -> (u64, SystemTime) {
    let Ok(meta) = std::fs::metadata(path) else { return (0, SystemTime::UNIX_EPOCH) };
    let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    if !meta.is_dir() {
        return (meta.len(), modified);
    }
    let (mut size, mut newest) = (0u64, modified);
    let mut stack = vec![path.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            seen += 1;
            if seen > 100_000 {
                return (size, newest);
            }
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                size += meta.len();
                newest = newest.max(meta.modified().unwrap_or(SystemTime::UNIX_EPOCH));
            }
        }
    }
    (size, newest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_whose_first_steps_are_converted_can_be_opened_while_converting() {
        let entry = |served| Entry {
            id: "runs/big.jsonl".to_owned(),
            path: PathBuf::from("/data/runs/big.jsonl"),
            format: "verl".to_owned(),
            size: 1 << 30,
            modified: SystemTime::UNIX_EPOCH,
            served,
        };
        let out = PathBuf::from("/cache/big.jsonl.v2");
        let growing = entry(Served::Growing(out.clone())).to_json();
        assert_eq!(growing["status"], "converting", "{growing}");
        assert_eq!(growing["url"], "runs/runs/big.jsonl/", "{growing}");
        assert_eq!(growing["follow"], true, "the page follows what is converted next: {growing}");
        assert_eq!(growing["detail"], "its first steps can be opened", "{growing}");
        let converting = entry(Served::Converting(out.clone())).to_json();
        assert_eq!((converting["status"].as_str(), converting["url"].is_null()), (Some("converting"), true));
        let ready = entry(Served::Dataset(out)).to_json();
        assert_eq!((ready["status"].as_str(), ready["follow"].as_bool()), (Some("ready"), Some(true)));
    }
}
