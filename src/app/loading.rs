//! Loading runs off the UI thread: a named worker thread per file on native, in-frame on the web.

use std::sync::mpsc;

use std::sync::Arc;

use crate::load::formats::inspect::EvalFile;
use crate::load::{LoadError, LoadReport, Progress, load_shared_paced};
use crate::model::Run;
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
}

/// What a load thread sends: the run so far while a large log is read, then the outcome.
#[derive(Debug)]
pub enum LoadMessage {
    /// The run so far (more is being read).
    Partial(Box<Run>, LoadReport),
    /// The load ended.
    Done(Box<LoadOutcome>),
    /// Files chosen in the file dialog, to be loaded.
    Picked(Vec<LoadSource>),
}

impl LoadSource {
    /// Display name.
    pub fn name(&self) -> String {
        match self {
            Self::Bytes { name, .. } => name.clone(),
            #[cfg(not(target_arch = "wasm32"))]
            Self::Path(path) => path.display().to_string(),
            #[cfg(target_arch = "wasm32")]
            Self::Dataset(dataset, _) => dataset.name(),
        }
    }

    /// Size in bytes, when known before reading.
    fn size(&self) -> u64 {
        match self {
            Self::Bytes { bytes, .. } => bytes.len() as u64,
            #[cfg(not(target_arch = "wasm32"))]
            Self::Path(path) => std::fs::metadata(path).map_or(0, |m| m.len()),
            #[cfg(target_arch = "wasm32")]
            Self::Dataset(..) => 0,
        }
    }

    /// Loads to the end on this thread (native loader threads) as `options` say, handing
    /// `partial` the run so far while a large log is read (`partial` returns `false` when the load
    /// was cancelled). A followed path goes on being followed by a `Follower` in the outcome.
    #[cfg(not(target_arch = "wasm32"))]
    fn load(
        self,
        options: &OpenOptions,
        progress: Progress,
        partial: &mut dyn FnMut(Run, &LoadReport) -> bool,
        repaint: impl Fn() + Send + 'static,
    ) -> LoadOutcome {
        match self {
            Self::Path(path) if options.follow => follow(&path, options, progress, partial, repaint),
            Self::Path(path) => {
                let name = path.display().to_string();
                let mut report = options.report(&name);
                report.progress = progress;
                if path.is_file() && path.extension().is_some_and(|e| e.eq_ignore_ascii_case("eval")) {
                    return crate::load::pace::block_on(Self::Path(path).load_paced(report.progress));
                }
                let result = crate::source::path::open(&path, options, None, &mut report, Some(partial));
                LoadOutcome { path: Some(path), ..LoadOutcome::new(name, result, report) }
            }
            bytes @ Self::Bytes { .. } => crate::load::pace::block_on(bytes.load_paced(progress)),
        }
    }

    /// Loads, giving the event loop back between records where a yielder is installed (the web).
    async fn load_paced(self, progress: Progress) -> LoadOutcome {
        let yields = crate::load::pace::yields();
        let outcome = self.read_paced(progress).await;
        let slices = crate::load::pace::yields() - yields + 1;
        log::info!("{}: read in {slices} slice(s) of the event loop", outcome.name);
        outcome
    }

