//! GRPO (`grpo`, verl's loop version): group-normalized outcome advantage, and its TRL and
//! OpenRLHF (`group_norm`, `dr_grpo`) variants as parameters.

use crate::credit::data::batch::{Batch, Output};
use crate::credit::data::moments::{mean_std, torch_mean_std, torch_row_mean_std};
use crate::credit::data::real::Real;
use crate::credit::engine::inputs::Common;
use crate::credit::engine::inputs::{Preparation, supports_rewards};
use crate::credit::kernels::openrlhf::{Placement, PlacementParam};
use crate::credit::params::declare::{GROUP, choice, decl, params, range};
use crate::credit::scheme::estimator;
use crate::credit::{CreditError, Family, Preset, SchemeInfo, SourceQuality, Terms};

choice! {
    enum Std { Unbiased = "unbiased", Biased = "biased" }
    enum Scale { Group = "group", Batch = "batch" }
    enum Mean { Group = "group", Batch = "batch" }
    enum Singleton { Verl = "verl", Zero = "zero" }
    enum Aggregation { SumThenNormalize = "sum_then_normalize", NormalizeThenSum = "normalize_then_sum" }
    enum Unscorable { None = "none", Zero = "zero" }
    enum Baseline { Group = "group", LeaveOneOut = "leave_one_out" }
    enum Count { Trajectory = "trajectory", Tree = "tree" }
    enum ZeroStd { Divide = "divide", Skip = "skip" }
    enum Reduction { Sequential = "sequential", TorchRows = "torch_rows", TorchAll = "torch_all" }
    enum Grouping { Prompt = "prompt", SlimeRows = "slime_rows" }
}

params! {
    pub struct Knobs {
        norm_by_std: bool = decl("true", "divide by the group std (verl norm_adv_by_std_in_grpo); false is Dr.GRPO"),
        epsilon: f64 = range(0.0, 1.0, "0.000001", "added to the std: verl 1e-6, TRL 1e-4, OpenRLHF 1e-9"),
        std: Std = decl("unbiased", "std estimator (all three trainers use unbiased)"),
        scale: Scale = decl("group", "std over the group, or over the whole batch (TRL scale_rewards=batch)"),
        mean: Mean = decl("group", "the mean subtracted: the group's, or the whole batch's (OpenRLHF flash_reinforce, with norm_by_std off)"),
        singleton: Singleton = decl("verl", "a group of one: verl uses mean 0, std 1 (so s/(1+ε), or s without std); zero gives 0 (TRL, OpenRLHF)"),
        aggregation: Aggregation = decl("sum_then_normalize", "TRL multi_objective_aggregation: normalize the summed reward, or (GDPO) each reward function's value within its group, sum them by reward_weights, and normalize the sum over the batch; needs the functions' values (outcome components)"),
        unscorable: Unscorable = decl("none", "a row without a score (every reward function returned None) is left out of its group's mean and std; it gets no value, or 0 as TRL's nan_to_num gives"),
        baseline: Baseline = decl("group", "the mean subtracted: the group's, or the other members' (NeMo-RL use_leave_one_out_baseline: the std is then the others' unbiased std, and a zero std divides nothing)"),
        count: Count = decl("trajectory", "what the group's mean and std count: every trajectory, or a tree record once (prime-rl scores a trace once, whatever its branches)"),
        zero_std: ZeroStd = decl("divide", "where a group's std is 0: divide by std + ε all the same (verl, slime), or leave r − mean (NeMo-RL, miles divide only where the std is above 0)"),
        grouping: Grouping = decl("prompt", "the groups: the log's (its prompts), or slime's rule per training step: consecutive rows of n_samples_per_prompt when the step holds n_samples_per_prompt × rollout_batch_size rows, else the whole step as one group (RolloutManager._post_process_rewards)"),
        n_samples_per_prompt: i64 = range(0.0, 1000000.0, "0", "slime's n_samples_per_prompt, for grouping = slime_rows; 0 = the step's largest group's size"),
        rollout_batch_size: i64 = range(0.0, 1000000.0, "0", "slime's rollout_batch_size, for grouping = slime_rows; 0 = the number of groups in the step"),
        reduction: Reduction = decl("sequential", "how a group's float32 mean and std are taken: the mean summed in order; or as torch sums on the CPU (ATen's cascade sum: 8-wide vectors, four accumulators), with the std of the centered rewards (torch_rows: slime's rows.mean(dim=-1), then .std(dim=-1)) or about that float32 mean (torch_all: miles' tensor.mean() and .std()); matters only in the last bits, and in a group of equal rewards that are not dyadic, where ε magnifies a mean that misses them by an ulp"),
        reward_clip: f64 = range(0.0, 1000.0, "0", "clamp the advantage to ±this before placement (OpenRLHF clips to ±10); 0 = off"),
        placement_param: PlacementParam = GROUP,
        common: Common = GROUP,
    }
}

