//! The schemes, one file each, each listed once in [`SCHEMES`]. A scheme reads the run through
//! [`super::engine`] and computes with [`super::kernels`]; schemes never import each other
//! (`tests/it/architecture.rs` checks it).

use super::Scheme;

mod carl;
mod discounted_return;
mod entropy_mask;
mod fipo;
mod first_error;
mod gae;
mod gar;
mod gigpo;
mod gpg;
mod grpo;
mod grpo_care;
mod grpo_passk;
mod grpo_vectorized;
mod hcapo;
mod hierarchical_grpo;
mod hybrid;
mod igpo;
mod length_penalty;
mod lets;
mod logged;
pub mod loss_agg;
mod maxrl;
mod ngu;
mod null_reward;
mod opd;
mod opo;
mod optimal_token_baseline;
mod per_role;
mod prime;
mod prm_process;
mod prorag;
mod pure;
mod rae;
mod reinforce_plus_plus;
mod reinforce_plus_plus_baseline;
mod remax;
mod rloo;
mod rloo_vectorized;
mod spo_tree;
mod step_reward;
mod tir_optimal_token_baseline;
mod trace_td;
mod tree_grpo;
mod treepo;
mod treeps_rag;
mod treerl;
mod treerpo;
pub mod triage;
mod turn_credit;
mod turn_return;
mod vineppo;

/// Every scheme, listed once. A new scheme is a new file here, its `mod` line and one line in this list.
pub static SCHEMES: &[&dyn Scheme] = &[
    &grpo::Grpo,
    &grpo_vectorized::GrpoVectorized,
    &grpo_passk::GrpoPassk,
    &rloo::Rloo,
    &rloo_vectorized::RlooVectorized,
    &reinforce_plus_plus::ReinforcePlusPlus,
    &reinforce_plus_plus_baseline::ReinforcePlusPlusBaseline,
    &remax::Remax,
    &opo::Opo,
    &opd::Opd,
    &gpg::Gpg,
    &maxrl::MaxRl,
    &optimal_token_baseline::OptimalTokenBaseline,
    &tir_optimal_token_baseline::TirOptimalTokenBaseline,
    &gae::Gae,
    &discounted_return::DiscountedReturn,
    &loss_agg::LossAggWeight,
    &entropy_mask::EntropyMask,
    &fipo::Fipo,
    &prm_process::PrmProcess,
    &triage::Triage,
    &first_error::FirstError,
    &gigpo::Gigpo,
    &treeps_rag::TreepsRag,
    &treerpo::Treerpo,
    &vineppo::Vineppo,
    &hybrid::Hybrid,
    &length_penalty::LengthPenalty,
    &null_reward::NullReward,
    &prorag::Prorag,
    &treepo::Treepo,
    &tree_grpo::TreeGrpo,
    &treerl::Treerl,
    &carl::Carl,
    &pure::Pure,
    &grpo_care::GrpoCare,
    &prime::Prime,
    &lets::Lets,
    &spo_tree::SpoTree,
    &turn_credit::TurnCredit,
    &turn_return::TurnReturn,
    &igpo::Igpo,
    &trace_td::TraceTd,
    &hcapo::Hcapo,
    &per_role::PerRole,
    &rae::Rae,
    &hierarchical_grpo::HierarchicalGrpo,
    &ngu::Ngu,
    &gar::Gar,
    &step_reward::StepReward,
    &logged::Logged,
];
