//! What schemes read from a run. For the trainer estimators: building a [`Batch`] (per token when
//! tokens are logged, per step otherwise), KL in the reward, and turning kernel output back into
//! [`Credit`]. For the step schemes: per-node columns in path order, outcome advantages, step-score
//! columns, and the support checks (step credit written group by group on several threads is in
//! [`crate::credit::engine::par`]).

use std::borrow::Cow;

use crate::credit::data::batch::{Batch, Output};
use crate::credit::data::real::Real;
use crate::credit::kernels::kl::{KlMode, apply_kl_in_reward};
use crate::credit::params::declare::{Choice as _, choice, decl, params, range};
use crate::credit::{Credit, CreditError, Support};
use crate::model::{NodeId, Run};

/// Whether credit was computed per token or per step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// One position per token.
    Token,
    /// One position per step (the outcome at the last step).
    Step,
}

choice! {
    /// The granularity asked for (`level`): `auto` is per token when the run logs tokens.
    pub enum LevelChoice { Auto = "auto", Token = "token", Step = "step" }
}

choice! {
    /// Where per-step rewards come from at step level (`reward_source`).
    pub enum RewardSource { Outcome = "outcome", Env = "env", OutcomeEnv = "outcome+env" }
}

params! {
    /// Parameters every trainer estimator has: granularity, reward source and KL in the reward.
    pub struct Common {
        /// Per token or per step.
        pub level: LevelChoice = decl(
            "auto",
            "compute per token (needs token arrays) or per step; auto picks token when the run logs tokens",
        ),
        /// Per-step rewards at step level.
        pub reward_source: RewardSource = decl(
            "outcome",
            "per-step rewards at step level: the outcome at the last step, the env rewards, or both",
        ),
        /// β of KL in the reward.
        pub kl_coef: f64 = range(0.0, 10.0, "0", "β of KL in the reward (0 = off); needs token logprobs and ref logprobs"),
        /// The KL estimator.
        pub kl_mode: KlMode = decl(
            "k1",
            "KL estimator per token: k1 = logp − ref, abs, k2 = ½(logp − ref)², k3 = low-variance KL",
        ),
    }
}

params! {
    /// TRL RLOO's `reward_clip_range`: the rows' rewards clamped before the KL and the baseline.
    pub struct ScoreClip {
        /// The least reward.
        pub score_min: f64 = range(
            -1.0e6,
            1.0e6,
            "-1000000",
            "TRL reward_clip_range: the least reward, clamped to before the KL and the baseline (−1e6 = off)",
        ),
        /// The greatest reward.
        pub score_max: f64 = range(-1.0e6, 1.0e6, "1000000", "TRL reward_clip_range: the greatest reward (1e6 = off)"),
    }
}

impl Common {
    /// OpenRLHF's shaping with this KL and the scheme's own clip of the row's scalar.
    pub const fn shape(self, reward_clip: f64) -> crate::credit::kernels::openrlhf::Shape {
        crate::credit::kernels::openrlhf::Shape { kl_coef: self.kl_coef, reward_clip, kl_mode: self.kl_mode }
    }
}

/// What the engine does to a trainer estimator's batch before its kernel, from the scheme's knobs:
/// the granularity, reward source and KL in the reward (`Common`), TRL RLOO's clip of the rows'
/// rewards, and whether OpenRLHF's shaping (which adds its own KL after shaping) is asked for.
#[derive(Clone, Copy, Debug)]
pub struct Preparation {
    /// The parameters every estimator has.
    pub common: Common,
    /// TRL RLOO's `reward_clip_range`, for a scheme that declares it.
    pub score_clip: Option<ScoreClip>,
    /// OpenRLHF's shaping is asked for (`placement = last_token_return` or `shaping = openrlhf`).
    pub openrlhf_shaping: bool,
}

impl Preparation {
    /// The preparation of a scheme with only the common parameters.
    pub const fn of(common: Common) -> Self {
        Self { common, score_clip: None, openrlhf_shaping: false }
    }
}