/// The trainers' presets.
const TRAINERS: [Preset; 10] = [
    Preset {
        name: "verl",
        values: &[
            ("norm_by_std", "true"),
            ("epsilon", "0.000001"),
            ("singleton", "verl"),
            ("unscorable", "none"),
            ("reward_clip", "0"),
            ("placement", "broadcast"),
            ("kl_coef", "0"),
        ],
        doc: "verl grpo: (s − mean)/(std + 1e-6), unbiased std, singleton s/(1+1e-6), advantage broadcast over the mask",
    },
    Preset {
        name: "trl",
        values: &[
            ("norm_by_std", "true"),
            ("epsilon", "0.0001"),
            ("singleton", "zero"),
            ("unscorable", "zero"),
            ("reward_clip", "0"),
            ("placement", "broadcast"),
            ("kl_coef", "0"),
        ],
        doc: "TRL GRPOTrainer, scale_rewards=group: ε = 1e-4 outside the std; unscorable rows left out and given 0; KL is a loss term, not in the reward",
    },
    Preset {
        name: "openrlhf",
        values: &[
            ("norm_by_std", "true"),
            ("epsilon", "0.000000001"),
            ("singleton", "zero"),
            ("unscorable", "none"),
            ("reward_clip", "10"),
            ("placement", "last_token_return"),
            ("kl_coef", "0.01"),
            ("kl_mode", "k1"),
        ],
        doc: "OpenRLHF group_norm: ε = 1e-9, scalar clipped to ±10, placed at the last token, k1 KL (0.01) per token, reward-to-go",
    },
    Preset {
        name: "dr_grpo",
        values: &[("norm_by_std", "false"), ("singleton", "verl"), ("placement", "broadcast"), ("kl_coef", "0")],
        doc: "Dr.GRPO as verl runs it: grpo with norm_adv_by_std_in_grpo=false",
    },
    Preset {
        name: "nemo_rl",
        values: &[
            ("norm_by_std", "true"),
            ("epsilon", "0.000001"),
            ("baseline", "leave_one_out"),
            ("singleton", "zero"),
            ("reward_clip", "0"),
            ("placement", "broadcast"),
            ("kl_coef", "0"),
        ],
        doc: "NeMo-RL GRPO's defaults (NVIDIA-NeMo/RL 7ea279abf, advantage_estimator.py GRPOAdvantageEstimator, use_leave_one_out_baseline and normalize_rewards true): r minus the mean of the prompt's other samples, over their unbiased std + 1e-6 where that std is above 0; one sample alone gets 0",
    },
    Preset {
        name: "nemo_rl_no_loo",
        values: &[
            ("norm_by_std", "true"),
            ("epsilon", "0.000001"),
            ("baseline", "group"),
            ("singleton", "zero"),
            ("zero_std", "skip"),
            ("reward_clip", "0"),
            ("placement", "broadcast"),
            ("kl_coef", "0"),
        ],
        doc: "NeMo-RL GRPO with use_leave_one_out_baseline false (7ea279abf): (r − mean)/(std + 1e-6), unbiased std over the prompt's samples, not divided where the std is 0; one sample alone gets 0",
    },
    Preset {
        name: "prime_rl",
        values: &[
            ("norm_by_std", "false"),
            ("baseline", "group"),
            ("count", "tree"),
            ("singleton", "zero"),
            ("reward_clip", "0"),
            ("placement", "broadcast"),
            ("kl_coef", "0"),
        ],
        doc: "prime-rl's default GRPO (PrimeIntellect-ai/prime-rl 559b44772, orchestrator/algo/grpo.py GRPOAlgorithm.score_group without length_penalty): reward − the group's mean reward over its traces (a trace with several branches counted once), on every sampled token of the trace; prime-rl leaves traces that failed or whose agent is not trainable out of the mean, and vantage counts them",
    },
    Preset {
        name: "tinker",
        values: &[
            ("norm_by_std", "false"),
            ("baseline", "group"),
            ("singleton", "zero"),
            ("reward_clip", "0"),
            ("placement", "broadcast"),
            ("kl_coef", "0"),
        ],
        doc: "tinker-cookbook's RL advantage (thinking-machines-lab/tinker-cookbook 9dfcc3a2, rl/data_processing.py compute_advantages): each trajectory's total reward (its steps' rewards plus the group reward) minus the group's mean, in float32, not divided by a std; one trajectory alone gets 0",
    },
    Preset {
        name: "slime",
        values: &[
            ("norm_by_std", "true"),
            ("epsilon", "0.000001"),
            ("baseline", "group"),
            ("singleton", "zero"),
            ("zero_std", "divide"),
            ("grouping", "slime_rows"),
            ("reduction", "torch_rows"),
            ("reward_clip", "0"),
            ("placement", "broadcast"),
            ("kl_coef", "0"),
        ],
        doc: "slime --advantage-estimator grpo with rewards and std normalization (THUDM/slime 624b824a8 ray/rollout.py RolloutManager._post_process_rewards): per training step, (r − mean)/(std + 1e-6) over consecutive rows of n_samples_per_prompt, torch's unbiased std, when the step holds n_samples_per_prompt × rollout_batch_size rows; any other step (groups of unequal size, as dynamic sampling or filtering leaves) is normalized as one group. n_samples_per_prompt = 1 gives r − r = 0",
    },
    Preset {
        name: "miles",
        values: &[
            ("norm_by_std", "true"),
            ("epsilon", "0.000001"),
            ("baseline", "group"),
            ("singleton", "zero"),
            ("zero_std", "skip"),
            ("grouping", "prompt"),
            ("reduction", "torch_all"),
            ("reward_clip", "0"),
            ("placement", "broadcast"),
            ("kl_coef", "0"),
        ],
        doc: "miles --advantage-estimator grpo with rewards and std normalization (radixark/miles 31f1ca961 ray/rollout/train_data_conversion.py _normalize_rewards_by_rollout): per prompt (its group_index), r − mean, divided by torch's unbiased std of the rewards + 1e-6 only where that std is above 0; a prompt of one sample gets 0",
    },
];

