//! GiGPO (`gigpo`): episode-level group advantage plus ω × a step-level advantage over the steps of
//! a group that share a state key (anchor state), `A = A^E + ω · A^S`.

use std::sync::LazyLock;

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

/// Mean and unbiased std of weighted values (each counted `w` times), with verl's singleton
/// rule (fewer than two give mean 0, std 1); the sums in `f64`.
fn weighted_stats(values: impl Iterator<Item = (f64, f64)> + Clone) -> [f32; 2] {
    let (n, sum) = values.clone().fold((0.0, 0.0), |(n, sum), (v, w)| (n + w, sum + w * v));
    if n < 2.0 {
        return [0.0, 1.0];
    }
    let mean = sum / n;
    let sq: f64 = values.map(|(v, w)| w * (v - mean).powi(2)).sum();
    [mean as f32, (sq / (n - 1.0)).sqrt() as f32]
}

fn compute(run: &Run, params: &Params) -> Credit {
    let tr = &run.trajectories;
    let nodes = &run.nodes;
    let gamma = params.f64("gamma") as f32;
    let eps = params.f64("epsilon") as f32;
    let omega = params.f64("omega") as f32;
    let std_mode = params.choice("mode") == "mean_std_norm";
    let per_step = params.choice("stats") != "trajectories";
    // The env rewards in path order, when the run logs any.
    let env = nodes.env_reward.iter().any(|r| !r.is_nan()).then(|| super::common::path_column(run, &nodes.env_reward));
    let mut terms = Terms::for_rows("A^E + ω·A^S (anchor-state group)", &["R", "A^E", "ω"], tr.len());
    // Group by group, in buffers that stay in cache: the discounted step returns and episode
    // rewards of its members, the episode statistics, the anchor-state groups (steps sorted by
    // state key; a run without keys has none and only the episode term), then its members'
    // credit. When the groups follow each other in trajectory order, the output is written in
    // order with no fill first.
    // Runs of consecutive groups on their own threads (`par::by_groups`).
    let (step, _) = super::par::by_groups(run, &mut terms, |groups, step, terms| {
        let (mut returns, mut episode, mut rewards, mut local) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut keyed, mut a_step): (Vec<(Sym, u32)>, Vec<f32>) = (Vec::new(), Vec::new());
        let mut anchors = AnchorStates::new(run.labels.len());
        for g in groups.map(crate::model::GroupId::from_index) {
            let members = run.groups.members(g);
            // The members' step rewards (env rewards, or the outcome at the last step; missing
            // counts 0), then their discounted returns (four paths at a time, see `rows_backward`)
            // and episode rewards; `local[i]` is where member i's steps start in these buffers.
            local.clear();
            local.push(0);
            rewards.clear();
            let zero_missing = |r: f32| if r.is_nan() { 0.0 } else { r };
            for &t in members {
                let range = tr.path_range(t);
                if let Some(env) = &env {
                    rewards.extend(env[range].iter().copied().map(zero_missing));
                } else if !range.is_empty() {
                    rewards.extend(std::iter::repeat_n(0.0, range.len() - 1));
                    rewards.push(zero_missing(tr.reward[t.index()]));
                }
                local.push(rewards.len());
            }
            returns.clear();
            episode.clear();
            super::batch::rows_backward(
                &mut returns,
                0.0,
                members.len(),
                |i| local[i]..local[i + 1],
                |_| (0.0f32, 0.0f32),
                #[inline(always)]
                |(running, total), _, p| {
                    let r = rewards[p];
                    *total += r;
                    *running = r + gamma * *running;
                    *running
                },
                |_, (_, total)| episode.push(total),
            );
            // Episode statistics over the step rows (each trajectory's R once per step, as the code
            // does) or over the trajectories (the paper): weighted, in f64.
            let weight = |i: usize| if per_step { (local[i + 1] - local[i]) as f64 } else { 1.0 };
            let [mean, std] = weighted_stats(episode.iter().enumerate().map(|(i, &r)| (f64::from(r), weight(i))));
            // Anchor-state groups: the group's steps with a state key, sorted by key (steps of one
            // key keep their order), each run of one key normalized together.
            a_step.clear();
            a_step.resize(returns.len(), 0.0);
            keyed.clear();
            let mut local = 0u32;
            let state_key = &nodes.state_key;
            for &t in members {
                let range = tr.path_range(t);
                let mut push = |k: usize, key: Sym| {
                    if key.is_some() {
                        keyed.push((key, local + k as u32));
                    }
                };
                if tr.paths_in_node_order {
                    // The path's nodes are its positions: no node ids to read. A path without a
                    // key (tests without a branch per step) has nothing to add; one with a key on
                    // every step adds them all in one extend (no test or room check per step).
                    let keys = &state_key[range.clone()];
                    let (any, all) =
                        keys.iter().fold((false, true), |(any, all), key| (any | key.is_some(), all & key.is_some()));
                    if all {
                        keyed.extend(keys.iter().enumerate().map(|(k, &key)| (key, local + k as u32)));
                    } else if any {
                        keys.iter().enumerate().for_each(|(k, &key)| push(k, key));
                    }
                } else {
                    tr.path(t).iter().enumerate().for_each(|(k, &node)| push(k, state_key[node.index()]));
                }
                local += range.len() as u32;
            }
            // Each anchor state with two steps or more normalized together (a single step has
            // mean = its own value: A^S = 0).
            anchors.normalize(&keyed, &returns, &mut a_step, |x, m, s| norm(x, m, s, std_mode, eps));
            let mut local = 0;
            for (&t, &r) in members.iter().zip(&episode) {
                let a_episode = norm(r, mean, std, std_mode, eps);
                let range = tr.path_range(t);
                let credit = a_step[local..local + range.len()].iter().map(|&a| a_episode + omega * a);
                step.write(range.clone(), credit);
                local += range.len();
                terms.set(t.index(), &[f64::from(r), f64::from(a_episode), f64::from(omega)]);
            }
        }
    });
    if let Some(env) = env {
        super::common::give_path_column(env);
    }
    Credit { step, token: None, token_returns: None, terms, level: Some(super::Level::Step) }
}

