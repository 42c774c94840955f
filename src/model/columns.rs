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
    for &(name, _) in values {
        if !columns.contains_key(name) {
            columns.insert(name.to_owned(), vec![f32::NAN; row]);
        }
    }
    for (name, col) in columns.iter_mut() {
        let value = values.iter().rev().find(|(n, _)| *n == name.as_str()).map_or(f32::NAN, |&(_, v)| v);
        debug_assert_eq!(col.len(), row);
        col.push(value);
    }
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
