//! Faults the app survives, and a way for tests to inject them. A loader or a credit computation
//! that panics (none should) is caught where it runs: the load becomes a notice and the other
//! runs stay open; the scheme shows the error and the last good credit stays on screen.

/// What tests asked to fail: `load NAME` (a load of the file named NAME) or `credit ID on NAME`
/// (scheme ID computed on the run named NAME). Held by the app (and its load queue), which hands
/// it to the threads it starts.
#[derive(Clone, Debug, Default)]
pub struct Faults(std::sync::Arc<[String]>);

impl Faults {
    /// Makes every later `what` (`load NAME` or `credit ID on NAME`) panic where it runs, as a bug
    /// would.
    #[doc(hidden)]
    pub fn inject_panic(&mut self, what: &str) {
        let mut all = self.0.to_vec();
        all.push(what.to_owned());
        self.0 = all.into();
    }

    /// Panics when a test injected `what`.
    fn check(&self, what: &str) {
        assert!(!self.0.iter().any(|w| w == what), "injected fault: {what}");
    }

    /// Runs `f`, turning a panic (a bug, or a fault injected for `what`) into `Err` with what
    /// failed and its message.
    pub(crate) fn catch<T>(&self, what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.check(what);
            f()
        }))
        .unwrap_or_else(|panic| {
            Err(format!(
                "{what} stopped on an internal error ({}); this is a bug in vantage, please report it",
                message(&*panic)
            ))
        })
    }
}

/// The message of a caught panic.
pub(crate) fn message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}
