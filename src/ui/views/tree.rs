//! Rollout tree of the selected group: explicit trees as logged, or rollouts merged by identical
//! prefix or state key. Layout is computed once per (group, merge); each frame draws only the nodes
//! and edges inside the view, as one mesh, with labels and circles only when zoomed in. Drag to
//! pan, scroll to zoom, right-click a node to collapse its subtree, click to select.

use std::collections::HashSet;
use std::hash::Hasher as _;
use std::sync::Arc;

use crate::analysis::heatmap::HeatValue;
use crate::analysis::tree_layout::{GroupTree, TreeMerge};
use crate::app::Command;
use crate::ui::ViewCtx;
use crate::ui::theme;
use crate::ui::views::heatmap::{color_of, colors_for, value_at};
use crate::ui::widgets::{format_value, legend_ui};

/// Layout units: horizontal distance between depths and vertical distance between rows.
const DX: f32 = 90.0;
const DY: f32 = 26.0;

/// Pan and zoom of the tree view: `screen = rect.min + offset + layout · scale` (per axis).
#[derive(Clone, Copy, Debug, PartialEq)]
struct View {
    key: u64,
    offset: egui::Vec2,
    scale: egui::Vec2,
}

/// Node values, kept until the group, merge mode, value or credit change.
#[derive(Clone)]
struct NodeValues {
    key: u64,
    values: Arc<Vec<f32>>,
    range: (f32, f32),
}

fn key_of(parts: impl std::hash::Hash) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    parts.hash(&mut h);
    h.finish()
}

/// Draws the tree with its controls into the available space.
pub fn ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    let fit = controls_ui(ui, ctx);
    let merge = ctx.state.tree_merge;
    let value = ctx.state.tree_value.clone();
    let Some(group) = ctx.open.selection.group else {
        ui.label("Select a group in the browser");
        return;
    };
    let generations = (ctx.open.credit[0].generation, ctx.open.credit[1].generation);
    let run_name = ctx.open.cache_key();
    if ctx.open.group_tree(merge).is_none() {
        return;
    }
    let open = &*ctx.open;
    let Some((_, _, tree)) = open.tree.as_ref() else { return };
    let values = node_values(ui, open, tree, &value, key_of((&run_name, group.0, merge, &value, generations)));
    let colors = colors_for(&value, values.range);
    if value != HeatValue::Role {
        legend_ui(ui, &colors, &value.label());
    }
    ui.label(egui::RichText::new(format!("{} nodes · {} leaves", tree.nodes.len(), tree.num_rows)).color(theme::MUTED));
    let meeting = ctx.state.meeting_mode;
    let group_key = crate::ui::level::key(open, merge).unwrap_or_default();
    let (rect, response, view) = canvas_ui(ui, (meeting, meeting && !ctx.state.heat_whole_run), group_key, tree, fit);
    // What is collapsed stays through a refit.
    let collapsed_id = egui::Id::unique(("tree_collapsed", key_of((&run_name, group.0, merge))));
    let mut collapsed: HashSet<u32> = ui.data(|d| d.get_temp::<HashSet<u32>>(collapsed_id)).unwrap_or_default();
    let screen = |i: usize| screen_from_layout(rect, view.offset, view.scale, &tree.nodes[i]);
    let prompt_pos = |y: f32| rect.min + view.offset + egui::vec2(0.0, y * DY * view.scale.y);
    let painter = ui.painter_at(rect);
    let visible = rect.expand(DX * view.scale.x);
    let hidden = hidden_below(tree, &collapsed);
    let detailed = is_detailed(view.scale);
    let radius = (view.scale.y * DY * 0.3).min(view.scale.x * DX * 0.15).clamp(1.0, 9.0);
    // Edges in a mesh of their own, drawn first: no edge crosses a node.
    let (mut edges, mut mesh) = (egui::Mesh::default(), egui::Mesh::default());
    let mut occupancy = Occupancy::new(rect, !detailed);
    let selected_node = open.selection.position.and_then(|p| tree.node_of_position.get(&(p as u32)).copied());
    let mut hovered: Option<(usize, f32)> = None;
    let pointer = response.hover_pos();
    for (i, n) in tree.nodes.iter().enumerate() {
        if hidden[i] {
            continue;
        }
        let pos = screen(i);
        let from = (n.parent != u32::MAX).then(|| screen(n.parent as usize));
        if !visible.contains(pos) && !from.is_some_and(|f| visible.contains(f)) {
            continue;
        }
        // Level of detail: zoomed out, one node per screen pixel (the first in layout order).
        if !detailed && !occupancy.claim(pos) {
            continue;
        }
        if let Some(from) = from {
            elbow(&mut edges, from, pos, theme::EDGE);
        }
        let color = color_of(&value, &colors, values.values[i]);
        let half = egui::vec2(radius, radius);
        mesh.add_colored_rect(egui::Rect::from_center_size(pos, half * 2.0), color);
        // A leaf without an outcome gets no mark (not a failure's).
        if let Some(ok) = n.leaf_of.and_then(|t| crate::analysis::compare::outcome(&open.run, t)) {
            let badge =
                egui::Rect::from_min_size(pos + egui::vec2(radius + 2.0, -radius * 0.5), egui::vec2(radius, radius));
            mesh.add_colored_rect(badge, if ok { theme::SUCCESS } else { theme::FAILURE });
        }
        if let Some(p) = pointer {
            let d = p.distance(pos);
            if d <= radius.max(6.0) && hovered.is_none_or(|(_, best)| d < best) {
                hovered = Some((i, d));
            }
        }
    }
    // The prompt, the root every rollout of the group starts from, at depth 0.
    let root = prompt_root(tree, &prompt_pos).map(|(root, tops)| {
        for i in tops {
            elbow(&mut edges, root, screen(i), theme::EDGE);
        }
        mesh.add_colored_rect(egui::Rect::from_center_size(root, egui::vec2(radius, radius) * 2.4), theme::MUTED);
        root
    });
    painter.add(egui::Shape::mesh(edges));
    painter.add(egui::Shape::mesh(mesh));
    // Node labels when they fit between columns; the leaves' names whenever rows leave room.
    let column = labels_shown(view.scale).then_some(view.scale.x * DX);
    if column.is_some() || view.scale.y * DY >= LEAF_LABEL_ROW {
        let draw = Labels { painter: &painter, run: &open.run, radius, visible, values: &values.values, column };
        draw.nodes(ui, tree, &hidden, &collapsed, &screen, root);
    }
    if let Some(i) = selected_node.map(|s| s as usize).filter(|&i| !hidden[i]) {
        let ring = egui::Rect::from_center_size(screen(i), egui::vec2(radius, radius) * 2.0 + egui::vec2(4.0, 4.0));
        painter.rect_stroke(ring, 2.0, egui::Stroke::new(2.0, theme::SELECTED), egui::StrokeKind::Outside);
    }
    if let Some((i, _)) = hovered {
        interact(ui, open, ctx.commands, tree, &response, i, &value, values.values[i], &mut collapsed, collapsed_id);
    }
}

