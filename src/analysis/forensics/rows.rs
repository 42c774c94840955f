//! The findings about single rows: failed rollouts, pad rows and duplicates, found from each
//! row's finish reason, texts and tokens; and the rows that were not trained (every token masked,
//! or a trainer's filter flag), which are findings only where the logged advantages show their
//! rewards in the baseline (the caller decides that).

use std::collections::HashMap;

use super::{Finding, Kind};
use crate::model::{GroupId, Run, Sym, TextId, TrajectoryId};

/// The words in a finish reason that say a rollout failed (`error`, `aborted`, `generation_failed`,
/// `timeout`, NeMo Gym's failure classes, …); matched anywhere in the lower-cased reason.
const FAILURE_WORDS: [&str; 7] = ["error", "fail", "abort", "exception", "timeout", "timed_out", "crash"];

/// The finish reasons and outcome components by which a trainer marks a row it did not train.
const FILTER_FINISH: [&str; 2] = ["filtered", "masked"];

/// Outcome components that are filter flags (non-zero: the row was left out of training), not
/// reward functions.
pub const FILTER_FLAGS: [&str; 4] = ["filtered", "is_filtered", "mask_sample", "masked"];

/// Finish reasons that hold a failure word but say the rollout finished: PRM800K's `found_error`
/// (its labeler found an error in the solution).
const NOT_FAILURES: [&str; 1] = ["found_error"];

/// Whether a finish reason says the rollout failed.
pub fn is_failure(finish: &str) -> bool {
    let finish = finish.to_ascii_lowercase();
    FAILURE_WORDS.iter().any(|w| finish.contains(w)) && !NOT_FAILURES.contains(&finish.as_str())
}

/// What a row's response is made of, without reading its texts.
struct Shape {
    /// Its steps have a thought or an action.
    has_text: bool,
    /// Tokens in its range of the token columns.
    tokens: usize,
}

fn shape(run: &Run, t: TrajectoryId) -> Shape {
    let has_text = run.trajectories.path(t).iter().any(|n| {
        let n = n.index();
        run.nodes.thought[n].is_some() || run.nodes.action[n].is_some()
    });
    Shape { has_text, tokens: run.trajectories.token_range(t).len() }
}

/// The rows of groups of two or more with a reward: the ones in a group baseline.
fn in_baseline(run: &Run, g: GroupId) -> impl Iterator<Item = TrajectoryId> + '_ {
    let members = run.groups.members(g);
    let counted = members.len() >= 2;
    members.iter().copied().filter(move |t| counted && !run.trajectories.reward[t.index()].is_nan())
}

/// Failed rollouts, pad rows and (when `texts` may be read) duplicates, one finding per group and
/// kind (no credit yet).
pub fn row_findings(run: &Run, texts: bool) -> Vec<Finding> {
    // A run whose steps carry no text at all (scores only) says nothing by an empty response.
    let any_text = run.nodes.thought.iter().chain(&run.nodes.action).any(|t| t.is_some());
    let tokens_logged = run.tokens.len > 0;
    let mut out = Vec::new();
    for g in run.groups.ids() {
        let mut failed: Vec<(TrajectoryId, String)> = Vec::new();
        let mut padding: Vec<(TrajectoryId, String)> = Vec::new();
        let mut rest: Vec<TrajectoryId> = Vec::new();
        for t in in_baseline(run, g) {
            let finish = run.label(run.trajectories.finish[t.index()]);
            let shape = shape(run, t);
            if is_failure(finish) {
                failed.push((t, format!("finish `{finish}`")));
            } else if any_text && !shape.has_text && shape.tokens == 0 {
                failed.push((t, "an empty response".to_owned()));
            } else if tokens_logged && shape.tokens == 1 {
                padding.push((t, "one token".to_owned()));
            } else if any_text && !shape.has_text {
                padding.push((t, format!("{} tokens and no text", shape.tokens)));
            } else {
                rest.push(t);
            }
        }
        for (kind, rows) in [(Kind::FailedRollout, failed), (Kind::PaddingRow, padding)] {
            if !rows.is_empty() {
                out.push(row_finding(run, g, kind, rows));
            }
        }
        let copies = if texts { duplicates(run, &rest) } else { Vec::new() };
        if !copies.is_empty() {
            out.push(row_finding(run, g, Kind::DuplicateRollout, copies));
        }
    }
    out
}

/// A finding on `rows` of group `g`, each with what flagged it.
fn row_finding(run: &Run, g: GroupId, kind: Kind, rows: Vec<(TrajectoryId, String)>) -> Finding {
    let members = run.groups.members(g).len();
    let described =
        rows.iter().map(|(t, why)| format!("{} ({why}, reward {})", run.trajectory_key(*t), reward_text(run, *t)));
    let evidence = format!(
        "{} of the group's {members} rollouts counted in its baseline: {}",
        rows.len(),
        super::first_five(described, ", ")
    );
    Finding::new(run, kind, g, rows.into_iter().map(|(t, _)| t).collect(), evidence)
}

