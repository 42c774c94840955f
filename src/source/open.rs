//! One run opened from where it is, on this thread: bytes in memory, a path (native, as its
//! `OpenOptions` say: read whole or piece by piece, or followed), a v2 dataset or a URL (web). The
//! app's load queue runs these on its workers and hands the outcome to the app.

use std::sync::Arc;

use crate::load::formats::inspect::EvalFile;
use crate::load::formats::vantage_v2::remote::First;
use crate::load::{LoadError, LoadReport, Progress, load_shared_paced};
use crate::model::Run;
#[cfg(not(target_arch = "wasm32"))]
use crate::source::OpenOptions;

/// Something to open.
#[derive(Clone, Debug)]
pub enum LoadSource {
    /// Bytes already in memory (bundled sample, web picker, drag-and-drop on the web).
    Bytes {
        /// Display name.
        name: String,
        /// Content.
        bytes: std::sync::Arc<[u8]>,
    },
    /// A file or directory on disk (native only), opened as the load's `OpenOptions` say
    /// (followed while it grows when they say so).
    #[cfg(not(target_arch = "wasm32"))]
    Path(std::path::PathBuf),
    /// A vantage Parquet v2 dataset at a URL or in a folder picked or dropped on the page (web
    /// only), with the training steps to open (`None`: the latest that fit).
    #[cfg(target_arch = "wasm32")]
    Dataset(crate::source::web_dataset::WebDataset, Option<(i64, i64)>),
    /// A folder picked or dropped on the page that is not a v2 dataset (web only): its name and
    /// its files, opened by the folder rule (`source::web_folder`).
    #[cfg(target_arch = "wasm32")]
    Folder(String, Vec<(String, web_sys::File)>),
}

impl LoadSource {
    /// A folder picked or dropped on the page (web): a v2 dataset when it has its manifest, any
    /// other folder opened by the folder rule; `None` when it holds no file.
    #[cfg(target_arch = "wasm32")]
    pub fn of_folder(files: Vec<(String, web_sys::File)>) -> Option<Self> {
        if crate::source::web_folder::is_v2_dataset(&files) {
            return crate::source::web_dataset::WebDataset::from_files(files)
                .map(|dataset| Self::Dataset(dataset, None));
        }
        let name = files.first()?.0.split('/').next()?.to_owned();
        Some(Self::Folder(name, files))
    }

    /// Display name.
    pub fn name(&self) -> String {
        match self {
            Self::Bytes { name, .. } => name.clone(),
            #[cfg(not(target_arch = "wasm32"))]
            Self::Path(path) => path.display().to_string(),
            #[cfg(target_arch = "wasm32")]
            Self::Dataset(dataset, _) => dataset.name(),
            #[cfg(target_arch = "wasm32")]
            Self::Folder(name, _) => format!("{name}/"),
        }
    }

    /// Size in bytes, when known before reading.
    pub fn size(&self) -> u64 {
        match self {
            Self::Bytes { bytes, .. } => bytes.len() as u64,
            #[cfg(not(target_arch = "wasm32"))]
            Self::Path(path) => std::fs::metadata(path).map_or(0, |m| m.len()),
            #[cfg(target_arch = "wasm32")]
            Self::Dataset(..) | Self::Folder(..) => 0,
        }
    }