/// The knobs of a trainer estimator: how its batch is prepared.
pub trait Prepared {
    /// The preparation these knobs ask for.
    fn preparation(&self) -> Preparation;
}

/// A per-node column in path order (one value per entry of `path_nodes`): the column itself when
/// the run's paths are its nodes in order, else gathered into a pooled buffer (hand it back with
/// [`give_path_column`]).
pub fn path_column<'a>(run: &Run, column: &'a [f32]) -> Cow<'a, [f32]> {
    let tr = &run.trajectories;
    if tr.paths_in_node_order && column.len() == tr.path_nodes.len() {
        Cow::Borrowed(column)
    } else {
        // Gathered in parts on their own threads (`par`).
        let mut gathered = crate::credit::data::pool::scratch(tr.path_nodes.len());
        crate::par::chunks_mut(&mut gathered, |start, part| {
            for (slot, node) in part.iter_mut().zip(&tr.path_nodes[start..]) {
                *slot = column[node.index()];
            }
        });
        Cow::Owned(gathered)
    }
}

/// A [`path_column`] as a pooled buffer of its own (a borrowed column is copied into one), to
/// change or to hand over; give it back to the pool when done.
pub fn owned_path_column(column: Cow<'_, [f32]>) -> Vec<f32> {
    match column {
        Cow::Borrowed(column) => {
            // Copied in parts on their own threads (`par`).
            let mut copy = crate::credit::data::pool::scratch(column.len());
            crate::par::chunks_mut(&mut copy, |start, part| {
                part.copy_from_slice(&column[start..start + part.len()]);
            });
            copy
        }
        Cow::Owned(gathered) => gathered,
    }
}

/// Hands a gathered [`path_column`] back to the buffer pool.
pub fn give_path_column(column: Cow<'_, [f32]>) {
    if let Cow::Owned(buffer) = column {
        crate::credit::data::pool::give(buffer);
    }
}

/// Whether the members of the groups, group after group, are in increasing trajectory order (as
/// logs write them): a scheme working group by group can then write its step output in order,
/// sizing it as it goes, instead of filling it first and writing at random.
pub fn groups_in_trajectory_order(run: &Run) -> bool {
    let mut last = None;
    run.groups.ids().flat_map(|g| run.groups.members(g)).all(|t| {
        let ordered = last.is_none_or(|l| t.index() > l);
        last = Some(t.index());
        ordered
    })
}

/// The granularity `common` asks for on `run`.
pub fn level(run: &Run, common: &Common) -> Level {
    match common.level {
        LevelChoice::Auto if run.tokens.len > 0 => Level::Token,
        LevelChoice::Token => Level::Token,
        LevelChoice::Step | LevelChoice::Auto => Level::Step,
    }
}

/// Whether the run can feed a trainer estimator at all (it needs outcome or per-position rewards).
pub fn supports_rewards(run: &Run) -> Support {
    let has_env = run.nodes.env_reward.iter().any(|r| !r.is_nan());
    if has_outcomes(run) || has_env || run.tokens.reward.is_some() {
        Support::Yes
    } else {
        Support::No("needs outcome rewards, env rewards or token rewards".to_owned())
    }
}

fn to_f32s(values: &[f32]) -> Vec<f32> {
    values.to_vec()
}

