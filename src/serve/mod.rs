//! `vantage serve PATH…`: one process that serves the web app and the runs under the paths to a
//! browser, read-only, so a run is reviewed where it lives (on a cluster node, through an SSH
//! tunnel). docs/SERVE.md says what it serves and how; docs/RELIABILITY.md lists the attacks tried.
//!
//! - `/` the web app (its files are in the binary, `assets`), which opens on the run list;
//! - `/api/runs` the run list as JSON;
//! - `/runs/<id>` a log served whole and by byte range; `/runs/<id>/<file>` a file of a v2
//!   dataset (the run itself, or its converted copy, `runs`);
//! - `/api/labels/<id>` the run's labels from beside it (docs/LABELS.md), JSON lines, read-only;
//! - `/api/first/<id>` what the first view of a run served as a v2 dataset reads, in one answer
//!   (`first_view`).
//!
//! Bound to a loopback address it answers only requests naming a loopback host (a page of another
//! site cannot reach it by DNS rebinding); bound elsewhere it needs its token, printed at start.

pub mod assets;
pub mod content_type;
pub mod first_view;
pub mod http;
pub mod runs;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use http::{Body, Limits, ReadError, Request, Response};
use runs::{Catalog, CatalogOptions, Served};

/// How the server runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// The paths served (files, folders of runs, v2 datasets).
    pub paths: Vec<PathBuf>,
    /// The address to bind (`127.0.0.1` unless told otherwise).
    pub host: String,
    /// The port (0: any free port; the one taken is printed).
    pub port: u16,
    /// The token a client must present (`--token-file`); one is made up when bound to a
    /// non-loopback address without one.
    pub token: Option<String>,
    /// The catalog's options.
    pub catalog: CatalogOptions,
    /// The limits on clients.
    pub limits: Limits,
    /// Serve the web app from this directory (a `trunk build` output) instead of the binary's copy.
    pub web_dir: Option<PathBuf>,
}

/// What every connection's thread shares.
struct Shared {
    catalog: Catalog,
    limits: Limits,
    token: Option<String>,
    /// Whether the server is bound to a loopback address (then only loopback host names are
    /// answered).
    loopback: bool,
    web: assets::WebApp,
    active: AtomicUsize,
    started: Instant,
}

/// Binds, prints where to open the page, and serves until the process is stopped.
pub fn run(config: Config) -> anyhow::Result<()> {
    let mut roots = Vec::new();
    for path in &config.paths {
        let real = path.canonicalize().map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        roots.push(real);
    }
    if roots.is_empty() {
        anyhow::bail!("say what to serve: vantage serve PATH…");
    }
    let listener = TcpListener::bind((config.host.as_str(), config.port))
        .map_err(|e| anyhow::anyhow!("could not listen on {}:{}: {e}", config.host, config.port))?;
    let address = listener.local_addr()?;
    let loopback = address.ip().is_loopback();
    let token = match config.token {
        Some(token) => Some(token),
        None if !loopback => Some(new_token()),
        None => None,
    };
    let web = assets::WebApp::new(config.web_dir.clone())?;
    let shared = Arc::new(Shared {
        catalog: Catalog::new(roots.clone(), config.catalog),
        limits: config.limits,
        token,
        loopback,
        web,
        active: AtomicUsize::new(0),
        started: Instant::now(),
    });
    let (runs, _) = shared.catalog.list();
    print_banner(&shared, address, &roots, runs.len());
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        accept(&shared, stream);
    }
    Ok(())
}

