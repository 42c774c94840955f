//! The HTTP/1.1 of `vantage serve`: a read-only GET/HEAD server with bounded everything.
//!
//! Requests are parsed by `httparse` (the parser under hyper); connections are plain threads of
//! `std::net`. A full server stack (hyper with tokio) would add its runtime and a second build of
//! tokio's network half for a server that only answers GETs of files, and `tiny_http` has no
//! per-connection deadlines or connection cap; what this server must bound (see [`Limits`]) is
//! simple to bound here, and each bound is a test (`tests/it/serve.rs`).

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// What a client may ask of the server; past any of them the request is refused with its status,
/// and the connection closed.
#[derive(Clone, Debug)]
pub struct Limits {
    /// The request line and headers together (431 past it).
    pub head_bytes: usize,
    /// Headers in one request (431 past it).
    pub headers: usize,
    /// The request target (414 past it).
    pub target_bytes: usize,
    /// The time a client has to send a request's head once its first byte is in (408 past it): a
    /// client sending a byte a second cannot hold a connection for longer.
    pub head_deadline: Duration,
    /// How long a connection may wait for a request to start (the first, or the next one on a
    /// kept-alive connection).
    pub idle: Duration,
    /// How long one write may wait for a client that does not read.
    pub write: Duration,
    /// Connections open at once (503 to the next until one closes).
    pub connections: usize,
    /// Requests on one connection.
    pub requests_per_connection: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            head_bytes: 16 * 1024,
            headers: 64,
            target_bytes: 4096,
            head_deadline: Duration::from_secs(10),
            idle: Duration::from_secs(15),
            write: Duration::from_secs(30),
            connections: 512,
            requests_per_connection: 10_000,
        }
    }
}

/// A request's method, target and the headers the server reads.
#[derive(Debug, Default)]
pub struct Request {
    /// `GET` or `HEAD` (anything else is answered 405 before a handler sees it).
    pub method: String,
    /// The target as sent (`/runs/a%20b.jsonl?x=1`).
    pub target: String,
    /// `Host`.
    pub host: Option<String>,
    /// `Range`.
    pub range: Option<String>,
    /// `Authorization`.
    pub authorization: Option<String>,
    /// `Cookie`.
    pub cookie: Option<String>,
    /// `Accept-Encoding`.
    pub accept_encoding: Option<String>,
    /// `If-None-Match`.
    pub if_none_match: Option<String>,
    /// Whether the client asked to close after this request (`Connection: close`, or HTTP/1.0
    /// without keep-alive).
    pub close: bool,
}

impl Request {
    /// Whether this is a HEAD request (headers only).
    pub fn is_head(&self) -> bool {
        self.method == "HEAD"
    }

    /// The path part of the target (before `?`).
    pub fn path(&self) -> &str {
        self.target.split_once('?').map_or(self.target.as_str(), |(p, _)| p)
    }

    /// The value of query parameter `key`, percent-decoded.
    pub fn query(&self, key: &str) -> Option<String> {
        let query = self.target.split_once('?')?.1;
        query.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (k == key).then(|| percent_encoding::percent_decode_str(v).decode_utf8_lossy().into_owned())
        })
    }

    /// The target with the `token` query parameter's value hidden (for the request log).
    pub fn logged_target(&self) -> String {
        let Some((path, query)) = self.target.split_once('?') else { return self.target.clone() };
        let query: Vec<String> = query
            .split('&')
            .map(|pair| if pair.starts_with("token=") { "token=…".to_owned() } else { pair.to_owned() })
            .collect();
        format!("{path}?{}", query.join("&"))
    }
}

/// A response: status, headers and body (a file is streamed, see [`Body`]).
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Headers besides `Content-Length`, `Connection` and the security headers every answer gets.
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Body,
}