/// Builds the kernel input from a run at `level`, applying KL in the reward when `kl_coef > 0`.
pub fn batch_from_run<'a>(
    run: &'a Run,
    preparation: &Preparation,
    level: Level,
    with_values: bool,
) -> Result<Batch<'a, f32>, CreditError> {
    let tr = &run.trajectories;
    let mut batch = Batch::<f32> {
        group: tr.group.iter().map(|g| g.0).collect(),
        tree: tr.tree.iter().map(|t| t.0).collect(),
        group_step: run.groups.train_step.iter().map(|s| s.unwrap_or(i64::MIN)).collect(),
        num_groups: run.groups.len(),
        skip_returns: level == Level::Step,
        ..Batch::default()
    };
    batch.max_length = max_completion_length(run);
    // The reward functions' values (outcome components other than logged statistics), for GDPO.
    batch.components = tr
        .components
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "advantage" | "logged_advantage" | "greedy_baseline"))
        .map(|(_, values)| values.clone())
        .collect();
    let baseline = tr.components.get("greedy_baseline");
    batch.reward_baseline = baseline.map(|b| to_f32s(b));
    match level {
        Level::Token => {
            batch.offsets = tr.token_offsets.iter().map(|&o| o as usize).collect();
            let tk = &run.tokens;
            batch.mask = tk.mask.as_ref().map(|m| m.iter().map(|&b| f32::from(u8::from(b))).collect());
            match &tk.reward {
                Some(r) => batch.reward = Some(r.iter().map(|x| if x.is_nan() { 0.0 } else { *x }).collect()),
                None => batch.row_score = Some(tr.reward.clone()),
            }
            batch.values = if with_values { tk.value.as_deref().map(Cow::Borrowed) } else { None };
            batch.logprob = tk.logprob.clone();
            batch.ref_logprob = tk.ref_logprob.clone();
            batch.sum_pi_squared = tk.sum_pi_squared.clone();
        }
        Level::Step => {
            batch.offsets = tr.path_offsets.iter().map(|&o| o as usize).collect();
            let env = |k: usize| {
                let r = run.nodes.env_reward[tr.path_nodes[k].index()];
                if r.is_nan() { 0.0 } else { r }
            };
            match preparation.common.reward_source {
                RewardSource::Env => {
                    batch.reward = Some(crate::credit::data::pool::collect(
                        tr.path_nodes.len(),
                        (0..tr.path_nodes.len()).map(env),
                    ));
                }
                RewardSource::OutcomeEnv => {
                    let mut reward =
                        crate::credit::data::pool::collect(tr.path_nodes.len(), (0..tr.path_nodes.len()).map(env));
                    for t in tr.ids() {
                        let end = tr.path_offsets[t.index() + 1] as usize;
                        if end > 0 && !tr.reward[t.index()].is_nan() {
                            reward[end - 1] += tr.reward[t.index()];
                        }
                    }
                    batch.reward = Some(reward);
                }
                RewardSource::Outcome => batch.row_score = Some(tr.reward.clone()),
            }
            batch.values = if with_values { step_values(run) } else { None };
        }
    }
    prepare_batch(&mut batch, preparation)
        .map_err(|reason| CreditError::Unsupported { scheme: "kl_in_reward".to_owned(), reason })?;
    Ok(batch)
}

/// The trainer's `max_completion_length` when the run's metadata records it (top level, or in a
/// `config` / `trl_config` / `args` object).
fn max_completion_length(run: &Run) -> Option<usize> {
    let meta = &run.meta.metadata;
    let key = "max_completion_length";
    let found = meta.get(key).or_else(|| ["config", "trl_config", "args"].iter().find_map(|c| meta.get(*c)?.get(key)));
    found.and_then(serde_json::Value::as_u64).and_then(|v| usize::try_from(v).ok()).filter(|&v| v > 0)
}

/// What every trainer estimator does to its input before the kernel: KL in the reward when
/// `kl_coef > 0` (verl's `apply_kl_penalty`, TRL RLOO's summed k1). OpenRLHF's shaping adds its
/// per-token KL itself, after shaping the sequence score, so it is left out here.
pub fn prepare_batch<F: Real>(batch: &mut Batch<'_, F>, preparation: &Preparation) -> Result<(), String> {
    // TRL RLOO's reward_clip_range: the rows' rewards clamped before the KL is taken off.
    if let Some(ScoreClip { score_min: low, score_max: high }) = preparation.score_clip
        && (low > -1.0e6 || high < 1.0e6)
        && let Some(scores) = batch.row_score.as_mut()
    {
        for s in scores.iter_mut().filter(|s| !s.is_nan()) {
            *s = s.max(F::of(low)).min(F::of(high));
        }
    }
    let Common { kl_coef, kl_mode, .. } = preparation.common;
    if kl_coef > 0.0 && !preparation.openrlhf_shaping {
        apply_kl_in_reward(batch, F::of(kl_coef), kl_mode)?;
    }
    Ok(())
}

