//! GiGPO (`gigpo`): episode-level group advantage plus ω × a step-level advantage over the steps of
//! a group that share a state key (anchor state), `A = A^E + ω · A^S`.

use crate::credit::data::moments::weighted_stats;
use crate::credit::params::declare::{choice, decl, params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::{Run, StateSlots, Sym};

scheme!(
    /// GiGPO.
    Gigpo,
    knobs: Knobs,
    info: SchemeInfo {
        id: "gigpo",
        family: Family::Process,
        display_name: "GiGPO (group-in-group)",
        citation: "Feng et al. 2025, GiGPO (arXiv 2505.10978); verl-agent gigpo/core_gigpo.py",
        needs: "state keys on steps that repeat across the rollouts of a group, and env or outcome rewards",
        source: SourceQuality::FromCode(
            "zhangyun04/verl-agent@24dda38c49d622f3eadaedf8737e5e9107de78c7 (fork of langfengQ/verl-agent)",
        ),
        checked: "verl-agent's own code (tests/golden/gigpo/cases.json, made by its generate.py from zhangyun04/verl-agent 24dda38: both modes, ω, γ, invalid-action penalties, statistics over step rows and per trajectory, groups of one); the worked example of reference/credit-schemes-process.md",
    },
);

choice! {
    enum Mode { MeanNorm = "mean_norm", MeanStdNorm = "mean_std_norm" }
    enum Stats { Steps = "steps", Trajectories = "trajectories" }
}

params! {
    pub struct Knobs {
        omega: f64 = range(0.0, 5.0, "1", "weight of the step-level advantage (step_advantage_w)"),
        mode: Mode = decl("mean_norm", "subtract the mean, or also divide by std + ε"),
        gamma: f64 = range(0.0, 1.0, "0.95", "discount of the step returns"),
        stats: Stats = decl("steps", "episode statistics over step rows (the code: longer trajectories weigh more) or one sample per trajectory (the paper)"),
        epsilon: f64 = range(0.0, 1.0, "0.000001", "added to the std"),
        invalid_penalty: f64 = range(0.0, 10.0, "0.1", "κ, invalid_action_penalty_coef: a step logged with `invalid_action` scores R − κ as its episode row and G − κ as its step return (not carried to earlier steps)"),
    }
}

impl Typed for Gigpo {
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
    fn credit(&self, run: &Run, knobs: &Knobs, explain: bool) -> Result<Credit, CreditError> {
        Ok(compute(run, knobs, run.state_slots(), explain))
    }
}

/// A group's members as rows: their episode rewards, where each one's steps start in the group's
/// buffers, and whether the episode statistics are over step rows.
struct Rows<'a> {
    episode: &'a [f32],
    local: &'a [usize],
    per_step: bool,
}

impl Rows<'_> {
    /// Takes κ off the step return of every invalid row.
    fn penalise<'f>(&self, returns: &mut [f32], flags: &impl Fn(usize) -> Option<&'f [bool]>, kappa: f32) {
        for i in 0..self.episode.len() {
            for (k, &bad) in flags(i).into_iter().flatten().enumerate() {
                if bad {
                    returns[self.local[i] + k] -= kappa;
                }
            }
        }
    }

    /// Episode statistics over the step rows (each trajectory's R once per step, as the code
    /// does) or over the trajectories (the paper): weighted, in f64. With a penalty κ (and the
    /// rows' flags), each row its own score; per trajectory, the first row's (as the code takes it).
    fn stats<'f>(&self, flags: &impl Fn(usize) -> Option<&'f [bool]>, penalty: Option<f32>) -> [f32; 2] {
        let (episode, local, per_step) = (self.episode, self.local, self.per_step);
        let Some(kappa) = penalty else {
            let weight = |i: usize| if per_step { (local[i + 1] - local[i]) as f64 } else { 1.0 };
            return weighted_stats(episode.iter().enumerate().map(|(i, &r)| (f64::from(r), weight(i))));
        };
        let row = |i: usize, k: usize| {
            let bad = flags(i).is_some_and(|f| f.get(k).copied().unwrap_or(false));
            f64::from(episode[i] - if bad { kappa } else { 0.0 })
        };
        let rows = (0..episode.len()).flat_map(|i| {
            let n = if per_step { local[i + 1] - local[i] } else { usize::from(local[i + 1] > local[i]) };
            (0..n).map(move |k| (i, k))
        });
        weighted_stats(rows.map(|(i, k)| (row(i, k), 1.0)))
    }
}

