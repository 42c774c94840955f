//! One open run with what the views derive from it: the selection, credit under schemes A and B
//! (recomputed only when their choice changes), the group tree layout and credit under every scheme
//! for the inspector (computed once, lazily).

use crate::analysis::RunSummary;
use crate::analysis::tree_layout::{GroupTree, TreeMerge};
use crate::app::state::SchemeChoice;
use crate::credit::{Credit, SchemeInfo, Support};
use crate::load::LoadReport;
use crate::load::formats::inspect::EvalFile;
use std::sync::Arc;

use crate::model::{GroupId, Run, TrajectoryId};

/// What is selected: a group, a trajectory of it, and a step (a path position of that trajectory).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// The group.
    pub group: Option<GroupId>,
    /// The trajectory.
    pub trajectory: Option<TrajectoryId>,
    /// The step, as an index into `run.trajectories.path_nodes`.
    pub position: Option<usize>,
}

/// Runs with more path steps than this recompute credit on a worker thread (native), so a slider
/// never freezes the frame; smaller ones recompute at once (a few milliseconds).
#[cfg(not(target_arch = "wasm32"))]
pub const BACKGROUND_STEPS: usize = 200_000;

/// The most path steps of a run the app audits as it opens (each of some thirty presets is
/// computed once); larger runs are audited by `vantage check`.
pub const AUDIT_STEPS: usize = 200_000;

/// Credit under one scheme choice, with the key it was computed for.
#[derive(Debug, Default)]
pub struct CreditSlot {
    /// The choice's cache key (`SchemeChoice::cache_key`).
    pub key: String,
    /// The credit, or why there is none.
    pub result: Option<Result<Credit, String>>,
    /// When the latest computation failed: the last credit that did not, with its key (shown
    /// until one succeeds again or the run changes).
    pub last_good: Option<(String, Credit)>,
    /// Bumped on every recomputation, so textures know when to re-upload.
    pub generation: u64,
    /// A recomputation in flight on a worker thread: its key and where its result arrives.
    pending: Option<(String, std::sync::mpsc::Receiver<Result<Credit, String>>)>,
    /// The largest |step credit| shown, with the generation it was measured at.
    largest: std::cell::Cell<Option<(u64, f32)>>,
}

impl CreditSlot {
    /// Recomputes when `choice` differs from what the slot holds (or is computing), and takes in a
    /// finished background result. `repaint` is called when a background result is ready. `remote`
    /// is the web credit worker's copy of the run, where large runs are computed; `faults` are
    /// those tests injected.
    pub fn update(
        &mut self,
        run: &Arc<Run>,
        choice: &SchemeChoice,
        remote: Option<u32>,
        faults: &crate::app::faults::Faults,
        repaint: impl Fn() + Send + 'static,
    ) {
        if let Some((key, receiver)) = &self.pending
            && let Ok(result) = receiver.try_recv()
        {
            #[cfg(target_arch = "wasm32")]
            let result = match result {
                Err(e) if e == crate::app::credit_worker::WORKER_GONE => compute(run, choice, faults),
                other => other,
            };
            let key = key.clone();
            self.pending = None;
            self.set(key, result);
        }
        let key = choice.cache_key();
        let computing = self.pending.as_ref().is_some_and(|(k, _)| *k == key);
        if computing || (self.result.is_some() && self.key == key && self.pending.is_none()) {
            return;
        }
        #[cfg(not(target_arch = "wasm32"))]
        if run.num_path_steps() > BACKGROUND_STEPS {
            let (sender, receiver) = std::sync::mpsc::channel();
            let (run, choice, faults) = (Arc::clone(run), choice.clone(), faults.clone());
            let spawned = std::thread::Builder::new().name(format!("credit {}", choice.scheme_id)).spawn(move || {
                let _: Result<(), _> = sender.send(compute(&run, &choice, &faults));
                repaint();
            });
            match spawned {
                Ok(_) => {
                    self.pending = Some((key, receiver));
                    return;
                }
                Err(err) => log::warn!("could not start a credit thread ({err}); computing in the frame"),
            }
        }
        #[cfg(target_arch = "wasm32")]
        if let Some(remote) = remote
            && let Some(receiver) = crate::app::credit_worker::request(remote, choice, repaint)
        {
            self.pending = Some((key, receiver));
            return;
        }
        #[cfg(not(target_arch = "wasm32"))]
        let _: Option<u32> = remote;
        self.pending = None;
        self.set(key, compute(run, choice, faults));
    }

