//! The run list of `vantage serve` (docs/SERVE.md): a page the server sends carries
//! `<meta name="vantage-serve">`, and the web app then fetches `api/runs` from it every few
//! seconds, shows the list when no run is open (and under "Server runs" when one is), and opens a
//! run by its URL (followed when the server says it grows as a log the page can follow). The list
//! is read here on every platform (tests read it natively); only the fetch is the web's.

/// One run the server offers (an entry of `api/runs`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
pub struct ServerRun {
    /// Its id: the served root's name and the path below it.
    pub id: String,
    /// The URL to open it by, relative to the page (`None` while it is converted, or when that
    /// failed).
    pub url: Option<String>,
    /// Its format, as the server tells it from its name and first lines.
    pub format: String,
    /// Bytes.
    pub size: u64,
    /// When it last changed (seconds since 1970, UTC).
    pub modified: u64,
    /// `ready`, `converting` or `failed`.
    pub status: String,
    /// Why it failed.
    #[serde(default)]
    pub detail: String,
    /// Whether the page follows it once open.
    #[serde(default)]
    pub follow: bool,
}

impl ServerRun {
    /// `2026-12-05 19:20 UTC`.
    pub fn modified_text(&self) -> String {
        let [y, mo, d, h, mi, _] = super::commands::utc(self.modified);
        format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02} UTC")
    }

    /// Its size for people, as the app writes sizes (`48.2 kB`, `3.22 GB`).
    pub fn size_text(&self) -> String {
        crate::load::budget::size(self.size)
    }
}

/// The answer of `api/runs`.
#[derive(Debug, serde::Deserialize)]
struct Answer {
    vantage_serve: u32,
    runs: Vec<ServerRun>,
    #[serde(default)]
    left_out: usize,
}

/// The server's run list as the page last read it.
#[derive(Default)]
pub struct ServerRuns {
    /// The runs, as the server lists them (by id).
    pub runs: Vec<ServerRun>,
    /// Runs past the server's limit, not listed.
    pub left_out: usize,
    /// Whether an answer came.
    pub loaded: bool,
    /// Why the last request failed.
    pub error: Option<String>,
    /// Whether the list's window is open (when a run is open; with none, the list fills the page).
    pub window_open: bool,
    /// The list's filter text.
    pub filter: String,
    /// A run opened by a deep link before the list came: followed once the list says it can be.
    pub follow_when_listed: Option<String>,
    #[cfg(target_arch = "wasm32")]
    in_flight: Option<std::sync::mpsc::Receiver<Result<String, String>>>,
    #[cfg(target_arch = "wasm32")]
    next_poll: f64,
}

/// Seconds between two reads of the list while it is shown.
#[cfg(target_arch = "wasm32")]
const POLL_SECONDS: f64 = 3.0;

impl ServerRuns {
    /// Takes in an answer of `api/runs` (an error when it is not one).
    pub fn take(&mut self, text: &str) -> Result<(), String> {
        let answer: Answer = serde_json::from_str(text).map_err(|e| format!("not a vantage serve run list: {e}"))?;
        if answer.vantage_serve != 1 {
            return Err(format!("a run list of version {}, newer than this page", answer.vantage_serve));
        }
        self.runs = answer.runs;
        self.left_out = answer.left_out;
        self.loaded = true;
        self.error = None;
        Ok(())
    }

    /// The run listed at `url` (what a deep link names).
    pub fn by_url(&self, url: &str) -> Option<&ServerRun> {
        self.runs.iter().find(|r| r.url.as_deref() == Some(url))
    }

    /// Asks the server for the list when it is time (every few seconds while `shown`), and takes
    /// in an answer that came.
    #[cfg(target_arch = "wasm32")]
    pub fn tick(&mut self, now: f64, shown: bool, repaint: impl Fn() + 'static) {
        if let Some(receiver) = &self.in_flight
            && let Ok(answer) = receiver.try_recv()
        {
            self.in_flight = None;
            let taken = answer.and_then(|text| self.take(&text));
            if let Err(err) = taken {
                self.error = Some(err);
            }
        }
        let due = !self.loaded || (shown && now >= self.next_poll);
        if self.in_flight.is_some() || !due {
            return;
        }
        self.next_poll = now + POLL_SECONDS;
        let (sender, receiver) = std::sync::mpsc::channel();
        self.in_flight = Some(receiver);
        wasm_bindgen_futures::spawn_local(async move {
            let answer = match crate::source::http::get("api/runs", None, Some(web_sys::RequestCache::NoStore)).await {
                Ok(response) if response.ok() => {
                    crate::source::http::body(&response).await.map(|b| String::from_utf8_lossy(&b).into_owned())
                }
                Ok(response) => Err(format!("the server answered {}", response.status())),
                Err(crate::source::http::GetError::Unreachable) => Err("the server does not answer".to_owned()),
                Err(crate::source::http::GetError::Failed(why)) => Err(why),
            };
            let _: Result<(), _> = sender.send(answer);
            repaint();
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_list_is_read_with_sizes_and_times() {
        let mut list = ServerRuns::default();
        list.take(
            r#"{"vantage_serve":1,"left_out":0,"runs":[{"id":"runs/a.jsonl","url":"runs/runs/a.jsonl","format":"vantage",
               "size":1536,"modified":1764962400,"status":"ready","detail":"","follow":true},
               {"id":"runs/big.jsonl","url":null,"format":"verl","size":3221225472,"modified":0,"status":"converting"}]}"#,
        )
        .unwrap();
        assert_eq!(list.runs.len(), 2);
        assert_eq!(list.runs[0].size_text(), "1.5 kB");
        assert_eq!(list.runs[0].modified_text(), "2025-12-05 19:20 UTC");
        assert_eq!(list.runs[1].size_text(), "3.22 GB");
        assert!(list.by_url("runs/runs/a.jsonl").is_some_and(|r| r.follow));
        assert!(list.take(r#"{"vantage_serve":2,"runs":[]}"#).is_err());
        assert!(list.take("<html>").is_err());
    }
}
