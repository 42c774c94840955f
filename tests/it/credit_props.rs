//! Identities the estimators must satisfy on any input (proptest).
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use proptest::prelude::*;
use vantage::credit::{self, Batch, Params};

/// A random batch: groups of `sizes`, rows of 1..12 positions, rewards in [-2, 2], all valid.
fn batch_strategy() -> impl Strategy<Value = (Vec<usize>, Vec<Vec<f64>>, Vec<Vec<f64>>)> {
    prop::collection::vec(2usize..7, 1..5).prop_flat_map(|sizes| {
        let rows: usize = sizes.iter().sum();
        let row = prop::collection::vec(-2.0f64..2.0, 1..12);
        (Just(sizes), prop::collection::vec(row.clone(), rows), prop::collection::vec(row, rows))
    })
}

fn build(sizes: &[usize], rewards: &[Vec<f64>], values: &[Vec<f64>]) -> Batch<'static, f64> {
    let mut offsets = vec![0];
    let mut reward = Vec::new();
    let mut value = Vec::new();
    for (r, v) in rewards.iter().zip(values) {
        reward.extend_from_slice(r);
        // Values padded or cut to the row's length.
        value.extend((0..r.len()).map(|t| v.get(t).copied().unwrap_or(0.5)));
        offsets.push(reward.len());
    }
    let group = sizes.iter().enumerate().flat_map(|(g, &n)| std::iter::repeat_n(g as u32, n)).collect();
    Batch {
        offsets,
        reward: Some(reward),
        mask: None,
        group,
        num_groups: sizes.len(),
        values: Some(value.into()),
        ..Batch::default()
    }
}

fn run(id: &str, batch: &Batch<'_, f64>, sets: &[(&str, &str)]) -> Vec<f64> {
    let scheme = credit::scheme(id).unwrap();
    let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let params = Params::resolve(scheme, scheme.presets().first().map(|p| p.name), &sets).unwrap();
    std::mem::take(&mut scheme.token_kernel().unwrap().run64(batch, &params).unwrap().advantages)
}

/// First-position value of each row (outcome estimators broadcast one value per row).
fn per_row(batch: &Batch<'_, f64>, values: &[f64]) -> Vec<f64> {
    (0..batch.num_rows()).map(|i| values[batch.offsets[i]]).collect()
}

proptest! {
    #[test]
    fn grpo_advantages_sum_to_zero_in_every_group((sizes, rewards, values) in batch_strategy(), norm in any::<bool>()) {
        let batch = build(&sizes, &rewards, &values);
        let a = per_row(&batch, &run("grpo", &batch, &[("norm_by_std", if norm { "true" } else { "false" })]));
        for rows in batch.group_rows().iter() {
            let sum: f64 = rows.iter().map(|&i| a[i]).sum();
            prop_assert!(sum.abs() < 1e-6, "group sum {sum}");
        }
    }

    #[test]
    fn gae_with_gamma_and_lambda_one_is_return_minus_value((sizes, rewards, values) in batch_strategy()) {
        let batch = build(&sizes, &rewards, &values);
        let a = run("gae", &batch, &[("gamma", "1"), ("lam", "1"), ("whiten", "none")]);
        let v = batch.values.as_ref().unwrap();
        let r = batch.reward.as_ref().unwrap();
        for i in 0..batch.num_rows() {
            let range = batch.row(i);
            for t in range.clone() {
                let ret: f64 = r[t..range.end].iter().sum();
                prop_assert!((a[t] - (ret - v[t])).abs() < 1e-9, "{} vs {}", a[t], ret - v[t]);
            }
        }
    }

    #[test]
    fn rloo_is_grpo_without_std_scaled_by_g_over_g_minus_one((sizes, rewards, values) in batch_strategy()) {
        let batch = build(&sizes, &rewards, &values);
        let rloo = per_row(&batch, &run("rloo", &batch, &[]));
        let grpo = per_row(&batch, &run("grpo", &batch, &[("norm_by_std", "false")]));
        for rows in batch.group_rows().iter() {
            let g = rows.len() as f64;
            for &i in rows {
                prop_assert!((rloo[i] - g / (g - 1.0) * grpo[i]).abs() < 1e-9);
            }
        }
    }

    // grpo_vectorized is left out on purpose: verl computes its variance in one float32 pass
    // (Σx² − (Σx)²/n), so a shift changes the cancellation error and with it the advantages, as in verl.
    #[test]
    fn normalized_schemes_ignore_a_constant_added_to_every_reward(
        (sizes, rewards, values) in batch_strategy(),
        shift in -5.0f64..5.0,
    ) {
        let batch = build(&sizes, &rewards, &values);
        let shifted_rewards: Vec<Vec<f64>> = rewards
            .iter()
            .map(|r| {
                let mut r = r.clone();
                *r.last_mut().unwrap() += shift;
                r
            })
            .collect();
        let shifted = build(&sizes, &shifted_rewards, &values);
        for (id, sets) in [
            ("grpo", vec![]),
            ("grpo", vec![("norm_by_std", "false")]),
            ("rloo", vec![]),
            ("rloo_vectorized", vec![]),
            ("opo", vec![]),
            ("reinforce_plus_plus_baseline", vec![]),
        ] {
            let a = run(id, &batch, &sets);
            let b = run(id, &shifted, &sets);
            for (x, y) in a.iter().zip(&b) {
                prop_assert!((x - y).abs() < 1e-7 * (1.0 + x.abs()), "{id}: {x} vs {y}");
            }
        }
    }
}

#[test]
fn grpo_terms_explain_each_value() {
    // One group of four: rewards 1, 0, 0, 1 at the last position.
    let batch =
        build(&[4], &[vec![0.0, 1.0], vec![0.0], vec![0.0, 0.0, 0.0], vec![1.0]], &[vec![], vec![], vec![], vec![]]);
    let scheme = credit::scheme("grpo").unwrap();
    let params = Params::resolve(scheme, Some("verl"), &[]).unwrap();
    let out = scheme.token_kernel().unwrap().run64(&batch, &params).unwrap();
    let row = out.terms.row(0);
    let names: Vec<&str> = row.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["r", "mean", "std", "ε", "group size"]);
    let value = |name: &str| row.iter().find(|(n, _)| *n == name).unwrap().1;
    assert_eq!(value("r"), 1.0);
    assert_eq!(value("mean"), 0.5);
    assert!((value("std") - (1.0f64 / 3.0).sqrt()).abs() < 1e-6);
    let explained = (value("r") - value("mean")) / (value("std") + value("ε"));
    assert!((out.advantages[1] - explained).abs() < 1e-6, "{} vs {explained}", out.advantages[1]);
    assert_eq!(out.terms.formula, "(r − mean)/(std + ε)");
}

#[test]
fn no_scheme_has_two_parameters_of_one_name() {
    for scheme in vantage::credit::SCHEMES {
        let mut names: Vec<&str> = scheme.params().iter().map(|p| p.name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before, "{}: a parameter name twice", scheme.info().id);
    }
}