estimator!(
    Grpo,
    kernel: kernel,
    info: SchemeInfo {
        id: "grpo",
        family: Family::Outcome,
        display_name: "GRPO",
        citation: "Shao et al. 2024, DeepSeekMath (arXiv 2402.03300); verl compute_grpo_outcome_advantage; TRL GRPOTrainer; OpenRLHF group_norm / dr_grpo; Dr.GRPO: Liu et al. 2025 (arXiv 2503.20783)",
        needs: "outcome rewards (or env / token rewards); tokens optional",
        source: SourceQuality::FromCode(crate::credit::VERL_AT),
        checked: "verl's own outputs (golden/verl, tests/it/golden_verl.rs); TRL 1.16's own outputs (golden/trl, tests/it/golden_trainers.rs); OpenRLHF 0.11.2's own outputs (golden/openrlhf, tests/it/golden_trainers.rs) (group_norm, dr_grpo); NeMo-RL's, prime-rl's, slime's and miles' own functions run with torch 2.15 on the CPU (tests/golden/trainers_2026, tests/it/trainers_2026.rs: groups of 1 to 16, mixed sizes, negative rewards, interleaved prompts, all-equal groups) under the presets nemo_rl, nemo_rl_no_loo, prime_rl, slime and miles,: slime and miles to the bit (their presets sum as torch 2.15 does on the CPU, reduction = torch_rows / torch_all, checked on rows of 1 to 3000 values), the others within 1e-5. The one gap: NeMo-RL takes its group means by a matrix product (BLAS), whose summation order vantage does not reproduce, so in a group whose rewards are all equal and not dyadic its float32 mean can miss the reward by an ulp that ε = 1e-6 magnifies: measured there, NeMo-RL's leave-one-out advantage up to 3.16e-4 on octets of 0.3 and 0.7 where vantage gives 6e-8 at most, the only rows the test lets differ (by no more than that) (torch builds differ too: the PyPI wheel and the CPU-only one part by an ulp on a NeMo-RL row). The compare view names such differences as rounding noise of a zero-variance group (within (n − 1)·2⁻²⁴·|r|/ε), not as a filter or mask",
    },
    params: Knobs,
    presets: TRAINERS,
    supports: supports_rewards,
    preparation: |knobs: &Knobs| Preparation {
        openrlhf_shaping: knobs.placement_param.placement == Placement::LastTokenReturn,
        ..Preparation::of(knobs.common)
    },
);

