//! vantage Parquet v2 on the web: a dataset at a URL (`?url=…/run/`), read with HTTP Range
//! requests where the server answers them (whole files where it does not), or a folder the user
//! picked or dropped on the page, read through the browser's `File` objects in slices. Both go
//! through `load::formats::vantage_v2::remote`: the manifest, then the footers and the non-text columns
//! of the partitions that open; texts are fetched when shown, by a task that lives as long as
//! the run.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use eframe::wasm_bindgen::JsCast as _;

use crate::load::formats::vantage_v2::pack::Packed;
use crate::load::formats::vantage_v2::remote::{self, Piece, PieceError, PieceSource, RemoteTexts, Want};

/// Where a dataset opened on the web is.
#[derive(Clone, Debug)]
pub enum WebDataset {
    /// The URL of its root, ending in `/`.
    Url(String),
    /// A folder picked or dropped: its name, and its files by path under it.
    Folder {
        /// The folder's name.
        name: String,
        /// Its files, by path under it (`train_step=3/steps-00000.parquet`).
        files: Rc<HashMap<String, web_sys::File>>,
    },
}

impl WebDataset {
    /// The dataset a URL names: one ending in `/` or in `manifest.json`.
    pub fn from_url(url: &str) -> Option<Self> {
        let path = url.split(['?', '#']).next().unwrap_or(url);
        if let Some(root) = path.strip_suffix(crate::load::formats::vantage_v2::MANIFEST) {
            return root.ends_with('/').then(|| Self::Url(root.to_owned()));
        }
        path.ends_with('/').then(|| Self::Url(path.to_owned()))
    }

    /// A folder of files, each with its path relative to the folder's parent
    /// (`run/train_step=3/steps-00000.parquet`, as the browser gives `webkitRelativePath`).
    pub fn from_files(files: Vec<(String, web_sys::File)>) -> Option<Self> {
        let name = files.first()?.0.split('/').next()?.to_owned();
        let mut by_path = HashMap::new();
        for (path, file) in files {
            let inner = path.split_once('/').map_or(path.as_str(), |(_, rest)| rest).to_owned();
            by_path.insert(inner, file);
        }
        Some(Self::Folder { name, files: Rc::new(by_path) })
    }

    /// The name the run is shown by.
    pub fn name(&self) -> String {
        match self {
            Self::Url(url) => url.clone(),
            Self::Folder { name, .. } => format!("{name}/"),
        }
    }
}

impl PieceSource for WebDataset {
    async fn whole(&self, path: &str) -> Result<Vec<u8>, PieceError> {
        match self {
            Self::Url(root) => Ok(fetch(&format!("{root}{path}"), None).await?.bytes),
            Self::Folder { files, .. } => {
                let file = files.get(path).ok_or(PieceError::Missing)?;
                blob_bytes(file).await
            }
        }
    }

    async fn piece(&self, path: &str, want: Want) -> Result<Piece, PieceError> {
        match self {
            Self::Url(root) => {
                let header = match want {
                    Want::Tail(n) => format!("bytes=-{n}"),
                    Want::Range(start, len) => format!("bytes={start}-{}", start + len.max(1) - 1),
                };
                let url = format!("{root}{path}");
                let answer = fetch(&url, Some(&header)).await?;
                match (answer.status, answer.content_range) {
                    (206, Some((offset, file_len))) => Ok(Piece { offset, bytes: answer.bytes, file_len }),
                    (206, None) => {
                        // A range without its place (a cross-origin server that does not expose
                        // Content-Range): read the whole file instead.
                        let bytes = fetch(&url, None).await?.bytes;
                        Ok(Piece { offset: 0, file_len: bytes.len() as u64, bytes })
                    }
                    _ => Ok(Piece { offset: 0, file_len: answer.bytes.len() as u64, bytes: answer.bytes }),
                }
            }
            Self::Folder { files, .. } => {
                let file = files.get(path).ok_or(PieceError::Missing)?;
                let file_len = file.size() as u64;
                let (start, end) = match want {
                    Want::Tail(n) => (file_len.saturating_sub(n), file_len),
                    Want::Range(start, len) => (start, (start + len).min(file_len)),
                };
                let slice = file
                    .slice_with_f64_and_f64(start as f64, end as f64)
                    .map_err(|e| PieceError::Failed(format!("{e:?}")))?;
                Ok(Piece { offset: start, bytes: blob_bytes(&slice).await?, file_len })
            }
        }
    }
}

