//! Tree-GRPO (`tree_grpo`): GRPO over the prompt's whole forest (inter-tree) plus GRPO within each
//! tree (intra-tree), `tree_2norm` (intra over the inter values) or intra only.

use crate::credit::kernels::group::normalize_group;
use crate::credit::params::declare::{choice, decl, params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::Run;
use std::collections::BTreeMap;

scheme!(
    /// Tree-GRPO.
    TreeGrpo,
    knobs: Knobs,
    info: SchemeInfo {
        id: "tree_grpo",
        family: Family::Tree,
        display_name: "Tree-GRPO (inter + intra tree)",
        citation: "Ji et al. 2025, Tree Search for LLM Agent RL (Tree-GRPO); AMAP-ML/Tree-GRPO compute_advantage (tree, tree_2norm, tree_inner)",
        needs: "outcome rewards; tree records (without them each group counts as one tree)",
        source: SourceQuality::FromCode("AMAP-ML/Tree-GRPO@90b170995d996d772d68117e0c7bd0b8fe00d393"),
        checked: "Tree-GRPO's own code (tests/golden/tree_grpo/cases.json, made by its generate.py from Tree-GRPO 90b1709: tree, tree_2norm and tree_inner, trees and prompts of one leaf); the worked example of reference/credit-schemes-process.md",
    },
);

choice! {
    enum Combination { InterIntra = "inter+intra", TwoNorm = "2norm", Intra = "intra" }
}

params! {
    pub struct Knobs {
        combination: Combination = decl("inter+intra", "tree (script default), tree_2norm, or tree_inner"),
        epsilon: f64 = range(0.0, 1.0, "0.000001", "added to the std"),
    }
}

impl Typed for TreeGrpo {
    fn supports(&self, run: &Run) -> Support {
        crate::credit::engine::inputs::supports_outcomes(run)
    }
    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let tr = &run.trajectories;
        let eps = knobs.epsilon as f32;
        let combination = knobs.combination;
        let mut advantage = vec![f32::NAN; tr.len()];
        let mut inter_of = vec![f32::NAN; tr.len()];
        let mut intra = vec![f32::NAN; tr.len()];
        for g in run.groups.ids() {
            let members = run.groups.members(g);
            let rewards: Vec<f32> = members.iter().map(|t| tr.reward[t.index()]).collect();
            let (inter, _) = normalize_group(&rewards, eps);
            // Trees of the group: tree records, or the whole group as one tree.
            let mut trees: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
            for (i, t) in members.iter().enumerate() {
                trees.entry(tr.tree[t.index()].0).or_default().push(i);
            }
            let mut result = vec![0.0f32; members.len()];
            let mut intra_of = vec![0.0f32; members.len()];
            for positions in trees.values() {
                let source: Vec<f32> = positions
                    .iter()
                    .map(|&i| if combination == Combination::TwoNorm { inter[i] } else { rewards[i] })
                    .collect();
                let (intra, _) = normalize_group(&source, eps);
                for (&i, &a) in positions.iter().zip(&intra) {
                    intra_of[i] = a;
                    result[i] = match combination {
                        Combination::InterIntra => inter[i] + a,
                        Combination::TwoNorm | Combination::Intra => a,
                    };
                }
            }
            for (i, &t) in members.iter().enumerate() {
                advantage[t.index()] = result[i];
                inter_of[t.index()] = inter[i];
                intra[t.index()] = intra_of[i];
            }
        }
        let mut step = crate::credit::data::pool::filled(tr.path_nodes.len(), f32::NAN);
        let formula = match combination {
            Combination::InterIntra => "inter + intra: GRPO over the group, plus GRPO of R within the tree",
            Combination::TwoNorm => "intra: GRPO within the tree of the inter-tree GRPO values",
            Combination::Intra => "intra: GRPO of R within the tree",
        };
        let mut terms = Terms::for_rows(formula, &["R", "inter", "intra"], tr.len());
        for t in tr.ids() {
            step[tr.path_range(t)].fill(advantage[t.index()]);
            let row = [tr.reward[t.index()], inter_of[t.index()], intra[t.index()]].map(f64::from);
            terms.set(t.index(), &row);
        }
        Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
    }
}
