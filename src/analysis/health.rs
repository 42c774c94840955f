//! Run-health alarms: what a researcher watching a training run wants to be paged about, per
//! training step (or the whole run where an alarm needs several steps), each with a definition and
//! a threshold (docs/HEALTH.md). `vantage health RUN` prints them and exits 1 when one fires.

use crate::analysis::forensics::Kind;
use crate::model::{GroupId, Run, TrajectoryId};

/// The thresholds the alarms fire above (each tunable with `vantage health --set NAME=VALUE`).
#[derive(Clone, Debug, PartialEq)]
pub struct Thresholds {
    /// Share of a step's groups (of two or more rollouts) whose rewards are all equal.
    pub zero_variance: f64,
    /// Share of a step's groups whose every rollout failed.
    pub all_failed: f64,
    /// Share of a step's rollouts cut off by the length limit (finish `length`, `truncated`).
    pub truncated: f64,
    /// Share of a step's rollouts that ended in an error or were aborted.
    pub errors: f64,
    /// Share of a step's rollouts with no text at all.
    pub empty: f64,
    /// Share of a step's rollouts whose text repeats itself (most of its word 4-grams repeated).
    pub repetitive: f64,
    /// Share of a step's rollouts with undecodable text (U+FFFD replacement characters).
    pub undecodable: f64,
    /// Share of the final steps whose step score (PRM, judge) disagrees with the outcome.
    pub score_disagreement: f64,
    /// Rank correlation of the training steps' mean rollout length and mean reward with the step
    /// (both rising: length hacking); three steps or more.
    pub length_hacking: f64,
    /// The last step's mean token entropy as a share of the first's (below it: collapse).
    pub entropy_collapse: f64,
    /// Share of steps whose logged advantage no trainer preset reproduces (the audit's closest).
    pub advantage_mismatch: f64,
    /// Per kind of baseline finding (`analysis::forensics`, in [`Kind::ALL`]'s order): the share
    /// of a training step's groups with one that the alarm fires above.
    pub baseline: [f64; Kind::ALL.len()],
    /// The bound beyond which a logged advantage on a zero std is a `std_spike`.
    pub std_spike_bound: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            zero_variance: 0.5,
            all_failed: 0.25,
            truncated: 0.2,
            errors: 0.1,
            empty: 0.05,
            repetitive: 0.1,
            undecodable: 0.05,
            score_disagreement: 0.3,
            length_hacking: 0.9,
            entropy_collapse: 0.5,
            advantage_mismatch: 0.01,
            baseline: [0.0; Kind::ALL.len()],
            std_spike_bound: crate::analysis::forensics::Options::default().spike_bound,
        }
    }
}

impl Thresholds {
    /// The names `--set` takes, with their current values.
    pub fn named(&self) -> Vec<(&'static str, f64)> {
        let mut named = vec![
            ("zero_variance", self.zero_variance),
            ("all_failed", self.all_failed),
            ("truncated", self.truncated),
            ("errors", self.errors),
            ("empty", self.empty),
            ("repetitive", self.repetitive),
            ("undecodable", self.undecodable),
            ("score_disagreement", self.score_disagreement),
            ("length_hacking", self.length_hacking),
            ("entropy_collapse", self.entropy_collapse),
            ("advantage_mismatch", self.advantage_mismatch),
        ];
        named.extend(Kind::ALL.iter().zip(self.baseline).map(|(k, v)| (k.name(), v)));
        named.push(("std_spike_bound", self.std_spike_bound));
        named
    }