/// A group's anchor states: each state key's steps normalized by the mean and unbiased std of
/// their returns, as `grpo::mean_std` takes them over the state's steps in step order, without
/// sorting or gathering the steps (a comparison sort of a group's steps by key was most of GiGPO's
/// time). Each key gets a slot the first time it is seen (a table by symbol, reset for the keys
/// used after each group); the sums run per slot over the steps in step order, so each state's
/// additions come in the same order as over its gathered steps.
struct AnchorStates {
    slot_of: Vec<u32>,
    keys: Vec<Sym>,
    slots: Vec<u32>,
    count: Vec<u32>,
    sum: Vec<f32>,
    sum64: Vec<f64>,
    sq: Vec<f64>,
    mean: Vec<f32>,
    std: Vec<f32>,
}

impl AnchorStates {
    fn new(labels: usize) -> Self {
        Self {
            slot_of: vec![u32::MAX; labels + 1],
            keys: Vec::new(),
            slots: Vec::new(),
            count: Vec::new(),
            sum: Vec::new(),
            sum64: Vec::new(),
            sq: Vec::new(),
            mean: Vec::new(),
            std: Vec::new(),
        }
    }

    /// `out[i] = norm(values[i], mean, std)` for every step `i` of `keyed` ((key, step) in step
    /// order) whose key has two steps or more, with that key's mean and std.
    fn normalize(
        &mut self,
        keyed: &[(Sym, u32)],
        values: &[f32],
        out: &mut [f32],
        norm: impl Fn(f32, f32, f32) -> f32,
    ) {
        // (Keys are labels of the run: the last slot only guards against one that is not.)
        let last = self.slot_of.len() - 1;
        for &key in &self.keys {
            self.slot_of[key.index().min(last)] = u32::MAX;
        }
        self.keys.clear();
        self.slots.clear();
        assign_slots(keyed, &mut self.slot_of, &mut self.keys, &mut self.slots);
        let n = self.keys.len();
        for column in [&mut self.sum64, &mut self.sq] {
            column.clear();
            column.resize(n, 0.0);
        }
        self.sum.clear();
        self.sum.resize(n, 0.0);
        self.count.clear();
        self.count.resize(n, 0);
        // Each pass a function of its own: its slices are then arguments the compiler knows do
        // not overlap, and it keeps their addresses in registers instead of reloading them
        // from `self` after every store.
        add_sums(&self.slots, keyed, values, &mut self.sum, &mut self.sum64, &mut self.count);
        self.mean.clear();
        self.mean.extend(self.sum.iter().zip(&self.count).map(|(&sum, &count)| sum / count as f32));
        for (mean64, &count) in self.sum64.iter_mut().zip(&self.count) {
            *mean64 /= f64::from(count);
        }
        add_squares(&self.slots, keyed, values, &self.sum64, &mut self.sq);
        self.std.clear();
        self.std
            .extend(self.sq.iter().zip(&self.count).map(|(&sq, &count)| (sq / (f64::from(count) - 1.0)).sqrt() as f32));
        write_normalized(&self.slots, keyed, values, &self.count, [&self.mean, &self.std], out, norm);
    }
}