/// Normalises `x` against `(mean, std)` by `mode`.
fn norm(x: f32, mean: f32, std: f32, std_mode: bool, eps: f32) -> f32 {
    if std_mode { (x - mean) / (std + eps) } else { x - mean }
}

/// GiGPO on `run`, its state keys read from `slots` for the groups it codes (see
/// `Run::state_slots`) and from the nodes for the others; with `explain`, each step's own terms too.
#[expect(
    clippy::too_many_lines,
    reason = "one pass per group while its buffers are in cache: returns, penalties, episode and anchor statistics, credit, in order"
)]
fn compute(run: &Run, knobs: &Knobs, slots: &StateSlots, explain: bool) -> Credit {
    let tr = &run.trajectories;
    let nodes = &run.nodes;
    let gamma = knobs.gamma as f32;
    let eps = knobs.epsilon as f32;
    let omega = knobs.omega as f32;
    let std_mode = knobs.mode == Mode::MeanStdNorm;
    let per_step = knobs.stats != Stats::Trajectories;
    let kappa = knobs.invalid_penalty as f32;
    // Which path positions are invalid actions, when any is and the penalty is on.
    let invalid: Option<Vec<bool>> = (kappa > 0.0
        && (0..nodes.len()).any(|n| nodes.invalid_action(crate::model::NodeId::from_index(n))))
    .then(|| tr.path_nodes.iter().map(|&n| nodes.invalid_action(n)).collect());
    let invalid = invalid.as_deref();
    // The env rewards in path order, when the run logs any.
    let env_column = nodes
        .env_reward
        .iter()
        .any(|r| !r.is_nan())
        .then(|| crate::credit::engine::inputs::path_column(run, &nodes.env_reward));
    // With `explain`, each step's own terms: its episode term (that of R − κ on an invalid
    // action's step), its discounted return G and its anchor state's mean, denominator (std + ε)
    // and weight (ω, or 0 for a state of one step or a step without a key).
    let formula = if std_mode {
        "A^E of the step + (G − state mean) / state denominator × state weight; A^E = (R − mean)/(std + ε) over the group's episodes"
    } else {
        "A^E of the step + (G − state mean) × state weight; A^E = R − mean over the group's episodes"
    };
    let mut terms = Terms::for_rows(formula, &["R", "A^E", "ω"], tr.len()).with_step_values(
        &["A^E of the step", "G", "state mean", "state denominator", "state weight"],
        if explain { tr.path_nodes.len() } else { 0 },
    );
    // Group by group, in buffers that stay in cache: the discounted step returns and episode
    // rewards of its members, the episode statistics, the anchor-state statistics (a slot per
    // state key; steps without a key have none and only the episode term), then its members'
    // credit in one pass. When the groups follow each other in trajectory order, the output is
    // written in order with no fill first. Runs of consecutive groups on their own threads
    // (`par::by_groups`); `move`, so the scalars are copied into the closure (through references
    // the compiler reloads them after every store).
    let env = env_column.as_deref();
    let (step, _) = crate::credit::engine::par::by_groups(run, &mut terms, move |groups, step, terms| {
        let (mut returns, mut episode, mut rewards, mut local) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        // The key table of the groups the run does not code, made when the first one comes (it
        // is as long as the run's labels).
        let mut uncoded: Option<AnchorStates> = None;
        let mut coded_states = Box::new(CodedStates::default());
        for g in groups.map(crate::model::GroupId::from_index) {
            let members = run.groups.members(g);
            // The members' step rewards (env rewards, or the outcome at the last step; missing
            // counts 0), then their discounted returns (four paths at a time, see `rows_backward`)
            // and episode rewards; `local[i]` is where member i's steps start in these buffers.
            // (Reading the env rewards where they are, each member at its own offset, instead of
            // copying them first measured slower.)
            local.clear();
            local.push(0);
            rewards.clear();
            let zero_missing = |r: f32| if r.is_nan() { 0.0 } else { r };
            for &t in members {
                let range = tr.path_range(t);
                if let Some(env) = env {
                    rewards.extend(env[range].iter().copied().map(zero_missing));
                } else if !range.is_empty() {
                    rewards.extend(std::iter::repeat_n(0.0, range.len() - 1));
                    rewards.push(zero_missing(tr.reward[t.index()]));
                }
                local.push(rewards.len());
            }
            // Into a slice of the group's length: a `Vec` would be reloaded after every store.
            returns.clear();
            returns.resize(rewards.len(), 0.0);
            episode.clear();
            // `visit` holds its slice and γ by value: nothing read through a reference after
            // each store. Out of line (`batch::OUTLINED`): the faster walk here, measured.
            let rewards = &rewards[..];
            crate::credit::data::batch::rows_backward(
                crate::credit::data::batch::OUTLINED,
                &mut returns[..],
                0.0,
                members.len(),
                |i| local[i]..local[i + 1],
                |_| (0.0f32, 0.0f32),
                #[inline(always)]
                move |(running, total), _, p| {
                    let r = rewards[p];
                    *total += r;
                    *running = r + gamma * *running;
                    *running
                },
                |_, (_, total)| episode.push(total),
            );
            // Invalid actions: the row's episode score is R − κ and its step return G − κ (not
            // carried to the steps before it). The rows' flags, if the group has any.
            let flags = |i: usize| invalid.map(|f| &f[tr.path_range(members[i])]);
            let penalised = (0..members.len()).any(|i| flags(i).is_some_and(|f| f.contains(&true)));
            let rows = Rows { episode: &episode, local: &local, per_step };
            if penalised {
                rows.penalise(&mut returns, &flags, kappa);
            }
            let [mean_e, std_e] = rows.stats(&flags, penalised.then_some(kappa));
            // Anchor-state groups: each state with two steps or more is normalized over its
            // steps (a single step has mean = its own value: A^S = 0). A group whose state keys
            // the run codes as a byte per step (`Run::state_slots`: 255 distinct keys or fewer)
            // reads them; any other gives each step its key's slot here (a step without a key the
            // sink, slot 0), in step order.
            let coded = slots.coded(g);
            if coded {
                let parts = || members.iter().enumerate().map(|(i, &t)| (tr.path_range(t), local[i]..local[i + 1]));
                coded_states.normalize(
                    slots.counts(g),
                    || parts().map(|(path, part)| (&slots.codes[path], &returns[part])),
                    std_mode,
                    eps,
                    omega,
                );
            } else {
                let anchors = uncoded.get_or_insert_with(|| AnchorStates::new(run.labels.len()));
                anchors.clear();
                let state_key = &nodes.state_key;
                for (i, &t) in members.iter().enumerate() {
                    let values = &returns[local[i]..local[i + 1]];
                    if tr.paths_in_node_order {
                        // The path's nodes are its positions: no node ids to read.
                        anchors.push_keys(&state_key[tr.path_range(t)], values);
                    } else {
                        anchors.push_keys_of(tr.path(t), state_key, values);
                    }
                }
                anchors.normalize(&returns, std_mode, eps, omega);
            }
            let mut local = 0;
            for (i, (&t, &r)) in members.iter().zip(&episode).enumerate() {
                let a_episode = norm(r, mean_e, std_e, std_mode, eps);
                let range = tr.path_range(t);
                let part = local..local + range.len();
                let values = &returns[part.clone()];
                let rule = Rule { a_episode, std_mode };
                let bad_rows = flags(i).filter(|f| penalised && f.contains(&true));
                // A group not coded has its key table (made above); a coded one reads the codes.
                // An invalid row's episode term is that of R − κ: the written one less κ/F
                // (worked out only for a row with invalid actions).
                let shift =
                    if bad_rows.is_some() { norm(r - kappa, mean_e, std_e, std_mode, eps) - a_episode } else { 0.0 };
                let own = Own { start: range.start, values, a_episode, bad: bad_rows, shift };
                if let Some(anchors) = uncoded.as_ref().filter(|_| !coded) {
                    let index = &anchors.slots[part];
                    rule.write(step, range.clone(), index, values, &anchors.states[..], |s| s as usize);
                    if explain {
                        own.write(terms, |k| anchors.states[index[k] as usize]);
                    }
                } else {
                    let codes = &slots.codes[range.clone()];
                    rule.write(step, range.clone(), codes, values, &coded_states.states, usize::from);
                    if explain {
                        own.write(terms, |k| coded_states.states[usize::from(codes[k])]);
                    }
                }
                if let Some(bad) = bad_rows {
                    for (k, _) in bad.iter().enumerate().filter(|(_, b)| **b) {
                        step.add(range.start + k, shift);
                    }
                }
                local += range.len();
                terms.set(t.index(), &[f64::from(r), f64::from(a_episode), f64::from(omega)]);
            }
        }
    });
    if let Some(env) = env_column {
        crate::credit::engine::inputs::give_path_column(env);
    }
    Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) }
}