    /// Takes in a result for `key`; a failure keeps the credit it replaces as the last good one.
    fn set(&mut self, key: String, result: Result<Credit, String>) {
        match (&result, self.result.take()) {
            (Err(_), Some(Ok(previous))) => self.last_good = Some((std::mem::take(&mut self.key), previous)),
            (Ok(_), _) => self.last_good = None,
            (Err(_), _) => {}
        }
        self.key = key;
        self.result = Some(result);
        self.generation += 1;
    }

    /// Forgets the credit (its run was replaced): the next `update` recomputes, and views that
    /// key on the generation redraw.
    pub fn invalidate(&mut self) {
        self.key.clear();
        self.result = None;
        self.last_good = None;
        self.pending = None;
        self.generation += 1;
    }

    /// Whether a recomputation is in flight (the shown credit is the previous choice's).
    pub fn is_computing(&self) -> bool {
        self.pending.is_some()
    }

    /// The step credit shown: the current choice's, or the last good one when it failed.
    pub fn step(&self) -> Option<&[f32]> {
        self.credit().map(|c| c.step.as_slice())
    }

    /// The credit shown: the current choice's, or the last good one when it failed.
    pub fn credit(&self) -> Option<&Credit> {
        match &self.result {
            Some(Ok(credit)) => Some(credit),
            _ => self.last_good.as_ref().map(|(_, c)| c),
        }
    }

    /// The key of the credit shown (the last good one's when the current choice failed).
    pub fn shown_key(&self) -> &str {
        match (&self.result, &self.last_good) {
            (Some(Err(_)), Some((key, _))) => key,
            _ => &self.key,
        }
    }

    /// The largest |step credit| of the credit shown (0 when there is none), measured once per
    /// recomputation: what rounding noise is measured against (`ui::widgets::format_credit`).
    pub fn largest(&self) -> f32 {
        if let Some((generation, largest)) = self.largest.get()
            && generation == self.generation
        {
            return largest;
        }
        let step = self.step().unwrap_or_default();
        let largest = step.iter().filter(|v| v.is_finite()).fold(0.0f32, |m, v| m.max(v.abs()));
        self.largest.set(Some((self.generation, largest)));
        largest
    }

    /// The name of the credit shown, for people: [`Self::shown_key`] without the hash that tells
    /// two long formulas of one title apart.
    pub fn shown_name(&self) -> &str {
        display_name(self.shown_key())
    }

    /// Why there is no credit.
    pub fn error(&self) -> Option<&str> {
        match &self.result {
            Some(Err(e)) => Some(e),
            _ => None,
        }
    }
}

/// A scheme's key as people read it: a long formula's key (`formula "title" #1a2b3c4d`) without
/// its hash.
pub fn display_name(key: &str) -> &str {
    match key.rfind("\" #") {
        Some(at) if key.starts_with("formula \"") => &key[..=at],
        _ => key,
    }
}

/// Computes `choice` on `run`, as the CLI does.
/// A panic inside a scheme (a bug, or one of `faults`) is caught and returned as its error.
pub fn compute(run: &Run, choice: &SchemeChoice, faults: &crate::app::faults::Faults) -> Result<Credit, String> {
    faults.catch(&format!("credit {} on {}", choice.scheme_id, run.meta.name), || {
        if let Some(text) = choice.formula() {
            return crate::credit::expr::Formula::parse(text)
                .and_then(|formula| formula.credit(run))
                .map_err(|e| format!("formula: {e}"));
        }
        let scheme = crate::credit::scheme(&choice.scheme_id).map_err(|e| e.to_string())?;
        crate::credit::compute(scheme, run, choice.preset.as_deref(), &choice.values).map_err(|e| e.to_string())
    })
}

