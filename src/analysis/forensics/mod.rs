//! Baseline forensics: the rows that entered a group's baseline when they should not have (failed
//! generations, pad rows, partial groups, duplicates, filtered rows, leave-one-out spikes, reward
//! fallbacks), per training step and group, each with the credit the group's other rollouts would
//! have had without them and, where the run logs advantages, whether the trainer's numbers include
//! them (docs/FORENSICS.md). One analysis behind `vantage forensics`, the MCP tool, Python's
//! `Run.forensics()`, `vantage health` and the app's alarm strip.

mod fallback;
mod group_size;
mod moved;
mod rows;
mod spike;

use crate::model::{GroupId, Run, TrajectoryId};

pub use moved::{Counterfactual, Recompute};

/// The kinds of row that corrupt a group's baseline, each from a fix a trainer made in 2026.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A rollout whose finish reason says it failed, or whose response is empty, in the baseline.
    FailedRollout,
    /// A response of at most one token, or with no text, in the baseline.
    PaddingRow,
    /// A group smaller than the run's group size.
    PartialGroup,
    /// The same response twice in one group under different ids.
    DuplicateRollout,
    /// A rollout that was not trained whose reward the logged advantages show in the baseline.
    FilteredInBaseline,
    /// A logged advantage beyond the bound where the group's or the leave-one-out std is zero.
    StdSpike,
    /// Rows whose reward no longer follows the reward components other rows of the task follow.
    RewardFallback,
}

impl Kind {
    /// Every kind, in the order they are listed.
    pub const ALL: [Self; 7] = [
        Self::FailedRollout,
        Self::PaddingRow,
        Self::PartialGroup,
        Self::DuplicateRollout,
        Self::FilteredInBaseline,
        Self::StdSpike,
        Self::RewardFallback,
    ];

    /// Its name in JSON, in `vantage health` and in docs/FORENSICS.md.
    pub fn name(self) -> &'static str {
        match self {
            Self::FailedRollout => "failed_rollout",
            Self::PaddingRow => "padding_row",
            Self::PartialGroup => "partial_group",
            Self::DuplicateRollout => "duplicate_rollout",
            Self::FilteredInBaseline => "filtered_in_baseline",
            Self::StdSpike => "std_spike",
            Self::RewardFallback => "reward_fallback",
        }
    }

    /// Its place in [`Kind::ALL`] (the order the variants are declared in).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The kind named `name`.
    pub fn of_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// What it is, in a few words, for a person.
    pub fn describe(self) -> &'static str {
        match self {
            Self::FailedRollout => "failed rollouts in the baseline",
            Self::PaddingRow => "pad rows in the baseline",
            Self::PartialGroup => "partial groups",
            Self::DuplicateRollout => "duplicate rollouts",
            Self::FilteredInBaseline => "filtered rows in the baseline",
            Self::StdSpike => "advantage spikes on a zero std",
            Self::RewardFallback => "rewards that left their components",
        }
    }

    /// The public fix this kind comes from.
    pub fn source(self) -> &'static str {
        match self {
            Self::FailedRollout => "NVIDIA-NeMo/RL #3470 and #3589",
            Self::PaddingRow => "awslabs/agentcore-rl-toolkit #122",
            Self::PartialGroup => "NVIDIA-NeMo/labs-molt #48",
            Self::DuplicateRollout => "rllm-org/rllm #799, THUDM/slime #2381",
            Self::FilteredInBaseline => "PrimeIntellect-ai/prime-rl #3264",
            Self::StdSpike => "NVIDIA-NeMo/RL #4158",
            Self::RewardFallback => "marin-community/marin #7784",
        }
    }

    /// Whether the kind is about rows that should have left the baseline (so a trainer whose logged
    /// advantages leave them out has already done right, and there is nothing to report).
    fn leaves_baseline(self) -> bool {
        matches!(self, Self::FailedRollout | Self::PaddingRow | Self::DuplicateRollout | Self::FilteredInBaseline)
    }
}

/// What the analysis is asked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// A logged advantage beyond this (in absolute value) on a zero std is a `std_spike`.
    pub spike_bound: f64,
    /// Whether rollout texts may be read (to tell duplicates apart): off for a view of a run whose
    /// texts stay in its log or dataset, where `vantage forensics` looks for duplicates.
    pub texts: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self { spike_bound: 10.0, texts: true }
    }
}