/// How a step's credit comes from its state's statistics: `A^E + ω · A^S`, with
/// `A^S = (v − mean) / (std + ε)` (or `v − mean`), or 0 for a state of one step (the state's row
/// holds ω, or 0: [`state_row`]).
#[derive(Clone, Copy)]
/// One path's own terms, for `compute_explained`: from path position `start`, each step's
/// return in `values`, its episode term (`a_episode`, plus `shift` where `bad` flags the step).
struct Own<'a> {
    start: usize,
    values: &'a [f32],
    a_episode: f32,
    bad: Option<&'a [bool]>,
    shift: f32,
}

impl Own<'_> {
    /// Writes each step's terms, its anchor state's (mean, denominator, weight) from `state(k)`.
    fn write(&self, terms: &mut crate::credit::data::parts::TermRows<'_>, state: impl Fn(usize) -> [f32; 3]) {
        for (k, &g) in self.values.iter().enumerate() {
            let invalid = self.bad.is_some_and(|bad| bad.get(k).copied().unwrap_or(false));
            let episode = self.a_episode + if invalid { self.shift } else { 0.0 };
            let [mean, denominator, weight] = state(k);
            terms.set_step(self.start + k, &[episode, g, mean, denominator, weight].map(f64::from));
        }
    }
}

struct Rule {
    a_episode: f32,
    std_mode: bool,
}

