//! Following a v2 dataset by URL in the browser (one `vantage serve` keeps current while its log
//! grows, or one `vantage convert --follow` writes): every second the page asks for the manifest,
//! and when it changed (a writer replaces it after the files it lists), opens the dataset again as
//! it opens one at first: the manifest, then the footers and non-text columns of the latest steps,
//! in byte ranges. Texts stay on the server until shown.

use std::sync::{Arc, mpsc};

use crate::load::LoadReport;
use crate::load::formats::vantage_v2::MANIFEST;
use crate::load::formats::vantage_v2::remote::{self, RemoteTexts};
use crate::model::Run;

use super::web_dataset::WebDataset;

/// Seconds between two looks at the manifest.
const POLL_SECONDS: f64 = 1.0;

/// What one look at the manifest brought.
enum Look {
    /// The manifest as known.
    Same,
    /// The first manifest read (of the run already open).
    Learned(Vec<u8>),
    /// A new manifest, and the dataset opened again under it.
    Opened(Vec<u8>, Box<(Run, Arc<RemoteTexts>, LoadReport)>),
}

/// A followed dataset at a URL.
pub struct DatasetFollower {
    dataset: WebDataset,
    range: Option<(i64, i64)>,
    /// The manifest as last read (`None` before the first look: the run open is the first).
    manifest: Option<Vec<u8>>,
    in_flight: Option<mpsc::Receiver<Result<Look, String>>>,
    next_poll: f64,
    /// Why the last look failed, if it did.
    pub error: Option<String>,
}

impl DatasetFollower {
    /// Starts following `dataset` (read with the training steps `range`, as it was opened).
    pub fn start(dataset: WebDataset, range: Option<(i64, i64)>, now: f64) -> Self {
        Self { dataset, range, manifest: None, in_flight: None, next_poll: now, error: None }
    }

    /// Looks at the manifest when it is time, and takes in a finished look: the run opened again
    /// with its texts, when the manifest changed.
    pub fn tick(&mut self, now: f64, repaint: impl Fn() + 'static) -> Option<(Run, Arc<RemoteTexts>, LoadReport)> {
        let mut opened = None;
        if let Some(receiver) = &self.in_flight
            && let Ok(look) = receiver.try_recv()
        {
            self.in_flight = None;
            self.next_poll = now + POLL_SECONDS;
            self.error = None;
            match look {
                Ok(Look::Same) => {}
                Ok(Look::Learned(manifest)) => self.manifest = Some(manifest),
                Ok(Look::Opened(manifest, run)) => {
                    self.manifest = Some(manifest);
                    opened = Some(*run);
                }
                Err(why) => self.error = Some(why),
            }
        }
        if self.in_flight.is_none() && now >= self.next_poll {
            let (sender, receiver) = mpsc::channel();
            self.in_flight = Some(receiver);
            let (dataset, range, known) = (self.dataset.clone(), self.range, self.manifest.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let _: Result<(), _> = sender.send(look(dataset, range, known).await);
                repaint();
            });
        }
        opened
    }
}

/// Reads the manifest; opens the dataset again when it differs from `known` (or, with `known`
/// `None`, only learns it).
async fn look(dataset: WebDataset, range: Option<(i64, i64)>, known: Option<Vec<u8>>) -> Result<Look, String> {
    let WebDataset::Url(root) = &dataset else {
        return Err("only a dataset opened by URL can be followed".to_owned());
    };
    let url = format!("{root}{MANIFEST}");
    let response = super::http::get(&url, None, Some(web_sys::RequestCache::NoStore)).await.map_err(|e| match e {
        super::http::GetError::Unreachable => "the server does not answer".to_owned(),
        super::http::GetError::Failed(why) => why,
    })?;
    if !response.ok() {
        return Err(format!("{url}: HTTP {}", response.status()));
    }
    let manifest = super::http::body(&response).await?;
    if known.as_ref() == Some(&manifest) {
        return Ok(Look::Same);
    }
    if known.is_none() {
        return Ok(Look::Learned(manifest));
    }
    let name = dataset.name();
    let mut report = LoadReport::new(&name);
    let (run, texts) = remote::open(&dataset, &name, range, &mut report).await.map_err(|e| e.to_string())?;
    Ok(Look::Opened(manifest, Box::new((run, texts, report))))
}
