//! The web app `vantage serve` sends: the files `build.rs` put into the binary (gzip-compressed;
//! sent as they are to a browser that takes gzip), or a `trunk build` output given with `--web-dir`.
//! The page gets one extra `<meta name="vantage-serve">` line, by which it knows to open on the run
//! list.

use std::io::Read as _;
use std::path::PathBuf;

use super::http::{Body, Request, Response};

// `FILES: &[(name, content type, gzip bytes)]`, written by build.rs (empty in a build without the web app).
include!(concat!(env!("OUT_DIR"), "/web_assets.rs"));

/// What a binary without the web app says (a debug build made without `VANTAGE_WEB_DIST`).
pub const NO_WEB_APP: &str = "this vantage was built without its web app (a debug build: see README, \
                              'vantage serve'); the page lists the runs, which can be fetched, but draws nothing";

/// The line that tells the page it is served by `vantage serve`.
const MARKER: &str = "<meta name=\"vantage-serve\" content=\"api/runs\" />";

/// The script the page gets with the marker: when its address names a run served as a dataset
/// (`#run=runs/<id>/`, `?url=…`), it asks for the run's first view (`api/first/<id>`, docs/SERVE.md)
/// while the app's wasm is fetched and compiled, and leaves the answer's promise in
/// `window.vantageFirstView` for the app (`source::web_dataset`), which reads the URL the same way.
const FIRST_VIEW_SCRIPT: &str = r#"<script>
    (function () {
      var named = null;
      [location.search, location.hash].forEach(function (part) {
        part.replace(/^[?#]/, "").split("&").forEach(function (pair) {
          var at = pair.indexOf("="), key = at < 0 ? pair : pair.slice(0, at);
          if (named === null && (key === "run" || key === "url") && at >= 0) {
            try { named = decodeURIComponent(pair.slice(at + 1).replace(/\+/g, " ")); } catch (e) { named = ""; }
          }
        });
      });
      if (!named) return;
      var root = named.split(/[?#]/)[0].replace(/manifest\.json$/, "");
      if (!/\/$/.test(root)) return;
      var id = root.replace(/^\/+/, "");
      if (id.indexOf("runs/") !== 0) return;
      id = id.slice(5).replace(/\/+$/, "");
      if (!id) return;
      var url = "api/first/" + id;
      window.vantageFirstView = { url: url, answer: fetch(url, { cache: "no-store" }) };
    })();
  </script>"#;

/// The page's Content-Security-Policy: its own scripts and wasm (and the credit worker, started
/// from a blob URL), requests to this server only, no framing.
const PAGE_POLICY: &str = "default-src 'self'; script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval' blob:; \
                           worker-src 'self' blob:; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; \
                           connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// Where the web app's files come from.
pub enum WebApp {
    /// In the binary.
    Embedded,
    /// A directory (`--web-dir`), canonical.
    Dir(PathBuf),
    /// Nowhere: the page is a plain list of the runs.
    Missing,
}

impl WebApp {
    /// The app of `--web-dir` when given, else the binary's own.
    pub fn new(dir: Option<PathBuf>) -> anyhow::Result<Self> {
        if let Some(dir) = dir {
            let real = dir.canonicalize().map_err(|e| anyhow::anyhow!("--web-dir {}: {e}", dir.display()))?;
            if !real.join("index.html").is_file() {
                anyhow::bail!("--web-dir {}: no index.html (a `trunk build` output holds one)", dir.display());
            }
            return Ok(Self::Dir(real));
        }
        Ok(if FILES.is_empty() { Self::Missing } else { Self::Embedded })
    }

    /// Whether the page can draw runs (the app is there).
    pub fn embedded(&self) -> bool {
        !matches!(self, Self::Missing)
    }

    /// The page: the app's `index.html` with the marker, or the plain run list.
    pub fn index(&self, catalog: &super::runs::Catalog) -> Response {
        let html = match self {
            Self::Embedded => FILES
                .iter()
                .find(|(name, _, _)| *name == "index.html")
                .and_then(|(_, _, gz)| gunzip(gz).ok())
                .map(|b| String::from_utf8_lossy(&b).into_owned()),
            Self::Dir(dir) => std::fs::read_to_string(dir.join("index.html")).ok(),
            Self::Missing => None,
        };
        let html = match html {
            Some(html) => html.replacen("<head>", &format!("<head>\n  {MARKER}\n  {FIRST_VIEW_SCRIPT}"), 1),
            None => plain_list(catalog),
        };
        Response {
            status: 200,
            headers: vec![
                ("Content-Type", "text/html; charset=utf-8".to_owned()),
                ("Cache-Control", "no-cache".to_owned()),
                ("Content-Security-Policy", PAGE_POLICY.to_owned()),
            ],
            body: Body::Bytes(html.into_bytes()),
        }
    }

    /// One of the app's files (`vantage-….js`, `…_bg.wasm`).
    pub fn asset(&self, name: &str, request: &Request) -> Response {
        let gzip_ok = request.accept_encoding.as_deref().is_some_and(|a| a.contains("gzip"));
        match self {
            Self::Embedded => {
                let Some((_, kind, gz)) = FILES.iter().find(|(n, _, _)| *n == name) else {
                    return Response::text(404, "not found");
                };
                let etag = format!("\"{:08x}\"", crc32fast::hash(gz));
                if request.if_none_match.as_deref() == Some(etag.as_str()) {
                    return Response { status: 304, headers: vec![("ETag", etag)], body: Body::Bytes(Vec::new()) };
                }
                let response = if gzip_ok {
                    Response {
                        status: 200,
                        headers: vec![("Content-Encoding", "gzip".to_owned())],
                        body: Body::Static(gz),
                    }
                } else {
                    match gunzip(gz) {
                        Ok(bytes) => Response { status: 200, headers: Vec::new(), body: Body::Bytes(bytes) },
                        Err(_) => return Response::text(500, "the binary's copy of this file is damaged"),
                    }
                };
                response
                    .with("Content-Type", *kind)
                    .with("ETag", etag)
                    .with("Cache-Control", "no-cache")
                    .with("Vary", "Accept-Encoding")
            }
            Self::Dir(dir) => {
                let path = dir.join(name);
                match path.canonicalize() {
                    Ok(real) if real.starts_with(dir) && real.is_file() => match std::fs::read(&real) {
                        Ok(bytes) => Response { status: 200, headers: Vec::new(), body: Body::Bytes(bytes) }
                            .with("Content-Type", super::content_type::content_type(name))
                            .with("Cache-Control", "no-cache"),
                        Err(_) => Response::text(404, "not found"),
                    },
                    _ => Response::text(404, "not found"),
                }
            }
            Self::Missing => Response::text(404, "not found"),
        }
    }
}

fn gunzip(gz: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(gz).read_to_end(&mut out)?;
    Ok(out)
}

/// The page of a binary without the web app: the runs, each a link to its bytes.
fn plain_list(catalog: &super::runs::Catalog) -> String {
    let (entries, _) = catalog.list();
    let escape = |s: &str| s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;");
    let mut rows = String::new();
    for entry in entries {
        let link = entry
            .url()
            .map_or_else(|| escape(&entry.id), |url| format!("<a href=\"{}\">{}</a>", escape(&url), escape(&entry.id)));
        rows.push_str(&format!("<tr><td>{link}</td><td>{}</td><td>{}</td></tr>\n", escape(&entry.format), entry.size));
    }
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>vantage serve</title></head><body>\
         <p>{}</p><table><tr><th>run</th><th>format</th><th>bytes</th></tr>\n{rows}</table></body></html>",
        escape(NO_WEB_APP)
    )
}