/// Which nodes are hidden: those below a collapsed node (parents come before children).
fn hidden_below(tree: &GroupTree, collapsed: &HashSet<u32>) -> Vec<bool> {
    let mut hidden = vec![false; tree.nodes.len()];
    for (i, n) in tree.nodes.iter().enumerate() {
        if let Some(&h) = hidden.get(n.parent as usize) {
            hidden[i] = h || collapsed.contains(&n.parent);
        }
    }
    hidden
}

/// The tree's canvas and its view (fitted to a new group, merge mode, meeting mode or size, or on
/// Fit; panned and zoomed by the pointer), its rows kept for the heatmap beside it.
fn canvas_ui(
    ui: &mut egui::Ui,
    (meeting, beside_heatmap): (bool, bool),
    group_key: u64,
    tree: &GroupTree,
    fit: bool,
) -> (egui::Rect, egui::Response, View) {
    if beside_heatmap {
        level_with_heatmap(ui);
    }
    let (rect, response) = ui.allocate_exact_size(ui.available_size(), egui::Sense::click_and_drag());
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, "rollout tree"));
    // A new group, merge, meeting mode or view size (to the nearest 32 px) fits the tree again.
    let size_class = ((rect.width() / 32.0).round() as i32, (rect.height() / 32.0).round() as i32);
    let view_key = key_of((group_key, meeting, size_class));
    let view_id = egui::Id::unique("tree_view");
    let mut view =
        ui.data(|d| d.get_temp::<View>(view_id)).filter(|v| v.key == view_key && !fit).unwrap_or_else(|| {
            let (offset, scale) = fit_view(rect, tree);
            View { key: view_key, offset, scale }
        });
    pan_zoom(ui, &response, rect, &mut view);
    ui.data_mut(|d| d.insert_temp(view_id, view));
    let first = rect.top() + view.offset.y;
    publish_rows(
        ui,
        crate::ui::level::TreeRows { key: group_key, first, spacing: DY * view.scale.y, rows: tree.num_rows },
    );
    (rect, response, view)
}