/// A row's reward as the evidence prints it.
pub fn reward_text(run: &Run, t: TrajectoryId) -> String {
    let r = run.trajectories.reward[t.index()];
    if r.is_nan() { "none".to_owned() } else { format!("{r}") }
}

/// The texts a duplicate must share: each step's thought, action and observation, then its tokens'.
fn texts_of(run: &Run, t: TrajectoryId) -> Vec<TextId> {
    let mut ids: Vec<TextId> = Vec::new();
    for n in run.trajectories.path(t) {
        let n = n.index();
        ids.extend([run.nodes.thought[n], run.nodes.action[n], run.nodes.observation[n]]);
    }
    if let Some(pieces) = &run.tokens.text {
        ids.extend(pieces.get(run.trajectories.token_range(t)).unwrap_or_default());
    }
    ids
}

/// What two copies of one response share, known without reading a text: reward, finish, number
/// of steps and tokens, each text's stored length (`None` where unknown) and each token's logged
/// log-probability (bit for bit: a copy carries its sampler's numbers).
type Signature = (u32, Sym, usize, usize, Vec<Option<usize>>, Vec<u32>);

/// The rows of `rows` (one group's) whose response an earlier row has, each with the one it copies:
/// the same step texts, the same tokens (their texts, and their log-probabilities where logged).
fn duplicates(run: &Run, rows: &[TrajectoryId]) -> Vec<(TrajectoryId, String)> {
    if rows.len() < 2 {
        return Vec::new();
    }
    let tr = &run.trajectories;
    let mut by_signature: HashMap<Signature, Vec<TrajectoryId>> = HashMap::new();
    for &t in rows {
        let range = tr.token_range(t);
        // Only rows with tokens: without them, two samples that came out alike (a short answer, a
        // deterministic chain of steps) cannot be told from one sample counted twice.
        if range.is_empty() {
            continue;
        }
        let ids = texts_of(run, t);
        let lens = ids.iter().map(|&id| run.text.stored_len(id)).collect();
        let logprobs = run.tokens.logprob.as_deref().and_then(|l| l.get(range.clone())).unwrap_or_default();
        let signature = (
            tr.reward[t.index()].to_bits(),
            tr.finish[t.index()],
            tr.num_steps(t),
            range.len(),
            lens,
            logprobs.iter().map(|v| v.to_bits()).collect(),
        );
        by_signature.entry(signature).or_default().push(t);
    }
    let mut out = Vec::new();
    let mut candidates: Vec<Vec<TrajectoryId>> = by_signature.into_values().filter(|v| v.len() >= 2).collect();
    candidates.sort();
    for same in candidates {
        // The texts are read only for rows that could be copies.
        let texts: Vec<Vec<String>> =
            same.iter().map(|&t| run.texts(&texts_of(run, t)).into_iter().map(|c| c.into_owned()).collect()).collect();
        for (i, &t) in same.iter().enumerate() {
            if let Some(j) = (0..i).find(|&j| texts[j] == texts[i]) {
                out.push((t, format!("the response of {}", run.trajectory_key(same[j]))));
            }
        }
    }
    out.sort();
    out
}

/// Rows in a group baseline that were not trained: every token masked out, a filter finish
/// reason, or a filter flag among the outcome components; by group.
pub fn filtered_rows(run: &Run) -> Vec<(GroupId, Vec<TrajectoryId>)> {
    let tr = &run.trajectories;
    let flags: Vec<&Vec<f32>> = FILTER_FLAGS.iter().filter_map(|name| tr.components.get(*name)).collect();
    let mask = run.tokens.mask.as_deref();
    let mut out = Vec::new();
    for g in run.groups.ids() {
        let rows: Vec<TrajectoryId> = in_baseline(run, g)
            .filter(|&t| {
                let range = tr.token_range(t);
                let masked =
                    mask.and_then(|m| m.get(range.clone())).is_some_and(|m| !m.is_empty() && m.iter().all(|&k| !k));
                let finish = run.label(tr.finish[t.index()]);
                let flagged = flags.iter().any(|f| f.get(t.index()).is_some_and(|&v| v != 0.0 && !v.is_nan()));
                masked || flagged || FILTER_FINISH.contains(&finish)
            })
            .collect();
        if !rows.is_empty() {
            out.push((g, rows));
        }
    }
    out
}

/// The finding on rows of group `g` that were not trained but whose rewards are in its baseline.
pub fn filtered_finding(run: &Run, g: GroupId, rows: Vec<TrajectoryId>) -> Finding {
    let rows = rows.into_iter().map(|t| (t, "not trained".to_owned())).collect();
    let mut finding = row_finding(run, g, Kind::FilteredInBaseline, rows);
    finding.evidence.push_str("; the logged advantages of the others are those with their rewards in the baseline");
    finding
}
