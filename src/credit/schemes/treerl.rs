//! TreeRL (`treerl`): leaf-centred tree values with √-reweighting; each step gets its local term
//! `V̂(n) − V̂(parent)` plus its state value `V̂(n)` (the code's form), or the paper's global + local form.

use crate::credit::engine::tree::MergeParam;
use crate::credit::engine::tree::{build, merge_prefixes};
use crate::credit::kernels::tree_value::ValueMode;
use crate::credit::params::declare::{GROUP, choice, decl, params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, Family, SchemeInfo, SourceQuality, Support, Terms};
use crate::model::Run;

scheme!(
    /// TreeRL.
    Treerl,
    knobs: Knobs,
    info: SchemeInfo {
        id: "treerl",
        family: Family::Tree,
        display_name: "TreeRL (EPTree values)",
        citation: "Hou et al. 2025, TreeRL (arXiv 2506.11902); THUDM/TreeRL tree_node.py and parallel_mcts.py",
        needs: "outcome rewards and at least two leaves per group; explicit trees, or rollouts merged by identical step prefix",
        source: SourceQuality::FromCode("THUDM/TreeRL@f0edbea6f2f6392c46d297f83fb4929a9524266e"),
        checked: "TreeRL's own code (tests/golden/treerl/cases.json, made by its generate.py from TreeRL f0edbea: sqrt, uniform and no reweighting, the three value forms of gather_paths, forests of several trees, unselected leaves); the worked example of reference/credit-schemes-process.md",
    },    supports: supports,
    credit: credit,
);

choice! {
    enum LeafCentring { Loo = "loo", None = "none" }
    enum Reweight { Sqrt = "sqrt", Uniform = "uniform", Original = "original" }
    enum ValueForm { LocalState = "local_state", ValueOnly = "value_only", Local = "local", Paper = "paper" }
}

params! {
    pub struct Knobs {
        leaf_centring: LeafCentring = decl("loo", "centre each leaf on the mean of the other leaves of its forest"),
        reweight: Reweight = decl("sqrt", "divide a node's accumulated value by √c, c, or nothing (c = leaves below)"),
        value_form: ValueForm = decl("local_state", "local term + state value (use_state_value_reward, the release script), the state value only (use_value_only), the local term only (neither flag), or the paper's (global + local)/√|L|"),
        fill_in: bool = decl("true", "a zero local term takes the previous node's term on the path (fill_in_paths)"),
        penalize_truncated: bool = decl("true", "paths that did not finish with `stop` get the truncated reward on every step"),
        truncated_reward: f64 = range(-5.0, 5.0, "-1", "the credit of a truncated path's steps"),
        merge_param: MergeParam = GROUP,
    }
}

/// What a run needs for it.
fn supports(run: &Run) -> Support {
    let forests = run.groups.ids().any(|g| run.groups.members(g).len() >= 2);
    crate::credit::engine::inputs::supports_outcomes(run)
        .and(|| Support::when(forests, "needs groups with at least two leaves (leave-one-out over the forest)"))
}

/// The credit under `knobs`; with `explain`, the values per step its terms need too.
fn credit(run: &Run, knobs: &Knobs, explain: bool) -> Credit {
    let merge = merge_prefixes(run, knobs.merge_param.merge);
    let tree = build(run, ValueMode::LeafMean, merge);
    let tr = &run.trajectories;
    let num_groups = run.groups.len();
    let selected = |t: crate::model::TrajectoryId| tr.path(t).last().is_none_or(|&leaf| !run.nodes.unselected(leaf));
    let loo = knobs.leaf_centring == LeafCentring::Loo;
    let Tally { sum, leaves, chosen, root_sum, root_leaves, root_chosen, refused } =
        Tally::of(run, &tree, loo, &selected);
    let reweight_mode = knobs.reweight;
    let fill_in = knobs.fill_in;
    let penalize_truncated = knobs.penalize_truncated;
    let n = tree.parent.len();
    // A node no selected leaf is below is on no trained path: its value is never used.
    let reweight = |s: f64, c: u32| match reweight_mode {
        _ if c == 0 => 0.0,
        Reweight::Sqrt => s / f64::from(c).sqrt(),
        Reweight::Uniform => s / f64::from(c),
        Reweight::Original => s,
    };
    let v_hat: Vec<f64> =
        (0..n).map(|v| if leaves[v] > 0 { reweight(sum[v], chosen[v]) / f64::from(leaves[v]) } else { 0.0 }).collect();
    let root_hat: Vec<f64> =
        (0..num_groups)
            .map(|g| {
                if root_leaves[g] > 0 { reweight(root_sum[g], root_chosen[g]) / f64::from(root_leaves[g]) } else { 0.0 }
            })
            .collect();
    let parent_hat = |v: usize| match tree.parent[v] {
        u32::MAX => root_hat[tree.group[v] as usize],
        p => v_hat[p as usize],
    };
    let form = knobs.value_form;
    let truncated_reward = knobs.truncated_reward as f32;
    let mut step = crate::credit::data::pool::filled(tr.path_nodes.len(), f32::NAN);
    // Each step's own terms, as its form uses them (none on a path given no credit or the
    // truncated reward).
    let (formula, step_names) = form_terms(form, fill_in);
    let mut terms = Terms::for_rows(formula, &["R", "V̂(root)"], tr.len())
        .with_step_values(step_names, if explain { tr.path_nodes.len() } else { 0 });
    for t in tr.ids() {
        let g = tr.group[t.index()].index();
        let range = tr.path_range(t);
        terms.set(t.index(), &[f64::from(tr.reward[t.index()]), root_hat[g]]);
        // A leaf sampled but not selected is trained on no path: no credit; a path that did
        // not finish with `stop`, the truncated reward on every step.
        let finish = run.label(tr.finish[t.index()]);
        let untrained = refused[g] || tr.reward[t.index()].is_nan() || !selected(t);
        let truncated = penalize_truncated && !finish.is_empty() && finish != "stop";
        if untrained || truncated {
            if !untrained {
                step[range.clone()].fill(truncated_reward);
            }
            if explain {
                range.for_each(|k| terms.set_step(k, &[f64::NAN; 4]));
            }
            continue;
        }
        let mut previous_local = 0.0;
        for k in range {
            let v = tree.node_of[k] as usize;
            let (credit, own) = match form {
                ValueForm::ValueOnly => (v_hat[v], [v_hat[v], 0.0, 0.0, 0.0]),
                ValueForm::Paper => {
                    let value = f64::from(tree.value[v]);
                    let parent = f64::from(tree.parent_value(v as u32));
                    let root = f64::from(tree.root_value[g]);
                    let count = f64::from(leaves[v].max(1));
                    (((value - root) + (value - parent)) / count.sqrt(), [value, parent, root, count])
                }
                ValueForm::LocalState | ValueForm::Local => {
                    let mut local = v_hat[v] - parent_hat(v);
                    if fill_in && local.abs() < 1e-8 {
                        local = previous_local;
                    }
                    previous_local = local;
                    let state = if form == ValueForm::Local { 0.0 } else { v_hat[v] };
                    (local + state, [v_hat[v], parent_hat(v), local, 0.0])
                }
            };
            step[k] = credit as f32;
            terms.set_step(k, &own);
        }
    }
    Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) }
}