/// Per-step values for step-level GAE: a `value` step score, else the Monte-Carlo mean.
fn step_values(run: &Run) -> Option<Cow<'_, [f32]>> {
    let per_node: &[f32] = match (run.nodes.scores.get("value"), run.nodes.mc_mean.as_ref()) {
        (Some(v), _) => v,
        (None, Some(mc)) => mc,
        (None, None) => return None,
    };
    Some(path_column(run, per_node))
}

/// Runs a token kernel (`kernel`, in `f32`) of scheme `id` on `run`, its batch prepared as
/// `preparation` says (with critic values where `uses_values`), and maps its output to step (and
/// token) credit.
pub fn compute_token_scheme(
    id: &str,
    run: &Run,
    preparation: &Preparation,
    uses_values: bool,
    kernel: impl FnOnce(&Batch<'_, f32>) -> Result<Output<f32>, CreditError>,
) -> Result<Credit, CreditError> {
    let level = level(run, &preparation.common);
    if level == Level::Token && run.tokens.len == 0 {
        return Err(CreditError::Unsupported {
            scheme: id.to_owned(),
            reason: "level=token needs token arrays; this run has none".to_owned(),
        });
    }
    let batch = batch_from_run(run, preparation, level, uses_values)?;
    let mut output = kernel(&batch)?;
    batch.recycle();
    // The output's buffers move into the credit (what is left goes back to the pool on drop).
    let advantages = std::mem::take(&mut output.advantages);
    let terms = std::mem::replace(&mut output.terms, crate::credit::Terms::new("", &[]));
    Ok(match level {
        Level::Step => Credit { step: advantages, token: None, token_returns: None, terms, level: Some(Level::Step) },
        Level::Token => Credit {
            step: step_from_tokens(run, &advantages),
            token: Some(advantages),
            token_returns: output.returns.take(),
            terms,
            level: Some(Level::Token),
        },
    })
}

/// Per path step, how many policy tokens it has: the tokens of its `token_span` that the mask keeps;
/// a trajectory without spans shares its policy tokens equally among its steps. `None` when the
/// run logs no tokens (each step then counts once). The weights of a whitening over tokens done on
/// steps: a value held by every token of its step counts once per token.
pub fn step_token_weights(run: &Run) -> Option<Vec<f32>> {
    if run.tokens.len == 0 {
        return None;
    }
    let tr = &run.trajectories;
    let mask = run.tokens.mask.as_ref();
    let count = |range: std::ops::Range<usize>| {
        range.filter(|&t| mask.is_none_or(|m| m.get(t).copied().unwrap_or(true))).count() as f32
    };
    let mut out = vec![0.0f32; tr.path_nodes.len()];
    for t in tr.ids() {
        let tokens = tr.token_range(t);
        let offset = tr.path_offsets[t.index()] as usize;
        let path: &[NodeId] = tr.path(t);
        if path.iter().all(|&n| run.nodes.token_span(n).is_none()) {
            let share = count(tokens) / path.len().max(1) as f32;
            out[offset..offset + path.len()].fill(share);
            continue;
        }
        for (k, &node) in path.iter().enumerate() {
            out[offset + k] = run.nodes.token_span(node).map_or(0.0, |[start, end]| {
                count(tokens.start + start as usize..(tokens.start + end as usize).min(tokens.end))
            });
        }
    }
    Some(out)
}

/// The weights of a whitening of per-step values over the batch: each step's policy-token count
/// ([`step_token_weights`]), or 1 per step when the run logs no tokens; 0 for a step with no
/// value (NaN), which stays out of the statistics.
pub fn whitening_weights(run: &Run, step: &[f32]) -> Vec<f32> {
    let tokens = step_token_weights(run);
    step.iter().enumerate().map(|(k, v)| if v.is_nan() { 0.0 } else { tokens.as_ref().map_or(1.0, |w| w[k]) }).collect()
}

/// Step credit from token credit: the mean over the step's policy tokens (its `token_span`); steps
/// without policy tokens get `NaN`; a trajectory whose steps have no spans gives every step the mean
/// over all its policy tokens.
pub fn step_from_tokens(run: &Run, token: &[f32]) -> Vec<f32> {
    let tr = &run.trajectories;
    let mask = run.tokens.mask.as_ref();
    let mut out = crate::credit::data::pool::filled(tr.path_nodes.len(), f32::NAN);
    let mean = |range: std::ops::Range<usize>| {
        let (mut sum, mut count) = (0.0f64, 0u32);
        for t in range {
            if mask.is_none_or(|m| m.get(t).copied().unwrap_or(true)) {
                sum += f64::from(token.get(t).copied().unwrap_or(f32::NAN));
                count += 1;
            }
        }
        if count == 0 { f32::NAN } else { (sum / f64::from(count)) as f32 }
    };
    for t in tr.ids() {
        let tokens = tr.token_range(t);
        let offset = tr.path_offsets[t.index()] as usize;
        let path: &[NodeId] = tr.path(t);
        let any_span = path.iter().any(|&n| run.nodes.token_span(n).is_some());
        let whole = if any_span { f32::NAN } else { mean(tokens.clone()) };
        for (k, &node) in path.iter().enumerate() {
            out[offset + k] = match run.nodes.token_span(node) {
                Some([start, end]) => mean(tokens.start + start as usize..tokens.start + end as usize),
                None => whole,
            };
        }
    }
    out
}

/// The tokens whose mean is path step `node`'s credit under a token-level scheme
/// (`step_from_tokens`), on trajectory `t`: its span, or the whole trajectory's tokens when no
/// step of its path has a span; `None` when other steps have spans and this one has none. Masked
/// tokens in it are left out of the mean.
pub fn step_token_range(run: &Run, t: crate::model::TrajectoryId, node: NodeId) -> Option<std::ops::Range<usize>> {
    let tokens = run.trajectories.token_range(t);
    match run.nodes.token_span(node) {
        Some([start, end]) => Some(tokens.start + start as usize..tokens.start + end as usize),
        None if run.trajectories.path(t).iter().all(|&n| run.nodes.token_span(n).is_none()) => Some(tokens),
        None => None,
    }
}

/// Step-score names the process schemes can read.
pub const SCORE_NAMES: &[&str] = &["prm", "judge", "progress", "retrieval", "value", "reward", "label"];

choice! {
    /// A step score's name, or `auto`.
    pub enum ScoreName {
        Auto = "auto",
        Prm = "prm",
        Judge = "judge",
        Progress = "progress",
        Retrieval = "retrieval",
        Value = "value",
        Reward = "reward",
        Label = "label",
    }
}

params! {
    /// The `score` parameter every scheme reading a step score has.
    pub struct Score {
        /// The step score read.
        pub score: ScoreName = decl(
            "auto",
            "which step score to use; auto takes the first of prm, judge, progress, retrieval, value, reward, label (human step labels) the run has",
        ),
    }
}

/// `Yes` when the run has one of the step scores, else why not.
pub fn supports_scores(run: &Run) -> Support {
    if SCORE_NAMES.iter().any(|n| run.nodes.scores.contains_key(*n)) {
        Support::Yes
    } else {
        Support::No(format!("needs step scores named one of {}", SCORE_NAMES.join(", ")))
    }
}

/// The step-score column a scheme's `score` selects (`auto` resolved).
pub fn score_column<'a>(run: &'a Run, score: ScoreName, scheme: &str) -> Result<&'a [f32], CreditError> {
    let name = match score {
        ScoreName::Auto => SCORE_NAMES.iter().copied().find(|n| run.nodes.scores.contains_key(*n)).unwrap_or("prm"),
        other => other.name(),
    };
    run.nodes.scores.get(name).map(Vec::as_slice).ok_or_else(|| CreditError::Unsupported {
        scheme: scheme.to_owned(),
        reason: format!("no step score `{name}` in this run"),
    })
}