/// Credit under one scheme with its defaults, for the inspector.
#[derive(Debug)]
pub struct SchemeCredit {
    /// The scheme.
    pub info: &'static SchemeInfo,
    /// Its credit.
    pub credit: Credit,
}

/// A list of groups walked one at a time (the groups behind a health alarm).
#[derive(Clone, Debug, PartialEq)]
pub struct Walk {
    /// What they are ("zero variance alarm").
    pub what: String,
    /// The groups, in order.
    pub groups: Vec<GroupId>,
    /// The one shown.
    pub at: usize,
}

/// What the pickers offer for a run, gathered once at open (scanning the node columns every frame
/// would cost O(steps)).
#[derive(Clone, Debug, Default)]
pub struct Facets {
    /// Values the heatmap and tree can show.
    pub heat_choices: Vec<crate::analysis::heatmap::HeatValue>,
    /// Role labels, sorted, with their symbols.
    pub roles: Vec<(crate::model::Sym, String)>,
    /// Step kinds, sorted.
    pub kinds: Vec<String>,
    /// Tasks that recur across training steps, with their groups in step order.
    pub recurring_tasks: std::collections::BTreeMap<String, Vec<GroupId>>,
    /// Per group, how far from 0 the rounding noise of a zero-variance group can reach (the
    /// audit's bound; `None` where the rewards differ).
    pub noise_bounds: Vec<Option<f64>>,
}

impl Facets {
    fn of(run: &Run) -> Self {
        let labels = |column: &[crate::model::Sym]| {
            let mut seen: Vec<crate::model::Sym> = column.iter().copied().filter(|s| s.is_some()).collect();
            seen.sort_unstable_by_key(|s| s.0);
            seen.dedup();
            let mut out: Vec<(crate::model::Sym, String)> =
                seen.into_iter().map(|s| (s, run.label(s).to_owned())).collect();
            out.sort_by(|a, b| a.1.cmp(&b.1));
            out
        };
        Self {
            heat_choices: crate::analysis::heatmap::HeatValue::choices(run),
            roles: labels(&run.nodes.role),
            kinds: labels(&run.nodes.kind).into_iter().map(|(_, k)| k).collect(),
            recurring_tasks: crate::analysis::overview::recurring_tasks(run),
            noise_bounds: crate::analysis::compare::zero_variance_bounds(run),
        }
    }
}

