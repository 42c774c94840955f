//! PRIME (`prime`): implicit process rewards `q_t = log π_φ − log π_ref` per token plus the outcome
//! on the last token; each source gets an RLOO baseline over the group, the two discounted returns
//! are summed and whitened over the batch, as `PRIME-RL/PRIME`'s `compute_rloo_returns` does.

use crate::credit::engine::inputs::step_from_tokens;
use crate::credit::params::declare::{choice, decl, params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::{Run, TrajectoryId};

scheme!(
    /// PRIME.
    Prime,
    knobs: Knobs,
    info: SchemeInfo {
        id: "prime",
        family: Family::Process,
        display_name: "PRIME (implicit process reward)",
        citation: "Cui et al. 2025, Process Reinforcement through Implicit Rewards (arXiv 2502.01456); PRIME compute_rloo_returns",
        needs: "token arrays with `ref_logprob` and `prm_logprob` (or the policy `logprob` as the PRM), outcome rewards, groups of ≥ 2",
        source: SourceQuality::FromCode("PRIME-RL/PRIME@18ad596f08d487bb546d80d738d99ec697bd2e75"),
        checked: "PRIME's own code per token (tests/golden/prime/cases.json, made by its generate.py from PRIME 18ad596: both granularities, discounts, the accuracy filter, batch_norm, RLOO per source, whitening); the PRIME formulas of reference/credit-schemes-process.md (unit tests)",
    },
);

choice! {
    enum QSource { Auto = "auto", PrmLogprob = "prm_logprob", PolicyLogprob = "policy_logprob" }
    enum Granularity { Token = "token", Whole = "whole" }
    enum ProcessScale { BatchNorm = "batch_norm", Beta = "beta" }
    enum RlooForm { Code = "code", Paper = "paper" }
}

params! {
    pub struct Knobs {
        q_source: QSource = decl("auto", "log π_φ in q = log π_φ − log π_ref: the logged implicit PRM, or the policy (the PRM PRIME starts from); auto: the PRM when logged"),
        granularity: Granularity = decl("token", "process reward q_t on every token, or Σq on the last token (the mask stays the whole response)"),
        process_scale: ProcessScale = decl("batch_norm", "divide by the batch's largest |process return| (the code), or multiply by β (the paper)"),
        beta: f64 = range(0.0, 10.0, "0.05", "β of the paper's r = β·q (process_scale = beta)"),
        rloo_form: RlooForm = decl("code", "process baseline: r·K/(K−1) − Σ_j r̄_j/(K−1) (code) or r − Σ_{j≠i} r̄_j/(K−1) (paper)"),
        gamma_process: f64 = range(0.0, 1.0, "1", "discount of the process return (reward_model_gamma)"),
        gamma_outcome: f64 = range(0.0, 1.0, "1", "discount of the outcome return (verifier_gamma)"),
        filter_low: f64 = range(0.0, 1.0, "0.2", "drop groups whose accuracy is below this (0 = off)"),
        filter_high: f64 = range(0.0, 1.0, "0.8", "drop groups whose accuracy is above this (1 = off)"),
        whiten: bool = decl("true", "whiten the summed returns over all policy tokens of the batch"),
    }
}

/// The per-token inputs: `q` (0 off the policy mask) and the policy mask.
struct Inputs<'a> {
    q: Vec<f64>,
    mask: Option<&'a [bool]>,
}

impl Inputs<'_> {
    fn policy(&self, t: usize) -> bool {
        self.mask.is_none_or(|m| m.get(t).copied().unwrap_or(true))
    }
}

fn inputs<'a>(run: &'a Run, knobs: &Knobs) -> Result<Inputs<'a>, CreditError> {
    let tk = &run.tokens;
    let unsupported = |reason: &str| CreditError::Unsupported { scheme: "prime".to_owned(), reason: reason.to_owned() };
    let reference = tk.ref_logprob.as_deref().ok_or_else(|| unsupported("needs token `ref_logprob`"))?;
    let source = match knobs.q_source {
        QSource::Auto if tk.prm_logprob.is_none() => QSource::PolicyLogprob,
        other => other,
    };
    let phi = match source {
        QSource::PolicyLogprob => {
            tk.logprob.as_deref().ok_or_else(|| unsupported("q_source=policy_logprob needs token `logprob`"))?
        }
        _ => tk.prm_logprob.as_deref().ok_or_else(|| {
            unsupported("needs token `prm_logprob` (or set q_source=policy_logprob to use the policy as the PRM)")
        })?,
    };
    let mask = tk.mask.as_deref();
    let q = phi
        .iter()
        .zip(reference)
        .enumerate()
        .map(|(t, (&p, &r))| {
            let policy = mask.is_none_or(|m| m.get(t).copied().unwrap_or(true));
            let d = f64::from(p) - f64::from(r);
            if policy && d.is_finite() { d } else { 0.0 }
        })
        .collect();
    Ok(Inputs { q, mask })
}