/// One finding: rows of one group, of one kind.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// Its kind.
    pub kind: Kind,
    /// The group's training step.
    pub train_step: Option<i64>,
    /// The group.
    pub group: GroupId,
    /// The flagged rows (a partial group: every row it has).
    pub trajectories: Vec<TrajectoryId>,
    /// The largest change, over the group's other rollouts, of their advantage under
    /// [`Forensics::scheme`] when the flagged rows are removed; `None` where there is none to take
    /// (a partial group, no other rollout, a scheme that cannot run on the rows).
    pub credit_moved: Option<f64>,
    /// Whether the trainer's logged advantages of the other rollouts are those with the rows in
    /// (`Some(true)`), without them (`Some(false)`); `None` when the run logs none or neither fits.
    pub trainer_included: Option<bool>,
    /// What was seen, in a sentence.
    pub evidence: String,
    /// Each row of the group: its advantage with the flagged rows, without them (`None` for a
    /// flagged row), and its logged advantage; empty where nothing was recomputed.
    pub credit_rows: Vec<CreditRow>,
}

impl Finding {
    /// A finding of `kind` on `trajectories` of group `g`, before any credit is recomputed.
    fn new(run: &Run, kind: Kind, g: GroupId, trajectories: Vec<TrajectoryId>, evidence: String) -> Self {
        Self {
            kind,
            train_step: run.groups.train_step.get(g.index()).copied().flatten(),
            group: g,
            trajectories,
            credit_moved: None,
            trainer_included: None,
            evidence,
            credit_rows: Vec::new(),
        }
    }
}

/// The first five of `items` joined by `separator`, and how many more there are.
fn first_five(items: impl ExactSizeIterator<Item = String>, separator: &str) -> String {
    let total = items.len();
    let shown: Vec<String> = items.take(5).collect();
    let more = if total > 5 { format!(" and {} more", total - 5) } else { String::new() };
    format!("{}{more}", shown.join(separator))
}

/// A row of a group recomputed with and without the flagged rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CreditRow {
    /// The row.
    pub trajectory: TrajectoryId,
    /// Its advantage with the flagged rows in the group.
    pub with: f64,
    /// Its advantage without them (`None`: it is flagged).
    pub without: Option<f64>,
    /// Its logged advantage, where the run has one.
    pub logged: Option<f64>,
}

/// What the analysis found on a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Forensics {
    /// The findings, by training step, group and kind.
    pub findings: Vec<Finding>,
    /// The scheme `credit_moved` is taken under (`grpo --preset verl`), and why that one.
    pub scheme: Option<(String, String)>,
    /// The run's group size and where it comes from (its metadata, or the most common size).
    pub group_size: Option<(usize, String)>,
    /// What the analysis could not look at, or left out, in sentences.
    pub notes: Vec<String>,
}

impl Forensics {
    /// How many findings of each kind, in [`Kind::ALL`]'s order (kinds with none left out).
    pub fn counts(&self) -> Vec<(Kind, usize)> {
        Kind::ALL
            .into_iter()
            .map(|k| (k, self.findings.iter().filter(|f| f.kind == k).count()))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// The findings on group `group`.
    pub fn in_group(&self, group: GroupId) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.group == group)
    }

    /// The kinds of finding that flag trajectory `t`.
    pub fn kinds_of(&self, t: TrajectoryId) -> Vec<Kind> {
        let mut kinds: Vec<Kind> =
            self.findings.iter().filter(|f| f.trajectories.contains(&t)).map(|f| f.kind).collect();
        kinds.dedup();
        kinds
    }
}

/// The largest credit moved among `findings`, `None` where none moved any.
pub fn largest_credit_moved<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Option<f64> {
    findings.into_iter().filter_map(|f| f.credit_moved).reduce(f64::max)
}

/// `finding` with what recomputing its group with and without its rows found.
fn with_credit(mut finding: Finding, seen: moved::Counterfactual) -> Finding {
    finding.credit_moved = seen.credit_moved;
    finding.trainer_included = seen.trainer_included;
    finding.credit_rows = seen.rows;
    finding
}

