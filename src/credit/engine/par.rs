//! Credit computed in parts on several threads (through [`crate::par`]). A scheme whose groups are independent (its
//! statistics are per group, or per group and then reduced) hands [`by_groups`] (or
//! [`by_trajectories`]) the body of its loop; when the groups follow each other in trajectory order
//! (as logs write them), they are cut into runs of consecutive groups (a few for each thread, which
//! the threads take in turn as they finish one, so that a core busy with other work holds up no
//! more than the part it is on), each writing its own disjoint part of the step output and of the
//! explanation terms. Token kernels cut their rows the same way ([`crate::credit::data::parts::cut_rows`]), elementwise passes
//! their output ([`crate::par::chunks_mut`]), and whole-batch sums are sums of fixed blocks added in order
//! ([`crate::par::block_sum`]).
//! Every group, row and block is computed by the same code whichever part it falls in, so the
//! credit does not depend on the number of threads (`tests/it/credit_threads.rs` checks it). On the
//! web, and on runs too small to be worth it, there is one part, on the calling thread.

use std::ops::Range;

use crate::credit::Terms;
use crate::credit::data::parts::{StepPart, TermRows};
use crate::model::Run;
use crate::par::{parts_for, run_parts};

/// Step credit from `body`, called with a range of group indices, that range's share of the step
/// output and its rows of `terms` (made by [`Terms::for_rows`] for every trajectory); `body`
/// writes every trajectory of its groups and returns what it gathered (partial sums, …), in group
/// order across the parts. The groups are cut into parts of consecutive groups, computed on the
/// threads ([`run_parts`]), when they follow each other in trajectory order and the run is large
/// enough; else one part over a `NaN`-filled output. Positions of trajectories in no group stay `NaN`.
pub fn by_groups<R: Send>(
    run: &Run,
    terms: &mut Terms,
    body: impl Fn(Range<usize>, &mut StepPart<'_>, &mut TermRows<'_>) -> R + Sync,
) -> (Vec<f32>, Vec<R>) {
    let tr = &run.trajectories;
    let len = tr.path_nodes.len();
    let num_groups = run.groups.len();
    if !crate::credit::engine::inputs::groups_in_trajectory_order(run) {
        let mut step = crate::credit::data::pool::filled(len, f32::NAN);
        let mut part = StepPart::new(&mut step, 0, f32::NAN, false);
        let mut rows = TermRows::all(terms);
        let result = body(0..num_groups, &mut part, &mut rows);
        return (step, vec![result]);
    }
    // Cut points: the first group whose first member starts at or after k/parts of the steps.
    let parts = parts_for(len);
    let mut cuts = vec![(0usize, 0usize, 0usize)]; // (group, path position, trajectory row)
    for g in 0..num_groups {
        if cuts.len() == parts {
            break;
        }
        let Some(&first) = run.groups.members(crate::model::GroupId::from_index(g)).first() else { continue };
        let start = tr.path_range(first).start;
        if start >= cuts.len() * len / parts && g > cuts[cuts.len() - 1].0 {
            cuts.push((g, start, first.index()));
        }
    }
    run_cut(run, terms, &cuts, num_groups, body)
}

/// [`by_trajectories`] cuts its parts at multiples of this many trajectories: a scheme that sums
/// over the whole batch sums per block of this many trajectories (aligned at multiples of it) and
/// then the blocks in order, which gives the same sum whatever the number of threads.
pub const TRAJECTORY_BLOCK: usize = 1024;

/// Step credit from `body` called with a range of trajectory indices (all of them, in parts of
/// consecutive trajectories, on the threads when the run is large enough), that range's
/// share of the step output and its rows of `terms`; `body` writes every trajectory of its range.
pub fn by_trajectories<R: Send>(
    run: &Run,
    terms: &mut Terms,
    body: impl Fn(Range<usize>, &mut StepPart<'_>, &mut TermRows<'_>) -> R + Sync,
) -> (Vec<f32>, Vec<R>) {
    let cuts = trajectory_cuts(run);
    run_cut(run, terms, &cuts, run.trajectories.len(), body)
}

/// Where [`by_trajectories`] cuts: (first trajectory, its first path position, itself) per part,
/// at multiples of [`TRAJECTORY_BLOCK`].
fn trajectory_cuts(run: &Run) -> Vec<(usize, usize, usize)> {
    let tr = &run.trajectories;
    let len = tr.path_nodes.len();
    let parts = parts_for(len);
    let mut cuts = vec![(0usize, 0usize, 0usize)];
    for k in 1..parts {
        let target = k * len / parts;
        let t = tr.path_offsets.partition_point(|&o| (o as usize) < target).min(tr.len());
        // Parts start at a multiple of the block, so per-block sums do not depend on the cut.
        let t = t / TRAJECTORY_BLOCK * TRAJECTORY_BLOCK;
        if t > cuts[cuts.len() - 1].0 && t < tr.len() {
            cuts.push((t, tr.path_offsets[t] as usize, t));
        }
    }
    cuts
}

/// Cuts the step output and the terms at `cuts` (first item, path position, trajectory row of
/// each part) and runs `body` on each part, in order.
fn run_cut<R: Send>(
    run: &Run,
    terms: &mut Terms,
    cuts: &[(usize, usize, usize)],
    num_items: usize,
    body: impl Fn(Range<usize>, &mut StepPart<'_>, &mut TermRows<'_>) -> R + Sync,
) -> (Vec<f32>, Vec<R>) {
    let tr = &run.trajectories;
    let len = tr.path_nodes.len();
    let (width, step_width) = (terms.names.len(), terms.step_names.len());
    let mut step = crate::credit::data::pool::scratch(len);
    let mut items = Vec::with_capacity(cuts.len());
    let (mut out, mut values): (&mut [f32], &mut [f32]) = (&mut step, &mut terms.values);
    let mut step_values: &mut [f32] = &mut terms.step_values;
    for (k, &(item, position, row)) in cuts.iter().enumerate() {
        let (end_item, end_position, end_row) = cuts.get(k + 1).map_or((num_items, len, tr.len()), |&c| c);
        let (here, rest) = std::mem::take(&mut out).split_at_mut(end_position - position);
        out = rest;
        let rows_here = ((end_row - row) * width).min(values.len());
        let (rows, rest) = std::mem::take(&mut values).split_at_mut(rows_here);
        values = rest;
        let steps_here = ((end_position - position) * step_width).min(step_values.len());
        let (steps, rest) = std::mem::take(&mut step_values).split_at_mut(steps_here);
        step_values = rest;
        items.push((
            item..end_item,
            StepPart::new(here, position, f32::NAN, true),
            TermRows::new(rows, row, width, steps, position, step_width),
        ));
    }
    let results = run_parts(items, |(range, mut part, mut rows)| {
        let result = body(range, &mut part, &mut rows);
        part.finish();
        result
    });
    (step, results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_writes_nan_where_no_trajectory_is_and_keeps_its_own_positions() {
        let mut out = [5.0f32; 8];
        let mut part = StepPart::new(&mut out[2..], 2, f32::NAN, true);
        part.write(3..5, [1.0, 2.0].into_iter());
        part.fill(6..7, 3.0);
        part.finish();
        assert_eq!(&out[..2], &[5.0, 5.0]);
        let rest: Vec<String> = out[2..].iter().map(|v| format!("{v}")).collect();
        assert_eq!(rest, ["NaN", "1", "2", "NaN", "3", "NaN"]);
    }
}