/// TRL's `normalize_then_sum` (GDPO): each reward function's value normalized within its group
/// (`(r − mean)/(std + ε)`, unbiased, NaN-aware; a group of one gives NaN), summed over the
/// functions by weight (missing values count 0; a row with no value at all has none), and the sum
/// normalized over the batch; rows without a value get 0.
fn normalize_then_sum<F: Real>(batch: &Batch<'_, F>, eps: F) -> Vec<F> {
    let rows = batch.num_rows();
    let weight = |k: usize| batch.component_weights.get(k).copied().unwrap_or(F::ONE);
    let mut sum = vec![F::ZERO; rows];
    let mut any = vec![false; rows];
    let groups = batch.group_rows();
    let mut valid: Vec<F> = Vec::new();
    for (k, values) in batch.components.iter().enumerate() {
        for members in groups.iter() {
            valid.clear();
            valid.extend(members.iter().map(|&i| values[i]).filter(|v| !v.is_nan()));
            let (mean, std) = if valid.len() < 2 {
                (if valid.is_empty() { F::ZERO } else { valid[0] }, F::of(f64::NAN))
            } else {
                mean_std(&valid, true)
            };
            for &i in members {
                let v = values[i];
                if v.is_nan() {
                    continue;
                }
                any[i] = true;
                let normalized = (v - mean) / (std + eps);
                if !normalized.is_nan() {
                    sum[i] += weight(k) * normalized;
                }
            }
        }
    }
    let present: Vec<F> = (0..rows).filter(|&i| any[i]).map(|i| sum[i]).collect();
    // One scored row or none: its advantage is 0 (TRL's 0/0 or (x − x)/ε).
    if present.len() < 2 {
        return vec![F::ZERO; rows];
    }
    let (mean, std) = mean_std(&present, true);
    (0..rows)
        .map(|i| {
            let a = (sum[i] - mean) / (std + eps);
            if any[i] && !a.is_nan() { a } else { F::ZERO }
        })
        .collect()
}

/// GRPO's parameters, read once: how the group statistics are taken and the advantage formed.
#[derive(Clone, Copy, Debug)]
struct Options {
    /// TRL's `normalize_then_sum` (GDPO) instead of one reward.
    normalize_then_sum: bool,
    /// Added to the std.
    eps: f64,
    /// Divide by the std (`false`: Dr.GRPO's `r − mean`).
    norm_by_std: bool,
    /// The unbiased (n − 1) std, else the population std.
    unbiased: bool,
    /// A group of one gets advantage 0 (TRL), else verl's mean 0 and std 1.
    zero_singleton: bool,
    /// A row without a score gets 0, else stays NaN.
    unscorable_zero: bool,
    /// Clip the advantage to ±this (0: no clip).
    reward_clip: f64,
    /// The mean over the batch instead of the group.
    batch_mean: bool,
    /// The std over the batch instead of the group.
    batch_scale: bool,
    /// NeMo-RL's leave-one-out baseline: each row's mean and std are its group's others'.
    leave_one_out: bool,
    /// The group's mean and std count each tree record once.
    per_tree: bool,
    /// Where the std is 0, leave `r − mean` (no division).
    skip_zero_std: bool,
    /// slime's grouping: `(n_samples_per_prompt, rollout_batch_size)`, 0 for inferred.
    slime_rows: Option<(usize, usize)>,
    /// How a group's float32 mean and std are taken.
    reduction: Reduction,
}

impl Options {
    fn of(knobs: &Knobs) -> Self {
        Self {
            normalize_then_sum: knobs.aggregation == Aggregation::NormalizeThenSum,
            eps: knobs.epsilon,
            norm_by_std: knobs.norm_by_std,
            unbiased: knobs.std != Std::Biased,
            zero_singleton: knobs.singleton == Singleton::Zero,
            unscorable_zero: knobs.unscorable == Unscorable::Zero,
            reward_clip: knobs.reward_clip,
            batch_mean: knobs.mean == Mean::Batch,
            batch_scale: knobs.scale == Scale::Batch,
            leave_one_out: knobs.baseline == Baseline::LeaveOneOut,
            per_tree: knobs.count == Count::Tree,
            skip_zero_std: knobs.zero_std == ZeroStd::Skip,
            slime_rows: (knobs.grouping == Grouping::SlimeRows).then(|| {
                let size = |v: i64| usize::try_from(v).unwrap_or(0);
                (size(knobs.n_samples_per_prompt), size(knobs.rollout_batch_size))
            }),
            reduction: knobs.reduction,
        }
    }
}