    /// Sets the threshold `name`; an error naming the known ones when there is none of that name.
    pub fn set(&mut self, name: &str, value: f64) -> Result<(), String> {
        let slot = match name {
            "zero_variance" => &mut self.zero_variance,
            "all_failed" => &mut self.all_failed,
            "truncated" => &mut self.truncated,
            "errors" => &mut self.errors,
            "empty" => &mut self.empty,
            "repetitive" => &mut self.repetitive,
            "undecodable" => &mut self.undecodable,
            "score_disagreement" => &mut self.score_disagreement,
            "length_hacking" => &mut self.length_hacking,
            "entropy_collapse" => &mut self.entropy_collapse,
            "advantage_mismatch" => &mut self.advantage_mismatch,
            "std_spike_bound" => &mut self.std_spike_bound,
            other if let Some(kind) = Kind::of_name(other) => &mut self.baseline[kind.index()],
            _ => {
                let known: Vec<&str> = self.named().into_iter().map(|(n, _)| n).collect();
                return Err(format!("no threshold {name:?}; one of {}", known.join(", ")));
            }
        };
        if !value.is_finite() {
            return Err(format!("{name}: {value} is not a number"));
        }
        *slot = value;
        Ok(())
    }
}

/// One alarm that fired.
#[derive(Clone, Debug, PartialEq)]
pub struct Alarm {
    /// Its name (a threshold's name).
    pub name: &'static str,
    /// The training step it is about (`None`: the whole run).
    pub train_step: Option<i64>,
    /// What was measured.
    pub value: f64,
    /// The threshold it passed.
    pub threshold: f64,
    /// The groups behind it (at most 50), for a click to open.
    pub groups: Vec<GroupId>,
    /// One line for a person.
    pub message: String,
}

/// Shares of one training step's rollouts and groups.
#[derive(Default)]
struct StepCounts {
    groups: usize,
    zero_variance: Vec<GroupId>,
    all_failed: Vec<GroupId>,
    rollouts: usize,
    truncated: Vec<GroupId>,
    errors: Vec<GroupId>,
    empty: Vec<GroupId>,
    repetitive: Vec<GroupId>,
    undecodable: Vec<GroupId>,
    length: f64,
    reward: (f64, usize),
}

/// The finish reasons that mean an error or an abort.
const ERROR_FINISH: [&str; 6] = ["error", "errored", "abort", "aborted", "failed", "exception"];

/// The alarms of `run` under `thresholds`, by training step, then the run-wide ones.
pub fn alarms(run: &Run, thresholds: &Thresholds) -> Vec<Alarm> {
    alarms_of(run, thresholds, true)
}

/// The alarms that need no rollout text (all but `empty`, `repetitive`, `undecodable` and
/// `length_hacking`): for a view of a run whose texts stay in its log or dataset, where reading
/// every one would read the whole log again (or, on the web, fetch every text column).
pub fn alarms_without_texts(run: &Run, thresholds: &Thresholds) -> Vec<Alarm> {
    alarms_of(run, thresholds, false)
}

/// The alarms of `run`, the baseline ones from findings already made (`found`; none from an empty
/// one, as the app's Overview asks, whose findings have a strip of their own); the text alarms only
/// when `texts`.
pub fn alarms_with_findings(
    run: &Run,
    thresholds: &Thresholds,
    texts: bool,
    found: &crate::analysis::forensics::Forensics,
) -> Vec<Alarm> {
    alarms_found(run, thresholds, texts, Some(found))
}

fn alarms_of(run: &Run, thresholds: &Thresholds, texts: bool) -> Vec<Alarm> {
    alarms_found(run, thresholds, texts, None)
}

fn alarms_found(
    run: &Run,
    thresholds: &Thresholds,
    texts: bool,
    found: Option<&crate::analysis::forensics::Forensics>,
) -> Vec<Alarm> {
    let steps = count_steps(run, texts);
    let mut out = Vec::new();
    for (&step, counts) in &steps {
        step_alarms(step, counts, thresholds, &mut out);
    }
    out.extend(score_disagreement(run, thresholds.score_disagreement));
    if texts {
        out.extend(length_hacking(&steps, thresholds.length_hacking));
    }
    out.extend(entropy_collapse(run, thresholds.entropy_collapse));
    out.extend(advantage_mismatch(run, thresholds.advantage_mismatch));
    let options = crate::analysis::forensics::Options { spike_bound: thresholds.std_spike_bound, texts };
    let computed;
    let found = if let Some(found) = found {
        found
    } else {
        computed = crate::analysis::forensics::forensics(run, &options);
        &computed
    };
    out.extend(baseline_alarms(&steps, found, thresholds));
    out
}