impl Rule {
    /// Writes the credit of one path's steps (`range` of the output) from their values and their
    /// states' (mean, denominator, weight), a state per step by `slot(index[k])`: two loops, so that
    /// the mean form has no division. With a table of 256 and byte indices the compiler checks no
    /// bound.
    #[inline(always)]
    fn write<I: Copy, S: std::ops::Index<usize, Output = [f32; 3]> + ?Sized>(
        self,
        step: &mut crate::credit::data::parts::StepPart<'_>,
        range: std::ops::Range<usize>,
        index: &[I],
        values: &[f32],
        states: &S,
        slot: impl Fn(I) -> usize,
    ) {
        let Self { a_episode, std_mode } = self;
        let steps = index.iter().zip(values);
        if std_mode {
            step.write(
                range,
                steps.map(|(&i, &v)| {
                    let [mean, denominator, weight] = states[slot(i)];
                    a_episode + (v - mean) / denominator * weight
                }),
            );
        } else {
            step.write(
                range,
                steps.map(|(&i, &v)| {
                    let [mean, _, weight] = states[slot(i)];
                    a_episode + (v - mean) * weight
                }),
            );
        }
    }
}

/// A group's anchor states from the run's byte codes (`Run::state_slots`, which also counts each
/// slot's steps): per slot its sums and (mean, denominator, weight), in tables of 256 that byte codes
/// index without a bound check. The same statistics, in the same order, as [`AnchorStates`].
struct CodedStates {
    sum: [f32; 256],
    sum64: [f64; 256],
    sq: [f64; 256],
    states: [[f32; 3]; 256],
}

impl Default for CodedStates {
    fn default() -> Self {
        Self { sum: [0.0; 256], sum64: [0.0; 256], sq: [0.0; 256], states: [SINK; 256] }
    }
}