/// A run that loaded, with its report, summary and derived state.
pub struct OpenRun {
    /// The run (shared with background credit computations).
    pub run: Arc<Run>,
    /// This open run's own number: two runs of one name (files dropped on the web carry only
    /// their names) never share a view's cache.
    pub instance: u64,
    /// Warnings from loading.
    pub report: LoadReport,
    /// Its summary.
    pub summary: RunSummary,
    /// Which credit schemes it supports, and why not the others.
    pub support: Vec<(&'static SchemeInfo, Support)>,
    /// What the pickers offer.
    pub facets: Facets,
    /// What is selected.
    pub selection: Selection,
    /// The groups being walked (an alarm's), with previous and next in the Group view.
    pub walk: Option<Walk>,
    /// Credit under scheme A and scheme B.
    pub credit: [CreditSlot; 2],
    /// The laid-out tree of the selected group (group, merge mode, tree).
    pub tree: Option<(GroupId, TreeMerge, GroupTree)>,
    /// Credit under every supported scheme with default parameters (computed on first use).
    pub every_scheme: Option<Vec<SchemeCredit>>,
    /// What the audit of the run's own logged advantages found (`analysis::audit`), when it logs
    /// them: set as the run opens, for runs of at most `AUDIT_STEPS` steps.
    pub audit: Option<crate::analysis::audit::Audit>,
    /// Schemes A and B as they were when another run was shown instead: showing this run again
    /// brings them back (a preset chosen on it is its own).
    pub schemes: Option<[crate::app::state::SchemeChoice; 2]>,
    /// Samples still to be read, for a run opened from its summaries.
    pub lazy: Option<LazyRun>,
    /// The credit worker's copy of this run (web, large runs): credit is computed there.
    pub remote: Option<u32>,
    /// The load still reading this run (its first part is shown), by the loader's id.
    pub load_id: Option<u64>,
    /// The thread following the run's path while it grows (native).
    #[cfg(not(target_arch = "wasm32"))]
    pub follower: Option<crate::source::follow::Follower>,
    /// The path the run was read from (native), for the Follow toggle.
    #[cfg(not(target_arch = "wasm32"))]
    pub source_path: Option<std::path::PathBuf>,
    /// What the labels files said: located warnings, labels of another run, refused ones.
    pub label_notes: Vec<String>,
    /// Bumped each time the labels are read again (views key their caches on it).
    pub labels_revision: u64,
    /// The URL a run was fetched from and its bytes (web), for the Follow toggle.
    #[cfg(target_arch = "wasm32")]
    pub web_source: Option<(String, Arc<[u8]>)>,
    /// The URL being followed (web).
    #[cfg(target_arch = "wasm32")]
    pub web_follower: Option<crate::source::web_follow::WebFollower>,
    /// The v2 dataset the run was opened from (web), for opening other training steps.
    #[cfg(target_arch = "wasm32")]
    pub web_dataset: Option<crate::source::web_dataset::WebDataset>,
    /// The v2 dataset being followed (web).
    #[cfg(target_arch = "wasm32")]
    pub web_dataset_follower: Option<crate::source::web_dataset_follow::DatasetFollower>,
}

/// A run opened from its summaries (an Inspect `.eval`) whose samples are read a few at a time,
/// the selected one first, and swapped in as they arrive.
pub struct LazyRun {
    file: EvalFile<Arc<[u8]>>,
    /// What reading has found so far.
    report: LoadReport,
    /// Samples read since the run was last rebuilt, and whether the selected one is among them.
    fresh: usize,
    selected_fresh: bool,
    /// When the run was last rebuilt (seconds, the UI clock).
    built_at: f64,
}

/// How long the samples of a lazily opened run may take of one frame.
pub const LAZY_FRAME_BUDGET: std::time::Duration = std::time::Duration::from_millis(8);

/// The least time between two rebuilds of a lazily read run while its samples arrive.
const LAZY_REBUILD_SECONDS: f64 = 1.0;

impl LazyRun {
    /// Wraps an opened `.eval` and the report of opening it.
    pub fn new(file: EvalFile<Arc<[u8]>>, report: LoadReport) -> Self {
        Self { file, report, fresh: 0, selected_fresh: false, built_at: f64::NEG_INFINITY }
    }

    /// Samples read and samples with an entry to read.
    pub fn progress(&self) -> (usize, usize) {
        let all = self.file.num_with_entry();
        (all - self.file.num_unread(), all)
    }

    /// Compressed bytes read and in all.
    pub fn bytes(&self) -> (u64, u64) {
        (self.file.bytes_read(), self.file.sample_bytes())
    }

    /// Whether the trajectory `key` still shows only its summary.
    pub fn is_unread(&self, key: &str) -> bool {
        self.file.index_of(key).is_some_and(|i| self.file.is_unread(i))
    }
}

impl OpenRun {
    /// What a view keys its caches on for this run: the open run and its revision (a followed or
    /// still-loading run grows under one name).
    pub fn cache_key(&self) -> (u64, u64) {
        (self.instance, self.run.meta.revision)
    }

