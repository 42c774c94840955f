//! Following a run while it trains (native): a thread looks at the path every half second and
//! sends the run again whenever records arrived (`crate::source::live::Live::poll`); the app swaps it in,
//! keeping the selection (`app::OpenRun::replace_run`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::load::LoadReport;
use crate::model::Run;
use crate::source::live::Live;

/// How often the followed path is looked at.
pub const POLL_EVERY: Duration = Duration::from_millis(500);

/// What the follow thread sends.
#[derive(Debug)]
pub enum Update {
    /// The run with the records that arrived.
    Run(Box<Run>, LoadReport),
    /// Something to tell the user (a file replaced and read again).
    Notice(String),
    /// Following stopped (the path became unreadable).
    Stopped(String),
}

/// Opens `path` to follow it (a JSON-lines log, a verl, NeMo-RL, prime-rl or TRL directory), with
/// the budget `report` has: reads what is there, showing the run so far with `partial`, and
/// returns the run and the reader, to hand to a [`Follower`]. A run that has not written its
/// first records yet opens empty, and is followed.
pub fn open(
    path: &std::path::Path,
    report: &mut LoadReport,
    partial: super::live::ShowRun<'_>,
) -> Result<(Run, Live), crate::load::LoadError> {
    let name = path.display().to_string();
    let mut live = match Live::open(path, report.clone())? {
        Some(live) if live.can_follow() => live,
        _ => {
            let err = crate::load::LoadError::Incompatible {
                format: "followed log",
                reason:
                    "only a vantage JSONL file, a verl rollout_data_dir or a TRL completions directory can be followed"
                        .to_owned(),
            };
            return Err(err.with_path(&name));
        }
    };
    live.follow();
    live.read(Some(partial))?;
    Ok((live.snapshot(), live))
}

/// A followed run's thread, and when data last arrived.
#[derive(Debug)]
pub struct Follower {
    receiver: mpsc::Receiver<Update>,
    stop: Arc<AtomicBool>,
    /// When records last arrived (or following started).
    pub last_data: Instant,
    /// Why following stopped, once it did.
    pub stopped: Option<String>,
}

impl Follower {
    /// Follows `live` (the run at `path`, read up to now), giving each update what the door gives
    /// a run (`options`' outcomes joined, the notes about files beside it); `repaint` is called
    /// when an update is sent.
    pub fn start(
        mut live: Live,
        path: &std::path::Path,
        options: &super::OpenOptions,
        repaint: impl Fn() + Send + 'static,
    ) -> Option<Self> {
        let (path, outcomes) = (path.to_owned(), std::sync::Arc::clone(&options.outcomes));
        let (sender, receiver) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        live.follow();
        let name = live.name().to_owned();
        let spawned = std::thread::Builder::new().name(format!("follow {name}")).spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                std::thread::sleep(POLL_EVERY);
                let update = match live.poll() {
                    Ok(true) => {
                        let (mut run, mut report) = (live.snapshot(), live.report().clone());
                        super::joined::finish(&path, &outcomes, &mut run, &mut report);
                        Update::Run(Box::new(run), report)
                    }
                    Ok(false) => continue,
                    Err(err) => Update::Stopped(format!("{err:#}")),
                };
                let stopped = matches!(update, Update::Stopped(_));
                let notices = std::mem::take(&mut live.notices).into_iter().map(Update::Notice);
                if notices.chain([update]).any(|u| sender.send(u).is_err()) || stopped {
                    break;
                }
                repaint();
            }
        });
        match spawned {
            Ok(_) => Some(Self { receiver, stop, last_data: Instant::now(), stopped: None }),
            Err(err) => {
                log::error!("could not start a follow thread: {err}");
                None
            }
        }
    }

    /// The updates that arrived since the last call.
    pub fn poll(&mut self) -> Vec<Update> {
        let updates: Vec<Update> = self.receiver.try_iter().collect();
        for update in &updates {
            match update {
                Update::Run(..) => self.last_data = Instant::now(),
                Update::Stopped(why) => self.stopped = Some(why.clone()),
                Update::Notice(_) => {}
            }
        }
        updates
    }

    /// The status-bar line: "following · last data 3 s ago".
    pub fn status(&self) -> String {
        match &self.stopped {
            Some(why) => format!("following stopped: {why}"),
            None => format!("following · last data {} s ago", self.last_data.elapsed().as_secs()),
        }
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
