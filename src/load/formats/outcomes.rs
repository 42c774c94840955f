//! Outcomes that live beside the trajectories, joined to them by id:
//! - the SWE-bench harness report (`<model>.<run>.json`: `resolved_ids`, and `unresolved_ids`,
//!   `empty_patch_ids` and `error_ids` judged unresolved; `incomplete_ids` were not run and get no
//!   outcome);
//! - sb-cli's report (`sb-cli-reports/<subset>__<split>__<run_id>.json`: the harness report's
//!   lists, and `pending_ids` and `failed_ids`, which were not judged and get no outcome);
//! - the harness's per-instance `report.json` (`{id: {resolved}}`), and the flat one of a
//!   submission's `logs/<id>/report.json` (`{resolved, patch_exists, …}`, its id the folder's name);
//! - a run summary listing its instances (`results_summary.json`: `{instances: [{instance_id,
//!   resolved}]}`, a reward or a success in place of `resolved` too);
//! - SWE-agent's `results.json` (`{resolved: [ids], …}`);
//! - StableToolBench's pass-rate votes (`pass_rate_results/*.json`: `{query_id: {is_solved: {"0":
//!   "AnswerStatus.Solved", …}}}`, the reward the fraction of evaluators that said solved, an
//!   unsure vote counting a half);
//! - a Harbor trial's `result.json` (`{trial_name, task_name, verifier_result: {rewards}}`), which
//!   also names the trial's task.
//!
//! [`parse`] tells such a file by its content; [`join`] gives each trajectory whose id (its key,
//! its group's key or task, or their first part before `/`, `_` or `@`) is in the file that
//! outcome, and says in the run's notes and warnings what matched and what did not.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Run, Warning};

/// One instance's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Reward (1 resolved, 0 not; the fraction of solved votes).
    pub reward: f32,
    /// Success (resolved; a majority of solved votes).
    pub success: bool,
}

/// The outcomes of one results file.
#[derive(Clone, Debug)]
pub struct Outcomes {
    /// The file's name, for notes and warnings.
    pub file: String,
    /// What kind of file it is, in words.
    pub kind: &'static str,
    /// Outcome by instance id.
    pub entries: BTreeMap<String, Entry>,
    /// The task each id belongs to, where the file names it (a Harbor trial's `task_name`).
    pub tasks: BTreeMap<String, String>,
    /// Labels (docs/LABELS.md) the file gives each id, by name: a Harbor trial's exception and
    /// its verifier's rewards beside the outcome's.
    pub labels: BTreeMap<String, Vec<(String, crate::model::labels::Value)>>,
    /// Named outcome components the file gives each id: every reward of a Harbor verifier's
    /// `reward.json` when it writes several.
    pub components: BTreeMap<String, Vec<(String, f32)>>,
    /// The files beside each id's outcome, in words (a Harbor trial's verifier files: its test
    /// output, its CTRF report with what passed), shown with the trajectory. Filled by the native
    /// opener, which sees the folder (`source::joined`).
    pub files: BTreeMap<String, Vec<String>>,
}

/// Where the joined trajectories' files are kept in the run's metadata: trajectory id → the
/// files in words (shown by the step inspector).
pub const FILES_KEY: &str = "trial_files";