    /// Loads to the end on this thread (native loader threads) as `options` say, handing
    /// `partial` the run so far while a large log is read (`partial` returns `false` when the load
    /// was cancelled). A path goes through the one door (`source::path::open_all`): a folder of
    /// several logs gives an outcome for each (the first, the others in its `more`); a followed
    /// path goes on being followed by a `Follower` in the outcome.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn load(
        self,
        options: &OpenOptions,
        progress: Progress,
        partial: &mut dyn FnMut(Run, &LoadReport) -> bool,
        repaint: impl Fn() + Send + Clone + 'static,
    ) -> LoadOutcome {
        match self {
            Self::Path(path) => {
                let name = path.display().to_string();
                let mut template = options.report(&name);
                template.progress = progress;
                let opened = crate::source::path::open_all(&path, options, None, &template, Some(partial));
                let mut outcomes = opened.into_iter().map(|one| {
                    let name = one.path.display().to_string();
                    let follower = one.live.and_then(|live| {
                        crate::source::follow::Follower::start(live, &one.path, options, repaint.clone())
                    });
                    LoadOutcome {
                        lazy: one.lazy,
                        follower,
                        path: Some(one.path),
                        ..LoadOutcome::new(name, one.result, one.report)
                    }
                });
                let first = outcomes.next().unwrap_or_else(|| failed(name, "nothing to open"));
                LoadOutcome { more: outcomes.collect(), ..first }
            }
            bytes @ Self::Bytes { .. } => crate::load::pace::block_on(bytes.load_paced(progress)),
        }
    }

    /// Loads, giving the event loop back between records where a yielder is installed (the web).
    pub async fn load_paced(self, progress: Progress) -> LoadOutcome {
        self.load_paced_showing(progress, None).await
    }

    /// Loads as [`Self::load_paced`] does; a v2 dataset of several partitions first hands
    /// `first` the run of its latest partition (`remote::open_showing_first`).
    pub async fn load_paced_showing(self, progress: Progress, first: Option<First<'_>>) -> LoadOutcome {
        let yields = crate::load::pace::yields();
        let outcome = self.read_paced(progress, first).await;
        let slices = crate::load::pace::yields() - yields + 1;
        log::info!("{}: read in {slices} slice(s) of the event loop", outcome.name);
        outcome
    }

    async fn read_paced(
        self,
        progress: Progress,
        #[cfg_attr(
            not(target_arch = "wasm32"),
            expect(unused_variables, reason = "only a v2 dataset (web) shows a first run of its own")
        )]
        first: Option<First<'_>>,
    ) -> LoadOutcome {
        let name = self.name();
        let mut report = LoadReport::new(&name);
        report.progress = progress;
        let bytes: Arc<[u8]> = match self {
            Self::Bytes { bytes, .. } => bytes,
            #[cfg(target_arch = "wasm32")]
            Self::Dataset(dataset, range) => {
                let opened = crate::source::web_dataset::open(&dataset, &name, range, &mut report, first).await;
                return match opened {
                    Ok((run, texts)) => {
                        LoadOutcome { dataset: Some((dataset, texts)), ..LoadOutcome::new(name, Ok(run), report) }
                    }
                    Err(err) => LoadOutcome::new(name, Err(err), report),
                };
            }
            #[cfg(target_arch = "wasm32")]
            Self::Folder(folder, files) => {
                let opened = crate::source::web_folder::open(&folder, files, &report.progress).await;
                let mut outcomes =
                    opened.into_iter().map(|(name, result, report)| LoadOutcome::new(name, result, report));
                let first = outcomes.next().unwrap_or_else(|| failed(folder, "nothing to open"));
                return LoadOutcome { more: outcomes.collect(), ..first };
            }
            #[cfg(not(target_arch = "wasm32"))]
            Self::Path(path) => {
                // A path is read on this thread, through the door, as `Self::load` reads it.
                let progress = report.progress.clone();
                return Self::Path(path).load(&OpenOptions::default(), progress, &mut |_, _| true, || {});
            }
        };
        if let Some(outcome) = open_lazily(&name, Arc::clone(&bytes), &mut report) {
            return outcome;
        }
        // A vantage JSONL log keeps its texts in the bytes (the run holds them) instead of a copy.
        let result = load_shared_paced(&name, Arc::clone(&bytes), &mut report).await;
        // The web keeps the bytes for the credit worker, which loads its own copy of a large run.
        let bytes = cfg!(target_arch = "wasm32").then_some(bytes);
        LoadOutcome { bytes, ..LoadOutcome::new(name, result, report) }
    }
}

/// Opens an Inspect `.eval` lazily: the run from its directory, header and summaries now, the
/// samples later (`OpenRun::read_lazily`). `None` when the bytes are not an `.eval` with samples to read.
fn open_lazily(name: &str, bytes: Arc<[u8]>, report: &mut LoadReport) -> Option<LoadOutcome> {
    if !bytes.starts_with(b"PK\x03\x04") {
        return None;
    }
    let file = EvalFile::from_bytes(name, bytes, report).ok()?;
    if file.num_unread() == 0 {
        return None;
    }
    let result = file.run(report);
    let lazy = result.is_ok().then_some(file);
    Some(LoadOutcome { lazy, ..LoadOutcome::new(name.to_owned(), result, report.clone()) })
}

/// The result of one load.
#[derive(Debug)]
pub struct LoadOutcome {
    /// Display name.
    pub name: String,
    /// The run, or why nothing loaded.
    pub result: Result<Run, LoadError>,
    /// Warnings.
    pub report: LoadReport,
    /// An Inspect `.eval` opened from its summaries, whose samples are still to be read.
    pub lazy: Option<EvalFile<Arc<[u8]>>>,
    /// The bytes the run was read from (kept on the web only, for the credit worker).
    pub bytes: Option<Arc<[u8]>>,
    /// The thread that follows the run (native, `--follow` or the Follow toggle).
    #[cfg(not(target_arch = "wasm32"))]
    pub follower: Option<crate::source::follow::Follower>,
    /// The path the run was read from (native), for the Follow toggle.
    #[cfg(not(target_arch = "wasm32"))]
    pub path: Option<std::path::PathBuf>,
    /// The other runs of the same load: the other logs of a folder (`source::path::open_all`).
    pub more: Vec<Self>,
    /// The URL the run was fetched from (web), for the Follow toggle.
    #[cfg(target_arch = "wasm32")]
    pub url: Option<String>,
    /// The v2 dataset the run was opened from (web), and its texts still to be fetched.
    #[cfg(target_arch = "wasm32")]
    pub dataset:
        Option<(crate::source::web_dataset::WebDataset, Arc<crate::load::formats::vantage_v2::remote::RemoteTexts>)>,
}