/// Reverse discounted cumulative sum of `r` over `range`, added into `out`.
fn add_returns(r: &[f64], range: std::ops::Range<usize>, gamma: f64, out: &mut [f64]) {
    let mut acc = 0.0;
    for t in range.rev() {
        acc = r[t] + gamma * acc;
        out[t] += acc;
    }
}

impl Typed for Prime {
    fn supports(&self, run: &Run) -> Support {
        let tk = &run.tokens;
        if tk.len == 0 {
            return Support::No("needs token arrays (PRIME credits tokens)".to_owned());
        }
        if tk.ref_logprob.is_none() {
            return Support::No("needs token `ref_logprob`".to_owned());
        }
        if tk.prm_logprob.is_none() && tk.logprob.is_none() {
            return Support::No("needs token `prm_logprob` (or the policy `logprob`)".to_owned());
        }
        crate::credit::engine::inputs::supports_outcomes(run)
    }
    #[expect(clippy::too_many_lines, reason = "one pass per stage of the code's compute_rloo_returns, in order")]
    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let inputs = inputs(run, knobs)?;
        let tr = &run.trajectories;
        let whole = knobs.granularity == Granularity::Whole;
        let code_form = knobs.rloo_form == RlooForm::Code;
        let (low, high) = (knobs.filter_low, knobs.filter_high);
        let acc = |t: TrajectoryId| {
            let r = f64::from(tr.reward[t.index()]);
            if r.is_nan() { 0.0 } else { r }
        };
        // Which trajectories train: groups of ≥ 2 inside the accuracy filter.
        let mut kept = vec![false; tr.len()];
        let mut group_acc = vec![f64::NAN; tr.len()];
        for g in run.groups.ids() {
            let members = run.groups.members(g);
            let mean = members.iter().map(|&t| acc(t)).sum::<f64>() / members.len().max(1) as f64;
            let keep = members.len() >= 2 && mean >= low && mean <= high;
            for &t in members {
                kept[t.index()] = keep;
                group_acc[t.index()] = mean;
            }
        }
        // Process reward per token (0 off the mask and on dropped rollouts).
        let mut process = vec![0.0f64; run.tokens.len];
        let last_policy = |t: TrajectoryId| tr.token_range(t).rev().find(|&p| inputs.policy(p));
        for t in tr.ids().filter(|t| kept[t.index()]) {
            if whole {
                if let Some(last) = last_policy(t) {
                    process[last] = tr.token_range(t).map(|p| inputs.q[p]).sum();
                }
            } else {
                for p in tr.token_range(t) {
                    process[p] = inputs.q[p];
                }
            }
        }
        // Scale: the batch's largest |undiscounted process return| becomes 1, or β·q.
        if knobs.process_scale == ProcessScale::Beta {
            let beta = knobs.beta;
            for r in &mut process {
                *r *= beta;
            }
        } else {
            let mut max = 0.0f64;
            for t in tr.ids().filter(|t| kept[t.index()]) {
                let mut acc = 0.0;
                for p in tr.token_range(t).rev() {
                    acc += process[p];
                    max = max.max(acc.abs());
                }
            }
            for r in &mut process {
                *r /= max + 1e-6;
            }
        }
        // RLOO per source over each group, then the discounted returns of both sources.
        let mut outcome = vec![0.0f64; run.tokens.len];
        let mut returns = vec![0.0f64; run.tokens.len];
        let mut terms = Terms::for_rows(
            "RLOO(process q) + RLOO(outcome), summed returns, whitened",
            &["acc", "group acc", "process baseline", "outcome baseline", "K"],
            tr.len(),
        );
        let (gp, go) = (knobs.gamma_process, knobs.gamma_outcome);
        for g in run.groups.ids() {
            let members: Vec<TrajectoryId> =
                run.groups.members(g).iter().copied().filter(|t| kept[t.index()]).collect();
            if members.len() < 2 {
                continue;
            }
            let k = members.len() as f64;
            let policy_mean = |t: TrajectoryId| {
                let (mut sum, mut n) = (0.0, 0usize);
                for p in tr.token_range(t).filter(|&p| inputs.policy(p)) {
                    sum += process[p];
                    n += 1;
                }
                if n == 0 { 0.0 } else { sum / n as f64 }
            };
            let means: Vec<f64> = members.iter().map(|&t| policy_mean(t)).collect();
            let process_base = means.iter().sum::<f64>() / (k - 1.0);
            let outcome_base = members.iter().map(|&t| acc(t)).sum::<f64>() / (k - 1.0);
            for (&t, &own_mean) in members.iter().zip(&means) {
                for p in tr.token_range(t).filter(|&p| inputs.policy(p)) {
                    process[p] = if code_form {
                        process[p] * k / (k - 1.0) - process_base
                    } else {
                        process[p] - (process_base - own_mean / (k - 1.0))
                    };
                }
                if let Some(last) = last_policy(t) {
                    outcome[last] = acc(t) * k / (k - 1.0) - outcome_base;
                }
                add_returns(&process, tr.token_range(t), gp, &mut returns);
                add_returns(&outcome, tr.token_range(t), go, &mut returns);
                terms.set(t.index(), &[acc(t), group_acc[t.index()], process_base, outcome_base, k]);
            }
        }
        let trained: Vec<bool> = tr
            .ids()
            .flat_map(|t| {
                let keep = kept[t.index()];
                tr.token_range(t).map(move |_| keep)
            })
            .collect();
        let mut advantage = returns.clone();
        if knobs.whiten {
            let mask: Vec<f64> =
                trained.iter().enumerate().map(|(p, &k)| f64::from(u8::from(k && inputs.policy(p)))).collect();
            crate::credit::engine::whiten::verl(&mut advantage, Some(&mask));
        }
        let nan_unless_trained = |values: &[f64]| -> Vec<f32> {
            values.iter().zip(&trained).map(|(&v, &k)| if k { v as f32 } else { f32::NAN }).collect()
        };
        let token = nan_unless_trained(&advantage);
        Ok(Credit {
            step: step_from_tokens(run, &token),
            token: Some(token),
            token_returns: Some(nan_unless_trained(&returns)),
            terms,
            level: Some(crate::credit::Level::Token),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credit::{Params, Scheme as _};
    use crate::model::{NewTokens, Outcome, RunBuilder};

    /// The worked example of credit-schemes-process.md §1: K = 4, three tokens, γ = 1.
    fn example() -> Run {
        let q = [[0.2f32, 0.1, 0.3], [-0.1, -0.2, 0.0], [0.0, -0.3, -0.1], [0.1, 0.2, -0.1]];
        let acc = [1.0f32, 0.0, 0.0, 1.0];
        let mut b = RunBuilder::new("prime", "test");
        let (g, _) = b.add_group(&crate::model::NewGroup { key: "p", ..Default::default() });
        for (i, (q, &r)) in q.iter().zip(&acc).enumerate() {
            let reference = [0.0f32; 3];
            let tokens = NewTokens { prm_logprob: Some(q), ref_logprob: Some(&reference), ..NewTokens::default() };
            let outcome = Outcome { reward: Some(r), ..Outcome::default() };
            b.add_chain_trajectory(&format!("y{i}"), g, &[crate::model::NewStep::default()], &outcome, &tokens);
        }
        b.finish()
    }

    #[test]
    fn worked_example() {
        let run = example();
        let credit = Prime.compute(&run, &Params::defaults(&Prime)).expect("computes");
        let token = credit.token.as_ref().expect("token credit");
        let expected = [1.474, 1.154, 1.001, -1.029, -0.848, -0.501, -1.196, -1.182, -0.668, 0.807, 0.654, 0.334];
        for (got, want) in token.iter().zip(expected) {
            assert!((got - want).abs() < 2e-3, "{token:?}");
        }
        // Return of y1 before whitening: process [1.278, .852, .648] + outcome 0.667.
        let returns = credit.token_returns.as_ref().expect("returns");
        assert!((returns[0] - 1.944).abs() < 2e-3 && (returns[2] - 1.315).abs() < 2e-3, "{returns:?}");
    }

    #[test]
    fn paper_form_keeps_the_first_return() {
        let run = example();
        let mut params = Params::defaults(&Prime);
        params.set("whiten", crate::credit::ParamValue::Bool(false));
        let code = Prime.compute(&run, &params).expect("code");
        params.set("rloo_form", crate::credit::ParamValue::Choice("paper"));
        let paper = Prime.compute(&run, &params).expect("paper");
        let (c, p) = (code.token_returns.as_ref().expect("c"), paper.token_returns.as_ref().expect("p"));
        for row in 0..4 {
            assert!((c[row * 3] - p[row * 3]).abs() < 1e-5, "first return differs: {c:?} {p:?}");
        }
        assert!((c[2] - p[2]).abs() > 1e-3, "later positions differ slightly: {c:?} {p:?}");
    }

    #[test]
    fn filtered_groups_get_no_credit() {
        let run = example();
        let mut params = Params::defaults(&Prime);
        params.set("filter_high", crate::credit::ParamValue::Float(0.4));
        let credit = Prime.compute(&run, &params).expect("computes");
        assert!(credit.step.iter().all(|v| v.is_nan()));
    }
}