/// Keeps where the tree's rows are this frame (for the heatmap beside it, and for the next frame's
/// [`level_with_heatmap`]).
fn publish_rows(ui: &egui::Ui, rows: crate::ui::level::TreeRows) {
    ui.data_mut(|d| d.insert_temp(crate::ui::level::rows_id(), rows));
}

/// Where the tree keeps the space it put above its canvas.
fn pad_id() -> egui::Id {
    egui::Id::unique("tree_rows_pad")
}

/// Beside the heatmap (meeting mode), rows level with its rows: the canvas starts lower when the
/// heatmap's header is taller than the tree's (the heatmap follows the tree's rows): by what the
/// last frame's first row lacked.
fn level_with_heatmap(ui: &mut egui::Ui) {
    let (pad, rows, heat_top) = ui.data(|d| {
        (
            d.get_temp::<f32>(pad_id()),
            d.get_temp::<crate::ui::level::TreeRows>(crate::ui::level::rows_id()),
            d.get_temp::<f32>(crate::ui::level::heatmap_top_id()),
        )
    });
    let pad = match (pad, rows, heat_top) {
        (Some(pad), Some(rows), Some(top)) if rows.spacing > 0.0 => {
            (pad + top - (rows.first - rows.spacing / 2.0)).clamp(0.0, 200.0)
        }
        (pad, _, _) => pad.unwrap_or(0.0),
    };
    ui.add_space(pad);
    ui.data_mut(|d| d.insert_temp(pad_id(), pad));
}

/// The pan offset and per-axis scale that fit `tree` into `rect` (as the view opens); rows never
/// spread further apart than twice the layout spacing.
pub fn fit_view(rect: egui::Rect, tree: &GroupTree) -> (egui::Vec2, egui::Vec2) {
    let width = (tree.max_depth as f32 + 1.0) * DX;
    let height = tree.num_rows.max(1) as f32 * DY;
    let fit = |room: f32| {
        let sy = (room / height).clamp(1e-5, 2.0);
        // Rows far enough apart for their leaves' names keep room for them on the right.
        let gutter = if sy * DY >= LEAF_LABEL_ROW { LEAF_GUTTER.min(rect.width() * 0.3) } else { 0.0 };
        egui::vec2(((rect.width() - gutter) / width).clamp(1e-4, 2.0), sy)
    };
    // Nodes labelled above them: the first row's labels need room above it too.
    let scale = fit(rect.height() - LABEL_ABOVE);
    if labels_shown(scale) {
        return (egui::vec2(8.0, 8.0 + LABEL_ABOVE), scale);
    }
    (egui::vec2(8.0, 8.0), fit(rect.height()))
}

/// The room a node's label takes above it, in points.
const LABEL_ABOVE: f32 = 16.0;

/// Rows at least this far apart (points) name their leaves.
pub const LEAF_LABEL_ROW: f32 = 12.0;
/// Room a fitted tree keeps on its right for its leaves' names.
const LEAF_GUTTER: f32 = 120.0;

/// Where a laid-out node is drawn.
pub fn screen_from_layout(
    rect: egui::Rect,
    offset: egui::Vec2,
    scale: egui::Vec2,
    node: &crate::analysis::tree_layout::LayoutNode,
) -> egui::Pos2 {
    rect.min + offset + egui::vec2(node.depth as f32 * DX * scale.x, node.y * DY * scale.y)
}

/// Merge mode, node color and the fit button; whether fit was clicked.
fn controls_ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) -> bool {
    let mut fit = false;
    ui.horizontal_wrapped(|ui| {
        ui.label(egui::RichText::new("Rollout tree").strong());
        let combo =
            egui::ComboBox::from_id_salt("tree_merge").selected_text(ctx.state.tree_merge.label()).show_ui(ui, |ui| {
                for merge in TreeMerge::ALL {
                    ui.selectable_value(&mut ctx.state.tree_merge, merge, merge.label());
                }
            });
        crate::ui::widgets::name(&combo.response, "tree merge");
        ui.label("color");
        crate::ui::widgets::heat_value_ui(ui, "tree color", &mut ctx.state.tree_value, &ctx.open.facets.heat_choices);
        fit = ui.button("Fit").clicked();
    });
    fit
}