fn kernel<F: Real>(batch: &Batch<'_, F>, knobs: &Knobs) -> Result<Output<F>, CreditError> {
    let options = Options::of(knobs);
    if options.normalize_then_sum {
        if batch.components.is_empty() {
            return Err(CreditError::Unsupported {
                scheme: "grpo".to_owned(),
                reason: "normalize_then_sum needs each reward function's value (outcome components)".to_owned(),
            });
        }
        let advantage = normalize_then_sum(batch, F::of(options.eps));
        let terms =
            Terms::for_rows("GDPO: Σ_k w_k·(r_k − mean)/(std + ε), normalized over the batch", &[], advantage.len());
        return Ok(Output { advantages: batch.broadcast(&advantage), returns: None, terms });
    }
    if options.leave_one_out {
        return Ok(leave_one_out(batch, knobs, &options));
    }
    let scores = batch.scores();
    let Options { eps, norm_by_std: norm, unbiased, zero_singleton, unscorable_zero, .. } = options;
    let (eps, clip) = (F::of(eps), F::of(options.reward_clip));
    let batch_mean = options.batch_mean.then(|| {
        let (mut sum, mut n) = (F::ZERO, 0usize);
        for &s in scores.iter().filter(|s| !s.is_nan()) {
            sum += s;
            n += 1;
        }
        sum / F::of(n as f64)
    });
    let batch_std = options.batch_scale.then(|| {
        let valid: Vec<F> = scores.iter().copied().filter(|s| !s.is_nan()).collect();
        mean_std(&valid, unbiased).1
    });
    let mut advantage = vec![F::ZERO; scores.len()];
    let formula = if norm { "(r − mean)/(std + ε)" } else { "r − mean" };
    let mut terms = Terms::for_rows(formula, &["r", "mean", "std", "ε", "group size"], scores.len());
    let mut valid: Vec<F> = Vec::new();
    let mut seen: Vec<u32> = Vec::new();
    let groups = match options.slime_rows {
        Some(layout) => slime_groups(batch, layout),
        None => batch.group_rows().iter().map(<[usize]>::to_vec).collect(),
    };
    for rows in &groups {
        valid.clear();
        seen.clear();
        for &i in rows {
            // A tree record counted once: its first row stands for it.
            if options.per_tree && !batch.first_of_tree(i, &mut seen) {
                continue;
            }
            if !scores[i].is_nan() {
                valid.push(scores[i]);
            }
        }
        // verl: a group of one has mean 0 and std = torch.tensor(1.0), a float32 one.
        let (mean, std) = match options.reduction {
            _ if valid.len() < 2 => (F::ZERO, F::ONE),
            Reduction::Sequential => mean_std(&valid, unbiased),
            Reduction::TorchRows => torch_row_mean_std(&valid, unbiased),
            Reduction::TorchAll => torch_mean_std(&valid, unbiased),
        };
        let std = batch_std.unwrap_or(std);
        let mean = batch_mean.unwrap_or(mean);
        for &i in rows {
            let s = scores[i];
            let mut a = if s.is_nan() || (valid.len() == 1 && zero_singleton && batch_mean.is_none()) {
                if s.is_nan() && !unscorable_zero { s } else { F::ZERO }
            } else if norm && !(options.skip_zero_std && std == F::ZERO) {
                let divisor = if valid.len() == 1 && batch_std.is_none() {
                    F::of(f64::from(1.0f32 + 1e-6_f32))
                } else {
                    std + eps
                };
                (s - mean) / divisor
            } else {
                s - mean
            };
            if clip > F::ZERO {
                a = a.max(-clip).min(clip);
            }
            advantage[i] = a;
            // A group of one given 0 (TRL, OpenRLHF): its mean is its own reward and it has no
            // spread, so the terms give the 0 shown (not verl's mean 0 and std 1).
            let zeroed = !s.is_nan() && valid.len() == 1 && zero_singleton && batch_mean.is_none();
            let (mean, std) = if zeroed { (s, batch_std.unwrap_or(F::ZERO)) } else { (mean, std) };
            terms.set(i, &[s.f64(), mean.f64(), std.f64(), eps.f64(), valid.len() as f64]);
        }
    }
    Ok(Output { advantages: placed(batch, &advantage, knobs), returns: None, terms })
}