impl CodedStates {
    /// Each state's normalization over the group's steps: `parts()` gives each member's codes and
    /// values in step order; slots 1..=`counts.len()` are its states (`counts`: their steps, from
    /// `StateSlots::counts`), 0 the steps without one.
    fn normalize<'a, P: Iterator<Item = (&'a [u8], &'a [f32])>>(
        &mut self,
        counts: &[u32],
        parts: impl Fn() -> P,
        with_std: bool,
        eps: f32,
        weight: f32,
    ) {
        let used = counts.len() + 1;
        self.sum[..used].fill(0.0);
        for (codes, values) in parts() {
            for (&c, &v) in codes.iter().zip(values) {
                self.sum[usize::from(c)] += v;
            }
        }
        let count = |s: usize| counts.get(s.wrapping_sub(1)).copied().unwrap_or(0);
        if with_std {
            self.sum64[..used].fill(0.0);
            for (codes, values) in parts() {
                for (&c, &v) in codes.iter().zip(values) {
                    self.sum64[usize::from(c)] += f64::from(v);
                }
            }
            for (s, mean64) in self.sum64[..used].iter_mut().enumerate() {
                *mean64 /= f64::from(count(s));
            }
            self.sq[..used].fill(0.0);
            for (codes, values) in parts() {
                for (&c, &v) in codes.iter().zip(values) {
                    let c = usize::from(c);
                    self.sq[c] += (f64::from(v) - self.sum64[c]).powi(2);
                }
            }
        }
        self.states[0] = SINK;
        for s in 1..used {
            let sq = with_std.then(|| self.sq[s]);
            self.states[s] = state_row(count(s), self.sum[s], sq, eps, weight);
        }
    }
}

/// The row of a slot that no step is normalized by (the sink, a state of one step): 0 for any
/// finite value.
const SINK: [f32; 3] = [0.0, 1.0, 0.0];

/// A state's `(mean, denominator, weight)` from its count, `f32` sum and, with the std,
/// Σ (v − mean)²: `mean = sum / count` in `f32`, `denominator = std + ε` (unbiased std) or 1, and
/// the weight of its steps' term (ω); [`SINK`] for fewer than two steps. Multiplying by ω here,
/// instead of by a keep of 1 and then by ω, gives the same bits with one multiplication less per
/// step: a keep of 0 or 1 is exact, and ω · x = x · ω.
fn state_row(count: u32, sum: f32, sq: Option<f64>, eps: f32, weight: f32) -> [f32; 3] {
    if count < 2 {
        return SINK;
    }
    let denominator = sq.map_or(1.0, |sq| (sq / (f64::from(count) - 1.0)).sqrt() as f32 + eps);
    [sum / count as f32, denominator, weight]
}

/// A group's anchor states: each state key's steps normalized by the mean and unbiased std of
/// their returns, as `grpo::mean_std` takes them over the state's steps in step order, without
/// sorting or gathering the steps (a comparison sort of a group's steps by key was most of GiGPO's
/// time). Each key gets a slot the first time it is seen (a table by symbol, reset for the keys
/// used after each group) and each step its key's slot, in a column beside the step values; the
/// sums run per slot over the steps in step order, so each state's additions come in the same order
/// as over its gathered steps. Slot 0 is the sink of the steps without a key (and of a key past the
/// table, which a run's labels cannot be): it is never normalized.
struct AnchorStates {
    slot_of: Vec<u32>,
    keys: Vec<Sym>,
    slots: Vec<u32>,
    count: Vec<u32>,
    sum: Vec<f32>,
    sum64: Vec<f64>,
    sq: Vec<f64>,
    /// Per slot, what a step's value `v` becomes: `(v − mean) / denominator × weight` (ω, or 0).
    states: Vec<[f32; 3]>,
}

impl AnchorStates {
    fn new(labels: usize) -> Self {
        let mut slot_of = vec![u32::MAX; labels + 1];
        // The last entry: `NONE` and any key past the table, always the sink.
        slot_of[labels] = 0;
        Self {
            slot_of,
            keys: Vec::new(),
            slots: Vec::new(),
            count: vec![0],
            sum: vec![0.0],
            sum64: Vec::new(),
            sq: Vec::new(),
            states: Vec::new(),
        }
    }

    /// Starts a group: forgets the last one's keys, steps and sums.
    fn clear(&mut self) {
        for &key in &self.keys {
            self.slot_of[key.index()] = u32::MAX;
        }
        let used = self.keys.len() + 1;
        self.count[..used].fill(0);
        self.sum[..used].fill(0.0);
        self.keys.clear();
        self.slots.clear();
    }