/// Drag pans, scrolling zooms around the pointer.
fn pan_zoom(ui: &egui::Ui, response: &egui::Response, rect: egui::Rect, view: &mut View) {
    view.offset += response.drag_delta();
    if response.hovered() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            // A wheel notch zooms by about a quarter, however large its delta.
            let factor = (scroll / 400.0).exp().clamp(0.8, 1.25);
            let pointer = response.hover_pos().unwrap_or(rect.center()) - rect.min;
            view.offset = pointer - (pointer - view.offset) * factor;
            view.scale = (view.scale * factor).clamp(egui::vec2(1e-5, 1e-5), egui::vec2(16.0, 16.0));
        }
    }
}

/// Tooltip of the hovered node `i`; click selects its step, right-click collapses its subtree.
#[expect(clippy::too_many_arguments, reason = "the pieces of one drawing pass")]
fn interact(
    ui: &egui::Ui,
    open: &crate::app::OpenRun,
    commands: &mut Vec<Command>,
    tree: &GroupTree,
    response: &egui::Response,
    i: usize,
    value: &HeatValue,
    node_value: f32,
    collapsed: &mut HashSet<u32>,
    collapsed_id: egui::Id,
) {
    let node = &tree.nodes[i];
    let run = &open.run;
    let n = node.node.index();
    let through = tree.positions_of(i).len();
    let text = format!(
        "{} · depth {} · {} rollout(s) through here\n{} = {}{}\n{}\n{}",
        run.label(run.nodes.kind[n]),
        node.depth,
        through,
        value.label(),
        format_value(node_value),
        if through > 1 { format!(" (mean over the {through} rollouts)") } else { String::new() },
        super::run_browser::truncate(&run.text(run.nodes.thought[n]), 200),
        super::run_browser::truncate(&run.text(run.nodes.action[n]), 200),
    );
    let response = response.clone().on_hover_text_at_pointer(text);
    if response.clicked() {
        // Prefer the selected rollout's position at this node, so the selection stays on it.
        let positions = tree.positions_of(i);
        let current = open.selection.trajectory.map(|t| open.run.trajectories.path_range(t));
        let p = positions
            .iter()
            .find(|&&p| current.as_ref().is_some_and(|r| r.contains(&(p as usize))))
            .or(positions.first());
        if let Some(&p) = p {
            commands.push(Command::SelectStep(p as usize));
        }
    }
    if response.secondary_clicked() && node.num_children > 0 {
        if !collapsed.remove(&(i as u32)) {
            collapsed.insert(i as u32);
        }
        ui.data_mut(|d| d.insert_temp(collapsed_id, collapsed.clone()));
    }
}

/// One bit per screen pixel of the tree's rect: which pixels already show a node.
struct Occupancy {
    origin: egui::Pos2,
    width: usize,
    height: usize,
    bits: Vec<u64>,
}

impl Occupancy {
    fn new(rect: egui::Rect, enabled: bool) -> Self {
        let (width, height) = if enabled { (rect.width() as usize + 1, rect.height() as usize + 1) } else { (0, 0) };
        Self { origin: rect.min, width, height, bits: vec![0; (width * height).div_ceil(64)] }
    }

    /// Marks the pixel under `pos` (clamped into the rect); whether it was free.
    fn claim(&mut self, pos: egui::Pos2) -> bool {
        if self.width == 0 {
            return true;
        }
        let x = ((pos.x - self.origin.x).max(0.0) as usize).min(self.width - 1);
        let y = ((pos.y - self.origin.y).max(0.0) as usize).min(self.height - 1);
        let i = y * self.width + x;
        let (word, bit) = (i / 64, 1u64 << (i % 64));
        let free = self.bits[word] & bit == 0;
        self.bits[word] |= bit;
        free
    }
}

