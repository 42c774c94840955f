//! SPO-tree (`spo_tree`): segment-level Monte-Carlo advantages on a tree. A leaf's value is its
//! outcome, an internal node's the mean of its children's; each edge (segment given its prefix) gets
//! `V(n) − V(parent)` (`rloo`) or that over the population std of the parent's children (`grpo`);
//! edges with advantage exactly 0 are dropped. TreePO's re-implementation (`variant = treepo_spo`)
//! z-scores values among siblings first and puts the root at 0.

use crate::credit::engine::tree::MergeParam;
use crate::credit::engine::tree::{build, merge_prefixes};
use crate::credit::kernels::tree_value::{ValueMode, ValueTree};
use crate::credit::params::declare::{GROUP, choice, decl, params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, Family, SchemeInfo, SourceQuality, Terms};
use crate::model::Run;

scheme!(
    /// SPO-tree.
    SpoTree,
    knobs: Knobs,
    info: SchemeInfo {
        id: "spo_tree",
        family: Family::Tree,
        display_name: "SPO-tree (segment MC advantage)",
        citation: "Guo et al. 2025, Segment Policy Optimization (arXiv 2505.23564), tree variant; TreePO's `spo` re-implementation as a variant",
        needs: "outcome rewards; explicit trees, or groups of rollouts merged by identical step prefix",
        source: SourceQuality::FromCode(
            "AIFrameResearch/SPO@b9fc6a263dec54e28137fd488a9b9c0e0d026025 (tree_episode_generator, hybrid_inference_strategy)",
        ),
        checked: "the treepo_spo variant against TreePO's own code (tests/golden/treepo/cases.json, made by its generate.py from TreePO b86ce51); the official SPO form against SPO's own code (tests/golden/spo_tree/cases.json, made by its generate.py from SPO b9fc6a2: rloo, grpo, use_pav, dropped edges)",
    },    supports: crate::credit::engine::inputs::supports_outcomes,
    credit: credit,
);

choice! {
    enum EdgeAdv { Rloo = "rloo", Grpo = "grpo" }
    enum Variant { Official = "official", TreepoSpo = "treepo_spo" }
}

params! {
    pub struct Knobs {
        edge_adv: EdgeAdv = decl("rloo", "edge advantage V(n) − V(parent) (rloo), or divided by the parent's children's population std + 1e-8 (grpo)"),
        variant: Variant = decl("official", "the SPO code, or TreePO's re-implementation: z-score among siblings (a lone child keeps its value), root 0"),
        drop_zero: bool = decl("true", "edges with advantage exactly 0 are not trained (no credit)"),
        pav: bool = decl("false", "use_pav: the segment's advantage is V(n) + w·(BoK(V(n)) − BoK(V(parent))), BoK(v) = 1 − (1 − v)^k, as SPO's episode generator makes it (its config then keeps every edge: drop_zero off)"),
        pav_k: i64 = range(1.0, 64.0, "4", "k of the PAV term's best-of-k"),
        pav_weight: f64 = range(0.0, 100.0, "5", "w, the weight of the PAV term (the code's 5)"),
        merge_param: MergeParam = GROUP,
    }
}

/// Per tree node: the population mean and std of its siblings' values (itself included), keyed by
/// parent (top nodes share their group's root).
fn sibling_stats(tree: &ValueTree) -> Vec<(f64, f64, u32)> {
    let n = tree.parent.len();
    let key = |v: usize| match tree.parent[v] {
        u32::MAX => n + tree.group[v] as usize,
        p => p as usize,
    };
    let slots = n + tree.root_value.len();
    let (mut sum, mut sq, mut count) = (vec![0.0f64; slots], vec![0.0f64; slots], vec![0u32; slots]);
    for v in 0..n {
        let x = f64::from(tree.value[v]);
        if x.is_nan() {
            continue;
        }
        sum[key(v)] += x;
        sq[key(v)] += x * x;
        count[key(v)] += 1;
    }
    (0..n)
        .map(|v| {
            let k = key(v);
            let c = f64::from(count[k].max(1));
            let mean = sum[k] / c;
            (mean, (sq[k] / c - mean * mean).max(0.0).sqrt(), count[k])
        })
        .collect()
}