/// Whether any trajectory has an outcome reward.
pub fn has_outcomes(run: &Run) -> bool {
    run.trajectories.reward.iter().any(|r| !r.is_nan())
}

/// `Yes` when some step has a reward of its own (`env_reward`), else why not.
pub fn supports_step_rewards(run: &Run) -> Support {
    if run.nodes.env_reward.iter().any(|r| r.is_finite()) {
        Support::Yes
    } else {
        Support::No("needs the environment's reward on steps (`env_reward`)".to_owned())
    }
}

/// A trajectory's agent role: its first step's role, `default` without one (rLLM's and prime-rl's
/// multi-agent runs give each agent's steps its role).
pub fn trajectory_role(run: &Run, t: crate::model::TrajectoryId) -> &str {
    run.trajectories
        .path(t)
        .iter()
        .map(|n| run.label(run.nodes.role[n.index()]))
        .find(|r| !r.is_empty())
        .unwrap_or("default")
}

/// A trajectory's episode: its key up to the first `/`. A log whose episodes hold several traces
/// (verifiers: a proposer's trace and its solvers', two players) keys each trace's rollouts
/// `episode/trace[/branch]`; a key without `/` is an episode of its own.
pub fn trajectory_episode(run: &Run, t: crate::model::TrajectoryId) -> &str {
    let key = run.trajectory_key(t);
    key.split_once('/').map_or(key, |(episode, _)| episode)
}