/// The outcomes in `bytes` when the file is one of the results files above; `None` otherwise.
pub fn parse(name: &str, bytes: &[u8]) -> Option<Outcomes> {
    let text = std::str::from_utf8(bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)).ok()?;
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let value: serde_json::Map<String, serde_json::Value> = serde_json::from_str(text).ok()?;
    let ids = |key: &str| -> Vec<String> {
        value
            .get(key)
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    };
    let resolved_entry = |resolved: bool| Entry { reward: if resolved { 1.0 } else { 0.0 }, success: resolved };
    let outcomes = |kind: &'static str, entries: BTreeMap<String, Entry>| Outcomes {
        file: name.to_owned(),
        kind,
        entries,
        tasks: BTreeMap::new(),
        labels: BTreeMap::new(),
        components: BTreeMap::new(),
        files: BTreeMap::new(),
    };
    // Lists of ids by what happened to them: the ids of the `judged` lists get an outcome
    // (resolved when in `resolved_key`); every listed id does when `judged` is empty.
    let from_lists = |resolved_key: &str, judged: &[&str], kind: &'static str| -> Outcomes {
        let mut entries = BTreeMap::new();
        for key in value.keys().filter(|k| k.as_str() != resolved_key) {
            if judged.is_empty() || judged.contains(&key.as_str()) {
                for id in ids(key) {
                    entries.insert(id, resolved_entry(false));
                }
            }
        }
        for id in ids(resolved_key) {
            entries.insert(id, resolved_entry(true));
        }
        outcomes(kind, entries)
    };
    // A Harbor trial's result.json: the verifier's rewards for the trial named `trial_name`, and
    // the trial's task.
    if let (Some(trial), Some(verifier)) =
        (value.get("trial_name").and_then(serde_json::Value::as_str), value.get("verifier_result"))
    {
        let mut trial_outcomes = harbor_trial(name, trial, verifier, value.get("exception_info"));
        if let Some(task) = value.get("task_name").and_then(serde_json::Value::as_str).filter(|t| !t.is_empty()) {
            trial_outcomes.tasks.insert(trial.to_owned(), task.to_owned());
        }
        return Some(trial_outcomes);
    }
    // The SWE-bench harness report, or sb-cli's (which also lists the pending and failed ids).
    if value.get("resolved_ids").is_some_and(serde_json::Value::is_array) {
        let judged = ["unresolved_ids", "empty_patch_ids", "error_ids"];
        let sb_cli = ["pending_ids", "failed_ids", "pending_instances"].iter().any(|k| value.contains_key(*k));
        let kind = if sb_cli { "sb-cli report" } else { "SWE-bench harness report" };
        return Some(from_lists("resolved_ids", &judged, kind));
    }
    // SWE-agent's results.json: lists of ids by what happened to them.
    if value.get("resolved").is_some_and(|v| v.as_array().is_some_and(|a| a.iter().all(serde_json::Value::is_string))) {
        return Some(from_lists("resolved", &[], "SWE-agent results"));
    }
    // A submission's flat `logs/<id>/report.json`: one instance, named by its folder.
    if let Some(resolved) = value.get("resolved").and_then(serde_json::Value::as_bool) {
        let folder = name.rsplit(['/', '\\']).nth(1).filter(|f| !f.is_empty() && *f != "." && *f != "..")?;
        let entries = BTreeMap::from([(folder.to_owned(), resolved_entry(resolved))]);
        return Some(outcomes("SWE-bench instance report", entries));
    }
    // A run summary that lists its instances.
    if let Some(instances) = value.get("instances").and_then(serde_json::Value::as_array) {
        let mut entries = BTreeMap::new();
        for item in instances {
            let id = ["instance_id", "id", "task_id"].iter().find_map(|k| item.get(*k)?.as_str());
            let judged = ["resolved", "success", "passed"].iter().find_map(|k| item.get(*k)?.as_bool());
            let scored = ["reward", "score"].iter().find_map(|k| item.get(*k)?.as_f64());
            let entry =
                judged.map(resolved_entry).or_else(|| scored.map(|r| Entry { reward: r as f32, success: r > 0.5 }));
            if let (Some(id), Some(entry)) = (id, entry) {
                entries.insert(id.to_owned(), entry);
            }
        }
        return (!entries.is_empty()).then(|| outcomes("run summary", entries));
    }
    if value.is_empty() {
        return None;
    }
    // Per-instance objects: SWE-bench's report.json, or StableToolBench's pass-rate votes.
    let mut entries = BTreeMap::new();
    let mut kind = None;
    for (id, item) in &value {
        let item = item.as_object()?;
        if let Some(resolved) = item.get("resolved").and_then(serde_json::Value::as_bool) {
            kind = Some("SWE-bench instance report");
            entries.insert(id.clone(), resolved_entry(resolved));
        } else if let Some(votes) = item.get("is_solved").and_then(serde_json::Value::as_object) {
            kind = Some("StableToolBench pass-rate votes");
            let score = |v: &serde_json::Value| match v.as_str().unwrap_or_default().rsplit('.').next() {
                Some("Solved") => 1.0,
                Some("Unsure") => 0.5,
                _ => 0.0,
            };
            let total: f32 = votes.values().map(score).sum();
            let n = votes.len().max(1) as f32;
            entries.insert(id.clone(), Entry { reward: total / n, success: total > n / 2.0 });
        } else {
            return None;
        }
    }
    Some(outcomes(kind?, entries))
}