/// Node values: the mean of the value over the path positions merged into each node.
fn node_values(ui: &egui::Ui, open: &crate::app::OpenRun, tree: &GroupTree, value: &HeatValue, key: u64) -> NodeValues {
    let id = egui::Id::unique("tree_values");
    if let Some(cached) = ui.data(|d| d.get_temp::<NodeValues>(id))
        && cached.key == key
    {
        return cached;
    }
    let values: Vec<f32> = (0..tree.nodes.len()).map(|i| tree.mean_of(i, |p| value_at(open, value, p))).collect();
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for &v in values.iter().filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    let range = if lo <= hi { (lo, hi) } else { (0.0, 0.0) };
    let cached = NodeValues { key, values: Arc::new(values), range };
    ui.data_mut(|d| d.insert_temp(id, cached.clone()));
    cached
}

/// An elbow edge (horizontal, then vertical, then horizontal) as three thin quads of the mesh.
fn elbow(mesh: &mut egui::Mesh, from: egui::Pos2, to: egui::Pos2, color: egui::Color32) {
    let mid = (from.x + to.x) / 2.0;
    let w = 0.5;
    let h = |x0: f32, x1: f32, y: f32| {
        egui::Rect::from_min_max(egui::pos2(x0.min(x1), y - w), egui::pos2(x0.max(x1), y + w))
    };
    mesh.add_colored_rect(h(from.x, mid, from.y), color);
    mesh.add_colored_rect(
        egui::Rect::from_min_max(egui::pos2(mid - w, from.y.min(to.y) - w), egui::pos2(mid + w, from.y.max(to.y) + w)),
        color,
    );
    mesh.add_colored_rect(h(mid, to.x, to.y), color);
}

/// The least column width, in points, at which nodes are labelled (a short label above each node:
/// its kind or the tool it called; its value too from about twice that).
const LABEL_COLUMN: f32 = 48.0;

/// The least row spacing, in points, at which a label fits above each node.
const LABEL_ROW: f32 = 24.0;

/// Whether nodes are drawn one by one (rows and columns far enough apart), not one per pixel.
fn is_detailed(scale: egui::Vec2) -> bool {
    scale.y * DY >= 14.0 && scale.x * DX >= 50.0
}

/// Whether nodes are labelled at `scale` (their labels fit between columns, above the nodes).
pub fn labels_shown(scale: egui::Vec2) -> bool {
    is_detailed(scale) && scale.x * DX >= LABEL_COLUMN && scale.y * DY >= LABEL_ROW
}

/// A label of about `room` characters for a node: its kind or action alone when the room is short,
/// with its value set apart when there is room for both.
pub fn short_node_text(text: &str, value: f32, room: usize) -> String {
    if room >= 16 {
        node_text(text, value, room)
    } else {
        // The tool called (or the kind) says more than its `Action: ` prefix.
        let text = text.split_once(": ").map_or(text, |(_, rest)| rest);
        super::run_browser::truncate(text, room.max(3))
    }
}

/// A leaf's name in at most `room` characters, its end kept (names in a group share their start:
/// `…/prompt-94a4…/r3` and `…/r7` must not look the same).
pub fn leaf_name(name: &str, room: usize) -> String {
    let count = name.chars().count();
    if count <= room {
        return name.to_owned();
    }
    let tail: String = name.chars().skip(count - room.saturating_sub(1).max(1)).collect();
    format!("…{tail}")
}

/// A node's label in at most about `room` characters: its text, then its value set apart (the
/// text may end in a number of its own).
pub fn node_text(text: &str, value: f32, room: usize) -> String {
    let value = format_value(value);
    let text = super::run_browser::truncate(text, room.saturating_sub(value.len() + 3).max(3));
    format!("{text} · {value}")
}

/// The left edge of a label `width` wide centered on `center`, moved right to `edge` when it would
/// start left of it (a label over the tree's root would otherwise lose its first letters).
pub fn label_left(center: f32, width: f32, edge: f32) -> f32 {
    (center - width / 2.0).max(edge)
}

/// The prompt root's place, midway between the first and last top-level node, and the top-level
/// nodes; `None` for a tree without nodes.
fn prompt_root(tree: &GroupTree, prompt_pos: &dyn Fn(f32) -> egui::Pos2) -> Option<(egui::Pos2, Vec<usize>)> {
    let tops: Vec<usize> =
        tree.nodes.iter().enumerate().filter(|(_, n)| n.parent == u32::MAX).map(|(i, _)| i).collect();
    let (lo, hi) = tops
        .iter()
        .map(|&i| tree.nodes[i].y)
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), y| (lo.min(y), hi.max(y)));
    (lo <= hi).then(|| (prompt_pos((lo + hi) / 2.0), tops))
}

