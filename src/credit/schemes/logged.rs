//! The trainer's own advantages (`logged`): no formula, the values the log carries, so a
//! recomputed scheme can be put beside them. A per-token `advantage` array (each step gets the
//! mean over its policy tokens), a step score `logged_advantage` (TRL completions, Trackio), or an
//! outcome component `advantage`, `advantages` (a verl dump's extra field) or `logged_advantage` on
//! every step of its rollout.

use crate::credit::params::declare::{choice, decl, params};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::Run;

scheme!(
    /// The logged advantages.
    Logged,
    knobs: Knobs,
    info: SchemeInfo {
        id: "logged",
        family: Family::Control,
        display_name: "Logged advantage (the trainer's own)",
        citation: "the advantages the trainer itself logged: TRL's `advantage` column, a per-token `advantage` array, a `logged_advantage` step score",
        needs: "a token `advantage` array, a `logged_advantage` step score or an `advantage` outcome component",
        source: SourceQuality::FromCode("the log itself: the values the trainer wrote, not recomputed"),
        checked: "its definition: logged values pass through unchanged (tests/it/process_credit.rs)",
    },
);

choice! {
    enum Source { Auto = "auto", Token = "token", Step = "step", Outcome = "outcome" }
}

params! {
    pub struct Knobs {
        source: Source = decl("auto", "which logged values: the token `advantage` array, the `logged_advantage` step score, or the `advantage` outcome component; auto takes the first the run has"),
    }
}

/// The outcome component holding a logged advantage, if the run has one.
fn outcome_column(run: &Run) -> Option<&[f32]> {
    let components = &run.trajectories.components;
    ["advantage", "advantages", "logged_advantage"].iter().find_map(|name| components.get(*name)).map(Vec::as_slice)
}

/// The sources the run has, in the order `auto` takes them.
fn sources(run: &Run) -> Vec<Source> {
    let mut out = Vec::new();
    if run.tokens.advantage.is_some() {
        out.push(Source::Token);
    }
    if run.nodes.scores.contains_key("logged_advantage") {
        out.push(Source::Step);
    }
    if outcome_column(run).is_some() {
        out.push(Source::Outcome);
    }
    out
}

impl Typed for Logged {
    fn supports(&self, run: &Run) -> Support {
        if sources(run).is_empty() { Support::No(INFO.needs.to_owned()) } else { Support::Yes }
    }
    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let have = sources(run);
        let source = match knobs.source {
            Source::Auto => have.first().copied(),
            wanted => have.iter().copied().find(|s| *s == wanted),
        }
        .ok_or_else(|| CreditError::Unsupported {
            scheme: "logged".to_owned(),
            reason: format!("the run logs no {} advantage", knobs.source),
        })?;
        let tr = &run.trajectories;
        let terms = Terms::for_rows(format!("the trainer's logged advantage ({source})"), &[], tr.len());
        match source {
            Source::Token => {
                let token = run.tokens.advantage.clone().unwrap_or_default();
                let step = crate::credit::engine::inputs::step_from_tokens(run, &token);
                Ok(Credit {
                    step,
                    token: Some(token),
                    token_returns: None,
                    terms,
                    level: Some(crate::credit::Level::Token),
                })
            }
            Source::Step => {
                let column = &run.nodes.scores["logged_advantage"];
                let step: Vec<f32> = tr.path_nodes.iter().map(|n| column[n.index()]).collect();
                Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
            }
            _ => {
                let column = outcome_column(run).unwrap_or_default();
                let mut step = vec![f32::NAN; tr.path_nodes.len()];
                for t in tr.ids() {
                    step[tr.path_range(t)].fill(column.get(t.index()).copied().unwrap_or(f32::NAN));
                }
                Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
            }
        }
    }
}
