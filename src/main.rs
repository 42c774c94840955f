//! The `vantage` binary: the CLI and desktop app natively, the web app on wasm32.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    vantage::cli::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {
    vantage::web::start();
}