    /// Room for `steps` more steps: their slots, and a count and sum for each (zero until used).
    fn grow(&mut self, steps: usize) -> std::ops::Range<usize> {
        let start = self.slots.len();
        let end = start + steps;
        self.slots.resize(end, 0);
        if self.count.len() <= end {
            self.count.resize(end + 1, 0);
            self.sum.resize(end + 1, 0.0);
        }
        start..end
    }

    /// The next steps' keys, in step order, with their values.
    fn push_keys(&mut self, keys: &[Sym], values: &[f32]) {
        let range = self.grow(keys.len());
        let slots = &mut self.slots[range];
        let (slot_of, seen) = (&mut self.slot_of, &mut self.keys);
        assign_slots(keys.iter().copied(), values, slot_of, seen, &mut self.count, &mut self.sum, slots);
    }

    /// The next steps' keys, read for `path`'s nodes from `state_key` (by node), with their values.
    fn push_keys_of(&mut self, path: &[crate::model::NodeId], state_key: &[Sym], values: &[f32]) {
        let range = self.grow(path.len());
        let slots = &mut self.slots[range];
        let keys = path.iter().map(|node| state_key[node.index()]);
        assign_slots(keys, values, &mut self.slot_of, &mut self.keys, &mut self.count, &mut self.sum, slots);
    }

    /// Each state's normalization over `values` (the values pushed, in the same order):
    /// `v − mean`, or with `with_std` `(v − mean) / (std + eps)` (unbiased std; a second pass
    /// over the values, as `grpo::mean_std`); a state of fewer than two steps gives 0.
    fn normalize(&mut self, values: &[f32], with_std: bool, eps: f32, weight: f32) {
        let n = self.keys.len() + 1;
        if with_std {
            // Each pass a function of its own: its slices are then arguments the compiler knows
            // do not overlap, and it keeps their addresses in registers instead of reloading
            // them from `self` after every store.
            self.sum64.clear();
            self.sum64.resize(n, 0.0);
            add_sums(&self.slots, values, &mut self.sum64);
            for (mean64, &count) in self.sum64.iter_mut().zip(&self.count) {
                *mean64 /= f64::from(count);
            }
            self.sq.clear();
            self.sq.resize(n, 0.0);
            add_squares(&self.slots, values, &self.sum64, &mut self.sq);
        }
        self.states.clear();
        self.states.push(SINK);
        let sq = |s: usize| with_std.then(|| self.sq[s]);
        self.states.extend((1..n).map(|s| state_row(self.count[s], self.sum[s], sq(s), eps, weight)));
    }
}

/// Gives each key of `keys` a slot (from 1), the first time it is seen (`slot_of` by key symbol,
/// its last entry, the sink 0, for `NONE` and any key past the table), writes each step's key's
/// slot to `slots`, and counts and sums (in `f32`, in step order) the values of each slot.
fn assign_slots(
    keys: impl Iterator<Item = Sym>,
    values: &[f32],
    slot_of: &mut [u32],
    seen: &mut Vec<Sym>,
    count: &mut [u32],
    sum: &mut [f32],
    slots: &mut [u32],
) {
    let last = slot_of.len() - 1;
    for ((slot, key), &v) in slots.iter_mut().zip(keys).zip(values) {
        let entry = &mut slot_of[key.index().min(last)];
        if *entry == u32::MAX {
            seen.push(key);
            *entry = seen.len() as u32;
        }
        let s = *entry as usize;
        *slot = s as u32;
        count[s] += 1;
        sum[s] += v;
    }
}

/// Per slot, the `f64` sum of its steps' values, in step order.
fn add_sums(slots: &[u32], values: &[f32], sum: &mut [f64]) {
    for (&slot, &v) in slots.iter().zip(values) {
        sum[slot as usize] += f64::from(v);
    }
}

