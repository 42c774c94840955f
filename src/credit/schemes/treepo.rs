//! TreePO (`treepo`): each leaf's outcome relative to the mean of every subgroup of leaves that
//! shares a prefix with it (depth by depth), averaged, broadcast to the leaf's steps and whitened
//! (`compute_tree_reinforce_plus_plus_baseline_outcome_advantage`); or, as `estimator = segment`,
//! TreePO's segment estimator (`compute_tree_rfpp_progress_outcome_advantage`): those subgroup
//! advantages weighted by subgroup size make each leaf's reward, a node's reward is the mean of its
//! children's, and each segment is credited its reward less (η^depth-to-go ×) its parent's.

use crate::credit::engine::tree::MergeParam;
use crate::credit::engine::tree::{build, merge_prefixes};
use crate::credit::engine::whiten;
use crate::credit::kernels::tree_value::ValueMode;
use crate::credit::params::declare::{GROUP, choice, decl, params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, Family, SchemeInfo, SourceQuality, Terms};
use crate::model::Run;

scheme!(
    /// TreePO.
    Treepo,
    knobs: Knobs,
    info: SchemeInfo {
        id: "treepo",
        family: Family::Tree,
        display_name: "TreePO (subgroup averaging)",
        citation: "Li et al. 2025, TreePO; multimodal-art-projection/TreePO compute_tree_reinforce_plus_plus_baseline_outcome_advantage",
        needs: "outcome rewards; explicit trees, or groups of rollouts merged by identical step prefix",
        source: SourceQuality::FromCode("multimodal-art-projection/TreePO@f05552394e734ea2838cf9e3b8191f5093319dcf"),
        checked: "TreePO's own code for the segment estimator (tests/golden/treepo/cases.json, made by its generate.py from TreePO b86ce51); the subgroup estimator against the worked example of reference/credit-schemes-process.md",
    },    supports: crate::credit::engine::inputs::supports_outcomes,
    credit: credit,
    batch_wide: |knobs| knobs.whiten.then_some("whitens the advantages over the batch"),
);

choice! {
    enum Weighting { Average = "average", GroupSize = "group_size" }
    enum Estimator { Subgroup = "subgroup", Segment = "segment" }
}

params! {
    pub struct Knobs {
        weighting: Weighting = decl("average", "average over depths (the script), or weight by subgroup size (the code default)"),
        skip_zero_std: bool = decl("false", "leave out subgroups whose rewards are all equal (remove_no_std_subgroup)"),
        estimator: Estimator = decl("subgroup", "subgroup: the leaf's advantage over its subgroups, on every step; segment: each segment's progress reward over its parent's (tree_seg)"),
        eta: f64 = range(-1.0, 1.0, "-1", "segment estimator: the parent's reward is weighted by η^(steps from the leaf + 1) when η > 0 (adv_eta; −1 = off)"),
        whiten: bool = decl("true", "whiten over all steps of the batch afterwards (over tokens when the run logs them)"),
        merge_param: MergeParam = GROUP,
    }
}

/// The credit under `knobs`; with `explain`, the values per step its terms need too.
fn credit(run: &Run, knobs: &Knobs, explain: bool) -> Credit {
    let merge = merge_prefixes(run, knobs.merge_param.merge);
    let tree = build(run, ValueMode::LeafMean, merge);
    let tr = &run.trajectories;
    let by_size = knobs.weighting == Weighting::GroupSize;
    let skip_zero_std = knobs.skip_zero_std;
    // Subgroup at depth d > 0 = the leaves whose path passes through the same tree node at
    // depth d − 1; at depth 0 = the whole group. Per tree node (and per group): count, sum, min
    // and max of the outcomes below it, gathered in one pass over the paths.
    let n = tree.parent.len();
    let num_groups = run.groups.len();
    let mut count = vec![0u32; n + num_groups];
    let mut sum = vec![0.0f64; n + num_groups];
    let mut lo = vec![f32::INFINITY; n + num_groups];
    let mut hi = vec![f32::NEG_INFINITY; n + num_groups];
    let mut add = |slot: usize, r: f32| {
        count[slot] += 1;
        sum[slot] += f64::from(r);
        lo[slot] = lo[slot].min(r);
        hi[slot] = hi[slot].max(r);
    };
    for t in tr.ids() {
        let r = tr.reward[t.index()];
        if r.is_nan() {
            continue;
        }
        add(n + tr.group[t.index()].index(), r);
        let range = tr.path_range(t);
        // The last node (the leaf itself) never heads a subgroup of a deeper step.
        for k in range.start..range.end.saturating_sub(1) {
            add(tree.node_of[k] as usize, r);
        }
    }
    if knobs.estimator == Estimator::Segment {
        return segment(run, &tree, &count, &sum, knobs, explain);
    }
    let mut leaf_adv = vec![f32::NAN; tr.len()];
    for t in tr.ids() {
        let r = tr.reward[t.index()];
        if r.is_nan() {
            continue;
        }
        let start = tr.path_offsets[t.index()] as usize;
        let (mut total, mut weight) = (0.0f64, 0.0f64);
        for d in 0..tr.num_steps(t) {
            let slot = if d == 0 { n + tr.group[t.index()].index() } else { tree.node_of[start + d - 1] as usize };
            let size = count[slot];
            if d > 0 && size < 2 {
                continue;
            }
            if skip_zero_std && d > 0 && lo[slot] == hi[slot] {
                continue;
            }
            // The root subgroup of a single leaf has mean 0 (verl's rule), so a = R.
            let mean = if size < 2 { 0.0 } else { sum[slot] / f64::from(size) };
            let w = if by_size { f64::from(size) } else { 1.0 };
            total += w * (f64::from(r) - mean);
            weight += w;
        }
        leaf_adv[t.index()] = if weight > 0.0 { (total / weight) as f32 } else { 0.0 };
    }
    let mut step = crate::credit::data::pool::filled(tr.path_nodes.len(), f32::NAN);
    let formula = if knobs.whiten {
        "(a − batch mean) / batch std, a = the mean over depths of (R − subgroup mean)"
    } else {
        "a = the mean over depths of (R − subgroup mean)"
    };
    let mut terms = Terms::for_rows(formula, &["R", "a", "batch mean", "batch std"], tr.len());
    for t in tr.ids() {
        step[tr.path_range(t)].fill(leaf_adv[t.index()]);
        // (Not whitened, a batch of mean 0 and std 1.)
        terms.set(t.index(), &[f64::from(tr.reward[t.index()]), f64::from(leaf_adv[t.index()]), 0.0, 1.0]);
    }
    if knobs.whiten {
        // Over tokens, as the trainer whitens: each step weighted by its policy tokens (the
        // unbiased n/(n − 1) over tokens); steps without credit stay out.
        if let Some((mean, std)) = whiten::steps_over_tokens(run, &mut step) {
            terms.fill("batch mean", mean);
            terms.fill("batch std", std);
        }
    }
    Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) }
}