/// The credit under `knobs`; with `explain`, the values per step its terms need too.
fn credit(run: &Run, knobs: &Knobs, explain: bool) -> Credit {
    let tree = build(run, ValueMode::ChildMean, merge_prefixes(run, knobs.merge_param.merge));
    let stats = sibling_stats(&tree);
    let treepo = knobs.variant == Variant::TreepoSpo;
    let grpo = knobs.edge_adv == EdgeAdv::Grpo;
    let drop_zero = knobs.drop_zero;
    let pav_k = knobs.pav.then_some(knobs.pav_k as i32);
    let pav_weight = knobs.pav_weight;
    let bok = |v: f64| pav_k.map_or(0.0, |k| 1.0 - (1.0 - v).powi(k));
    // TreePO (`normalize_sibling_rewards`): each node's value z-scored among its siblings by
    // their population std, no epsilon; siblings all alike (std within 1e-8 of 0, numpy's
    // isclose) give 0; a lone child keeps its value.
    let z = |v: usize| {
        let (mean, std, count) = stats[v];
        let x = f64::from(tree.value[v]);
        if count <= 1 {
            x
        } else if std <= 1e-8 {
            0.0
        } else {
            (x - mean) / std
        }
    };
    // The edge's advantage and whether it is trained: an edge whose advantage is 0 is dropped
    // (the code's test, advantage + BoK difference ≠ 0, is the same: both are 0 together);
    // with PAV the segment's advantage is V(n) + w·(BoK(V(n)) − BoK(V(parent))).
    let edge = |v: u32| -> (f64, bool) {
        let v = v as usize;
        let (value, parent) = (f64::from(tree.value[v]), f64::from(tree.parent_value(v as u32)));
        let base = if treepo {
            z(v) - if tree.parent[v] == u32::MAX { 0.0 } else { z(tree.parent[v] as usize) }
        } else if grpo {
            (value - parent) / (stats[v].1 + 1e-8)
        } else {
            value - parent
        };
        let advantage = if pav_k.is_some() { value + pav_weight * (bok(value) - bok(parent)) } else { base };
        (advantage, base != 0.0)
    };
    let tr = &run.trajectories;
    let mut step = crate::credit::data::pool::filled(tr.path_nodes.len(), f32::NAN);
    // The formula as the options make it, and each step's own terms: its node's value and
    // its parent's (V = mean of the children's), and what the variant adds.
    let (formula, step_names): (&str, &[&'static str]) = if pav_k.is_some() {
        ("V(n) + w·(BoK(V(n)) − BoK(V(parent))), BoK(v) = 1 − (1 − v)^k", &["V(n)", "V(parent)", "w", "k"])
    } else if treepo {
        ("z(n) − z(parent), z = the value z-scored among its siblings", &["z(n)", "z(parent)"])
    } else if grpo {
        ("(V(n) − V(parent)) / (sibling std + 1e-8)", &["V(n)", "V(parent)", "sibling std"])
    } else {
        ("V(n) − V(parent); V = mean of the children", &["V(n)", "V(parent)"])
    };
    let mut terms = Terms::for_rows(formula, &["V(root)", "R"], tr.len())
        .with_step_values(step_names, if explain { tr.path_nodes.len() } else { 0 });
    for t in tr.ids() {
        for k in tr.path_range(t) {
            let v = tree.node_of[k];
            let (a, trained) = edge(v);
            step[k] = if drop_zero && !trained { f32::NAN } else { a as f32 };
            if !explain {
                continue;
            }
            let (value, parent) = (f64::from(tree.value[v as usize]), f64::from(tree.parent_value(v)));
            let own = if let Some(k) = pav_k {
                [value, parent, pav_weight, f64::from(k)]
            } else if treepo {
                let p = tree.parent[v as usize];
                [z(v as usize), if p == u32::MAX { 0.0 } else { z(p as usize) }, 0.0, 0.0]
            } else {
                [value, parent, stats[v as usize].1, 0.0]
            };
            terms.set_step(k, &own);
        }
        let root = tree.root_value[tr.group[t.index()].index()];
        terms.set(t.index(), &[f64::from(root), f64::from(tr.reward[t.index()])]);
    }
    Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) }
}