/// The traces of group `g` in the group's order, each as the rollouts it holds: a tree record's
/// rollouts make one trace (its first rollout stands for it: prime-rl scores a trace once, whatever
/// its branches), any other rollout is a trace of its own. Rollouts without a finite outcome are
/// left out.
pub fn group_traces(run: &Run, g: crate::model::GroupId) -> Vec<Vec<crate::model::TrajectoryId>> {
    let tr = &run.trajectories;
    let mut traces: Vec<Vec<crate::model::TrajectoryId>> = Vec::new();
    let mut trees: Vec<(crate::model::TreeId, usize)> = Vec::new();
    for &t in run.groups.members(g) {
        if !tr.reward[t.index()].is_finite() {
            continue;
        }
        let tree = tr.tree[t.index()];
        if let Some(&(_, i)) = trees.iter().find(|(id, _)| !tree.is_none() && *id == tree) {
            traces[i].push(t);
        } else {
            trees.push((tree, traces.len()));
            traces.push(vec![t]);
        }
    }
    traces
}

/// Gives every step of each of `trajectories` the advantage `value` (a Python float: a float32 in
/// training).
pub fn fill_steps(step: &mut [f32], run: &Run, trajectories: &[crate::model::TrajectoryId], value: f64) {
    for &t in trajectories {
        for p in run.trajectories.path_range(t) {
            step[p] = value as f32;
        }
    }
}

/// The step score holding the mean log-probability of the gold answer's tokens given the context
/// before the step (IGPO's and TRACE's probe; docs/FORMAT.md).
pub const GOLD_LOGPROB: &str = "gold_logprob";

/// `Yes` when the run has outcome rewards and some step a [`GOLD_LOGPROB`] score, else why not.
pub fn supports_gold_logprob(run: &Run) -> Support {
    if !has_outcomes(run) {
        return Support::No("needs outcome rewards".to_owned());
    }
    match run.nodes.scores.get(GOLD_LOGPROB) {
        Some(column) if column.iter().any(|v| v.is_finite()) => Support::Yes,
        _ => Support::No(format!("needs the gold answer's log-probability before each step (`{GOLD_LOGPROB}`)")),
    }
}

