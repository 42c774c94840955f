//! TreePS-RAG (`treeps_rag`): Monte-Carlo step utility over descendant outcomes, the value of a
//! step minus the value of its parent, optionally mixed with the outcome advantage.

use crate::credit::engine::inputs::outcome_advantages;
use crate::credit::engine::tree::{MergeChoice, MergeParam};
use crate::credit::engine::tree::{build, merge_prefixes};
use crate::credit::kernels::outcome::OutcomeParams;
use crate::credit::kernels::tree_value::ValueMode;
use crate::credit::params::declare::{GROUP, choice, decl, params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, Family, SchemeInfo, SourceQuality, Terms};
use crate::model::Run;

scheme!(
    /// TreePS-RAG.
    TreepsRag,
    knobs: Knobs,
    info: SchemeInfo {
        id: "treeps_rag",
        family: Family::Tree,
        display_name: "TreePS-RAG (step utility)",
        citation: "TreePS-RAG (arXiv 2601.06922): V(n) = mean outcome of the leaves below n; step credit V(n) − V(parent)",
        needs: "outcome rewards; explicit trees, or groups of rollouts merged by identical step prefix",
        source: SourceQuality::Approximate(
            "reconstructed from the abstract and summaries; no code; the outcome weight is unknown",
        ),
        checked: "the worked example of reference/credit-schemes-process.md (tests/it/process_credit.rs); not run against the paper's code",
    },    supports: crate::credit::engine::inputs::supports_outcomes,
    credit: credit,
);

choice! {
    enum Value { LeafMean = "leaf_mean", ChildMean = "child_mean" }
    enum Form { Difference = "difference", SiblingZ = "sibling_z" }
    enum Singleton { Zero = "zero", Verl = "verl" }
}

params! {
    pub struct Knobs {
        value: Value = decl("leaf_mean", "node value: mean outcome of descendant leaves, or mean of the children's values"),
        merge_param: MergeParam = GROUP,
        form: Form = decl("difference", "the step utility: V(step) − V(parent), or V(step) normalised within its siblings, (V − mean)/(std + ε), as TreeRPO's toggles"),
        std: bool = decl("true", "sibling_z: divide by the siblings' std + ε; off subtracts their mean only"),
        singleton: Singleton = decl("zero", "sibling_z: a step without siblings gets 0, or verl's rule (its value over 1 + ε)"),
        sibling_epsilon: f64 = range(0.0, 1.0, "0.000001", "sibling_z: added to the siblings' std"),
        outcome_weight: f64 = range(0.0, 5.0, "0", "weight of the outcome advantage added to the step utility"),
        outcome: OutcomeParams = GROUP,
    }
}

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
    /// The outcome advantage's options.
    outcome: crate::credit::kernels::outcome::OutcomeOptions,
    /// How a group's rollouts become a tree.
    merge: MergeChoice,
}

impl Options {
    fn of(knobs: &Knobs) -> Self {
        let value = if knobs.value == Value::ChildMean { ValueMode::ChildMean } else { ValueMode::LeafMean };
        let sibling_z = (knobs.form == Form::SiblingZ)
            .then(|| (knobs.std, knobs.sibling_epsilon as f32, knobs.singleton == Singleton::Verl));
        let outcome = crate::credit::kernels::outcome::OutcomeOptions::of(knobs.outcome);
        Self { value, outcome_weight: knobs.outcome_weight as f32, sibling_z, outcome, merge: knobs.merge_param.merge }
    }
}

/// The credit under `knobs`; with `explain`, the values per step its terms need too.
fn credit(run: &Run, knobs: &Knobs, explain: bool) -> Credit {
    let options = Options::of(knobs);
    let tree = build(run, options.value, merge_prefixes(run, options.merge));
    let weight = options.outcome_weight;
    let (outcome, _) = if weight > 0.0 { outcome_advantages(run, options.outcome) } else { (Vec::new(), Vec::new()) };
    let sibling_z =
        options.sibling_z.map(|(use_std, eps, verl_singleton)| tree.sibling_z(use_std, eps, verl_singleton).0);
    let tr = &run.trajectories;
    let mut step = crate::credit::data::pool::filled(tr.path_nodes.len(), f32::NAN);
    // Each step's own terms: its node's value and its parent's, or its z among its siblings.
    let (formula, step_names): (&str, &[&'static str]) = match (&sibling_z, weight > 0.0) {
        (None, true) => ("V(step) − V(parent) + w·A_outcome", &["V(step)", "V(parent)"]),
        (None, false) => ("V(step) − V(parent)", &["V(step)", "V(parent)"]),
        (Some(_), true) => ("z of V(step) among its siblings + w·A_outcome", &["sibling z"]),
        (Some(_), false) => ("z of V(step) among its siblings", &["sibling z"]),
    };
    let mut terms = Terms::for_rows(formula, &["V(root)", "R", "w", "A_outcome"], tr.len())
        .with_step_values(step_names, if explain { tr.path_nodes.len() } else { 0 });
    for t in tr.ids() {
        let offset = tr.path_offsets[t.index()] as usize;
        let a = outcome.get(t.index()).copied().unwrap_or(0.0);
        for k in 0..tr.num_steps(t) {
            let v = tree.node_of[offset + k];
            let utility = if let Some(z) = &sibling_z {
                terms.set_step(offset + k, &[f64::from(z[v as usize])]);
                z[v as usize]
            } else {
                let (value, parent) = (tree.value[v as usize], tree.parent_value(v));
                terms.set_step(offset + k, &[f64::from(value), f64::from(parent)]);
                value - parent
            };
            step[offset + k] = if weight > 0.0 { utility + weight * a } else { utility };
        }
        let root = tree.root_value[tr.group[t.index()].index()];
        let row = [f64::from(root), f64::from(tr.reward[t.index()]), f64::from(weight), f64::from(a)];
        terms.set(t.index(), &row);
    }
    Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) }
}