/// A response body.
pub enum Body {
    /// Bytes in memory.
    Bytes(Vec<u8>),
    /// Static bytes (the embedded web app).
    Static(&'static [u8]),
    /// `len` bytes of a file from `start`.
    File { file: std::fs::File, start: u64, len: u64 },
}

impl Body {
    fn len(&self) -> u64 {
        match self {
            Self::Bytes(b) => b.len() as u64,
            Self::Static(b) => b.len() as u64,
            Self::File { len, .. } => *len,
        }
    }
}

impl Response {
    /// A response with a text body.
    pub fn text(status: u16, text: &str) -> Self {
        Self {
            status,
            headers: vec![("Content-Type", "text/plain; charset=utf-8".to_owned())],
            body: Body::Bytes(format!("{text}\n").into_bytes()),
        }
    }

    /// A JSON response.
    pub fn json(value: &serde_json::Value) -> Self {
        Self {
            status: 200,
            headers: vec![("Content-Type", "application/json".to_owned()), ("Cache-Control", "no-store".to_owned())],
            body: Body::Bytes(value.to_string().into_bytes()),
        }
    }

    /// Adds a header.
    pub fn with(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }
}

/// The reason phrase of a status the server sends.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        206 => "Partial Content",
        303 => "See Other",
        304 => "Not Modified",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        414 => "URI Too Long",
        416 => "Range Not Satisfiable",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}

