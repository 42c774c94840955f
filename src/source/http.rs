//! HTTP GETs of the web build (`fetch`): one request builder and one body reader for what loads a
//! log by URL (`loading`), follows it (`web_follow`) and reads a v2 dataset's byte ranges
//! (`web_dataset`).

use eframe::wasm_bindgen::JsCast as _;

/// Why a GET gave no response.
pub enum GetError {
    /// The request never got an answer: the server is unreachable, or it refuses cross-origin
    /// requests (the browser does not say which). Each caller says it in its own words.
    Unreachable,
    /// Anything else (no window, a bad URL), said for the user.
    Failed(String),
}

/// GETs `url` across origins, with a `Range` header when given and `cache` when given; the
/// response whatever its status.
pub async fn get(
    url: &str,
    range: Option<&str>,
    cache: Option<web_sys::RequestCache>,
) -> Result<web_sys::Response, GetError> {
    let failed = |why: String| GetError::Failed(why);
    let window = web_sys::window().ok_or_else(|| failed("no window".to_owned()))?;
    let init = web_sys::RequestInit::new();
    init.set_method("GET");
    init.set_mode(web_sys::RequestMode::Cors);
    if let Some(range) = range {
        let headers = web_sys::Headers::new().map_err(|e| failed(format!("{e:?}")))?;
        headers.append("Range", range).map_err(|e| failed(format!("{e:?}")))?;
        init.set_headers(&headers);
    }
    if let Some(cache) = cache {
        init.set_cache(cache);
    }
    let request = web_sys::Request::new_with_str_and_init(url, &init).map_err(|e| failed(format!("bad URL: {e:?}")))?;
    let response = wasm_bindgen_futures::JsFuture::from(window.fetch_with_request(&request))
        .await
        .map_err(|_err| GetError::Unreachable)?;
    response.dyn_into().map_err(|_err| failed("not an HTTP response".to_owned()))
}

/// The whole body of `response`.
pub async fn body(response: &web_sys::Response) -> Result<Vec<u8>, String> {
    let buffer = response.array_buffer().map_err(|e| format!("{e:?}"))?;
    let buffer = wasm_bindgen_futures::JsFuture::from(buffer).await.map_err(|e| format!("reading the body: {e:?}"))?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}