/// One alarm per training step and kind of baseline finding whose share of the step's groups is
/// above its threshold (docs/FORENSICS.md).
fn baseline_alarms(
    steps: &std::collections::BTreeMap<i64, StepCounts>,
    found: &crate::analysis::forensics::Forensics,
    thresholds: &Thresholds,
) -> Vec<Alarm> {
    let mut by_step: std::collections::BTreeMap<(i64, Kind), Vec<&crate::analysis::forensics::Finding>> =
        std::collections::BTreeMap::new();
    for f in &found.findings {
        by_step.entry((f.train_step.unwrap_or(0), f.kind)).or_default().push(f);
    }
    let mut out = Vec::new();
    for ((step, kind), findings) in by_step {
        let of = steps.get(&step).map_or(0, |c| c.groups).max(findings.len());
        let value = findings.len() as f64 / of.max(1) as f64;
        let threshold = thresholds.baseline[kind.index()];
        if value <= threshold {
            continue;
        }
        let moved = crate::analysis::forensics::largest_credit_moved(findings.iter().copied());
        let moved = moved.map(|m| format!("; credit moved up to {m:.3}")).unwrap_or_default();
        let rows: usize = findings.iter().map(|f| f.trajectories.len()).sum();
        let mut groups: Vec<GroupId> = findings.iter().map(|f| f.group).collect();
        groups.truncate(50);
        out.push(Alarm {
            name: kind.name(),
            train_step: Some(step),
            value,
            threshold,
            groups,
            message: format!(
                "training step {step}: {} of {of} groups with {} ({rows} rollout(s){moved}; as fixed in {}; vantage forensics lists them)",
                findings.len(),
                kind.describe(),
                kind.source()
            ),
        });
    }
    out
}

/// The trainer's logged advantages that no estimator and preset reproduces (`super::audit`): the
/// closest one's share of differing steps (a leaked filter or mask, or a scheme vantage lacks).
fn advantage_mismatch(run: &Run, threshold: f64) -> Option<Alarm> {
    let super::audit::Audit::Closest(closest) = super::audit::audit(run)? else { return None };
    let value = closest.differing as f64 / closest.compared.max(1) as f64;
    (value > threshold).then(|| Alarm {
        name: "advantage_mismatch",
        train_step: None,
        value,
        threshold,
        groups: closest
            .largest
            .and_then(|(_, position)| run.trajectories.at_position(position))
            .map(|t| vec![run.trajectories.group[t.index()]])
            .unwrap_or_default(),
        message: format!(
            "the logged advantages: no preset reproduces them; the closest, {}, differs on {:.0}% of steps (above {:.0}%)",
            closest.name(),
            value * 100.0,
            threshold * 100.0
        ),
    })
}

