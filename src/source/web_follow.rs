//! Following a `?url=` log in the browser: every second the page asks the server for the
//! bytes past what it has (an HTTP Range request) and reads the whole lines that arrived
//! (`load::formats::vantage_jsonl::GrowingLog`), so a run that is still training grows on the page. A server that
//! answers a Range request with the whole file still works (the bytes past what the page has are
//! taken from it) at the cost of the download; the status line says so. Only a vantage JSONL log
//! can be followed this way.

use std::sync::Arc;
use std::sync::mpsc;

use crate::load::LoadReport;
use crate::load::formats::vantage_jsonl::GrowingLog;
use crate::model::Run;

/// Seconds between two requests.
const POLL_SECONDS: f64 = 1.0;

/// What one request brought.
enum Answer {
    /// The bytes from the requested offset on (206 Partial Content, or 416: none yet).
    From(Vec<u8>),
    /// The whole file (the server ignored the Range header).
    Whole(Vec<u8>),
}

/// A followed `?url=` log.
pub struct WebFollower {
    url: String,
    log: GrowingLog,
    in_flight: Option<mpsc::Receiver<Result<Answer, String>>>,
    next_poll: f64,
    /// When records last arrived (the UI clock, seconds).
    last_data: f64,
    whole_files: bool,
    error: Option<String>,
}

impl WebFollower {
    /// Starts following `url`, whose bytes so far are `bytes` (read again here, on the page;
    /// nothing is downloaded twice). An error when the log is not vantage JSONL.
    pub fn start(name: &str, url: String, bytes: &Arc<[u8]>, now: f64) -> Result<Self, String> {
        let log =
            GrowingLog::start(name, bytes).map_err(|e| format!("only a vantage JSONL log can be followed ({e})"))?;
        Ok(Self { url, log, in_flight: None, next_poll: now, last_data: now, whole_files: false, error: None })
    }

    /// The run as read so far.
    pub fn snapshot(&self) -> (Run, LoadReport) {
        (self.log.snapshot(), self.log.report().clone())
    }

    /// Asks for new bytes when it is time, and reads what a finished request brought; the run
    /// with them when records arrived.
    pub fn tick(&mut self, now: f64, repaint: impl Fn() + 'static) -> Option<(Run, LoadReport)> {
        let mut grown = false;
        if let Some(receiver) = &self.in_flight
            && let Ok(answer) = receiver.try_recv()
        {
            self.in_flight = None;
            self.next_poll = now + POLL_SECONDS;
            match answer {
                Ok(Answer::From(bytes)) => grown = self.log.append(&bytes),
                Ok(Answer::Whole(bytes)) => {
                    self.whole_files = true;
                    let have = usize::try_from(self.log.received()).unwrap_or(usize::MAX);
                    if let Some(new) = bytes.get(have..) {
                        grown = self.log.append(new);
                    }
                }
                Err(err) => self.error = Some(err),
            }
            self.error = self.error.take().filter(|_| !grown);
        }
        if self.in_flight.is_none() && now >= self.next_poll {
            let (sender, receiver) = mpsc::channel();
            let (url, from) = (self.url.clone(), self.log.received());
            wasm_bindgen_futures::spawn_local(async move {
                let _: Result<(), _> = sender.send(fetch_from(&url, from).await);
                repaint();
            });
            self.in_flight = Some(receiver);
        }
        if grown {
            self.last_data = now;
            return Some(self.snapshot());
        }
        None
    }

    /// The status-bar line.
    pub fn status(&self, now: f64) -> String {
        let ago = (now - self.last_data).max(0.0) as u64;
        let mut line = format!("following · last data {ago} s ago");
        if self.whole_files {
            line.push_str(" · the server ignores Range requests: the whole file is downloaded each time");
        }
        if let Some(err) = &self.error {
            line.push_str(&format!(" · last request failed: {err}"));
        }
        line
    }
}

/// The bytes of `url` from byte `from` on. The request starts one byte early (a byte the page has),
/// so that a log that has not grown still answers 206 with that byte, not 416 (which the browser's
/// console reports as a failed request, every second); the byte is dropped here.
async fn fetch_from(url: &str, from: u64) -> Result<Answer, String> {
    let start = from.saturating_sub(1);
    // Not from the browser's cache: the log changes under the same address.
    let response = super::http::get(url, Some(&format!("bytes={start}-")), Some(web_sys::RequestCache::NoStore))
        .await
        .map_err(|e| match e {
            super::http::GetError::Unreachable => "the server is unreachable".to_owned(),
            super::http::GetError::Failed(why) => why,
        })?;
    let status = response.status();
    if status == 416 {
        // Nothing there (the log is shorter than the page has: replaced or truncated).
        return Ok(Answer::From(Vec::new()));
    }
    if !response.ok() {
        return Err(format!("HTTP {status} {}", response.status_text()));
    }
    let bytes = super::http::body(&response).await?;
    let skip = usize::try_from(from - start).unwrap_or(0);
    Ok(if status == 206 { Answer::From(bytes.get(skip..).unwrap_or_default().to_vec()) } else { Answer::Whole(bytes) })
}