/// `Yes` when the run has outcome rewards, else why not.
pub fn supports_outcomes(run: &Run) -> Support {
    if has_outcomes(run) { Support::Yes } else { Support::No("needs outcome rewards".to_owned()) }
}

/// One outcome advantage per trajectory (`NaN` where the outcome is missing), and each group's
/// mean and std (indexed by group) for the explanation terms
/// ([`crate::credit::kernels::outcome::group_advantages`] over each group).
pub fn outcome_advantages(
    run: &Run,
    options: crate::credit::kernels::outcome::OutcomeOptions,
) -> (Vec<f32>, Vec<[f32; 2]>) {
    use crate::credit::kernels::outcome::group_advantages;
    let tr = &run.trajectories;
    let mut advantage = vec![f32::NAN; tr.len()];
    let mut stats = vec![[f32::NAN; 2]; run.groups.len()];
    let (mut rewards, mut valid, mut out) = (Vec::new(), Vec::new(), Vec::new());
    for g in run.groups.ids() {
        let members = run.groups.members(g);
        rewards.clear();
        rewards.extend(members.iter().map(|t| tr.reward[t.index()]));
        out.clear();
        out.resize(members.len(), f32::NAN);
        stats[g.index()] = group_advantages(&rewards, options, &mut valid, &mut out);
        for (t, &a) in members.iter().zip(&out) {
            advantage[t.index()] = a;
        }
    }
    (advantage, stats)
}

/// The optimal token baseline needs token logprobs and Σπ².
pub fn supports_token_baseline(run: &Run) -> Support {
    if run.tokens.logprob.is_none() || run.tokens.sum_pi_squared.is_none() {
        return Support::No(
            "needs token logprobs and `sum_pi_squared` (verl actor.calculate_sum_pi_squared)".to_owned(),
        );
    }
    supports_rewards(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two trajectories; as chains of their own steps, or sharing a root (a tree).
    fn two_paths(shared_root: bool) -> Run {
        use crate::model::{NewGroup, NewStep, NewTokens, Outcome, RunBuilder, TreeId};
        let mut b = RunBuilder::new("t", "test");
        let group = b.add_group(&NewGroup { key: "g", ..NewGroup::default() }).0;
        let step = |x: f32| NewStep { scores: vec![("prm", x)], ..NewStep::default() };
        let root = b.add_node(group, NodeId::NONE, &step(0.5));
        let a = b.add_node(group, root, &step(0.25));
        let other_root = if shared_root { root } else { b.add_node(group, NodeId::NONE, &step(0.75)) };
        let c = b.add_node(group, other_root, &step(1.0));
        let outcome = Outcome { reward: Some(1.0), ..Outcome::default() };
        b.add_trajectory("a", group, TreeId::NONE, a, &outcome, &NewTokens::default());
        b.add_trajectory("c", group, TreeId::NONE, c, &outcome, &NewTokens::default());
        b.finish()
    }

    #[test]
    fn a_column_is_used_in_place_only_when_paths_are_the_nodes_in_order() {
        let chains = two_paths(false);
        assert!(chains.trajectories.paths_in_node_order);
        let column = &chains.nodes.scores["prm"];
        let along = path_column(&chains, column);
        assert!(matches!(along, Cow::Borrowed(_)));
        assert_eq!(&*along, &[0.5, 0.25, 0.75, 1.0]);
        let tree = two_paths(true);
        assert!(!tree.trajectories.paths_in_node_order);
        let along = path_column(&tree, &tree.nodes.scores["prm"]);
        assert!(matches!(along, Cow::Owned(_)));
        // The shared root appears on both paths.
        assert_eq!(&*along, &[0.5, 0.25, 0.5, 1.0]);
        give_path_column(along);
    }
}