/// What Harbor's verifier gave a trial (harbor `models/trial/result.py` `TrialResult`,
/// `models/verifier/result.py` `VerifierResult`): `rewards` by name, its `reward` the outcome (else
/// the only reward); success is a reward above 0.5. A trial whose verifier did not run (an
/// exception, `verifier_result: null`) has no entry, so its trajectory loads with no outcome.
/// Labels: the verifier's other rewards, `verifier.NAME` with the number, and the trial's
/// `exception_info.exception_type` as `harbor_exception` (`AgentTimeoutError`).
fn harbor_trial(
    name: &str,
    trial: &str,
    verifier: &serde_json::Value,
    exception: Option<&serde_json::Value>,
) -> Outcomes {
    use crate::model::labels::Value as LabelValue;
    let mut labels = Vec::new();
    if let Some(rewards) = verifier.get("rewards").and_then(serde_json::Value::as_object)
        && rewards.contains_key("reward")
    {
        for (key, value) in rewards.iter().filter(|(k, _)| k.as_str() != "reward") {
            if let Some(number) = value.as_f64().filter(|v| v.is_finite()) {
                labels.push((format!("verifier.{key}"), LabelValue::Number(number)));
            }
        }
    }
    let exception_type = exception.and_then(|e| e.get("exception_type")).and_then(serde_json::Value::as_str);
    if let Some(kind) = exception_type.filter(|k| !k.is_empty()) {
        labels.push(("harbor_exception".to_owned(), LabelValue::Word(kind.to_owned())));
    }
    let rewards = verifier.get("rewards").and_then(serde_json::Value::as_object);
    let reward = rewards.and_then(|r| {
        r.get("reward")
            .and_then(serde_json::Value::as_f64)
            .or_else(|| (r.len() == 1).then(|| r.values().next()?.as_f64()).flatten())
    });
    let mut entries = BTreeMap::new();
    if let Some(reward) = reward {
        entries.insert(trial.to_owned(), Entry { reward: reward as f32, success: reward > 0.5 });
    }
    let labels = if labels.is_empty() { BTreeMap::new() } else { BTreeMap::from([(trial.to_owned(), labels)]) };
    // A verifier that wrote `reward.json` with several rewards: each is an outcome component
    // (`reward.txt` is one reward, `{reward: x}`: the outcome alone).
    let named: Vec<(String, f32)> = rewards
        .filter(|r| r.len() > 1)
        .into_iter()
        .flatten()
        .filter_map(|(key, value)| Some((key.clone(), value.as_f64().filter(|v| v.is_finite())? as f32)))
        .collect();
    let components = if named.is_empty() { BTreeMap::new() } else { BTreeMap::from([(trial.to_owned(), named)]) };
    let tasks = BTreeMap::new();
    Outcomes { file: name.to_owned(), kind: HARBOR_TRIAL, entries, tasks, labels, components, files: BTreeMap::new() }
}

/// The files beside each matched id's outcome, kept with its trajectory in the run's metadata
/// ([`FILES_KEY`]).
fn keep_files(run: &mut Run, outcomes: &[&Outcomes], hits: &[Option<(usize, String, Entry)>]) {
    for (t, hit) in hits.iter().enumerate() {
        let Some((f, id, _)) = hit else { continue };
        let Some(files) = outcomes[*f].files.get(id).filter(|f| !f.is_empty()) else { continue };
        let key = run.label(run.trajectories.key[t]).to_owned();
        let listed = files.iter().cloned().map(serde_json::Value::String).collect();
        let map = run
            .meta
            .metadata
            .entry(FILES_KEY.to_owned())
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
        if let Some(map) = map.as_object_mut() {
            map.insert(key, serde_json::Value::Array(listed));
        }
    }
}

/// The kind of a Harbor trial's `result.json`: one trial's outcome, beside its trajectory.
pub const HARBOR_TRIAL: &str = "Harbor trial result";

/// The ids a trajectory may be known by in a results file, most specific first.
fn candidate_ids(run: &Run, t: crate::model::TrajectoryId) -> Vec<String> {
    let tr = &run.trajectories;
    let group = tr.group[t.index()];
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        if !s.is_empty() && !out.iter().any(|o| o == s) {
            out.push(s.to_owned());
        }
    };
    let names = [run.label(tr.key[t.index()]), run.group_key(group), run.label(run.groups.task[group.index()])];
    for name in names {
        push(name);
    }
    for name in names {
        for cut in ['/', '_', '@'] {
            if let Some((head, _)) = name.split_once(cut) {
                push(head);
            }
        }
    }
    out
}

/// What joining found: trajectories given an outcome, and the ids on either side left unmatched.
#[derive(Debug, Default)]
pub struct Joined {
    /// Trajectories that got an outcome.
    pub matched: usize,
    /// Trajectories that got none.
    pub unmatched_trajectories: Vec<String>,
    /// Ids of the results file no trajectory matched.
    pub unmatched_ids: Vec<String>,
}

