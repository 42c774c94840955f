//! Where the Group view's tree drew its rows this frame, for the heatmap beside it in meeting
//! mode to put each row level with its leaf (the tree writes, the heatmap reads; neither imports
//! the other).

use crate::analysis::tree_layout::TreeMerge;

/// Where the tree's rows are on the screen this frame (the first row's centre and the rows'
/// spacing, in points), for the heatmap beside it in meeting mode to put its rows level with them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TreeRows {
    /// The group and merge mode the tree shows (hashed).
    pub key: u64,
    /// The first row's centre.
    pub first: f32,
    /// From one row to the next.
    pub spacing: f32,
    /// How many rows.
    pub rows: usize,
}

/// Where [`TreeRows`] are kept.
pub fn rows_id() -> egui::Id {
    egui::Id::unique("tree_rows")
}

/// The key of the rows of `open`'s selected group laid out in `merge`.
pub fn key(open: &crate::app::OpenRun, merge: TreeMerge) -> Option<u64> {
    use std::hash::{Hash as _, Hasher as _};
    let group = open.selection.group?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (open.cache_key(), group.0, merge).hash(&mut h);
    Some(h.finish())
}

/// The rows of the tree drawn this frame, when it shows the selected group of `open` in `merge`.
pub fn rows_shown(ui: &egui::Ui, open: &crate::app::OpenRun, merge: TreeMerge) -> Option<TreeRows> {
    let key = key(open, merge)?;
    ui.data(|d| d.get_temp::<TreeRows>(rows_id())).filter(|r| r.key == key)
}

/// Where the heatmap beside the tree could start its rows at the earliest (its header's bottom),
/// last frame: the tree moves its canvas down to put its first row there.
pub fn heatmap_top_id() -> egui::Id {
    egui::Id::unique("heatmap_rows_top")
}