/// Says where the page is, for the user (stdout, flushed: tests read the port from it).
fn print_banner(shared: &Shared, address: SocketAddr, roots: &[PathBuf], runs: usize) {
    use std::io::Write as _;
    let shown: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    let host = if address.ip().is_unspecified() { "HOST".to_owned() } else { address.ip().to_string() };
    let query = shared.token.as_ref().map(|t| format!("?token={t}")).unwrap_or_default();
    let mut out = std::io::stdout().lock();
    let _: std::io::Result<()> = writeln!(out, "vantage serve: {runs} run(s) under {}", shown.join(", "));
    let _: std::io::Result<()> = writeln!(out, "open http://{host}:{}/{query}", address.port());
    if shared.loopback {
        let port = address.port();
        let _: std::io::Result<()> = writeln!(
            out,
            "from a laptop: ssh -N -L {port}:127.0.0.1:{port} THIS_MACHINE, then open http://127.0.0.1:{port}/"
        );
    } else {
        let _: std::io::Result<()> =
            writeln!(out, "bound to {address}: every request needs the token (the link above sets it once)");
    }
    if !shared.web.embedded() {
        let _: std::io::Result<()> = writeln!(out, "{}", assets::NO_WEB_APP);
    }
    let _: std::io::Result<()> = out.flush();
}

/// A token of 128 random bits, in hex (from the standard library's randomly keyed hasher, which
/// the operating system seeds).
fn new_token() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut token = String::new();
    for i in 0..2u64 {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(i);
        hasher
            .write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
        token.push_str(&format!("{:016x}", hasher.finish()));
    }
    token
}

