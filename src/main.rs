//! The `vantage` binary: the CLI and desktop app natively, the web app on wasm32.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    vantage::cli::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {
    vantage::web::start();
}

/// The credit worker's entry: its module script calls this once the wasm is in (the page's `main`
/// does nothing there, as a worker has no window).
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn vantage_credit_worker() {
    vantage::app::credit_worker::serve();
}
