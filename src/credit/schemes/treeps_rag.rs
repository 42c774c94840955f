//! TreePS-RAG (`treeps_rag`): Monte-Carlo step utility over descendant outcomes, the value of a
//! step minus the value of its parent, optionally mixed with the outcome advantage.

use std::sync::LazyLock;

use crate::credit::engine::inputs::outcome_advantages;
use crate::credit::engine::tree::{MERGE_PARAM, build, merge_prefixes};
use crate::credit::kernels::outcome::OUTCOME_PARAMS;
use crate::credit::kernels::tree_value::ValueMode;
use crate::credit::{
    Credit, CreditError, Family, ParamSpec, Params, Scheme, SchemeInfo, SourceQuality, Support, Terms,
};
use crate::model::Run;

/// TreePS-RAG.
pub struct TreepsRag;

static INFO: SchemeInfo = SchemeInfo {
    id: "treeps_rag",
    family: Family::Tree,
    display_name: "TreePS-RAG (step utility)",
    citation: "TreePS-RAG (arXiv 2601.06922): V(n) = mean outcome of the leaves below n; step credit V(n) − V(parent)",
    needs: "outcome rewards; explicit trees, or groups of rollouts merged by identical step prefix",
    source: SourceQuality::Approximate(
        "reconstructed from the abstract and summaries; no code; the outcome weight is unknown",
    ),
    checked: "the worked example of reference/credit-schemes-process.md (tests/it/process_credit.rs); not run against the paper's code",
};

static PARAMS: LazyLock<Vec<ParamSpec>> = LazyLock::new(|| {
    let mut params = vec![
        ParamSpec::choice(
            "value",
            &["leaf_mean", "child_mean"],
            "leaf_mean",
            "node value: mean outcome of descendant leaves, or mean of the children's values",
        ),
        MERGE_PARAM,
        ParamSpec::choice(
            "form",
            &["difference", "sibling_z"],
            "difference",
            "the step utility: V(step) − V(parent), or V(step) normalised within its siblings, (V − mean)/(std + ε), as TreeRPO's toggles",
        ),
        ParamSpec::bool("std", "true", "sibling_z: divide by the siblings' std + ε; off subtracts their mean only"),
        ParamSpec::choice(
            "singleton",
            &["zero", "verl"],
            "zero",
            "sibling_z: a step without siblings gets 0, or verl's rule (its value over 1 + ε)",
        ),
        ParamSpec::float("sibling_epsilon", 0.0, 1.0, "0.000001", "sibling_z: added to the siblings' std"),
        ParamSpec::float("outcome_weight", 0.0, 5.0, "0", "weight of the outcome advantage added to the step utility"),
    ];
    params.extend(OUTCOME_PARAMS);
    params
});

/// TreePS-RAG's parameters, read once (the merge and outcome parameters are read by the engine).
#[derive(Clone, Copy, Debug)]
struct Options {
    /// How a node's value is formed.
    value: ValueMode,
    /// The weight of the outcome advantage added to each step.
    outcome_weight: f32,
    /// The sibling z-score form, with (divide by the std, its ε, verl's singleton rule); `None`
    /// for the value difference `V(step) − V(parent)`.
    sibling_z: Option<(bool, f32, bool)>,
}

impl Options {
    fn of(params: &Params) -> Self {
        let value = if params.choice("value") == "child_mean" { ValueMode::ChildMean } else { ValueMode::LeafMean };
        let sibling_z = (params.choice("form") == "sibling_z")
            .then(|| (params.bool("std"), params.f64("sibling_epsilon") as f32, params.choice("singleton") == "verl"));
        Self { value, outcome_weight: params.f64("outcome_weight") as f32, sibling_z }
    }
}

impl Scheme for TreepsRag {
    fn info(&self) -> &SchemeInfo {
        &INFO
    }
    fn params(&self) -> &[ParamSpec] {
        &PARAMS
    }
    fn supports(&self, run: &Run) -> Support {
        if !crate::credit::engine::inputs::has_outcomes(run) {
            return Support::No("needs outcome rewards".to_owned());
        }
        Support::Yes
    }
    fn compute(&self, run: &Run, params: &Params) -> Result<Credit, CreditError> {
        let options = Options::of(params);
        let tree = build(run, options.value, merge_prefixes(run, params));
        let weight = options.outcome_weight;
        let (outcome, _) = if weight > 0.0 { outcome_advantages(run, params) } else { (Vec::new(), Vec::new()) };
        let sibling_z =
            options.sibling_z.map(|(use_std, eps, verl_singleton)| tree.sibling_z(use_std, eps, verl_singleton).0);
        let tr = &run.trajectories;
        let mut step = crate::credit::engine::pool::filled(tr.path_nodes.len(), f32::NAN);
        let mut terms = Terms::for_rows("V(step) − V(parent) + w·A_outcome", &["V(root)", "R", "w"], tr.len());
        for t in tr.ids() {
            let offset = tr.path_offsets[t.index()] as usize;
            let a = outcome.get(t.index()).copied().unwrap_or(0.0);
            for k in 0..tr.num_steps(t) {
                let v = tree.node_of[offset + k];
                let utility = match &sibling_z {
                    Some(z) => z[v as usize],
                    None => tree.value[v as usize] - tree.parent_value(v),
                };
                step[offset + k] = if weight > 0.0 { utility + weight * a } else { utility };
            }
            let root = tree.root_value[tr.group[t.index()].index()];
            terms.set(t.index(), &[f64::from(root), f64::from(tr.reward[t.index()]), f64::from(weight)]);
        }
        Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
    }
}