/// Gives each key of `keyed` a slot, the first time it is seen (`slot_of` by key symbol, its last
/// entry for a key past the table), and each step its key's slot.
fn assign_slots(keyed: &[(Sym, u32)], slot_of: &mut [u32], keys: &mut Vec<Sym>, slots: &mut Vec<u32>) {
    let last = slot_of.len() - 1;
    // Written in place (a push per step checks for room and reloads where the vector is).
    slots.resize(keyed.len(), 0);
    for (slot, &(key, _)) in slots.iter_mut().zip(keyed) {
        let entry = &mut slot_of[key.index().min(last)];
        if *entry == u32::MAX {
            *entry = keys.len() as u32;
            keys.push(key);
        }
        *slot = *entry;
    }
}

/// Per slot, the `f32` and `f64` sums and the count of its steps' values, in step order.
fn add_sums(
    slots: &[u32],
    keyed: &[(Sym, u32)],
    values: &[f32],
    sum: &mut [f32],
    sum64: &mut [f64],
    count: &mut [u32],
) {
    for (&slot, &(_, i)) in slots.iter().zip(keyed) {
        let (s, v) = (slot as usize, values[i as usize]);
        sum[s] += v;
        sum64[s] += f64::from(v);
        count[s] += 1;
    }
}

/// Per slot, Σ (value − mean)² over its steps, in step order.
fn add_squares(slots: &[u32], keyed: &[(Sym, u32)], values: &[f32], mean64: &[f64], sq: &mut [f64]) {
    for (&slot, &(_, i)) in slots.iter().zip(keyed) {
        let s = slot as usize;
        sq[s] += (f64::from(values[i as usize]) - mean64[s]).powi(2);
    }
}

/// `out[i] = norm(values[i], mean, std)` for each step whose slot has two steps or more.
fn write_normalized(
    slots: &[u32],
    keyed: &[(Sym, u32)],
    values: &[f32],
    count: &[u32],
    [mean, std]: [&[f32]; 2],
    out: &mut [f32],
    norm: impl Fn(f32, f32, f32) -> f32,
) {
    for (&slot, &(_, i)) in slots.iter().zip(keyed) {
        let s = slot as usize;
        if count[s] >= 2 {
            out[i as usize] = norm(values[i as usize], mean[s], std[s]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::grpo::mean_std;
    use super::*;

    #[test]
    fn anchor_states_normalize_each_keys_steps_as_mean_std_over_them() {
        let [a, b, c] = [Sym::from_index(5), Sym::from_index(0), Sym::from_index(9)];
        let values: Vec<f32> = (0..8).map(|i| (i * 37 % 11) as f32 / 3.0 - 1.0).collect();
        let norm = |x: f32, m: f32, s: f32| (x - m) / (s + 1e-6);
        let mut anchors = AnchorStates::new(10);
        for keyed in [vec![(a, 0), (b, 1), (a, 2), (c, 4), (b, 5), (a, 7)], vec![(c, 0), (a, 3), (c, 6)], vec![]] {
            let mut out = vec![f32::NAN; values.len()];
            anchors.normalize(&keyed, &values, &mut out, norm);
            for (i, &(key, step)) in keyed.iter().enumerate() {
                // The key's steps gathered in step order, as the sorted form did.
                let same: Vec<f32> =
                    keyed.iter().filter(|(k, _)| *k == key).map(|&(_, j)| values[j as usize]).collect();
                let want = if same.len() < 2 {
                    f32::NAN
                } else {
                    let (m, s) = mean_std(&same, true);
                    norm(values[step as usize], m, s)
                };
                let got = out[step as usize];
                assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "{i}: {got} vs {want}");
            }
        }
    }
}