/// The outcome of a load that ended with `why` before reading anything: its loader failed, or the
/// bytes could not be had (a dropped file, a URL).
pub fn failed(name: String, why: &str) -> LoadOutcome {
    let report = LoadReport::new(&name);
    let err = LoadError::from(std::io::Error::other(why.to_owned())).with_path(&name);
    LoadOutcome::new(name, Err(err), report)
}

impl LoadOutcome {
    /// An outcome with no lazy file, bytes or follower.
    pub fn new(name: String, result: Result<Run, LoadError>, report: LoadReport) -> Self {
        Self {
            name,
            result,
            report,
            lazy: None,
            bytes: None,
            more: Vec::new(),
            #[cfg(not(target_arch = "wasm32"))]
            follower: None,
            #[cfg(not(target_arch = "wasm32"))]
            path: None,
            #[cfg(target_arch = "wasm32")]
            url: None,
            #[cfg(target_arch = "wasm32")]
            dataset: None,
        }
    }
}

/// The most a page fetches whole: 1 GiB (wasm32's memory is 4 GiB, and one allocation at most
/// 2 GiB; the run read from the bytes needs room beside them).
#[cfg(target_arch = "wasm32")]
pub const MAX_FETCH: u64 = 1 << 30;

/// The body of `url` (web), read chunk by chunk into `progress` (with the `Content-Length` as its
/// total when the server sends one); an error past [`MAX_FETCH`] bytes.
#[cfg(target_arch = "wasm32")]
pub async fn fetch_bytes(url: &str, progress: &Progress) -> Result<Vec<u8>, String> {
    use eframe::wasm_bindgen::JsCast as _;
    let response = crate::source::http::get(url, None, None).await.map_err(|e| match e {
        crate::source::http::GetError::Unreachable => {
            "the request failed: the server is unreachable, or it does not allow cross-origin requests (CORS); \
             download the file and open it with Open… instead"
                .to_owned()
        }
        crate::source::http::GetError::Failed(why) => why,
    })?;
    if !response.ok() {
        return Err(format!("HTTP {} {}", response.status(), response.status_text()));
    }
    let length: Option<u64> =
        response.headers().get("content-length").ok().flatten().and_then(|l| l.trim().parse().ok());
    let too_large = |size: u64| {
        format!(
            "{size} bytes: more than a web page reads whole ({MAX_FETCH} bytes; the page's memory holds the file and \
             its run); convert it to a vantage Parquet v2 dataset (`vantage convert`, or `vantage serve`, which \
             converts large logs) and open the dataset, which is read in byte ranges"
        )
    };
    if let Some(size) = length.filter(|&n| n > MAX_FETCH) {
        return Err(too_large(size));
    }
    progress.set_total(length.unwrap_or(0));
    let Some(body) = response.body() else {
        // No stream (an old browser): the whole body at once.
        return crate::source::http::body(&response).await;
    };
    let reader: web_sys::ReadableStreamDefaultReader =
        body.get_reader().dyn_into().map_err(|_err| "the body is not a readable stream".to_owned())?;
    let mut bytes = Vec::new();
    let reserve = |bytes: &mut Vec<u8>, more: usize| {
        bytes.try_reserve(more).map_err(|_err| format!("the page could not hold {} bytes", bytes.len() + more))
    };
    reserve(&mut bytes, length.unwrap_or(0) as usize)?;
    loop {
        let chunk = wasm_bindgen_futures::JsFuture::from(reader.read())
            .await
            .map_err(|e| format!("reading the body after {} bytes: {e:?}", bytes.len()))?;
        let done = js_sys::Reflect::get(&chunk, &"done".into()).ok().and_then(|d| d.as_bool()).unwrap_or(true);
        if done {
            break;
        }
        let value = js_sys::Reflect::get(&chunk, &"value".into()).map_err(|e| format!("{e:?}"))?;
        let piece = js_sys::Uint8Array::new(&value).to_vec();
        // A server that sent no length (or a wrong one) is stopped at the same bound.
        if (bytes.len() + piece.len()) as u64 > MAX_FETCH {
            return Err(too_large((bytes.len() + piece.len()) as u64));
        }
        reserve(&mut bytes, piece.len())?;
        bytes.extend_from_slice(&piece);
        progress.set(bytes.len() as u64);
    }
    Ok(bytes)
}