/// Opens `dataset` (shown as `name`) as `remote::open_showing_first` does. A dataset that
/// `vantage serve` serves is opened from the pack of its first view (`/api/first/<id>`: one
/// request instead of one for each piece the first view reads), and the rest by byte ranges.
pub async fn open(
    dataset: &WebDataset,
    name: &str,
    range: Option<(i64, i64)>,
    report: &mut crate::load::LoadReport,
    first: Option<remote::First<'_>>,
) -> Result<(crate::model::Run, Arc<RemoteTexts>), crate::load::LoadError> {
    if range.is_none()
        && let Some(bytes) = first_view_pack(dataset).await
    {
        match Packed::new(&bytes, dataset.clone()) {
            Ok(packed) => {
                let opened = remote::open_showing_first(&packed, name, range, report, first).await;
                log::info!("{name}: opened from its first view's pack ({} piece(s) of it unused)", packed.unused());
                return opened;
            }
            Err(why) => log::warn!("{name}: the server's first view could not be read ({why}); reading it in ranges"),
        }
    }
    remote::open_showing_first(dataset, name, range, report, first).await
}

/// Whether this page was sent by `vantage serve` (it then carries `<meta name="vantage-serve">`).
pub fn served_page() -> bool {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector("meta[name=vantage-serve]").ok().flatten())
        .is_some()
}

/// The pack of the first view of a dataset the page's server serves (`runs/<id>/` is asked
/// for at `api/first/<id>`), taken from the request the page started before the app ran
/// (`window.vantageFirstView`, when it named this dataset) or asked for now; `None` from any
/// other server, or when the server has none.
async fn first_view_pack(dataset: &WebDataset) -> Option<Vec<u8>> {
    let WebDataset::Url(root) = dataset else { return None };
    let id = super::served::served_run_id(root).filter(|_| served_page())?;
    let url = format!("api/first/{id}");
    let response = match prefetched(&url).await {
        Some(response) => response,
        None => super::http::get(&url, None, Some(web_sys::RequestCache::NoStore)).await.ok()?,
    };
    if !response.ok() {
        log::info!("{url}: HTTP {}; the first view is read in ranges", response.status());
        return None;
    }
    super::http::body(&response).await.ok()
}

/// The answer to `url` that the page's script asked for before the app started (docs/SERVE.md:
/// `window.vantageFirstView = {url, answer}`), taken once.
async fn prefetched(url: &str) -> Option<web_sys::Response> {
    let window = web_sys::window()?;
    let key = eframe::wasm_bindgen::JsValue::from_str("vantageFirstView");
    let started = js_sys::Reflect::get(&window, &key).ok().filter(|v| v.is_object())?;
    let _: Result<bool, _> = js_sys::Reflect::delete_property(&window, &key);
    let named = js_sys::Reflect::get(&started, &"url".into()).ok()?.as_string()?;
    if named != url {
        return None;
    }
    let answer: js_sys::Promise = js_sys::Reflect::get(&started, &"answer".into()).ok()?.dyn_into().ok()?;
    wasm_bindgen_futures::JsFuture::from(answer).await.ok()?.dyn_into().ok()
}

/// An HTTP answer.
struct Answer {
    status: u16,
    /// `Content-Range: bytes A-B/LEN` as (A, LEN), when the page may read it.
    content_range: Option<(u64, u64)>,
    bytes: Vec<u8>,
}

/// GETs `url`, with a `Range` header when given. A server that answers 503 with a short
/// `Retry-After` (`vantage serve` while it converts the run a deep link names) is asked again
/// after that wait, for up to [`remote::RETRY_FOR`] seconds in all.
async fn fetch(url: &str, range: Option<&str>) -> Result<Answer, PieceError> {
    let mut waited = 0;
    let response = loop {
        let response = super::http::get(url, range, None).await.map_err(|e| match e {
            super::http::GetError::Unreachable => PieceError::Failed(
                "the request failed: the server is unreachable, or it does not allow cross-origin requests (CORS)"
                    .to_owned(),
            ),
            super::http::GetError::Failed(why) => PieceError::Failed(why),
        })?;
        let again = response.headers().get("retry-after").ok().flatten();
        match remote::retry_after(response.status(), again.as_deref(), waited) {
            Some(seconds) => {
                log::info!("{url}: HTTP 503, asked again in {seconds} s, as the server says");
                sleep(1000 * seconds as i32).await;
                waited += seconds;
            }
            None => break response,
        }
    };
    let status = response.status();
    if status == 404 {
        return Err(PieceError::Missing);
    }
    if !response.ok() {
        return Err(PieceError::Failed(format!("{url}: HTTP {status} {}", response.status_text())));
    }
    let content_range =
        response.headers().get("content-range").ok().flatten().and_then(|h| remote::parse_content_range(&h));
    let bytes = super::http::body(&response).await.map_err(PieceError::Failed)?;
    Ok(Answer { status, content_range, bytes })
}