/// What the tree's labels are drawn with.
struct Labels<'a> {
    painter: &'a egui::Painter,
    run: &'a crate::model::Run,
    radius: f32,
    visible: egui::Rect,
    values: &'a [f32],
    /// The column width when nodes are labelled (zoomed in); `None` names the leaves only.
    column: Option<f32>,
}

impl Labels<'_> {
    /// Beside each visible node (or only each leaf, zoomed out): its kind or action and its value,
    /// a leaf's rollout and outcome; collapse badges; "prompt" over the `root` when zoomed in.
    fn nodes(
        &self,
        ui: &egui::Ui,
        tree: &GroupTree,
        hidden: &[bool],
        collapsed: &HashSet<u32>,
        screen: &dyn Fn(usize) -> egui::Pos2,
        root: Option<egui::Pos2>,
    ) {
        let font = egui::FontId::proportional(11.0);
        let color = ui.visuals().text_color();
        let radius = self.radius;
        if let (Some(root), Some(_)) = (root, self.column) {
            // Centered over the root, but never cut by the tree's left edge (the root sits at it).
            let galley = self.painter.layout_no_wrap("prompt".to_owned(), font.clone(), theme::MUTED);
            let left = label_left(root.x, galley.size().x, self.painter.clip_rect().left() + 2.0);
            let top = root.y - radius - 4.0 - galley.size().y;
            self.painter.galley(egui::pos2(left, top), galley, theme::MUTED);
        }
        for (i, node) in tree.nodes.iter().enumerate() {
            let pos = screen(i);
            if hidden[i] || !self.visible.contains(pos) || (self.column.is_none() && node.leaf_of.is_none()) {
                continue;
            }
            // Above the node, centered, as wide as its column: never on the edge that leaves it.
            if let Some(column) = self.column {
                let room = ((column - 8.0) / 6.0).max(3.0) as usize;
                let text = short_node_text(&node_label(self.run, node.node), self.values[i], room);
                self.painter.text(
                    pos - egui::vec2(0.0, radius + 2.0),
                    egui::Align2::CENTER_BOTTOM,
                    text,
                    font.clone(),
                    theme::MUTED,
                );
            }
            // A leaf's rollout and outcome on its own row, right of it and its outcome badge.
            if let Some(t) = node.leaf_of {
                let reward = format_value(self.run.trajectories.reward[t.index()]);
                let name = crate::ui::widgets::rollout_name(self.run, t);
                self.painter.text(
                    pos + egui::vec2(2.0 * radius + 6.0, 0.0),
                    egui::Align2::LEFT_CENTER,
                    format!("{} · R {reward}", leaf_name(name, 16)),
                    font.clone(),
                    color,
                );
            }
            if collapsed.contains(&(i as u32)) {
                self.painter.text(
                    pos - egui::vec2(radius + 3.0, 0.0),
                    egui::Align2::RIGHT_CENTER,
                    "+",
                    font.clone(),
                    theme::BOOKMARK,
                );
            }
        }
    }
}

/// A node's label: its kind, and the start of its action (the tool called) or else its thought;
/// the text alone when it has no kind.
pub fn node_label(run: &crate::model::Run, node: crate::model::NodeId) -> String {
    let n = node.index();
    let kind = run.label(run.nodes.kind[n]);
    let mut snippet = run.text(run.nodes.action[n]).trim().to_owned();
    if snippet.is_empty() {
        snippet = run.text(run.nodes.thought[n]).trim().to_owned();
    }
    let snippet = super::run_browser::truncate(snippet.lines().next().unwrap_or(""), 24);
    match (kind.is_empty(), snippet.is_empty()) {
        (true, _) => snippet,
        (false, true) => kind.to_owned(),
        (false, false) => format!("{kind}: {snippet}"),
    }
}