/// slime's groups (`RolloutManager._post_process_rewards`, once per rollout, that is per training
/// step): each training step's rows, in batch order, cut into consecutive runs of
/// `n_samples_per_prompt` when the step holds `n_samples_per_prompt × rollout_batch_size` rows
/// (`rewards.reshape(-1, n)`, whatever the prompts), else all in one group
/// (`rewards.view(-1, len)`). Zeros in `layout` are the step's own: its largest group's size and its
/// number of groups. Rows of no logged step are one batch.
fn slime_groups<F: Real>(batch: &Batch<'_, F>, (n, prompts): (usize, usize)) -> Vec<Vec<usize>> {
    let step_of = |i: usize| {
        let g = batch.group.get(i).copied().unwrap_or(u32::MAX) as usize;
        batch.group_step.get(g).copied().unwrap_or(i64::MIN)
    };
    let mut steps: Vec<(i64, Vec<usize>)> = Vec::new();
    for i in 0..batch.num_rows() {
        let step = step_of(i);
        match steps.iter_mut().find(|(s, _)| *s == step) {
            Some((_, rows)) => rows.push(i),
            None => steps.push((step, vec![i])),
        }
    }
    let mut out = Vec::new();
    for (_, rows) in steps {
        let mut sizes: std::collections::BTreeMap<u32, usize> = std::collections::BTreeMap::new();
        for &i in &rows {
            *sizes.entry(batch.group.get(i).copied().unwrap_or(u32::MAX)).or_default() += 1;
        }
        let n = if n == 0 { sizes.values().copied().max().unwrap_or(0) } else { n };
        let prompts = if prompts == 0 { sizes.len() } else { prompts };
        if n > 0 && n * prompts == rows.len() {
            out.extend(rows.chunks(n).map(<[usize]>::to_vec));
        } else {
            out.push(rows);
        }
    }
    out
}

/// The advantages placed on the tokens: OpenRLHF's placements, else broadcast.
fn placed<F: Real>(batch: &Batch<'_, F>, advantage: &[F], knobs: &Knobs) -> Vec<F> {
    if knobs.placement_param.placement == Placement::LastTokenReturn {
        crate::credit::kernels::openrlhf::returns(batch, advantage, knobs.common.shape(knobs.reward_clip), F::ONE)
    } else {
        batch.broadcast(advantage)
    }
}

/// NeMo-RL's GRPO with `use_leave_one_out_baseline` (`nemo_rl/algorithms/utils.py`
/// `calculate_baseline_and_std_per_prompt`, `advantage_estimator.py` `GRPOAdvantageEstimator`): each
/// row's baseline is the mean of the other rows of its group, its std their unbiased std (0 with
/// fewer than two others), and the advantage `r − baseline`, divided by `std + ε` where that std
/// is above 0. A group with one scored row gives it 0 (its baseline is its reward).
fn leave_one_out<F: Real>(batch: &Batch<'_, F>, knobs: &Knobs, options: &Options) -> Output<F> {
    let scores = batch.scores();
    let (eps, clip) = (F::of(options.eps), F::of(options.reward_clip));
    let mut advantage = vec![F::ZERO; scores.len()];
    let formula =
        if options.norm_by_std { "(r − mean of the others)/(their std + ε)" } else { "r − mean of the others" };
    let mut terms =
        Terms::for_rows(formula, &["r", "mean of the others", "their std", "ε", "group size"], scores.len());
    let mut others: Vec<F> = Vec::new();
    for rows in batch.group_rows().iter() {
        let valid = rows.iter().filter(|&&i| !scores[i].is_nan()).count();
        for &i in rows {
            let s = scores[i];
            if s.is_nan() {
                advantage[i] = if options.unscorable_zero { F::ZERO } else { s };
                continue;
            }
            others.clear();
            others.extend(rows.iter().filter(|&&j| j != i).map(|&j| scores[j]).filter(|v| !v.is_nan()));
            let (mut a, mean, std) =
                crate::credit::kernels::outcome::leave_one_out(s, &others, eps, options.norm_by_std);
            if clip > F::ZERO {
                a = a.max(-clip).min(clip);
            }
            advantage[i] = a;
            terms.set(i, &[s.f64(), mean.f64(), std.f64(), eps.f64(), valid as f64]);
        }
    }
    Output { advantages: placed(batch, &advantage, knobs), returns: None, terms }
}