    /// Wraps a loaded run; selects its first group, trajectory and step.
    pub fn new(run: Run, report: LoadReport) -> Self {
        let summary = RunSummary::of(&run);
        let support = crate::credit::support_table(&run);
        let facets = Facets::of(&run);
        static INSTANCES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let mut open = Self {
            run: Arc::new(run),
            instance: INSTANCES.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            report,
            summary,
            support,
            facets,
            selection: Selection::default(),
            credit: Default::default(),
            tree: None,
            every_scheme: None,
            audit: None,
            schemes: None,
            walk: None,
            lazy: None,
            remote: None,
            load_id: None,
            #[cfg(not(target_arch = "wasm32"))]
            follower: None,
            #[cfg(not(target_arch = "wasm32"))]
            source_path: None,
            label_notes: Vec::new(),
            labels_revision: 0,
            #[cfg(target_arch = "wasm32")]
            web_source: None,
            #[cfg(target_arch = "wasm32")]
            web_follower: None,
            #[cfg(target_arch = "wasm32")]
            web_dataset: None,
            #[cfg(target_arch = "wasm32")]
            web_dataset_follower: None,
        };
        // Start on the first group whose rollouts differ (a zero-variance group has no outcome credit).
        let run = &open.run;
        let first = run.groups.ids().find(|&g| !crate::analysis::is_zero_variance(run, g)).or(run.groups.ids().next());
        if let Some(g) = first {
            open.select_group(g);
        }
        open
    }

    /// Reads the run's labels again from beside it (natively; a run opened from bytes has none
    /// until it is labelled) and puts them on the run (`RunMeta::labels`); a credit formula that
    /// (which may read labels) is computed again.
    pub fn read_labels(&mut self) {
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(path) = self.source_path.clone() {
            let (labels, notes) = crate::source::labels::resolved(&path, &self.run);
            // The run is shared only while a worker computes on it: then it is copied once.
            Arc::make_mut(&mut self.run).meta.labels = Arc::new(labels);
            self.label_notes = notes;
            for slot in &mut self.credit {
                if slot.key.starts_with("formula") {
                    slot.invalidate();
                }
            }
        }
        self.labels_revision += 1;
    }

    /// The selected step as a label's target: the step, or with `whole` its rollout.
    pub fn selected_target(&self, whole: bool) -> Option<crate::model::labels::Target> {
        let t = self.selection.trajectory?;
        let step = if whole { None } else { Some(u32::try_from(self.selected_step_index()?).ok()?) };
        Some(crate::model::labels::Target { trajectory: self.run.trajectory_key(t).to_owned(), step })
    }

    /// Selects a group and its first trajectory.
    pub fn select_group(&mut self, group: GroupId) {
        match self.run.groups.members(group).first() {
            Some(&t) => self.select_trajectory(t),
            None => self.selection = Selection { group: Some(group), trajectory: None, position: None },
        }
    }

    /// Selects a trajectory (and its group) and its first step.
    pub fn select_trajectory(&mut self, trajectory: TrajectoryId) {
        let tr = &self.run.trajectories;
        let Some(&group) = tr.group.get(trajectory.index()) else { return };
        let range = tr.path_range(trajectory);
        self.selection = Selection { group: Some(group), trajectory: Some(trajectory), position: Some(range.start) };
    }

    /// Selects a step by path position (and its trajectory and group).
    pub fn select_position(&mut self, position: usize) {
        let tr = &self.run.trajectories;
        let Some(trajectory) = tr.at_position(position) else { return };
        self.selection = Selection {
            group: tr.group.get(trajectory.index()).copied(),
            trajectory: Some(trajectory),
            position: Some(position),
        };
    }

    /// The step index of the selected step along its trajectory.
    pub fn selected_step_index(&self) -> Option<usize> {
        let (t, p) = (self.selection.trajectory?, self.selection.position?);
        p.checked_sub(self.run.trajectories.path_offsets[t.index()] as usize)
    }

    /// The tree of the selected group under `merge`, laid out once per (group, merge).
    pub fn group_tree(&mut self, merge: TreeMerge) -> Option<&GroupTree> {
        let group = self.selection.group?;
        let fresh = matches!(&self.tree, Some((g, m, _)) if *g == group && *m == merge);
        if !fresh {
            self.tree = Some((group, merge, GroupTree::build(&self.run, group, merge)));
        }
        self.tree.as_ref().map(|(_, _, t)| t)
    }