    async fn read_paced(self, progress: Progress) -> LoadOutcome {
        let name = self.name();
        let mut report = LoadReport::new(&name);
        report.progress = progress;
        let bytes: Arc<[u8]> = match self {
            Self::Bytes { bytes, .. } => bytes,
            #[cfg(target_arch = "wasm32")]
            Self::Dataset(dataset, range) => {
                let opened = crate::load::formats::vantage_v2::remote::open(&dataset, &name, range, &mut report).await;
                return match opened {
                    Ok((run, texts)) => {
                        LoadOutcome { dataset: Some((dataset, texts)), ..LoadOutcome::new(name, Ok(run), report) }
                    }
                    Err(err) => LoadOutcome::new(name, Err(err), report),
                };
            }
            #[cfg(not(target_arch = "wasm32"))]
            Self::Path(path) => {
                // An `.eval` is read whole and opened lazily (`LoadSource::load` sends nothing else
                // here).
                if !(path.is_file() && path.extension().is_some_and(|e| e.eq_ignore_ascii_case("eval"))) {
                    let result = crate::source::path::load_path(&path, None, &mut report);
                    return LoadOutcome::new(name, result, report);
                }
                match std::fs::read(&path) {
                    Ok(bytes) => bytes.into(),
                    Err(err) => {
                        let result = Err(LoadError::from(err).with_path(&name));
                        return LoadOutcome::new(name, result, report);
                    }
                }
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

/// Opens `path` to follow it: reads what is there (showing the run so far with `partial`), then
/// hands the reader to a [`Follower`] thread.
#[cfg(not(target_arch = "wasm32"))]
fn follow(
    path: &std::path::Path,
    options: &OpenOptions,
    progress: Progress,
    partial: &mut dyn FnMut(Run, &LoadReport) -> bool,
    repaint: impl Fn() + Send + 'static,
) -> LoadOutcome {
    let name = path.display().to_string();
    let mut report = options.report(&name);
    report.progress = progress;
    match crate::source::follow::open(path, &mut report, partial) {
        Ok((run, live)) => {
            let report = live.report().clone();
            let follower = crate::source::follow::Follower::start(live, repaint);
            LoadOutcome { follower, path: Some(path.to_owned()), ..LoadOutcome::new(name, Ok(run), report) }
        }
        Err(err) => LoadOutcome::new(name, Err(err), report),
    }
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
fn failed(name: String, why: &str) -> LoadOutcome {
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

/// One load in flight.
struct Pending {
    id: u64,
    name: String,
    receiver: mpsc::Receiver<LoadMessage>,
    progress: Progress,
    total_bytes: u64,
    /// Whether its last message (the result, or the files picked) arrived.
    ended: bool,
}

/// Loads in flight, and how paths are opened.
#[derive(Default)]
pub struct LoadQueue {
    pending: Vec<Pending>,
    next_id: u64,
    /// How a path is opened unless a load says otherwise (the command line's `--steps`,
    /// `--outcomes` and memory budget).
    pub options: OpenOptions,
    /// Faults tests inject (see [`super::faults`]).
    pub faults: super::faults::Faults,
}

impl LoadQueue {
    /// Starts loading `source` with the queue's options; `repaint` is called when it is done.
    /// Returns the load's id (the one its messages carry), `None` when no loader thread could be
    /// started.
    pub fn start(&mut self, source: LoadSource, repaint: impl Fn() + Send + Clone + 'static) -> Option<u64> {
        self.start_with(source, self.options.clone(), repaint)
    }

    /// Starts loading `source` as `options` say (the training steps of "Open steps", following).
    pub fn start_with(
        &mut self,
        source: LoadSource,
        options: OpenOptions,
        repaint: impl Fn() + Send + Clone + 'static,
    ) -> Option<u64> {
        let (sender, receiver) = mpsc::channel();
        let name = source.name();
        let progress = Progress::default();
        let total_bytes = source.size();
        let shared = progress.clone();
        // The web opens no paths: its datasets carry their own training steps.
        #[cfg(target_arch = "wasm32")]
        drop(options);
        #[cfg(not(target_arch = "wasm32"))]
        {
            let faults = self.faults.clone();
            let thread_name = name.clone();
            let spawned = std::thread::Builder::new().name(format!("load {name}")).spawn(move || {
                let partials = sender.clone();
                let again = repaint.clone();
                let mut partial = move |run: Run, report: &LoadReport| {
                    let sent = partials.send(LoadMessage::Partial(Box::new(run), report.clone())).is_ok();
                    again();
                    sent
                };
                // A loader that panics (a bug) ends this load with an error; the app goes on.
                let what = format!("load {thread_name}");
                let outcome = faults
                    .catch(&what, || Ok(source.load(&options, shared, &mut partial, repaint.clone())))
                    .unwrap_or_else(|why| failed(thread_name, &why));
                let _: Result<(), _> = sender.send(LoadMessage::Done(Box::new(outcome)));
                repaint();
            });
            if let Err(err) = spawned {
                log::error!("could not start a loader thread: {err}");
                return None;
            }
        }
        #[cfg(target_arch = "wasm32")]
        wasm_bindgen_futures::spawn_local(async move {
            let _: Result<(), _> = sender.send(LoadMessage::Done(Box::new(source.load_paced(shared).await)));
            repaint();
        });
        Some(self.push(name, receiver, progress, total_bytes))
    }

    fn push(
        &mut self,
        name: String,
        receiver: mpsc::Receiver<LoadMessage>,
        progress: Progress,
        total_bytes: u64,
    ) -> u64 {
        self.next_id += 1;
        self.pending.push(Pending { id: self.next_id, name, receiver, progress, total_bytes, ended: false });
        self.next_id
    }

    /// Stops waiting for load `i` (in `pending_names` order); its result is dropped when it arrives.
    /// Returns the load's id (a run shown while it was read keeps what was read).
    pub fn cancel(&mut self, i: usize) -> Option<u64> {
        (i < self.pending.len()).then(|| self.pending.remove(i).id)
    }

    /// Names of the loads still running.
    pub fn pending_names(&self) -> impl Iterator<Item = &str> {
        self.pending.iter().map(|p| p.name.as_str())
    }

    /// Each load still running with the share of its bytes read (`None` when the size is unknown).
    pub fn pending_progress(&self) -> impl Iterator<Item = (&str, Option<f32>)> {
        self.pending.iter().map(|p| {
            let total = if p.total_bytes > 0 { p.total_bytes } else { p.progress.total() };
            let share = (total > 0).then(|| (p.progress.get() as f64 / total as f64).min(1.0) as f32);
            (p.name.as_str(), share)
        })
    }

    /// Loads a file dropped on the window: from its path on native, from its bytes on the web.
    pub fn start_dropped(&mut self, file: &egui::DroppedFileHandle, repaint: impl Fn() + Send + Clone + 'static) {
        #[cfg(not(target_arch = "wasm32"))]
        self.start(LoadSource::Path(file.path().to_path_buf()), repaint);
        #[cfg(target_arch = "wasm32")]
        {
            let (sender, receiver) = mpsc::channel();
            let file = file.clone();
            let name = file.path().display().to_string();
            wasm_bindgen_futures::spawn_local(async move {
                let name = file.path().display().to_string();
                let outcome = match file.bytes_async().await {
                    Ok(bytes) => LoadSource::Bytes { name, bytes: bytes.into() }.load_paced(Progress::default()).await,
                    Err(err) => failed(name, &err),
                };
                let _: Result<(), _> = sender.send(LoadMessage::Done(Box::new(outcome)));
                repaint();
            });
            self.push(name, receiver, Progress::default(), 0);
        }
    }

    /// Asks the user for files, or natively for one folder (a verl or TRL directory, a vantage
    /// Parquet v2 dataset), with the native dialog on a worker thread or the async picker on the
    /// web; the chosen ones arrive as [`LoadMessage::Picked`] and are loaded as any other.
    pub fn start_picker(&mut self, folder: bool, repaint: impl Fn() + Send + 'static) {
        let (sender, receiver) = mpsc::channel();
        #[cfg(not(target_arch = "wasm32"))]
        {
            let spawned = std::thread::Builder::new().name("file dialog".to_owned()).spawn(move || {
                let paths = if folder {
                    rfd::FileDialog::new().pick_folder().into_iter().collect()
                } else {
                    rfd::FileDialog::new()
                        .add_filter("rollout logs", &crate::source::path::LOG_EXTENSIONS)
                        .add_filter("all files", &["*"])
                        .pick_files()
                        .unwrap_or_default()
                };
                let _: Result<(), _> =
                    sender.send(LoadMessage::Picked(paths.into_iter().map(LoadSource::Path).collect()));
                repaint();
            });
            if let Err(err) = spawned {
                log::error!("could not start the file dialog thread: {err}");
                return;
            }
        }
        #[cfg(target_arch = "wasm32")]
        if folder {
            // The browser's directory picker: a v2 dataset's folder, read in slices.
            crate::source::web_dataset::pick_folder(move |files| {
                let sources = crate::source::web_dataset::WebDataset::from_files(files)
                    .map(|dataset| LoadSource::Dataset(dataset, None))
                    .into_iter()
                    .collect();
                let _: Result<(), _> = sender.send(LoadMessage::Picked(sources));
                repaint();
            });
            self.push("folder dialog".to_owned(), receiver, Progress::default(), 0);
            return;
        }
        #[cfg(target_arch = "wasm32")]
        wasm_bindgen_futures::spawn_local(async move {
            let files = rfd::AsyncFileDialog::new().pick_files().await.unwrap_or_default();
            let mut sources = Vec::new();
            for file in files {
                let bytes = file.read().await;
                sources.push(LoadSource::Bytes { name: file.file_name(), bytes: bytes.into() });
            }
            let _: Result<(), _> = sender.send(LoadMessage::Picked(sources));
            repaint();
        });
        self.push("file dialog".to_owned(), receiver, Progress::default(), 0);
    }

    /// Fetches a log over HTTP and loads it (web only: the browser's `fetch`, read as a stream so
    /// the progress bar follows the download). A network error, a refused cross-origin request or
    /// an HTTP error status becomes a clear load error.
    #[cfg(target_arch = "wasm32")]
    pub fn start_url(&mut self, url: String, repaint: impl Fn() + Send + Clone + 'static) {
        if let Some(dataset) = crate::source::web_dataset::WebDataset::from_url(&url) {
            // A v2 dataset's root (`…/run/` or `…/run/manifest.json`): read in byte ranges.
            self.start(LoadSource::Dataset(dataset, None), repaint);
            return;
        }
        let (sender, receiver) = mpsc::channel();
        let name = url.clone();
        let progress = Progress::default();
        let shared = progress.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let outcome = match fetch_bytes(&url, &shared).await {
                Ok(bytes) => LoadOutcome {
                    url: Some(url.clone()),
                    ..LoadSource::Bytes { name: url.clone(), bytes: bytes.into() }.load_paced(shared).await
                },
                Err(reason) => failed(url.clone(), &reason),
            };
            let _: Result<(), _> = sender.send(LoadMessage::Done(Box::new(outcome)));
            repaint();
        });
        self.push(name, receiver, progress, 0);
    }

    /// What loads sent since the last call, each with the id of its load, in the order they
    /// were started.
    pub fn poll(&mut self) -> Vec<(u64, LoadMessage)> {
        let mut done = Vec::new();
        self.pending.retain_mut(|Pending { id, name, receiver, ended, .. }| {
            loop {
                match receiver.try_recv() {
                    Ok(message) => {
                        *ended |= matches!(message, LoadMessage::Done(_) | LoadMessage::Picked(_));
                        done.push((*id, message));
                    }
                    Err(mpsc::TryRecvError::Empty) => return true,
                    Err(mpsc::TryRecvError::Disconnected) => {
                        // A load that ended without saying how (its thread died) is a failure.
                        if !*ended {
                            let outcome = failed(name.clone(), "its loader stopped without a result");
                            done.push((*id, LoadMessage::Done(Box::new(outcome))));
                        }
                        log::debug!("{name}: finished");
                        return false;
                    }
                }
            }
        });
        done
    }

    /// Waits for every pending load (tests and headless use).
    pub fn wait_all(&mut self) -> Vec<(u64, LoadMessage)> {
        self.pending.drain(..).flat_map(|p| p.receiver.into_iter().map(move |m| (p.id, m))).collect()
    }
}

/// The body of `url` (web), read chunk by chunk into `progress` (with the `Content-Length` as its
/// total when the server sends one).
#[cfg(target_arch = "wasm32")]
async fn fetch_bytes(url: &str, progress: &Progress) -> Result<Vec<u8>, String> {
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
    let length = response.headers().get("content-length").ok().flatten().and_then(|l| l.trim().parse().ok());
    progress.set_total(length.unwrap_or(0));
    let Some(body) = response.body() else {
        // No stream (an old browser): the whole body at once.
        return crate::source::http::body(&response).await;
    };
    let reader: web_sys::ReadableStreamDefaultReader =
        body.get_reader().dyn_into().map_err(|_err| "the body is not a readable stream".to_owned())?;
    let mut bytes = Vec::with_capacity(length.unwrap_or(0).min(1 << 30) as usize);
    loop {
        let chunk = wasm_bindgen_futures::JsFuture::from(reader.read())
            .await
            .map_err(|e| format!("reading the body after {} bytes: {e:?}", bytes.len()))?;
        let done = js_sys::Reflect::get(&chunk, &"done".into()).ok().and_then(|d| d.as_bool()).unwrap_or(true);
        if done {
            break;
        }
        let value = js_sys::Reflect::get(&chunk, &"value".into()).map_err(|e| format!("{e:?}"))?;
        bytes.extend_from_slice(&js_sys::Uint8Array::new(&value).to_vec());
        progress.set(bytes.len() as u64);
    }
    Ok(bytes)
}