/// The forensics of `run`.
pub fn forensics(run: &Run, options: &Options) -> Forensics {
    let mut out = Forensics::default();
    let tr = &run.trajectories;
    if run.groups.is_empty() || tr.is_empty() {
        out.notes.push("the run has no groups: nothing to look at".to_owned());
        return out;
    }
    if tr.reward.iter().all(|r| r.is_nan()) {
        out.notes.push("the run logs no rewards: no row enters a baseline".to_owned());
        return out;
    }
    if run.groups.ids().all(|g| run.groups.members(g).len() < 2) {
        out.notes.push("every group has one rollout: there is no group baseline to corrupt".to_owned());
        return out;
    }
    let sizes = group_size::expected(run);
    out.group_size = sizes.run_size.clone();
    let mut candidates = rows::row_findings(run, options.texts);
    if !options.texts {
        out.notes.push(
            "duplicate_rollout: not looked for here (it reads the candidates' texts; vantage forensics does)"
                .to_owned(),
        );
    }
    candidates.extend(group_size::partial_groups(run, &sizes));
    candidates.extend(fallback::reward_fallbacks(run, &mut out.notes));
    let logged = moved::logged_per_row(run);
    if let Some(logged) = &logged {
        candidates.extend(spike::std_spikes(run, logged, options.spike_bound));
    }
    let filtered = rows::filtered_rows(run);
    if !filtered.is_empty() && logged.is_none() {
        out.notes.push(format!(
            "{} rollouts were not trained (every token masked, or a filter flag), but the run logs no advantages: whether their rewards were in the baseline cannot be told",
            filtered.iter().map(|(_, rows)| rows.len()).sum::<usize>()
        ));
    }
    if candidates.is_empty() && (filtered.is_empty() || logged.is_none()) {
        return out;
    }
    let recompute = Recompute::for_run(run, logged.is_some());
    out.scheme = Some((recompute.name(), recompute.why().to_owned()));
    // Filtered rows are findings only when the logged advantages show them in the baseline.
    if let Some(logged) = &logged {
        for (group, flagged) in filtered {
            let seen = recompute.counterfactual(run, group, &flagged, Some(logged));
            if seen.trainer_included == Some(true) {
                out.findings.push(with_credit(rows::filtered_finding(run, group, flagged), seen));
            }
        }
    }
    let mut left_out = 0usize;
    for mut finding in candidates {
        if finding.kind != Kind::PartialGroup {
            let seen = recompute.counterfactual(run, finding.group, &finding.trajectories, logged.as_deref());
            finding = with_credit(finding, seen);
        }
        if finding.kind.leaves_baseline() && finding.trainer_included == Some(false) {
            left_out += finding.trajectories.len();
            continue;
        }
        out.findings.push(finding);
    }
    if left_out > 0 {
        out.notes.push(format!(
            "{left_out} flagged rollouts are not findings: the logged advantages show the trainer left them out of the baseline"
        ));
    }
    out.findings.sort_by_key(|f| (f.train_step, f.group, f.kind));
    out
}

/// The audit in one line (`audit::describe`), and, when no preset reproduces the logged advantages
/// and the largest difference lies in a group with a finding, a sentence that says so: the
/// difference may be the flagged row's, not the estimator's. Forensics is computed only then.
pub fn describe_audit(run: &Run, audit: &crate::analysis::audit::Audit) -> String {
    let described = crate::analysis::audit::describe(run, audit);
    if !matches!(audit, crate::analysis::audit::Audit::Closest(_)) {
        return described;
    }
    let found = forensics(run, &Options { texts: run.text.holds_every_text(), ..Options::default() });
    match audit_note(run, audit, &found) {
        Some(note) => format!("{described}; {note}"),
        None => described,
    }
}

/// The sentence [`describe_audit`] adds when the audit's largest difference lies in a group with a
/// finding of `found`.
pub fn audit_note(run: &Run, audit: &crate::analysis::audit::Audit, found: &Forensics) -> Option<String> {
    let crate::analysis::audit::Audit::Closest(closest) = audit else { return None };
    let (_, position) = closest.largest?;
    let t = run.trajectories.at_position(position)?;
    let g = *run.trajectories.group.get(t.index())?;
    let findings: Vec<&Finding> = found.in_group(g).collect();
    if findings.is_empty() {
        return None;
    }
    let kinds: Vec<&str> = findings.iter().map(|f| f.kind.describe()).collect();
    let own = if findings.iter().any(|f| f.trajectories.contains(&t)) { "on a flagged row" } else { "in a group" };
    Some(format!(
        "the largest difference lies {own} of group {} with {} (vantage forensics): it may come from that row, not from the estimator",
        run.group_key(g),
        kinds.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::Kind;

    #[test]
    fn a_kinds_index_is_its_place_in_all_and_its_name_names_it() {
        for (i, kind) in Kind::ALL.into_iter().enumerate() {
            assert_eq!(kind.index(), i);
            assert_eq!(Kind::of_name(kind.name()), Some(kind));
        }
    }
}