/// TreePO's segment estimator (`tree_group_wise_reward`, `calculate_rewards_iterative`,
/// `calculate_segment_advantage`). `count` and `sum` hold, per tree node (and after them per
/// group), the leaves with an outcome below it that are deeper than it, and their outcomes' sum.
fn segment(
    run: &Run,
    tree: &crate::credit::kernels::tree_value::ValueTree,
    count: &[u32],
    sum: &[f64],
    knobs: &Knobs,
    explain: bool,
) -> Credit {
    let tr = &run.trajectories;
    let n = tree.parent.len();
    let eta = knobs.eta;
    // Each leaf's reward: its advantage over every prefix from the tree's root to itself, weighted
    // by how many leaves each holds (the leaf itself: one, advantage 0).
    let mut reward = vec![f64::NAN; n];
    let (mut leaf_sum, mut leaf_count) = (vec![0.0f64; n], vec![0u32; n]);
    for t in tr.ids() {
        let r = f64::from(tr.reward[t.index()]);
        let range = tr.path_range(t);
        if r.is_nan() || range.is_empty() {
            continue;
        }
        let (mut total, mut weight) = (0.0, 0.0);
        let group_slot = n + tr.group[t.index()].index();
        for slot in
            std::iter::once(group_slot).chain(range.clone().take(range.len() - 1).map(|k| tree.node_of[k] as usize))
        {
            let size = f64::from(count[slot]);
            total += (r - sum[slot] / size) * size;
            weight += size;
        }
        weight += 1.0;
        let leaf = tree.node_of[range.end - 1] as usize;
        leaf_sum[leaf] += total / weight;
        leaf_count[leaf] += 1;
    }
    for v in 0..n {
        if leaf_count[v] > 0 {
            reward[v] = leaf_sum[v] / f64::from(leaf_count[v]);
        }
    }
    // A node's reward is the mean of its children's, deepest first (children come after parents).
    let (mut child_sum, mut child_count) = (vec![0.0f64; n], vec![0u32; n]);
    for v in (0..n).rev() {
        if reward[v].is_nan() && child_count[v] > 0 {
            reward[v] = child_sum[v] / f64::from(child_count[v]);
        }
        let p = tree.parent[v];
        if p != u32::MAX && !reward[v].is_nan() {
            child_sum[p as usize] += reward[v];
            child_count[p as usize] += 1;
        }
    }
    let mut step = crate::credit::data::pool::filled(tr.path_nodes.len(), f32::NAN);
    // Each step's segment reward, its parent's and the parent's weight; the batch's whitening
    // moments in each row (mean 0 and std 1 when not whitened).
    let formula = if knobs.whiten {
        "(segment reward − weight·parent's reward − batch mean) / batch std, weight = η^(steps to the leaf) when η > 0"
    } else {
        "segment reward − weight·parent's reward, weight = η^(steps to the leaf) when η > 0"
    };
    let mut terms = Terms::for_rows(formula, &["R", "batch mean", "batch std"], tr.len()).with_step_values(
        &["segment reward", "parent's reward", "weight"],
        if explain { tr.path_nodes.len() } else { 0 },
    );
    for t in tr.ids() {
        terms.set(t.index(), &[f64::from(tr.reward[t.index()]), 0.0, 1.0]);
        if tr.reward[t.index()].is_nan() {
            continue;
        }
        let range = tr.path_range(t);
        let len = range.len() + 1;
        for (i, k) in range.enumerate() {
            let v = tree.node_of[k] as usize;
            // The root's reward is 0.
            let parent = match tree.parent[v] {
                u32::MAX => 0.0,
                p => reward[p as usize],
            };
            let weight = if eta > 0.0 { eta.powi((len - (i + 1)) as i32) } else { 1.0 };
            step[k] = (reward[v] - weight * parent) as f32;
            if explain {
                terms.set_step(k, &[reward[v], parent, weight]);
            }
        }
    }
    if knobs.whiten
        && let Some((mean, std)) = whiten::steps_over_tokens(run, &mut step)
    {
        terms.fill("batch mean", mean);
        terms.fill("batch std", std);
    }
    Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) }
}
