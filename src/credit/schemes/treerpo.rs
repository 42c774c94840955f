//! TreeRPO (`treerpo`): GRPO among siblings on node values — each step is compared with the other
//! children of its parent, `(V(n) − mean_sib)/(std_sib + ε)` (Yang et al.) or `V(n) − mean_sib` (Sapir).

use crate::credit::engine::tree::MergeParam;
use crate::credit::engine::tree::{build, merge_prefixes};
use crate::credit::kernels::tree_value::ValueMode;
use crate::credit::params::declare::{GROUP, choice, decl, params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, Family, SchemeInfo, SourceQuality, Terms};
use crate::model::Run;

scheme!(
    /// TreeRPO.
    Treerpo,
    knobs: Knobs,
    info: SchemeInfo {
        id: "treerpo",
        family: Family::Tree,
        display_name: "TreeRPO (sibling groups)",
        citation: "Yang et al. 2025, TreeRPO (arXiv 2506.05183); the no-std variant follows omrisapir1/treerpo",
        needs: "outcome rewards; explicit trees, or groups of rollouts merged by identical step prefix",
        source: SourceQuality::Approximate(
            "Yang et al.'s code was not obtainable; reconstructed from the paper and a third-party implementation",
        ),
        checked: "the Sapir variant (value = leaf_mean, std = false, singleton = untrained) against omrisapir1/treerpo's own code (tests/golden/treerpo/cases.json, made by its generate.py from treerpo 05499ad); Yang et al.'s form against the worked example of reference/credit-schemes-process.md (their code was not obtainable)",
    },    supports: crate::credit::engine::inputs::supports_outcomes,
    credit: credit,
);

choice! {
    enum Value { ChildMean = "child_mean", LeafMean = "leaf_mean" }
    enum Singleton { Zero = "zero", Verl = "verl", Untrained = "untrained" }
}

params! {
    pub struct Knobs {
        value: Value = decl("child_mean", "node value: mean of the children's values (Yang) or of the leaves below (Sapir)"),
        std: bool = decl("true", "divide by the sibling std + ε (Yang); off gives the mean-centred form (Sapir)"),
        merge_param: MergeParam = GROUP,
        singleton: Singleton = decl("zero", "a node without siblings: 0, verl's rule (its value over std 1), or no credit for it and every step below it (omrisapir1/treerpo trains sibling sets of two or more, and goes no deeper than a lone child)"),
        epsilon: f64 = range(0.0, 1.0, "0.000001", "added to the sibling std"),
    }
}

/// The credit under `knobs`; with `explain`, the values per step its terms need too.
fn credit(run: &Run, knobs: &Knobs, explain: bool) -> Credit {
    let mode = if knobs.value == Value::LeafMean { ValueMode::LeafMean } else { ValueMode::ChildMean };
    let merge = merge_prefixes(run, knobs.merge_param.merge);
    let tree = build(run, mode, merge);
    let use_std = knobs.std;
    let eps = knobs.epsilon as f32;
    let verl_singleton = knobs.singleton == Singleton::Verl;
    let (mut advantage, stats) = tree.sibling_z(use_std, eps, verl_singleton);
    if knobs.singleton == Singleton::Untrained {
        for (v, untrained) in untrained_nodes(&tree).into_iter().enumerate() {
            if untrained {
                advantage[v] = f32::NAN;
            }
        }
    }
    let tr = &run.trajectories;
    let step: Vec<f32> = tree.node_of.iter().map(|&v| advantage[v as usize]).collect();
    // Each step's node value with its siblings' mean and std (a step without siblings gets 0,
    // or under verl's rule its value over 1 + ε).
    let formula = if use_std {
        "(V(step) − sibling mean)/(sibling std + ε); a step without siblings: 0 (verl: V/(1 + ε))"
    } else {
        "V(step) − sibling mean; a step without siblings: 0 (verl: V)"
    };
    let mut terms = Terms::for_rows(formula, &["ε"], tr.len()).with_step_values(
        &["V(step)", "siblings", "sibling mean", "sibling std"],
        if explain { tr.path_nodes.len() } else { 0 },
    );
    for t in tr.ids() {
        terms.set(t.index(), &[f64::from(eps)]);
    }
    if explain {
        let mut siblings = vec![0usize; tree.parent.len()];
        for members in tree.sibling_sets().iter() {
            for &v in members {
                siblings[v as usize] = members.len();
            }
        }
        for (p, &v) in tree.node_of.iter().enumerate() {
            let (v, [mean, std]) = (v as usize, stats[v as usize]);
            terms.set_step(p, &[f64::from(tree.value[v]), siblings[v] as f64, f64::from(mean), f64::from(std)]);
        }
    }
    Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) }
}

/// The nodes omrisapir1/treerpo's `_convert_tree_to_training_inputs` never reaches: it walks down
/// from the root through sibling sets of two or more and stops at a node with a lone child, so a
/// node without siblings, and everything below it, is not trained.
fn untrained_nodes(tree: &crate::credit::kernels::tree_value::ValueTree) -> Vec<bool> {
    let n = tree.parent.len();
    let mut alone = vec![false; n];
    for members in tree.sibling_sets().iter() {
        if members.len() < 2 {
            for &v in members {
                alone[v as usize] = true;
            }
        }
    }
    // Known per node once computed (walking up to the first known ancestor).
    let mut state: Vec<Option<bool>> = vec![None; n];
    let mut chain = Vec::new();
    for v in 0..n {
        let mut at = v;
        let known = loop {
            if let Some(s) = state[at] {
                break s;
            }
            if alone[at] {
                break true;
            }
            chain.push(at);
            match tree.parent[at] {
                u32::MAX => break false,
                p => at = p as usize,
            }
        };
        if alone[at] {
            state[at] = Some(true);
        }
        for &c in &chain {
            state[c] = Some(known);
        }
        chain.clear();
    }
    state.into_iter().map(|s| s.unwrap_or(false)).collect()
}
