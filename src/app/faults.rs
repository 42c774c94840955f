//! Faults the app survives, and a way for tests to inject them. A loader or a credit computation
//! that panics (none should) is caught where it runs: the load becomes a notice and the other
//! runs stay open; the scheme shows the error and the last good credit stays on screen.

use std::sync::Mutex;

/// What tests asked to fail: `load NAME` (a load of the file named NAME) or `credit ID on NAME`
/// (scheme ID computed on the run named NAME).
static INJECTED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Makes every later `what` (`load NAME` or `credit ID on NAME`) panic where it runs, as a bug would.
#[doc(hidden)]
pub fn inject_panic(what: &str) {
    if let Ok(mut injected) = INJECTED.lock() {
        injected.push(what.to_owned());
    }
}

/// Panics when a test injected `what`.
pub(crate) fn check(what: &str) {
    let injected = INJECTED.lock().is_ok_and(|injected| injected.iter().any(|w| w == what));
    assert!(!injected, "injected fault: {what}");
}

/// The message of a caught panic.
pub(crate) fn message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}

/// Runs `f`, turning a panic into `Err` with what failed and its message.
pub(crate) fn catch<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        check(what);
        f()
    }))
    .unwrap_or_else(|panic| {
        Err(format!(
            "{what} stopped on an internal error ({}); this is a bug in vantage, please report it",
            message(&*panic)
        ))
    })
}