/// A small, fixed tree of `group` (identical prefixes merged): steps as gray dots, each leaf marked
/// pass or fail, a node's kind and action on hover. For showing groups side by side (runs view).
pub fn mini_ui(ui: &mut egui::Ui, run: &crate::model::Run, group: crate::model::GroupId) {
    let tree = GroupTree::build(run, group, TreeMerge::Prefix);
    let row = 10.0_f32;
    let height = (tree.num_rows.max(1) as f32 * row).clamp(40.0, 220.0);
    let (rect, response) = ui.allocate_exact_size(egui::vec2(ui.available_width(), height), egui::Sense::hover());
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Image, true, "group tree"));
    let rect = rect.shrink(6.0);
    let dx = rect.width() / (tree.max_depth as f32).max(1.0);
    let dy = rect.height() / (tree.num_rows.max(1) as f32 - 1.0).max(1.0);
    let pos = |n: &crate::analysis::tree_layout::LayoutNode| {
        rect.min + egui::vec2((n.depth as f32 - 1.0) * dx, (n.y * dy).min(rect.height()))
    };
    let mut mesh = egui::Mesh::default();
    let radius = (dy * 0.35).clamp(1.5, 4.0);
    let tr = &run.trajectories;
    let mut hovered: Option<(usize, f32)> = None;
    let pointer = response.hover_pos();
    for (i, n) in tree.nodes.iter().enumerate() {
        let at = pos(n);
        if let Some(parent) = tree.nodes.get(n.parent as usize) {
            elbow(&mut mesh, pos(parent), at, theme::EDGE);
        }
        let color = match n.leaf_of.and_then(|t| crate::analysis::compare::outcome(run, t)) {
            Some(true) => theme::SUCCESS,
            Some(false) => theme::FAILURE,
            None => theme::EDGE,
        };
        mesh.add_colored_rect(egui::Rect::from_center_size(at, egui::vec2(radius, radius) * 2.0), color);
        if let Some(p) = pointer {
            let d = p.distance(at);
            if d <= radius.max(6.0) && hovered.is_none_or(|(_, best)| d < best) {
                hovered = Some((i, d));
            }
        }
    }
    ui.painter_at(rect.expand(6.0)).add(egui::Shape::mesh(mesh));
    if let Some((i, _)) = hovered {
        let n = &tree.nodes[i];
        let mut text = format!(
            "{} · depth {} · {} rollout(s) through here",
            node_label(run, n.node),
            n.depth,
            tree.positions_of(i).len()
        );
        if let Some(t) = n.leaf_of {
            text.push_str(&format!("\nends {} · R {}", run.trajectory_key(t), format_value(tr.reward[t.index()])));
        }
        response.on_hover_text_at_pointer(text);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_prompt_label_over_a_root_at_the_edge_keeps_its_first_letters() {
        // "prompt" 36 wide over a root 4 points from the edge starts at the edge, not 14 left of it.
        assert_eq!(super::label_left(104.0, 36.0, 100.0), 100.0);
        assert_eq!(super::label_left(300.0, 36.0, 100.0), 282.0, "centered where there is room");
    }

    #[test]
    fn a_label_sets_its_value_apart_from_its_text() {
        assert_eq!(super::node_text("98", -2.4749, 30), "98 · -2.4749");
        let short = super::node_text("think: the capital of Norway is Oslo", 0.5, 16);
        assert!(short.ends_with(" · 0.5000") && short.chars().count() <= 17, "{short}");
    }

    #[test]
    fn a_short_label_names_the_tool_and_a_leaf_keeps_its_end() {
        assert_eq!(super::short_node_text("Action: latest_news_for_currents", 0.5, 8), "latest_n…");
        assert_eq!(super::short_node_text("think", 0.5, 8), "think");
        assert_eq!(super::leaf_name("train/step-1/prompt-94a41ed12d627c37/r3", 16), "…1ed12d627c37/r3");
        assert_ne!(
            super::leaf_name("prompt-94a41ed12d627c37/r3", 12),
            super::leaf_name("prompt-94a41ed12d627c37/r7", 12)
        );
        assert_eq!(super::leaf_name("leaf3", 16), "leaf3");
    }

    #[test]
    fn a_toolbench_tree_fitted_to_a_laptop_view_is_labelled() {
        // 14 steps deep, 9 leaves, in the Group view's tree at 1280×720 (about 840 × 300 points).
        let rect = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(840.0, 300.0));
        let width = 14.0 * super::DX;
        let sx = (840.0 - 120.0) / width;
        let sy = (300.0 / (9.0 * super::DY)).min(2.0);
        assert!(super::labels_shown(egui::vec2(sx, sy)), "{sx} {sy} in {rect:?}");
    }
}