/// What each training step's groups and rollouts hold (their texts only when `texts`).
fn count_steps(run: &Run, texts: bool) -> std::collections::BTreeMap<i64, StepCounts> {
    let mut steps: std::collections::BTreeMap<i64, StepCounts> = std::collections::BTreeMap::new();
    for g in run.groups.ids() {
        let step = run.groups.train_step[g.index()].unwrap_or(0);
        let counts = steps.entry(step).or_default();
        let members = run.groups.members(g);
        if members.len() >= 2 {
            counts.groups += 1;
            if super::summary::is_zero_variance(run, g) {
                counts.zero_variance.push(g);
            }
            if members.iter().all(|&t| super::compare::outcome(run, t) == Some(false)) {
                counts.all_failed.push(g);
            }
        }
        for &t in members {
            counts.rollouts += 1;
            let finish = run.label(run.trajectories.finish[t.index()]);
            if matches!(finish, "length" | "truncated") {
                counts.truncated.push(g);
            }
            if ERROR_FINISH.contains(&finish) {
                counts.errors.push(g);
            }
            if texts {
                let text = rollout_text(run, t);
                if text.trim().is_empty() {
                    counts.empty.push(g);
                } else if is_repetitive(&text) {
                    counts.repetitive.push(g);
                }
                if text.contains('\u{FFFD}') {
                    counts.undecodable.push(g);
                }
                counts.length += text.chars().count() as f64;
            }
            let reward = run.trajectories.reward[t.index()];
            if !reward.is_nan() {
                counts.reward.0 += f64::from(reward);
                counts.reward.1 += 1;
            }
        }
    }
    steps
}

