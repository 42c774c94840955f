//! Cooperative loading, so a long load on the web (one thread, no blocking) lets the page draw.
//!
//! Loaders are `async` where files get large: between records they await [`pace`], which does
//! nothing unless a yielder is installed on this thread ([`set_yielder`]: the web app installs one
//! that waits for a `setTimeout(0)`), and then gives the event loop back once the load has run for
//! the yielder's budget. Everywhere else a load runs straight through: [`block_on`] polls it on
//! the calling thread and pacing is off inside it, so the CLI, the tests and the native app's
//! loader threads are unaffected. A load that hands a first view over before it goes on awaits
//! [`after_frame`], so the page draws that view before the rest of the load's work.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// A future that completes once the event loop has run (what the installed yielder returns).
pub type Sleep = Pin<Box<dyn Future<Output = ()>>>;

/// A loader's future.
pub type LoadFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

struct Yielder {
    budget: Duration,
    sleep: Box<dyn Fn() -> Sleep>,
    frame: Box<dyn Fn() -> Sleep>,
    since: Cell<web_time::Instant>,
    calls: Cell<u32>,
    yields: Cell<u64>,
}

thread_local! {
    static YIELDER: RefCell<Option<Rc<Yielder>>> = const { RefCell::new(None) };
    /// Depth of `block_on` calls on this thread: pacing is off inside them.
    static BLOCKING: Cell<u32> = const { Cell::new(0) };
}

/// How often [`pace`] reads the clock (it is called once per record).
const CALLS_PER_CHECK: u32 = 32;

/// Installs, for loads awaited on this thread, how to give the event loop back (`sleep`), how
/// long a load may run in between (`budget`), and how to wait until the page has drawn its next
/// frame (`frame`, for [`after_frame`]).
pub fn set_yielder(budget: Duration, sleep: impl Fn() -> Sleep + 'static, frame: impl Fn() -> Sleep + 'static) {
    let yielder = Yielder {
        budget,
        sleep: Box::new(sleep),
        frame: Box::new(frame),
        since: Cell::new(web_time::Instant::now()),
        calls: Cell::new(0),
        yields: Cell::new(0),
    };
    YIELDER.with(|y| *y.borrow_mut() = Some(Rc::new(yielder)));
}

/// Removes this thread's yielder.
pub fn clear_yielder() {
    YIELDER.with(|y| *y.borrow_mut() = None);
}

/// How many times loads on this thread have yielded since the yielder was installed.
pub fn yields() -> u64 {
    YIELDER.with(|y| y.borrow().as_ref().map_or(0, |y| y.yields.get()))
}

/// Whether loads on this thread give the event loop back (a yielder is installed, and this is
/// not inside [`block_on`]): a load then works in small slices.
pub fn is_paced() -> bool {
    active().is_some()
}

/// This thread's yielder, unless this is inside [`block_on`] (where loads run straight through).
fn active() -> Option<Rc<Yielder>> {
    if BLOCKING.with(Cell::get) > 0 {
        return None;
    }
    YIELDER.with(|y| y.borrow().clone())
}

/// A point where a load may give the event loop back: when a yielder is installed, this is not
/// inside [`block_on`], and the load has run for the yielder's budget since the last yield.
pub async fn pace() {
    let Some(yielder) = active() else { return };
    let calls = yielder.calls.get() + 1;
    yielder.calls.set(calls % CALLS_PER_CHECK);
    if calls < CALLS_PER_CHECK || yielder.since.get().elapsed() < yielder.budget {
        return;
    }
    (yielder.sleep)().await;
    yielder.yields.set(yielder.yields.get() + 1);
    yielder.since.set(web_time::Instant::now());
}

/// Where a load has handed something to show over (the first view of a large dataset) and has
/// more to do: when a yielder is installed and this is not inside [`block_on`], it waits until
/// the page has drawn a frame, so what was handed over is on screen before the load goes on (the
/// requests and decoding after it would otherwise run first).
pub async fn after_frame() {
    let Some(yielder) = active() else { return };
    (yielder.frame)().await;
    yielder.since.set(web_time::Instant::now());
}

/// Runs a load to completion on this thread, without pacing.
pub fn block_on<F: Future>(future: F) -> F::Output {
    struct Depth;
    impl Drop for Depth {
        fn drop(&mut self) {
            BLOCKING.with(|b| b.set(b.get().saturating_sub(1)));
        }
    }
    BLOCKING.with(|b| b.set(b.get() + 1));
    let _depth = Depth;
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
    }
}