/// Why no request could be read.
pub enum ReadError {
    /// The connection closed, or stayed idle past the idle limit, between requests: no answer.
    Gone,
    /// A request the server refuses, with its status and why (answered, then the connection closed).
    Refused(u16, &'static str),
}

/// Reads one request's head from `stream` (what follows it of a pipelined request stays in
/// `buffer`). A client has the idle limit to start a request and, once its first byte is in, the
/// head deadline to finish the head.
pub fn read_request(stream: &mut TcpStream, buffer: &mut Vec<u8>, limits: &Limits) -> Result<Request, ReadError> {
    let mut deadline: Option<Instant> = None;
    let idle_until = Instant::now() + limits.idle;
    let mut chunk = [0u8; 4096];
    loop {
        if !buffer.is_empty() && deadline.is_none() {
            deadline = Some(Instant::now() + limits.head_deadline);
        }
        if let Some(request) = parse_head(buffer, limits)? {
            return Ok(request);
        }
        if buffer.len() >= limits.head_bytes {
            return Err(ReadError::Refused(431, "request head too large"));
        }
        let until = deadline.unwrap_or(idle_until);
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(if deadline.is_some() {
                ReadError::Refused(408, "request head not sent in time")
            } else {
                ReadError::Gone
            });
        }
        if stream.set_read_timeout(Some(left)).is_err() {
            return Err(ReadError::Gone);
        }
        match stream.read(&mut chunk) {
            Ok(0) => {
                return Err(if buffer.is_empty() {
                    ReadError::Gone
                } else {
                    ReadError::Refused(400, "incomplete request")
                });
            }
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            Err(err) if matches!(err.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Err(ReadError::Gone),
        }
    }
}

/// Parses a complete head at the start of `buffer` (removing it), `None` while it is incomplete.
fn parse_head(buffer: &mut Vec<u8>, limits: &Limits) -> Result<Option<Request>, ReadError> {
    let mut headers = vec![httparse::EMPTY_HEADER; limits.headers];
    let mut parsed = httparse::Request::new(&mut headers);
    let used = match parsed.parse(buffer) {
        Ok(httparse::Status::Complete(used)) => used,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(ReadError::Refused(431, "too many headers")),
        Err(_) => return Err(ReadError::Refused(400, "malformed request")),
    };
    if used > limits.head_bytes {
        return Err(ReadError::Refused(431, "request head too large"));
    }
    let method = parsed.method.unwrap_or_default().to_owned();
    let target = parsed.path.unwrap_or_default().to_owned();
    if target.len() > limits.target_bytes {
        return Err(ReadError::Refused(414, "request target too long"));
    }
    let mut request = Request { method, target, close: parsed.version == Some(0), ..Request::default() };
    for header in parsed.headers.iter() {
        let value = || String::from_utf8_lossy(header.value).trim().to_owned();
        let name = header.name.to_ascii_lowercase();
        match name.as_str() {
            "host" => request.host = Some(value()),
            "range" => request.range = Some(value()),
            "authorization" => request.authorization = Some(value()),
            "cookie" => request.cookie = Some(value()),
            "accept-encoding" => request.accept_encoding = Some(value()),
            "if-none-match" => request.if_none_match = Some(value()),
            "connection" => {
                let v = value().to_ascii_lowercase();
                if v.contains("close") {
                    request.close = true;
                } else if v.contains("keep-alive") {
                    request.close = false;
                }
            }
            // The server takes no request bodies: one announced is refused (its bytes would
            // otherwise be read as the next request).
            "content-length" if value() != "0" => {
                return Err(ReadError::Refused(413, "request bodies are not accepted"));
            }
            "transfer-encoding" => return Err(ReadError::Refused(501, "request bodies are not accepted")),
            _ => {}
        }
    }
    buffer.drain(..used);
    Ok(Some(request))
}

/// Writes `response` (its body too unless `head_only`); the bytes of body written, or the error.
pub fn write_response(
    stream: &mut TcpStream,
    response: Response,
    head_only: bool,
    close: bool,
    limits: &Limits,
) -> std::io::Result<u64> {
    stream.set_write_timeout(Some(limits.write))?;
    let len = response.body.len();
    let mut head = format!("HTTP/1.1 {} {}\r\n", response.status, reason(response.status));
    for (name, value) in &response.headers {
        // Header values come from the server's own strings; a line break in one would split the
        // response (never expected, refused all the same).
        if value.contains(['\r', '\n']) {
            continue;
        }
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if response.status != 304 {
        head.push_str(&format!("Content-Length: {len}\r\n"));
    }
    head.push_str("X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\nX-Frame-Options: DENY\r\n");
    head.push_str(if close { "Connection: close\r\n\r\n" } else { "Connection: keep-alive\r\n\r\n" });
    stream.write_all(head.as_bytes())?;
    if head_only || response.status == 304 {
        stream.flush()?;
        return Ok(0);
    }
    match response.body {
        Body::Bytes(bytes) => stream.write_all(&bytes)?,
        Body::Static(bytes) => stream.write_all(bytes)?,
        Body::File { file, start, len } => {
            use std::io::Seek as _;
            let mut file = file;
            file.seek(std::io::SeekFrom::Start(start))?;
            let mut left = len;
            let mut chunk = vec![0u8; 256 * 1024];
            while left > 0 {
                let want = usize::try_from(left.min(chunk.len() as u64)).unwrap_or(chunk.len());
                let got = file.read(&mut chunk[..want])?;
                if got == 0 {
                    // The file shrank while it was sent: the length announced cannot be met.
                    return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "file shrank"));
                }
                stream.write_all(&chunk[..got])?;
                left -= got as u64;
            }
        }
    }
    stream.flush()?;
    Ok(len)
}

/// A byte range of a resource of `size` bytes, as one `Range` header asks for it.
#[derive(Debug, PartialEq, Eq)]
pub enum Range {
    /// No range (or one the server ignores): the whole resource.
    Whole,
    /// Bytes `start..end` (end exclusive).
    Part(u64, u64),
    /// A range past the end, or more than one range (416).
    Unsatisfiable,
}