/// The alarms of one training step's shares.
fn step_alarms(step: i64, counts: &StepCounts, thresholds: &Thresholds, out: &mut Vec<Alarm>) {
    let share = |n: usize, of: usize| if of == 0 { 0.0 } else { n as f64 / of as f64 };
    let checks: [(&'static str, &Vec<GroupId>, usize, f64, &str); 7] = [
        (
            "zero_variance",
            &counts.zero_variance,
            counts.groups,
            thresholds.zero_variance,
            "groups whose rewards are all equal (no gradient under GRPO)",
        ),
        (
            "all_failed",
            &counts.all_failed,
            counts.groups,
            thresholds.all_failed,
            "groups where every rollout failed (systematic failure, not difficulty)",
        ),
        ("truncated", &counts.truncated, counts.rollouts, thresholds.truncated, "rollouts cut off by the length limit"),
        (
            "errors",
            &counts.errors,
            counts.rollouts,
            thresholds.errors,
            "rollouts that ended in an error or were aborted",
        ),
        ("empty", &counts.empty, counts.rollouts, thresholds.empty, "rollouts with no text"),
        (
            "repetitive",
            &counts.repetitive,
            counts.rollouts,
            thresholds.repetitive,
            "rollouts whose text repeats itself",
        ),
        ("undecodable", &counts.undecodable, counts.rollouts, thresholds.undecodable, "rollouts with undecodable text"),
    ];
    for (name, groups, of, threshold, what) in checks {
        let value = share(groups.len(), of);
        if of > 0 && value > threshold {
            let mut groups = groups.clone();
            groups.dedup();
            groups.truncate(50);
            out.push(Alarm {
                name,
                train_step: Some(step),
                value,
                threshold,
                groups,
                message: format!(
                    "training step {step}: {:.0}% of {what} (above {:.0}%)",
                    value * 100.0,
                    threshold * 100.0
                ),
            });
        }
    }
}

/// A rollout's own text: its steps' thoughts and actions, joined (observations are the
/// environment's).
fn rollout_text(run: &Run, t: TrajectoryId) -> String {
    let mut text = String::new();
    for node in run.trajectories.path(t) {
        let n = node.index();
        for sym in [run.nodes.thought[n], run.nodes.action[n]] {
            let part = run.text(sym);
            if !part.is_empty() {
                text.push_str(&part);
                text.push('\n');
            }
        }
    }
    text
}

/// Whether most of a text's word 4-grams are repeats (at least 12 words).
pub fn is_repetitive(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() < 12 {
        return false;
    }
    let grams: Vec<&[&str]> = words.windows(4).collect();
    let distinct: std::collections::HashSet<&[&str]> = grams.iter().copied().collect();
    (distinct.len() as f64) < 0.5 * grams.len() as f64
}

/// The final steps whose step score disagrees with the rollout's outcome (a score of 0.5 or more on
/// a failed rollout, or under 0.5 on a passed one), per score name; only scores whose every value
/// lies in [0, 1] (judgments, not advantages or values) are read.
fn score_disagreement(run: &Run, threshold: f64) -> Vec<Alarm> {
    let mut out = Vec::new();
    for (name, scores) in &run.nodes.scores {
        // Judgments in [0, 1] only: a score outside it (an advantage, a value) is not a verdict.
        if scores.iter().any(|v| !v.is_nan() && !(0.0..=1.0).contains(v)) {
            continue;
        }
        let (mut compared, mut differing, mut groups) = (0usize, 0usize, Vec::new());
        for t in run.trajectories.ids() {
            let Some(passed) = super::compare::outcome(run, t) else { continue };
            let Some(last) = run.trajectories.path(t).last() else { continue };
            let score = scores[last.index()];
            if score.is_nan() {
                continue;
            }
            compared += 1;
            if (score >= 0.5) != passed {
                differing += 1;
                groups.push(run.trajectories.group[t.index()]);
            }
        }
        let value = if compared == 0 { 0.0 } else { differing as f64 / compared as f64 };
        if compared > 0 && value > threshold {
            groups.dedup();
            groups.truncate(50);
            out.push(Alarm {
                name: "score_disagreement",
                train_step: None,
                value,
                threshold,
                groups,
                message: format!(
                    "step score {name}: on {:.0}% of final steps it disagrees with the outcome (above {:.0}%)",
                    value * 100.0,
                    threshold * 100.0
                ),
            });
        }
    }
    out
}

/// Mean rollout length and mean reward both rising with the training step (Spearman ρ of each
/// with the step above the threshold), over three steps or more.
fn length_hacking(steps: &std::collections::BTreeMap<i64, StepCounts>, threshold: f64) -> Option<Alarm> {
    if steps.len() < 3 {
        return None;
    }
    let xs: Vec<f32> = steps.keys().map(|&s| s as f32).collect();
    let lengths: Vec<f32> = steps.values().map(|c| (c.length / c.rollouts.max(1) as f64) as f32).collect();
    let rewards: Vec<f32> = steps.values().map(|c| (c.reward.0 / c.reward.1.max(1) as f64) as f32).collect();
    let (rho_length, rho_reward) = (super::compare::spearman(&xs, &lengths), super::compare::spearman(&xs, &rewards));
    (rho_length > threshold && rho_reward > threshold).then(|| Alarm {
        name: "length_hacking",
        train_step: None,
        value: rho_length.min(rho_reward),
        threshold,
        groups: Vec::new(),
        message: format!(
            "rollout length rises with reward over {} training steps (ρ {rho_length:.2} and {rho_reward:.2} with the step): length hacking?",
            steps.len()
        ),
    })
}

/// The last training step's mean token entropy under the threshold's share of the first's.
fn entropy_collapse(run: &Run, threshold: f64) -> Option<Alarm> {
    let entropy = run.tokens.entropy.as_ref()?;
    let mut by_step: std::collections::BTreeMap<i64, (f64, usize)> = std::collections::BTreeMap::new();
    for t in run.trajectories.ids() {
        let step = run.groups.train_step[run.trajectories.group[t.index()].index()].unwrap_or(0);
        let range = run.trajectories.token_range(t);
        let slot = by_step.entry(step).or_default();
        for &e in entropy.get(range).unwrap_or_default() {
            if e.is_finite() {
                slot.0 += f64::from(e);
                slot.1 += 1;
            }
        }
    }
    let means: Vec<f64> = by_step.values().filter(|(_, n)| *n > 0).map(|(s, n)| s / *n as f64).collect();
    let (first, last) = (*means.first()?, *means.last()?);
    (means.len() >= 2 && first > 0.0 && last < threshold * first).then(|| Alarm {
        name: "entropy_collapse",
        train_step: by_step.keys().last().copied(),
        value: last / first,
        threshold,
        groups: Vec::new(),
        message: format!(
            "token entropy fell to {:.0}% of the first training step's ({last:.3} against {first:.3})",
            last / first * 100.0
        ),
    })
}