/// The bytes of a `File` or `Blob`.
pub(crate) async fn blob_bytes(blob: &web_sys::Blob) -> Result<Vec<u8>, PieceError> {
    let buffer = wasm_bindgen_futures::JsFuture::from(blob.array_buffer())
        .await
        .map_err(|e| PieceError::Failed(format!("reading the file: {e:?}")))?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// Fetches the texts the run asks for, while the run is open: every 50 ms, whatever its
/// [`RemoteTexts`] lists, then `repaint`. Ends when the run is gone (this task holds the last
/// reference to its texts) or a fetch fails (the texts then stay placeholders, and the log says
/// why).
pub fn fetch_texts(dataset: WebDataset, texts: Arc<RemoteTexts>, repaint: impl Fn() + 'static) {
    wasm_bindgen_futures::spawn_local(async move {
        while Arc::strong_count(&texts) > 1 {
            sleep(50).await;
            if texts.pending() == 0 {
                continue;
            }
            match remote::fetch_wanted(&dataset, &texts).await {
                Ok(_) => repaint(),
                Err(why) => {
                    log::error!("{}: texts could not be read: {why}", dataset.name());
                    break;
                }
            }
        }
    });
}

async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        if let Some(window) = web_sys::window() {
            let _: Result<i32, _> = window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
    });
    let _: Result<_, _> = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// Asks for a folder with the browser's directory picker (`<input webkitdirectory>`), and
/// hands its files to `picked` once: when a folder is chosen, or with none when the dialog is
/// cancelled (so that what waits on `picked`, holding the load queue's sender, ends).
pub fn pick_folder(picked: impl FnOnce(Vec<(String, web_sys::File)>) + 'static) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else { return };
    let Ok(input) = document.create_element("input") else { return };
    let Ok(input) = input.dyn_into::<web_sys::HtmlInputElement>() else { return };
    input.set_type("file");
    let _: Result<(), _> = input.set_attribute("webkitdirectory", "");
    let picked = Rc::new(std::cell::RefCell::new(Some(picked)));
    let (target, once) = (input.clone(), Rc::clone(&picked));
    let on_change = eframe::wasm_bindgen::closure::Closure::<dyn FnMut()>::new(move || {
        if let Some(picked) = once.borrow_mut().take() {
            picked(input_files(&target));
        }
    });
    input.set_onchange(Some(on_change.as_ref().unchecked_ref()));
    on_change.forget();
    let on_cancel = eframe::wasm_bindgen::closure::Closure::<dyn FnMut()>::new(move || {
        if let Some(picked) = picked.borrow_mut().take() {
            picked(Vec::new());
        }
    });
    let _: Result<(), _> = input.add_event_listener_with_callback("cancel", on_cancel.as_ref().unchecked_ref());
    on_cancel.forget();
    input.click();
}

/// The files of a directory input, each with its `webkitRelativePath`.
fn input_files(input: &web_sys::HtmlInputElement) -> Vec<(String, web_sys::File)> {
    let Some(list) = input.files() else { return Vec::new() };
    (0..list.length())
        .filter_map(|i| list.get(i))
        .map(|file| {
            let path = js_sys::Reflect::get(&file, &"webkitRelativePath".into())
                .ok()
                .and_then(|p| p.as_string())
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| file.name());
            (path, file)
        })
        .collect()
}

/// The files under a dropped directory entry, each with its path from the entry's parent.
pub async fn entry_files(entry: web_sys::FileSystemEntry) -> Vec<(String, web_sys::File)> {
    let mut out = Vec::new();
    let mut stack = vec![entry];
    while let Some(entry) = stack.pop() {
        let path = entry.full_path().trim_start_matches('/').to_owned();
        if entry.is_directory() {
            let reader = entry.unchecked_ref::<web_sys::FileSystemDirectoryEntry>().create_reader();
            // readEntries answers in batches (100 in Chromium) until an empty one.
            loop {
                let batch = js_sys::Promise::new(&mut |resolve, reject| {
                    let _: Result<(), _> = reader.read_entries_with_callback_and_callback(&resolve, &reject);
                });
                let Ok(batch) = wasm_bindgen_futures::JsFuture::from(batch).await else { break };
                let batch: js_sys::Array = batch.unchecked_into();
                if batch.length() == 0 {
                    break;
                }
                stack.extend(batch.iter().map(|e| e.unchecked_into::<web_sys::FileSystemEntry>()));
            }
        } else {
            let file_entry = entry.unchecked_ref::<web_sys::FileSystemFileEntry>();
            let file = js_sys::Promise::new(&mut |resolve, reject| {
                file_entry.file_with_callback_and_callback(&resolve, &reject);
            });
            if let Ok(file) = wasm_bindgen_futures::JsFuture::from(file).await {
                out.push((path, file.unchecked_into::<web_sys::File>()));
            }
        }
    }
    out
}
