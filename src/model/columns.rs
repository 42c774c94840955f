//! Helpers for optional columns: a column that is absent until its first value arrives, then dense.

use std::collections::BTreeMap;

/// Pushes `value` at row `row` of an optional column of `len` rows, creating the column (filled with
/// `fill`) the first time a non-missing value arrives.
pub(crate) fn push_opt<T: Copy>(column: &mut Option<Vec<T>>, row: usize, value: Option<T>, fill: T) {
    match (column.as_mut(), value) {
        (Some(col), v) => {
            debug_assert_eq!(col.len(), row);
            col.push(v.unwrap_or(fill));
        }
        (None, Some(v)) => {
            let mut col = vec![fill; row];
            col.push(v);
            *column = Some(col);
        }
        (None, None) => {}
    }
}

/// Pushes one row into a set of named `f32` columns: each named value goes to its column (created
/// NaN-filled when new), every other column gets NaN.
pub(crate) fn push_named(columns: &mut BTreeMap<String, Vec<f32>>, row: usize, values: &[(&str, f32)]) {
    // The last of a name given twice wins: the values from the last, each pushed to a column that
    // has no value for this row yet.
    let mut pushed = 0;
    for &(name, value) in values.iter().rev() {
        match columns.get_mut(name) {
            Some(col) if col.len() == row => col.push(value),
            Some(_) => continue,
            None => {
                let mut col = vec![f32::NAN; row];
                col.push(value);
                columns.insert(name.to_owned(), col);
            }
        }
        pushed += 1;
    }
    if pushed < columns.len() {
        for col in columns.values_mut() {
            if col.len() == row {
                col.push(f32::NAN);
            }
        }
    }
    debug_assert!(columns.values().all(|c| c.len() == row + 1));
}

/// Heap bytes of an optional column.
pub(crate) fn opt_bytes<T>(column: Option<&Vec<T>>) -> usize {
    column.map_or(0, |c| c.capacity() * std::mem::size_of::<T>())
}

/// Heap bytes of a vector.
pub(crate) fn vec_bytes<T>(column: &Vec<T>) -> usize {
    column.capacity() * std::mem::size_of::<T>()
}

/// Heap bytes of a set of named columns.
pub(crate) fn named_bytes(columns: &BTreeMap<String, Vec<f32>>) -> usize {
    columns.iter().map(|(k, v)| k.len() + vec_bytes(v) + 64).sum()
}

/// Monte-Carlo rollouts, a list per row (a node's state, a group's prompt): each rollout's
/// outcome reward and finish reason. Absent until a row has some.
#[derive(Clone, Debug, Default)]
pub struct Rollouts {
    /// Rollouts of row `i` are `offsets[i]..offsets[i + 1]`; `None` while no row has any.
    offsets: Option<Vec<u32>>,
    /// Each rollout's reward.
    pub reward: Vec<f32>,
    /// Each rollout's finish reason (`NONE` if not logged).
    pub finish: Vec<super::Sym>,
}

impl Rollouts {
    /// Appends row `row`'s rollouts (rows are pushed in order).
    pub(crate) fn push(&mut self, row: usize, rollouts: impl Iterator<Item = (f32, super::Sym)>) {
        let before = self.reward.len();
        for (reward, finish) in rollouts {
            self.reward.push(reward);
            self.finish.push(finish);
        }
        if self.offsets.is_none() && self.reward.len() > before {
            self.offsets = Some(vec![0; row + 1]);
        }
        if let Some(offsets) = &mut self.offsets {
            offsets.push(self.reward.len() as u32);
        }
    }

    /// Row `row`'s rollouts: rewards and finish reasons (empty when it has none).
    pub fn of(&self, row: usize) -> (&[f32], &[super::Sym]) {
        let Some(offsets) = &self.offsets else { return (&[], &[]) };
        let (Some(&start), Some(&end)) = (offsets.get(row), offsets.get(row + 1)) else { return (&[], &[]) };
        let range = start as usize..end as usize;
        (self.reward.get(range.clone()).unwrap_or(&[]), self.finish.get(range).unwrap_or(&[]))
    }

    /// Whether any row has rollouts.
    pub fn is_empty(&self) -> bool {
        self.reward.is_empty()
    }

    /// Releases spare capacity.
    pub fn shrink_to_fit(&mut self) {
        self.offsets.iter_mut().for_each(Vec::shrink_to_fit);
        self.reward.shrink_to_fit();
        self.finish.shrink_to_fit();
    }

    /// Heap bytes.
    pub fn heap_bytes(&self) -> usize {
        opt_bytes(self.offsets.as_ref()) + vec_bytes(&self.reward) + vec_bytes(&self.finish)
    }
}
