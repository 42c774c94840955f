//! Loading runs off the UI thread: a named worker thread per file on native, in-frame on the web.

use std::sync::mpsc;

#[cfg(target_arch = "wasm32")]
use crate::load::formats::vantage_v2::remote::RemoteTexts;
use crate::load::{LoadReport, Progress};
use crate::model::Run;
use crate::source::OpenOptions;
use crate::source::open::{LoadOutcome, LoadSource, failed};

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
pub struct LoadQueue {
    pending: Vec<Pending>,
    next_id: u64,
    /// How a path is opened unless a load says otherwise (the command line's `--steps`,
    /// `--outcomes` and memory budget).
    pub options: OpenOptions,
    /// Faults tests inject (see [`super::faults`]).
    pub faults: super::faults::Faults,
}

impl Default for LoadQueue {
    /// No load in flight; paths opened with the default options, an Inspect `.eval` lazily.
    fn default() -> Self {
        Self {
            pending: Vec::new(),
            next_id: 0,
            options: OpenOptions { lazy: true, ..OpenOptions::default() },
            faults: super::faults::Faults::default(),
        }
    }
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
        #[cfg(target_arch = "wasm32")]
        let name_of_source = name.clone();
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
            // A v2 dataset of several partitions shows its latest first, its texts fetched as shown.
            let dataset = match &source {
                LoadSource::Dataset(dataset, _) => Some(dataset.clone()),
                _ => None,
            };
            let (partials, again) = (sender.clone(), repaint.clone());
            let mut first = move |run: Run, texts: std::sync::Arc<RemoteTexts>, report: &LoadReport| {
                if let Some(dataset) = &dataset {
                    crate::source::web_dataset::fetch_texts(dataset.clone(), texts, again.clone());
                }
                let _: Result<(), _> = partials.send(LoadMessage::Partial(Box::new(run), report.clone()));
                again();
            };
            let mut outcome = source.load_paced_showing(shared.clone(), Some(&mut first)).await;
            served_labels(&name_of_source, &mut outcome, &shared).await;
            let _: Result<(), _> = sender.send(LoadMessage::Done(Box::new(outcome)));
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
                        .add_filter("rollout logs", &crate::source::LOG_EXTENSIONS)
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
            // The browser's directory picker: a v2 dataset's folder, read in slices, or any other
            // folder by the folder rule.
            crate::source::web_dataset::pick_folder(move |files| {
                let sources = LoadSource::of_folder(files).into_iter().collect();
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
            let mut outcome = match crate::source::open::fetch_bytes(&url, &shared).await {
                Ok(bytes) => LoadOutcome {
                    url: Some(url.clone()),
                    ..LoadSource::Bytes { name: url.clone(), bytes: bytes.into() }.load_paced(shared.clone()).await
                },
                Err(reason) => failed(url.clone(), &reason),
            };
            served_labels(&url, &mut outcome, &shared).await;
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

/// A run `vantage serve` lists (`url` or name `runs/<id>`, a log or a dataset's root): its labels
/// from beside it, read-only (`/api/labels/<id>`, docs/LABELS.md), put on the run with those its
/// log carries. Anything else, or a server that answers none, leaves the run as it is.
#[cfg(target_arch = "wasm32")]
async fn served_labels(url: &str, outcome: &mut LoadOutcome, progress: &Progress) {
    let (Some(id), Ok(run)) = (crate::source::served::served_run_id(url), &mut outcome.result) else { return };
    let Ok(bytes) = crate::source::open::fetch_bytes(&format!("api/labels/{id}"), progress).await else { return };
    let (entries, _) = crate::load::labels::read(&bytes);
    let imported = run.meta.imported_labels.iter().cloned().map(crate::model::labels::Entry::Add);
    let labels = crate::model::labels::labels_of(imported.chain(entries));
    run.meta.labels = std::sync::Arc::new(crate::model::labels::RunLabels::resolve(run, labels));
}