/// The formula of `form` in words and the names of the terms each step keeps for it.
fn form_terms(form: ValueForm, fill_in: bool) -> (String, &'static [&'static str]) {
    let local = if fill_in {
        "local = V̂(step) − V̂(parent), the previous step's local where that is 0"
    } else {
        "local = V̂(step) − V̂(parent)"
    };
    match form {
        ValueForm::ValueOnly => ("V̂(step)".to_owned(), &["V̂(step)"]),
        ValueForm::Paper => (
            "((V(step) − V(root)) + (V(step) − V(parent))) / √leaves".to_owned(),
            &["V(step)", "V(parent)", "V(root)", "leaves"],
        ),
        ValueForm::LocalState => (format!("local + V̂(step), {local}"), &["V̂(step)", "V̂(parent)", "local"]),
        ValueForm::Local => (local.to_owned(), &["V̂(step)", "V̂(parent)", "local"]),
    }
}

/// Centred leaf rewards, accumulated over every node on the leaf's path (`sum`) and at the group
/// root (`root_sum`). `leaves`: every leaf below a node, |L(n)|; `chosen`: the leaves selected for
/// training below it, c(n), which the reweighting divides by (all of them unless the log marks
/// some `selected: false`). `refused`: the groups of fewer than two rewarded leaves.
struct Tally {
    sum: Vec<f64>,
    leaves: Vec<u32>,
    chosen: Vec<u32>,
    root_sum: Vec<f64>,
    root_leaves: Vec<u32>,
    root_chosen: Vec<u32>,
    refused: Vec<bool>,
}

impl Tally {
    /// The tally of `run` over its value `tree`; `loo` centres each reward on the mean of the
    /// others, `selected` says which leaves are trained.
    fn of(
        run: &Run,
        tree: &crate::credit::kernels::tree_value::ValueTree,
        loo: bool,
        selected: &dyn Fn(crate::model::TrajectoryId) -> bool,
    ) -> Self {
        let tr = &run.trajectories;
        let (n, num_groups) = (tree.parent.len(), run.groups.len());
        let mut tally = Self {
            sum: vec![0.0; n],
            leaves: vec![0; n],
            chosen: vec![0; n],
            root_sum: vec![0.0; num_groups],
            root_leaves: vec![0; num_groups],
            root_chosen: vec![0; num_groups],
            refused: vec![false; num_groups],
        };
        for g in run.groups.ids() {
            let members: Vec<_> =
                run.groups.members(g).iter().copied().filter(|t| !tr.reward[t.index()].is_nan()).collect();
            if members.len() < 2 {
                // The original asserts here: a forest with one leaf has no leave-one-out baseline.
                tally.refused[g.index()] = true;
                continue;
            }
            let total: f64 = members.iter().map(|t| f64::from(tr.reward[t.index()])).sum();
            let count = members.len() as f64;
            for &t in &members {
                let r = f64::from(tr.reward[t.index()]);
                let centred = if loo { r - (total - r) / (count - 1.0) } else { r };
                let picked = u32::from(selected(t));
                for k in tr.path_range(t) {
                    let v = tree.node_of[k] as usize;
                    tally.sum[v] += centred;
                    tally.leaves[v] += 1;
                    tally.chosen[v] += picked;
                }
                tally.root_sum[g.index()] += centred;
                tally.root_leaves[g.index()] += 1;
                tally.root_chosen[g.index()] += picked;
            }
        }
        tally
    }
}
