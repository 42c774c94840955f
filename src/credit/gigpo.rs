//! GiGPO (`gigpo`): episode-level group advantage plus ω × a step-level advantage over the steps of
//! a group that share a state key (anchor state), `A = A^E + ω · A^S`.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::grpo::{group_stats, mean_std};
use super::{Credit, CreditError, Family, ParamSpec, Params, Scheme, SchemeInfo, SourceQuality, Support, Terms};
use crate::model::{Run, Sym};

/// GiGPO.
pub struct Gigpo;

static INFO: SchemeInfo = SchemeInfo {
    id: "gigpo",
    family: Family::Process,
    display_name: "GiGPO (group-in-group)",
    citation: "Feng et al. 2025, GiGPO (arXiv 2505.10978); verl-agent gigpo/core_gigpo.py",
    needs: "state keys on steps that repeat across the rollouts of a group, and env or outcome rewards",
    source: SourceQuality::FromCode(
        "zhangyun04/verl-agent@24dda38c49d622f3eadaedf8737e5e9107de78c7 (fork of langfengQ/verl-agent)",
    ),
};

static PARAMS: LazyLock<Vec<ParamSpec>> = LazyLock::new(|| {
    vec![
        ParamSpec::float("omega", 0.0, 5.0, "1", "weight of the step-level advantage (step_advantage_w)"),
        ParamSpec::choice(
            "mode",
            &["mean_norm", "mean_std_norm"],
            "mean_norm",
            "subtract the mean, or also divide by std + ε",
        ),
        ParamSpec::float("gamma", 0.0, 1.0, "0.95", "discount of the step returns"),
        ParamSpec::choice(
            "stats",
            &["steps", "trajectories"],
            "steps",
            "episode statistics over step rows (the code: longer trajectories weigh more) or one sample per trajectory (the paper)",
        ),
        ParamSpec::float("epsilon", 0.0, 1.0, "0.000001", "added to the std"),
    ]
});

impl Scheme for Gigpo {
    fn info(&self) -> &SchemeInfo {
        &INFO
    }
    fn params(&self) -> &[ParamSpec] {
        &PARAMS
    }
    fn supports(&self, run: &Run) -> Support {
        if !run.nodes.state_key.iter().any(|s| s.is_some()) {
            return Support::No("needs state keys on steps (`state`)".to_owned());
        }
        let has_env = run.nodes.env_reward.iter().any(|r| !r.is_nan());
        if !has_env && !run.trajectories.reward.iter().any(|r| !r.is_nan()) {
            return Support::No("needs env rewards or outcome rewards".to_owned());
        }
        Support::Yes
    }
    fn compute(&self, run: &Run, params: &Params) -> Result<Credit, CreditError> {
        Ok(compute(run, params))
    }
}

/// Normalises `x` against `(mean, std)` by `mode`.
fn norm(x: f32, mean: f32, std: f32, std_mode: bool, eps: f32) -> f32 {
    if std_mode { (x - mean) / (std + eps) } else { x - mean }
}

fn compute(run: &Run, params: &Params) -> Credit {
    let tr = &run.trajectories;
    let nodes = &run.nodes;
    let gamma = params.f64("gamma") as f32;
    let eps = params.f64("epsilon") as f32;
    let omega = params.f64("omega") as f32;
    let std_mode = params.choice("mode") == "mean_std_norm";
    let per_step = params.choice("stats") != "trajectories";
    let use_env = nodes.env_reward.iter().any(|r| !r.is_nan());
    // Per-step rewards and discounted step returns, aligned with the paths.
    let mut step_return = vec![0.0f32; tr.path_nodes.len()];
    let mut episode = vec![0.0f32; tr.len()];
    for t in tr.ids() {
        let offset = tr.path_offsets[t.index()] as usize;
        let path = tr.path(t);
        let reward = |k: usize| -> f32 {
            if use_env {
                let r = nodes.env_reward[path[k].index()];
                if r.is_nan() { 0.0 } else { r }
            } else if k + 1 == path.len() {
                let r = tr.reward[t.index()];
                if r.is_nan() { 0.0 } else { r }
            } else {
                0.0
            }
        };
        let mut running = 0.0;
        let mut total = 0.0;
        for k in (0..path.len()).rev() {
            running = reward(k) + gamma * running;
            total += reward(k);
            step_return[offset + k] = running;
        }
        episode[t.index()] = total;
    }
    let mut step = super::pool::filled(tr.path_nodes.len(), f32::NAN);
    let mut terms = Terms::for_rows("A^E + ω·A^S (anchor-state group)", &["R", "A^E", "ω"], tr.len());
    for g in run.groups.ids() {
        let members = run.groups.members(g);
        // Episode statistics: each trajectory's R once per step row (code), or once (paper).
        let samples: Vec<f32> = members
            .iter()
            .flat_map(|&t| std::iter::repeat_n(episode[t.index()], if per_step { tr.num_steps(t) } else { 1 }))
            .collect();
        let (mean, std) = group_stats(&samples);
        // Anchor-state groups within the group.
        let mut by_state: HashMap<Sym, Vec<f32>> = HashMap::new();
        for &t in members {
            let offset = tr.path_offsets[t.index()] as usize;
            for (k, &node) in tr.path(t).iter().enumerate() {
                let key = nodes.state_key[node.index()];
                if key.is_some() {
                    by_state.entry(key).or_default().push(step_return[offset + k]);
                }
            }
        }
        let state_stats: HashMap<Sym, (f32, f32, usize)> = by_state
            .into_iter()
            .map(|(key, values)| {
                let (m, s) = if values.len() < 2 { (values[0], 1.0) } else { mean_std(&values, true) };
                (key, (m, s, values.len()))
            })
            .collect();
        for &t in members {
            let a_episode = norm(episode[t.index()], mean, std, std_mode, eps);
            let offset = tr.path_offsets[t.index()] as usize;
            for (k, &node) in tr.path(t).iter().enumerate() {
                let g_t = step_return[offset + k];
                let a_step = match state_stats.get(&nodes.state_key[node.index()]) {
                    // A singleton step group has mean = its own value: A^S = 0.
                    Some(&(m, s, n)) if n >= 2 => norm(g_t, m, s, std_mode, eps),
                    _ => 0.0,
                };
                step[offset + k] = a_episode + omega * a_step;
            }
            terms.set(t.index(), &[f64::from(episode[t.index()]), f64::from(a_episode), f64::from(omega)]);
        }
    }
    Credit { step, token: None, token_returns: None, terms, level: Some(super::Level::Step) }
}