/// Gives each trajectory of `run` that one of `outcomes` knows its outcome (the first file that
/// knows it), and returns what matched. The run's notes say which file gave how many outcomes.
pub fn join(run: &mut Run, outcomes: &[&Outcomes]) -> Joined {
    join_with(run, outcomes, |_| (0..outcomes.len()).collect())
}

/// [`join`], each trajectory looked up only in the files `files_for` names (indices into
/// `outcomes`, in the order to try them): the results files that belong with its own file.
pub fn join_with(
    run: &mut Run,
    outcomes: &[&Outcomes],
    files_for: impl Fn(crate::model::TrajectoryId) -> Vec<usize>,
) -> Joined {
    let mut joined = Joined::default();
    let mut used: Vec<BTreeSet<String>> = vec![BTreeSet::new(); outcomes.len()];
    let mut per_file = vec![0usize; outcomes.len()];
    let hits: Vec<Option<(usize, String, Entry)>> = run
        .trajectories
        .ids()
        .map(|t| {
            let ids = candidate_ids(run, t);
            files_for(t).into_iter().filter_map(|f| outcomes.get(f).map(|o| (f, o))).find_map(|(f, o)| {
                ids.iter().find_map(|id| o.entries.get_key_value(id.as_str())).map(|(id, e)| (f, id.clone(), e.clone()))
            })
        })
        .collect();
    // An outcome judges an answer: where several leaves of one search tree match one id, the ones
    // that gave the answer (`give_answer`) take it and the others get 0.
    let answered = |t: usize| run.label(run.trajectories.finish[t]) == "give_answer";
    let mut answering: BTreeMap<(u32, usize, &str), bool> = BTreeMap::new();
    for (t, hit) in hits.iter().enumerate() {
        if let Some((f, id, _)) = hit {
            *answering.entry((run.trajectories.group[t].0, *f, id.as_str())).or_default() |= answered(t);
        }
    }
    let mut updates = Vec::new();
    for (t, hit) in hits.iter().enumerate() {
        match hit {
            Some((f, id, entry)) => {
                let tree_answered =
                    answering.get(&(run.trajectories.group[t].0, *f, id.as_str())).copied().unwrap_or(false);
                let entry =
                    if tree_answered && !answered(t) { Entry { reward: 0.0, success: false } } else { entry.clone() };
                updates.push((t, entry));
                used[*f].insert(id.clone());
                per_file[*f] += 1;
                joined.matched += 1;
            }
            None => joined.unmatched_trajectories.push(run.label(run.trajectories.key[t]).to_owned()),
        }
    }
    for (t, entry) in updates {
        run.trajectories.reward[t] = entry.reward;
        run.trajectories.success[t] = Some(entry.success);
    }
    // The named rewards a file gives a matched id, as outcome components.
    let n = run.trajectories.len();
    for (t, hit) in hits.iter().enumerate() {
        let Some((f, id, _)) = hit else { continue };
        for (name, value) in outcomes[*f].components.get(id).into_iter().flatten() {
            let column = run.trajectories.components.entry(name.clone()).or_insert_with(|| vec![f32::NAN; n]);
            column[t] = *value;
        }
    }
    // The labels a file gives a trajectory's id (docs/LABELS.md), from the first file that has
    // some for it.
    for t in run.trajectories.ids() {
        let ids = candidate_ids(run, t);
        let found = files_for(t)
            .into_iter()
            .filter_map(|f| outcomes.get(f))
            .find_map(|o| ids.iter().find_map(|id| o.labels.get(id.as_str())).map(|labels| (o.file.clone(), labels)));
        let Some((file, labels)) = found else { continue };
        let key = run.trajectory_key(t).to_owned();
        for (name, value) in labels {
            run.meta.imported_labels.push(crate::model::labels::Label {
                name: name.clone(),
                value: value.clone(),
                target: crate::model::labels::Target { trajectory: key.clone(), step: None },
                source: crate::model::labels::Source {
                    kind: crate::model::labels::SourceKind::File,
                    name: file.clone(),
                },
                note: None,
                time: None,
            });
        }
    }
    keep_files(run, outcomes, &hits);
    // A loader's note that the outcomes are missing no longer holds when every trajectory has one.
    if joined.matched == run.trajectories.len() {
        run.meta.notes.retain(|n| !n.contains("outcomes are missing"));
    }
    // An id no file gave a trajectory (one that another file gave is matched: a run summary
    // beside the per-instance reports lists the same ids).
    let used_anywhere: BTreeSet<&String> = used.iter().flatten().collect();
    let mut unmatched: BTreeSet<&String> = BTreeSet::new();
    for o in outcomes {
        unmatched.extend(o.entries.keys().filter(|id| !used_anywhere.contains(id)));
    }
    joined.unmatched_ids.extend(unmatched.into_iter().cloned());
    for (f, o) in outcomes.iter().enumerate() {
        run.meta.notes.push(format!(
            "outcomes from {} ({}): {} of {} trajectories matched, {} of its {} ids",
            o.file,
            o.kind,
            per_file[f],
            run.trajectories.len(),
            used[f].len(),
            o.entries.len()
        ));
    }
    joined
}