/// Per slot, Σ (value − mean)² over its steps, in step order.
fn add_squares(slots: &[u32], values: &[f32], mean64: &[f64], sq: &mut [f64]) {
    for (&slot, &v) in slots.iter().zip(values) {
        let s = slot as usize;
        sq[s] += (f64::from(v) - mean64[s]).powi(2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credit::Params;
    use crate::credit::data::moments::mean_std;
    use crate::credit::params::declare::Declared as _;

    #[test]
    fn anchor_states_normalize_each_keys_steps_as_mean_std_over_them() {
        use crate::model::NodeId;
        let [a, b, c, none] = [Sym::from_index(5), Sym::from_index(0), Sym::from_index(9), Sym::NONE];
        let values: Vec<f32> = (0..8).map(|i| (i * 37 % 11) as f32 / 3.0 - 1.0).collect();
        let norm = |x: f32, m: f32, s: f32| (x - m) / (s + 1e-6);
        let mut anchors = AnchorStates::new(10);
        for keys in [[a, b, a, none, c, b, none, a], [c, none, none, a, none, none, c, none], [none; 8], [b; 8]] {
            // Half the steps by position, half through node ids (reversed, read back in order).
            anchors.clear();
            anchors.push_keys(&keys[..3], &values[..3]);
            let by_node: Vec<Sym> = keys[3..].iter().rev().copied().collect();
            let path: Vec<NodeId> = (0..5).rev().map(NodeId::from_index).collect();
            anchors.push_keys_of(&path, &by_node, &values[3..]);
            for with_std in [true, false] {
                anchors.normalize(&values, with_std, 1e-6, 1.0);
                for (i, (&key, &slot)) in keys.iter().zip(&anchors.slots).enumerate() {
                    // The key's steps gathered in step order, as the sorted form did.
                    let same: Vec<f32> =
                        keys.iter().zip(&values).filter(|&(&k, _)| k == key && k.is_some()).map(|(_, &v)| v).collect();
                    let want = if same.len() < 2 {
                        0.0
                    } else {
                        let (m, sd) = mean_std(&same, true);
                        if with_std { norm(values[i], m, sd) } else { values[i] - m }
                    };
                    let [mean, denominator, weight] = anchors.states[slot as usize];
                    let got = (values[i] - mean) / denominator * weight;
                    // (A state of one step may give −0 where the sorted form gave +0: the same
                    // credit once added to the episode term, which is never −0.)
                    assert!(got.to_bits() == want.to_bits() || got == 0.0 && want == 0.0, "{i}: {got} vs {want}");
                }
            }
        }
    }

    /// A run of five groups: chains with keys from a few states (some steps without one, one
    /// state of a single step), a group with more distinct keys than a byte codes, and a tree
    /// (paths not in node order).
    fn keyed_run() -> Run {
        use crate::model::{NewGroup, NewStep, NewTokens, NodeId, Outcome, RunBuilder, TreeId};
        let mut b = RunBuilder::new("gigpo", "test");
        fn step(state_key: Option<&str>, r: f32) -> NewStep<'_> {
            NewStep { state_key, env_reward: Some(r), ..NewStep::default() }
        }
        let mut trajectory = 0;
        for g in 0..4 {
            let (group, _) = b.add_group(&NewGroup { key: &format!("g{g}"), ..NewGroup::default() });
            for m in 0..5 {
                let mut parent = NodeId::NONE;
                let len = if g == 2 { 70 } else { 3 + (m * 7 + g) % 6 };
                for k in 0..len {
                    let key = if g == 2 {
                        Some(format!("s{}", (m * 70 + k) % 400))
                    } else if (m, k) == (2, 1) {
                        // A state of one step.
                        Some(format!("solo{g}"))
                    } else {
                        ((k + m) % 5 != 4).then(|| format!("s{}", (k * 3 + m + g) % 4))
                    };
                    let r = ((trajectory * 13 + k * 7) % 5) as f32 / 4.0 - 0.3;
                    parent = b.add_node(group, parent, &step(key.as_deref(), r));
                }
                let outcome = Outcome { reward: Some((m % 2) as f32), ..Outcome::default() };
                b.add_trajectory(
                    &format!("t{trajectory}"),
                    group,
                    TreeId::NONE,
                    parent,
                    &outcome,
                    &NewTokens::default(),
                );
                trajectory += 1;
            }
        }
        // A tree: a shared prefix of two steps, then three branches of two.
        let (group, _) = b.add_group(&NewGroup { key: "tree", ..NewGroup::default() });
        let tree = b.add_tree("tree", group);
        let root = b.add_node(group, NodeId::NONE, &step(Some("s1"), 0.1));
        let mid = b.add_node(group, root, &step(Some("s2"), 0.0));
        for branch in 0..3 {
            let a = b.add_node(group, mid, &step(Some(["s1", "s3", "s2"][branch]), 0.2 * branch as f32));
            let leaf = b.add_node(group, a, &step(Some("s3"), 1.0 - 0.3 * branch as f32));
            let outcome = Outcome { reward: Some(branch as f32), ..Outcome::default() };
            b.add_trajectory(
                &format!("t{trajectory}"),
                group,
                tree.unwrap_or(TreeId::NONE),
                leaf,
                &outcome,
                &NewTokens::default(),
            );
            trajectory += 1;
        }
        b.finish()
    }

    #[test]
    fn state_slots_code_each_groups_keys_in_first_seen_order() {
        let run = keyed_run();
        let slots = run.state_slots();
        assert!(!run.trajectories.paths_in_node_order, "the tree's paths share nodes");
        let tr = &run.trajectories;
        for g in run.groups.ids() {
            let members = run.groups.members(g);
            let keys: Vec<Sym> =
                members.iter().flat_map(|&t| tr.path(t)).map(|n| run.nodes.state_key[n.index()]).collect();
            let mut distinct: Vec<Sym> = Vec::new();
            for &k in keys.iter().filter(|k| k.is_some()) {
                if !distinct.contains(&k) {
                    distinct.push(k);
                }
            }
            assert_eq!(slots.distinct[g.index()] as usize, distinct.len().min(256), "group {g:?}");
            assert_eq!(slots.coded(g), distinct.len() <= 255);
            if slots.coded(g) {
                let codes: Vec<u8> =
                    members.iter().flat_map(|&t| slots.codes[tr.path_range(t)].iter().copied()).collect();
                let want: Vec<u8> =
                    keys.iter().map(|k| distinct.iter().position(|d| d == k).map_or(0, |i| i as u8 + 1)).collect();
                assert_eq!(codes, want, "group {g:?}");
                // Each slot's steps, counted once for the run.
                let counts: Vec<u32> = (1..=distinct.len())
                    .map(|s| want.iter().filter(|&&c| usize::from(c) == s).count() as u32)
                    .collect();
                assert_eq!(slots.counts(g), &counts[..], "group {g:?}");
            } else {
                assert!(slots.counts(g).is_empty(), "group {g:?}");
            }
        }
        assert!(run.groups.ids().any(|g| !slots.coded(g)), "one group has more keys than a byte codes");
        // No key at all: nothing coded.
        let mut plain = crate::model::RunBuilder::new("plain", "test");
        let (group, _) = plain.add_group(&crate::model::NewGroup { key: "g", ..Default::default() });
        let node = plain.add_node(group, crate::model::NodeId::NONE, &crate::model::NewStep::default());
        plain.add_trajectory("t", group, crate::model::TreeId::NONE, node, &Default::default(), &Default::default());
        assert!(plain.finish().state_slots().codes.is_empty());
    }

    #[test]
    fn the_coded_groups_give_the_same_bits_as_the_keys() {
        let run = keyed_run();
        for mode in ["mean_norm", "mean_std_norm"] {
            let sets = [("mode".to_owned(), mode.to_owned()), ("omega".to_owned(), "0.7".to_owned())];
            let params = Params::resolve(&Gigpo, None, &sets).unwrap_or_else(|e| panic!("{e:?}"));
            let knobs = Knobs::of(&params);
            let coded = compute(&run, &knobs, run.state_slots(), false);
            let keys = compute(&run, &knobs, &StateSlots::default(), false);
            let bits = |c: &Credit| c.step.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&coded), bits(&keys), "{mode}");
            // And the anchor term is there: some step differs from its episode term.
            let episode = |t: usize| coded.terms.values[t * 3 + 1];
            let differs = (0..run.trajectories.len()).any(|t| {
                let t_id = crate::model::TrajectoryId::from_index(t);
                run.trajectories.path_range(t_id).any(|p| (coded.step[p] - episode(t)).abs() > 1e-4)
            });
            assert!(differs, "{mode}");
        }
    }
}