/// Takes a connection: its own thread while fewer than the limit are open, else 503 at once.
fn accept(shared: &Arc<Shared>, mut stream: TcpStream) {
    let peer = stream.peer_addr().map_or_else(|_| "?".to_owned(), |a| a.to_string());
    if shared.active.fetch_add(1, Ordering::SeqCst) >= shared.limits.connections {
        shared.active.fetch_sub(1, Ordering::SeqCst);
        let busy = Response::text(503, "too many connections; try again").with("Retry-After", "1");
        let limits = Limits { write: std::time::Duration::from_millis(200), ..shared.limits.clone() };
        let _: std::io::Result<u64> = http::write_response(&mut stream, busy, false, true, &limits);
        log_line(shared, &peer, "-", 503, 0, Instant::now());
        return;
    }
    let worker = Arc::clone(shared);
    let spawned =
        std::thread::Builder::new().name("serve connection".to_owned()).stack_size(256 * 1024).spawn(move || {
            connection(&worker, stream, &peer);
            worker.active.fetch_sub(1, Ordering::SeqCst);
        });
    if spawned.is_err() {
        shared.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Answers the requests of one connection until it closes, idles or breaks a limit.
fn connection(shared: &Shared, mut stream: TcpStream, peer: &str) {
    let _: std::io::Result<()> = stream.set_nodelay(true);
    let mut buffer = Vec::new();
    for served in 0..shared.limits.requests_per_connection {
        let request = match http::read_request(&mut stream, &mut buffer, &shared.limits) {
            Ok(request) => request,
            Err(ReadError::Gone) => return,
            Err(ReadError::Refused(status, why)) => {
                let _: std::io::Result<u64> =
                    http::write_response(&mut stream, Response::text(status, why), false, true, &shared.limits);
                log_line(shared, peer, why, status, 0, Instant::now());
                return;
            }
        };
        let began = Instant::now();
        let close = request.close || served + 1 == shared.limits.requests_per_connection;
        let response = respond(shared, &request);
        let status = response.status;
        let line = format!("{} {}", request.method, request.logged_target());
        let written = http::write_response(&mut stream, response, request.is_head(), close, &shared.limits);
        log_line(shared, peer, &line, status, written.as_ref().copied().unwrap_or(0), began);
        if written.is_err() || close {
            return;
        }
    }
}

/// One line per request on stderr: time since start, client, request, status, bytes, duration.
fn log_line(shared: &Shared, peer: &str, request: &str, status: u16, bytes: u64, began: Instant) {
    eprintln!(
        "[{:>10.3}] {peer} \"{request}\" {status} {bytes} {:.1}ms",
        shared.started.elapsed().as_secs_f64(),
        began.elapsed().as_secs_f64() * 1e3
    );
}

/// The answer to one request.
fn respond(shared: &Shared, request: &Request) -> Response {
    if request.method != "GET" && request.method != "HEAD" {
        return Response::text(405, "only GET and HEAD: this server is read-only").with("Allow", "GET, HEAD");
    }
    if let Some(refused) = refuse_host(shared, request) {
        return refused;
    }
    if let Some(token) = &shared.token {
        match authorized(token, request) {
            Auth::Yes => {}
            Auth::FromQuery => {
                // The link with `?token=` sets a cookie once and sends the page to its clean URL.
                return Response::text(303, "signed in")
                    .with("Location", request.path().to_owned())
                    .with("Set-Cookie", format!("vantage_token={token}; HttpOnly; SameSite=Strict; Path=/"));
            }
            Auth::No => {
                return Response::text(
                    401,
                    "this server needs its token: open the link it printed at start (…/?token=…)",
                )
                .with("WWW-Authenticate", "Bearer");
            }
        }
    }
    let Some(segments) = http::path_segments(request.path()) else {
        return Response::text(404, "not found");
    };
    let parts: Vec<&str> = segments.iter().map(String::as_str).collect();
    match parts.as_slice() {
        [] | ["index.html"] => shared.web.index(&shared.catalog),
        ["api", "runs"] => run_list(shared),
        ["api", "labels", ..] => run_labels(shared, &segments[2..]),
        ["api", "first", ..] => first_view(shared, &segments[2..]),
        ["runs", ..] => run_file(shared, request, &segments[1..]),
        [name] => shared.web.asset(name, request),
        _ => Response::text(404, "not found"),
    }
}

/// A refusal when the server is bound to loopback and the request names another host: a page of
/// another site that made its own name resolve to 127.0.0.1 (DNS rebinding) is not answered.
fn refuse_host(shared: &Shared, request: &Request) -> Option<Response> {
    if !shared.loopback || shared.token.is_some() {
        return None;
    }
    let Some(host) = request.host.as_deref() else {
        return Some(Response::text(400, "no Host header"));
    };
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split_once(']').map_or(rest, |(n, _)| n)
    } else {
        host.rsplit_once(':').map_or(host, |(n, _)| n)
    };
    let loopback =
        name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    (!loopback).then(|| Response::text(403, "this server answers only requests for localhost"))
}

/// Whether a request carries the token.
enum Auth {
    Yes,
    FromQuery,
    No,
}

fn authorized(token: &str, request: &Request) -> Auth {
    let equal = |given: &str| constant_time_eq(given.as_bytes(), token.as_bytes());
    if request.authorization.as_deref().and_then(|a| a.strip_prefix("Bearer ")).is_some_and(|t| equal(t.trim())) {
        return Auth::Yes;
    }
    let cookie = request.cookie.as_deref().unwrap_or("");
    if cookie.split(';').filter_map(|c| c.trim().strip_prefix("vantage_token=")).any(equal) {
        return Auth::Yes;
    }
    if request.query("token").is_some_and(|t| equal(&t)) {
        return Auth::FromQuery;
    }
    Auth::No
}

/// Compares without stopping at the first difference (the time taken says nothing of the token).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `/api/runs`: the runs found, as docs/SERVE.md describes.
fn run_list(shared: &Shared) -> Response {
    let (entries, left_out) = shared.catalog.list();
    let runs: Vec<serde_json::Value> = entries.iter().map(runs::Entry::to_json).collect();
    Response::json(&serde_json::json!({ "vantage_serve": 1, "runs": runs, "left_out": left_out }))
}

/// `/api/labels/<id>`: the labels beside the run (docs/LABELS.md), as JSON lines of the labels
/// file, those of every place they may be; empty when it has none. Never written through here.
fn run_labels(shared: &Shared, segments: &[String]) -> Response {
    let Some((entry, rest)) = shared.catalog.resolve(segments) else {
        return Response::text(404, "no such run");
    };
    if !rest.is_empty() {
        return Response::text(404, "not found");
    }
    let read = crate::source::labels::read(&entry.path);
    let lines: String = read.entries.iter().map(crate::load::labels::line).collect();
    Response {
        status: 200,
        headers: vec![("Content-Type", "application/jsonl".to_owned())],
        body: Body::Bytes(lines.into_bytes()),
    }
    .with("Cache-Control", "no-cache")
}

/// `/api/first/<id>`: the pieces of a dataset's files its first view reads, as one pack
/// (`first_view`); 404 for a run not served as a dataset (yet).
fn first_view(shared: &Shared, segments: &[String]) -> Response {
    let Some((entry, rest)) = shared.catalog.resolve(segments) else {
        return Response::text(404, "no such run");
    };
    let (Served::Dataset(dir) | Served::Growing(dir), true) = (&entry.served, rest.is_empty()) else {
        return Response::text(404, "this run is not served as a v2 dataset (yet)");
    };
    let Ok(root) = dir.canonicalize() else { return Response::text(404, "not found") };
    match first_view::pack(&root, &entry.id) {
        Ok(pack) => Response {
            status: 200,
            headers: vec![("Content-Type", "application/octet-stream".to_owned())],
            body: Body::Bytes(pack),
        }
        .with("Cache-Control", "no-store"),
        Err(first_view::NoPack::TooLarge) => Response::text(
            413,
            &format!(
                "its first view reads more than {} bytes, more than one answer holds: read it by range",
                first_view::PACK_LIMIT
            ),
        ),
        Err(first_view::NoPack::Failed(why)) => Response::text(500, &why),
    }
}

/// A run's bytes: the log itself, or a file of its dataset.
fn run_file(shared: &Shared, request: &Request, segments: &[String]) -> Response {
    let Some((entry, rest)) = shared.catalog.resolve(segments) else {
        return Response::text(404, "no such run");
    };
    match &entry.served {
        Served::Raw if rest.is_empty() => serve_file(&entry.path, request, "application/octet-stream"),
        Served::Raw => Response::text(404, "not found"),
        Served::Dataset(dir) | Served::Growing(dir) => {
            let Ok(root) = dir.canonicalize() else { return Response::text(404, "not found") };
            let path: std::path::PathBuf = rest.iter().collect();
            // The file, through any link, must be inside the dataset's directory.
            match dataset_file(&root, &path) {
                Some(real) => {
                    let json = real.extension().is_some_and(|e| e == "json");
                    serve_file(&real, request, if json { "application/json" } else { "application/octet-stream" })
                }
                None => Response::text(404, "not found"),
            }
        }
        Served::Converting(_) => Response::text(503, "this run is being converted; the run list says when it is ready")
            .with("Retry-After", "2"),
        Served::Failed(why) => Response::text(500, &format!("this run could not be converted: {why}")),
    }
}

/// The file at `path` under the dataset directory `root` (canonical), when it is one and lies
/// inside `root` through any link: what the server reads of a dataset, by URL or for a pack.
fn dataset_file(root: &std::path::Path, path: &std::path::Path) -> Option<std::path::PathBuf> {
    let real = root.join(path).canonicalize().ok()?;
    (real.starts_with(root) && real.is_file()).then_some(real)
}

/// A file, whole or the one range asked for.
fn serve_file(path: &std::path::Path, request: &Request, content_type: &str) -> Response {
    let Ok(file) = std::fs::File::open(path) else { return Response::text(404, "not found") };
    let Ok(meta) = file.metadata() else { return Response::text(404, "not found") };
    let size = meta.len();
    let stamp =
        meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
    let etag = format!("\"{size:x}-{stamp:x}\"");
    let common = |response: Response| {
        response
            .with("Accept-Ranges", "bytes")
            .with("Cache-Control", "no-cache")
            .with("ETag", etag.clone())
            .with("Content-Security-Policy", "sandbox")
    };
    if request.if_none_match.as_deref() == Some(etag.as_str()) && request.range.is_none() {
        return common(Response { status: 304, headers: Vec::new(), body: Body::Bytes(Vec::new()) });
    }
    let typed = |status, body| Response { status, headers: vec![("Content-Type", content_type.to_owned())], body };
    match http::parse_range(request.range.as_deref(), size) {
        http::Range::Whole => common(typed(200, Body::File { file, start: 0, len: size })),
        http::Range::Part(start, end) => common(typed(206, Body::File { file, start, len: end - start }))
            .with("Content-Range", format!("bytes {start}-{}/{size}", end - 1)),
        http::Range::Unsatisfiable => common(Response::text(416, "range not satisfiable (one range inside the file)"))
            .with("Content-Range", format!("bytes */{size}")),
    }
}