/// The warnings for what [`join`] left unmatched: a trajectory without an outcome, only when a
/// results file matched some of the run's (a file that matches none is about another run: one
/// note says so, [`notes`]). Ids of the results without a trajectory are a note too: results files
/// cover a whole benchmark, a folder holds some of its instances.
pub fn warnings(joined: &Joined, files: &[&Outcomes]) -> Vec<Warning> {
    if joined.matched == 0 {
        return Vec::new();
    }
    let names: Vec<&str> = files.iter().map(|o| o.file.as_str()).collect();
    joined
        .unmatched_trajectories
        .iter()
        .map(|t| Warning::kept(0, "outcome", format!("trajectory {t:?} has no outcome in {}", names.join(", "))))
        .collect()
}

/// The notes for what [`join`] left unmatched that is not a fault of the run: how many ids of the
/// results have no trajectory here (a few named), and that no results file matched any trajectory.
pub fn notes(joined: &Joined, files: &[&Outcomes]) -> Vec<String> {
    let mut out = Vec::new();
    if !joined.unmatched_ids.is_empty() {
        let n = joined.unmatched_ids.len();
        let named: Vec<String> = joined.unmatched_ids.iter().take(3).map(|id| format!("{id:?}")).collect();
        let more = if n > 3 { ", …" } else { "" };
        let ids = if n == 1 { "1 id of the results has" } else { "ids of the results have" };
        let count = if n == 1 { String::new() } else { format!("{n} ") };
        out.push(format!("{count}{ids} no trajectory here ({}{more})", named.join(", ")));
    }
    if joined.matched == 0 && !files.is_empty() {
        let names: Vec<&str> = files.iter().map(|o| o.file.as_str()).collect();
        out.push(format!(
            "no trajectory of this run is in {}: its outcomes are not joined (the results of another run?)",
            names.join(", ")
        ));
    }
    out
}

/// Joins `outcomes` to `run` ([`join_with`]) and records what did not match: the notes
/// ([`notes`]) in the run's notes, the warnings ([`warnings`]) in `report` and the run.
pub fn join_and_report(
    run: &mut Run,
    outcomes: &[&Outcomes],
    files_for: impl Fn(crate::model::TrajectoryId) -> Vec<usize>,
    report: &mut crate::load::LoadReport,
) {
    let joined = join_with(run, outcomes, files_for);
    run.meta.notes.extend(notes(&joined, outcomes));
    for warning in warnings(&joined, outcomes) {
        report.warn(warning.clone());
        run.meta.warnings.push(warning);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_results_files_are_told_by_their_content() {
        let report =
            parse("r.json", br#"{"resolved_ids": ["a"], "unresolved_ids": ["b"], "schema_version": 2}"#).unwrap();
        assert_eq!(report.entries["a"], Entry { reward: 1.0, success: true });
        assert_eq!(report.entries["b"], Entry { reward: 0.0, success: false });
        let per = parse("report.json", br#"{"x__y-1": {"resolved": true, "patch_exists": true}}"#).unwrap();
        assert!(per.entries["x__y-1"].success);
        let votes = parse(
            "p.json",
            br#"{"7": {"is_solved": {"0": "AnswerStatus.Solved", "1": "AnswerStatus.Unsure", "2": "AnswerStatus.Unsolved"}}}"#,
        )
        .unwrap();
        assert_eq!(votes.entries["7"], Entry { reward: 0.5, success: false });
        let results = parse("results.json", br#"{"resolved": ["a"], "applied": ["a", "b"]}"#).unwrap();
        assert_eq!(results.entries.len(), 2);
        assert!(parse("x.json", br#"{"vantage": 1}"#).is_none());
        assert!(parse("x.json", br#"[1, 2]"#).is_none());
    }
}
