//! The content type of a web app file by its name: what `vantage serve` sends it as. Shared with
//! `build.rs`, which includes this file as a module of its own (so it names nothing of the crate).

/// The content type of the web app file `name`.
pub fn content_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map_or("", |(_, e)| e) {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript",
        "wasm" => "application/wasm",
        "css" => "text/css",
        "json" => "application/json",
        "png" => "image/png",
        "svg" => "image/svg+xml",
        "ico" => "image/x-icon",
        _ => "application/octet-stream",
    }
}