    /// Reads samples of a lazily opened run for at most `budget`, the selected trajectory's first,
    /// and swaps in the rebuilt run when the selected sample arrived, when a second has passed
    /// since the last rebuild, or when every sample is read. `now` is the UI clock in seconds.
    /// Returns whether samples remain (the caller keeps repainting).
    pub fn read_lazily(&mut self, now: f64, budget: std::time::Duration) -> bool {
        let Some(lazy) = &mut self.lazy else { return false };
        let started = web_time::Instant::now();
        if let Some(t) = self.selection.trajectory
            && let Some(i) = lazy.file.index_of(self.run.trajectory_key(t))
            && lazy.file.is_unread(i)
        {
            lazy.file.read_sample(i, &mut lazy.report);
            lazy.fresh += 1;
            lazy.selected_fresh = true;
        }
        while started.elapsed() < budget
            && let Some(i) = lazy.file.next_unread()
        {
            lazy.file.read_sample(i, &mut lazy.report);
            lazy.fresh += 1;
        }
        let done = lazy.file.num_unread() == 0;
        let due = lazy.selected_fresh || done || now - lazy.built_at >= LAZY_REBUILD_SECONDS;
        if lazy.fresh > 0 && due {
            lazy.fresh = 0;
            lazy.selected_fresh = false;
            lazy.built_at = now;
            match lazy.file.run(&lazy.report) {
                Ok(run) => {
                    let mut report = lazy.report.clone();
                    report.warnings.clone_from(&run.meta.warnings);
                    self.replace_run(run, report);
                }
                Err(err) => log::warn!("{}: rebuilding the run: {err}", lazy.file.name()),
            }
        }
        if done {
            self.lazy = None;
        }
        !done
    }

    /// Swaps in a rebuilt run (more of its file read), keeping the selected trajectory and step by
    /// key, and recomputing what was derived from the old one.
    pub fn replace_run(&mut self, mut run: Run, report: LoadReport) {
        let old = &self.run;
        // Views key their caches on the name and revision: a run read further is a new revision.
        run.meta.revision = run.meta.revision.max(old.meta.revision + 1);
        let trajectory = self.selection.trajectory.map(|t| old.trajectory_key(t).to_owned());
        let group = self.selection.group.map(|g| old.group_key(g).to_owned());
        let step = self.selected_step_index().unwrap_or(0);
        self.summary = RunSummary::of(&run);
        self.support = crate::credit::support_table(&run);
        self.facets = Facets::of(&run);
        self.run = Arc::new(run);
        self.report = report;
        for slot in &mut self.credit {
            slot.invalidate();
        }
        self.tree = None;
        self.every_scheme = None;
        self.read_labels();
        if !self.select_by_key(trajectory.as_deref(), step, group.as_deref()) {
            match self.run.groups.ids().next() {
                Some(g) => self.select_group(g),
                None => self.selection = Selection::default(),
            }
        }
    }

    /// Selects step `step` (clamped to its length) of the trajectory with external id
    /// `trajectory`, else the group with external id `group`; `false` when neither is in the run.
    pub fn select_by_key(&mut self, trajectory: Option<&str>, step: usize, group: Option<&str>) -> bool {
        let run = &self.run;
        if let Some(t) = trajectory.and_then(|k| run.trajectory_by_key(k)) {
            let range = run.trajectories.path_range(t);
            self.select_position(range.start + step.min(range.len().saturating_sub(1)));
        } else if let Some(g) = group.and_then(|k| run.group_by_key(k)) {
            self.select_group(g);
        } else {
            return false;
        }
        true
    }

    /// Credit under every supported scheme with its defaults (computed on first call).
    pub fn every_scheme(&mut self) -> &[SchemeCredit] {
        let run = &self.run;
        self.every_scheme.get_or_insert_with(|| {
            crate::credit::explained_under_defaults(run)
                .filter_map(|(s, credit)| Some(SchemeCredit { info: s.info(), credit: credit.ok()? }))
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_long_formula_is_named_by_its_title_without_its_hash() {
        assert_eq!(super::display_name("formula \"my credit\" #1a2b3c4d"), "formula \"my credit\"");
        assert_eq!(super::display_name("formula r - mean(r)"), "formula r - mean(r)");
        assert_eq!(super::display_name("grpo preset=verl"), "grpo preset=verl");
    }
}