/// Reads a `Range` header for a resource of `size` bytes: one `bytes=` range only (a list of ranges
/// is refused, so a request cannot ask for the same bytes many times over).
pub fn parse_range(header: Option<&str>, size: u64) -> Range {
    let Some(header) = header else { return Range::Whole };
    let Some(spec) = header.trim().strip_prefix("bytes=") else { return Range::Whole };
    if spec.contains(',') {
        return Range::Unsatisfiable;
    }
    let Some((a, b)) = spec.trim().split_once('-') else { return Range::Unsatisfiable };
    let (a, b) = (a.trim(), b.trim());
    let number =
        |s: &str| if s.bytes().all(|c| c.is_ascii_digit()) && s.len() <= 19 { s.parse::<u64>().ok() } else { None };
    match (a.is_empty(), b.is_empty()) {
        // `bytes=-N`: the last N bytes.
        (true, false) => match number(b) {
            Some(0) | None => Range::Unsatisfiable,
            Some(n) => Range::Part(size.saturating_sub(n), size),
        },
        (false, _) => {
            let Some(start) = number(a) else { return Range::Unsatisfiable };
            if start >= size {
                return Range::Unsatisfiable;
            }
            let end = if b.is_empty() {
                size
            } else {
                match number(b) {
                    Some(last) if last >= start => last.saturating_add(1).min(size),
                    _ => return Range::Unsatisfiable,
                }
            };
            Range::Part(start, end)
        }
        (true, true) => Range::Unsatisfiable,
    }
}

/// Decodes a request path into its segments; `None` for anything that could name a file outside
/// what is served: `..` or `.` segments, empty segments, hidden names, backslashes, NUL, invalid
/// UTF-8 (checked after percent-decoding, so every encoding of them is caught).
pub fn path_segments(path: &str) -> Option<Vec<String>> {
    let rest = path.strip_prefix('/')?;
    if rest.is_empty() {
        return Some(Vec::new());
    }
    let mut segments = Vec::new();
    for raw in rest.split('/') {
        let decoded = percent_encoding::percent_decode_str(raw).decode_utf8().ok()?.into_owned();
        if decoded.is_empty()
            || decoded == "."
            || decoded == ".."
            || decoded.starts_with('.')
            || decoded.contains(['/', '\\', '\0', ':'])
            || decoded.chars().any(char::is_control)
        {
            return None;
        }
        segments.push(decoded);
    }
    Some(segments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_one_range_inside_the_resource() {
        assert_eq!(parse_range(None, 10), Range::Whole);
        assert_eq!(parse_range(Some("bytes=0-3"), 10), Range::Part(0, 4));
        assert_eq!(parse_range(Some("bytes=5-"), 10), Range::Part(5, 10));
        assert_eq!(parse_range(Some("bytes=-3"), 10), Range::Part(7, 10));
        assert_eq!(parse_range(Some("bytes=-30"), 10), Range::Part(0, 10));
        assert_eq!(parse_range(Some("bytes=8-100"), 10), Range::Part(8, 10));
        assert_eq!(parse_range(Some("bytes=10-"), 10), Range::Unsatisfiable);
        assert_eq!(parse_range(Some("bytes=0-1,3-4"), 10), Range::Unsatisfiable);
        assert_eq!(parse_range(Some("bytes=4-2"), 10), Range::Unsatisfiable);
        assert_eq!(parse_range(Some("bytes=-0"), 10), Range::Unsatisfiable);
        assert_eq!(parse_range(Some("bytes=+1-2"), 10), Range::Unsatisfiable);
        assert_eq!(parse_range(Some("bytes=99999999999999999999999-"), 10), Range::Unsatisfiable);
        assert_eq!(parse_range(Some("items=0-1"), 10), Range::Whole);
    }

    #[test]
    fn paths_that_could_leave_the_served_tree_are_refused_in_every_encoding() {
        assert_eq!(path_segments("/runs/a%20b.jsonl"), Some(vec!["runs".to_owned(), "a b.jsonl".to_owned()]));
        assert_eq!(path_segments("/"), Some(Vec::new()));
        for bad in [
            "/runs/../etc/passwd",
            "/runs/%2e%2e/x",
            "/runs/%2E%2E/x",
            "/runs/..%2fx",
            "/runs/%2e%2e%2fetc",
            "/runs/..%5cx",
            "/runs/.hidden",
            "/runs//x",
            "/runs/a%00b",
            "/runs/%c0%ae%c0%ae/x",
            "/runs/C:%5cwindows",
            "runs/x",
            "/runs/./x",
        ] {
            assert_eq!(path_segments(bad), None, "{bad}");
        }
    }
}
