//! Steps × rollouts heatmap: rows are the rollouts of the selected group (or of the whole run,
//! grouped and sorted by outcome), columns are steps. Drawn as textures, one texel per cell, in
//! tiles of at most 2048 × 2048 cells, uploaded only when the values change. Legend, hover tooltip with the
//! numbers, click to select.

use std::hash::{Hash as _, Hasher as _};
use std::sync::Arc;

use crate::analysis::heatmap::{HeatValue, HeatmapGrid, rows_by_outcome};
use crate::app::{Command, OpenRun};
use crate::ui::ViewCtx;
use crate::ui::theme::{self, ValueColors};
use crate::ui::widgets::{format_value, legend_ui, role_index};

/// Rows and columns per texture tile (GPUs refuse textures over 8192 texels a side).
const TILE: usize = 2048;

/// The value `value` shows at path position `p` (`NaN` where there is none).
pub fn value_at(open: &OpenRun, value: &HeatValue, p: usize) -> f32 {
    let run = &open.run;
    let Some(node) = run.trajectories.path_nodes.get(p) else { return f32::NAN };
    let credit = |slot: usize| open.credit[slot].step().and_then(|s| s.get(p)).copied().unwrap_or(f32::NAN);
    match value {
        HeatValue::CreditA => credit(0),
        HeatValue::CreditB => credit(1),
        // The rounding noise the audit recognises is no difference (else the colour scale would
        // stretch over it and paint a whole tree red and blue).
        HeatValue::Difference => {
            let (a, b) = (credit(0), credit(1));
            let group = run.trajectories.at_position(p).and_then(|t| run.trajectories.group.get(t.index()));
            let bound = group.and_then(|g| open.facets.noise_bounds.get(g.index()).copied().flatten());
            if crate::analysis::audit::agree(f64::from(a), f64::from(b), bound) { 0.0 } else { a - b }
        }
        HeatValue::Score(name) => {
            run.nodes.scores.get(name).and_then(|c| c.get(node.index())).copied().unwrap_or(f32::NAN)
        }
        HeatValue::EnvReward => run.nodes.env_reward[node.index()],
        HeatValue::Role => {
            let sym = run.nodes.role[node.index()];
            if sym.is_none() { f32::NAN } else { role_index(run.label(sym), sym.index()) as f32 }
        }
    }
}

/// The colors for `value` over `range`.
pub fn colors_for(value: &HeatValue, range: (f32, f32)) -> ValueColors {
    if value.is_credit() { ValueColors::credit(range) } else { ValueColors::field(range) }
}

/// The color of one value.
pub fn color_of(value: &HeatValue, colors: &ValueColors, v: f32) -> egui::Color32 {
    if v.is_nan() {
        theme::MISSING
    } else if *value == HeatValue::Role {
        theme::category(v as usize)
    } else {
        colors.color(v)
    }
}

/// The grid and its textures, kept until the values change.
#[derive(Clone)]
struct Cache {
    key: u64,
    grid: Arc<HeatmapGrid>,
    colors: ValueColors,
    /// Texture, first row, first column, rows, columns.
    tiles: Vec<(egui::TextureHandle, [usize; 4])>,
}

fn cache_key(ctx: &ViewCtx<'_>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let open = &*ctx.open;
    open.cache_key().hash(&mut h);
    ctx.state.heat_value.hash(&mut h);
    ctx.state.heat_whole_run.hash(&mut h);
    if !ctx.state.heat_whole_run {
        open.selection.group.map(|g| g.0).hash(&mut h);
        // The rows follow the tree's leaves, which the merge mode lays out.
        open.tree.as_ref().map(|(g, merge, _)| (g.0, *merge)).hash(&mut h);
    }
    open.credit[0].generation.hash(&mut h);
    open.credit[1].generation.hash(&mut h);
    h.finish()
}

/// The grid of the current options, with textures, rebuilt only when its inputs changed.
fn cached(ui: &egui::Ui, ctx: &ViewCtx<'_>) -> Cache {
    let key = cache_key(ctx);
    let id = egui::Id::unique("heatmap_cache");
    if let Some(cache) = ui.data(|d| d.get_temp::<Cache>(id))
        && cache.key == key
    {
        return cache;
    }
    let open = &*ctx.open;
    let value = &ctx.state.heat_value;
    let group = if ctx.state.heat_whole_run { None } else { open.selection.group };
    let mut rows = rows_by_outcome(&open.run, group);
    // One group: rows in the order of the tree's leaves, so a row sits level with its leaf.
    if let (Some(g), Some((tree_group, _, tree))) = (group, open.tree.as_ref())
        && *tree_group == g
    {
        let tr = &open.run.trajectories;
        let row_of = |t: &crate::model::TrajectoryId| {
            let last = tr.path_range(*t).end.checked_sub(1)?;
            let node = *tree.node_of_position.get(&(last as u32))?;
            Some(tree.nodes[node as usize].y)
        };
        rows.sort_by(|a, b| row_of(a).unwrap_or(f32::INFINITY).total_cmp(&row_of(b).unwrap_or(f32::INFINITY)));
    }
    let grid = HeatmapGrid::build(&open.run, rows, |p| value_at(open, value, p));
    let colors = colors_for(value, grid.range);
    let mut tiles = Vec::new();
    let cols = grid.num_cols.max(1);
    for row0 in (0..grid.rows.len()).step_by(TILE) {
        let rows = TILE.min(grid.rows.len() - row0);
        for col0 in (0..cols).step_by(TILE) {
            let width = TILE.min(cols - col0);
            let mut pixels = Vec::with_capacity(rows * width);
            for r in row0..row0 + rows {
                for c in col0..col0 + width {
                    pixels.push(color_of(value, &colors, grid.value(r, c).unwrap_or(f32::NAN)));
                }
            }
            let image = egui::ColorImage::new([width, rows], pixels);
            let name = format!("heatmap_{row0}_{col0}");
            let texture = ui.ctx().load_texture(name, image, egui::TextureOptions::NEAREST);
            tiles.push((texture, [row0, col0, rows, width]));
        }
    }
    let cache = Cache { key, grid: Arc::new(grid), colors, tiles };
    ui.data_mut(|d| d.insert_temp(id, cache.clone()));
    cache
}

/// Draws the heatmap with its controls and legend into the available space.
pub fn ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    ui.horizontal_wrapped(|ui| {
        ui.label(egui::RichText::new("Heatmap").strong());
        crate::ui::widgets::heat_value_ui(
            ui,
            "heatmap value",
            &mut ctx.state.heat_value,
            &ctx.open.facets.heat_choices,
        );
        ui.selectable_value(&mut ctx.state.heat_whole_run, false, "this group");
        ui.selectable_value(&mut ctx.state.heat_whole_run, true, "whole run");
    });
    let cache = cached(ui, ctx);
    ui.horizontal_wrapped(|ui| {
        if ctx.state.heat_value == HeatValue::Role {
            role_legend_ui(ui, &ctx.open.facets);
        } else {
            legend_ui(ui, &cache.colors, &ctx.state.heat_value.label());
        }
        ui.label(
            egui::RichText::new(format!(
                "{} × {}",
                crate::ui::widgets::count(cache.grid.rows.len(), "rollout"),
                crate::ui::widgets::count(cache.grid.num_cols, "step")
            ))
            .color(theme::MUTED),
        );
    });
    // (Meeting mode's step strip says the same below.)
    if let (Some(t), Some(p), false) =
        (ctx.open.selection.trajectory, ctx.open.selection.position, ctx.state.meeting_mode)
    {
        let v = value_at(ctx.open, &ctx.state.heat_value, p);
        let step = ctx.open.selected_step_index().unwrap_or(0) + 1;
        let run = &ctx.open.run;
        ui.label(format!(
            "selected {} step {step}: {} = {}",
            run.trajectory_key(t),
            ctx.state.heat_value.label(),
            format_value(v)
        ));
    }
    grid_ui(ui, ctx, &cache);
}

fn role_legend_ui(ui: &mut egui::Ui, facets: &crate::app::Facets) {
    for (sym, name) in &facets.roles {
        ui.label(egui::RichText::new(format!("[{name}]")).color(theme::category(role_index(name, sym.index()))));
    }
}

/// Rows are never squeezed below this; more rows than fit scroll.
const MIN_ROW_HEIGHT: f32 = 4.0;
/// Rows this tall or taller get a label (trajectory and outcome) in a gutter on the left.
pub const LABELLED_ROW_HEIGHT: f32 = 11.0;

fn grid_ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>, cache: &Cache) {
    let grid = &cache.grid;
    if grid.rows.is_empty() || grid.num_cols == 0 {
        ui.label("No steps to show");
        return;
    }
    // Beside the tree (meeting mode's Group view), each row level with its leaf: the tree's row
    // spacing, from its first row.
    let beside_tree = ctx.state.meeting_mode && !ctx.state.heat_whole_run;
    let beside = beside_tree
        .then(|| crate::ui::level::rows_shown(ui, ctx.open, ctx.state.tree_merge))
        .flatten()
        .filter(|r| r.rows == grid.rows.len() && r.spacing >= MIN_ROW_HEIGHT);
    if beside_tree {
        let top = ui.cursor().top();
        ui.data_mut(|d| d.insert_temp(crate::ui::level::heatmap_top_id(), top));
    }
    if let Some(rows) = beside {
        let top = rows.first - rows.spacing / 2.0;
        let gap = top - ui.cursor().top();
        if gap >= 0.0 && top + rows.spacing * rows.rows as f32 <= ui.max_rect().bottom() + 4.0 {
            ui.add_space(gap);
            grid_rows_ui(ui, ctx, cache, rows.spacing);
            return;
        }
    }
    let size = ui.available_size();
    let row_height = (size.y / grid.rows.len() as f32).clamp(MIN_ROW_HEIGHT, 28.0);
    if row_height * grid.rows.len() as f32 > size.y + 0.5 {
        egui::ScrollArea::vertical().id_salt("heatmap_rows").show(ui, |ui| grid_rows_ui(ui, ctx, cache, row_height));
    } else {
        grid_rows_ui(ui, ctx, cache, row_height);
    }
}

/// A row's label: its rollout (named within its group when the heatmap shows one group) and outcome.
fn row_label(ctx: &ViewCtx<'_>, t: crate::model::TrajectoryId) -> String {
    let (name, outcome) = row_label_parts(ctx, t);
    format!("{name}{outcome}")
}

/// A row's label in parts: the rollout's name, and its outcome (" · R 1").
fn row_label_parts(ctx: &ViewCtx<'_>, t: crate::model::TrajectoryId) -> (String, String) {
    let run = &ctx.open.run;
    let name = if ctx.state.heat_whole_run { run.trajectory_key(t) } else { crate::ui::widgets::rollout_name(run, t) };
    (name.to_owned(), format!(" · R {}", format_value(run.trajectories.reward[t.index()])))
}

/// A row's label in at most `chars` characters: the name is cut, its outcome kept whole.
fn row_label_cut(ctx: &ViewCtx<'_>, t: crate::model::TrajectoryId, chars: usize) -> String {
    let (name, outcome) = row_label_parts(ctx, t);
    let room = chars.saturating_sub(outcome.chars().count()).max(3);
    format!("{}{outcome}", super::run_browser::truncate(&name, room))
}

fn grid_rows_ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>, cache: &Cache, row_height: f32) {
    let grid = &cache.grid;
    let size = ui.available_size();
    // As wide as the longest row label needs (about 0.55 em a character), at most 180 points.
    // (Rows this tall are few: they fit the view.)
    let gutter = if row_height >= LABELLED_ROW_HEIGHT {
        let longest = grid.rows.iter().map(|&t| row_label(ctx, t).chars().count()).max().unwrap_or(0);
        let needed = longest as f32 * (row_height * 0.7).min(13.0) * 0.55 + 14.0;
        needed.min(180.0).min(size.x * 0.4)
    } else {
        0.0
    };
    let col_width = ((size.x - gutter) / grid.num_cols as f32).min(80.0);
    let desired = egui::vec2(gutter + col_width * grid.num_cols as f32, row_height * grid.rows.len() as f32);
    let (whole, response) = ui.allocate_exact_size(desired, egui::Sense::click());
    // The selected step's row and step index, when its rollout is one of the rows: outlined
    // below and named in the canvas's accessible label.
    let selected_cell = match (ctx.open.selection.trajectory, ctx.open.selected_step_index()) {
        (Some(t), Some(k)) => grid.rows.iter().position(|&r| r == t).map(|row| (t, row, k)),
        _ => None,
    };
    let selected = selected_cell.map_or_else(String::new, |(t, _, k)| {
        format!(" · selected {} step {} (outlined)", ctx.open.run.trajectory_key(t), k + 1)
    });
    let rows = grid.rows.len();
    response.widget_info(|| {
        egui::WidgetInfo::labeled(egui::Role::Canvas, true, format!("heatmap · {rows} rows{selected}"))
    });
    let rect = egui::Rect::from_min_max(whole.min + egui::vec2(gutter, 0.0), whole.max);
    if gutter > 0.0 {
        let painter = ui.painter_at(whole);
        let font = egui::FontId::proportional((row_height * 0.7).min(13.0));
        let chars = ((gutter - 8.0) / (font.size * 0.55)).max(4.0) as usize;
        for (r, &t) in grid.rows.iter().enumerate() {
            let y = whole.top() + (r as f32 + 0.5) * row_height;
            if y < ui.clip_rect().top() - row_height || y > ui.clip_rect().bottom() + row_height {
                continue;
            }
            let label = row_label_cut(ctx, t, chars);
            painter.text(
                egui::pos2(rect.left() - 6.0, y),
                egui::Align2::RIGHT_CENTER,
                label,
                font.clone(),
                theme::MUTED,
            );
        }
    }
    let painter = ui.painter_at(rect);
    let uv = egui::Rect::from_min_max(egui::pos2(0.0, 0.0), egui::pos2(1.0, 1.0));
    for (texture, [row0, col0, rows, cols]) in &cache.tiles {
        let tile = egui::Rect::from_min_size(
            rect.min + egui::vec2(*col0 as f32 * col_width, *row0 as f32 * row_height),
            egui::vec2(*cols as f32 * col_width, *rows as f32 * row_height),
        );
        if tile.intersects(ui.clip_rect()) {
            painter.image(texture.id(), tile, uv, egui::Color32::WHITE);
        }
    }
    let cell_rect = |row: usize, col: usize| {
        egui::Rect::from_min_size(
            rect.min + egui::vec2(col as f32 * col_width, row as f32 * row_height),
            egui::vec2(col_width, row_height),
        )
    };
    // The selected step.
    let run = &ctx.open.run;
    if let Some((_, row, k)) = selected_cell {
        painter.rect_stroke(cell_rect(row, k), 0.0, egui::Stroke::new(2.0, theme::SELECTED), egui::StrokeKind::Inside);
    }
    let Some(pointer) = response.hover_pos().filter(|p| rect.contains(*p)) else { return };
    let col = ((pointer.x - rect.left()) / col_width) as usize;
    let row = ((pointer.y - rect.top()) / row_height) as usize;
    let Some(position) = grid.path_position(run, row, col) else { return };
    painter.rect_filled(cell_rect(row, col), 0.0, theme::highlight());
    let t = grid.rows[row];
    let value = grid.value(row, col).unwrap_or(f32::NAN);
    let a = ctx.open.credit[0].step().and_then(|s| s.get(position)).copied().unwrap_or(f32::NAN);
    let b = ctx.open.credit[1].step().and_then(|s| s.get(position)).copied().unwrap_or(f32::NAN);
    let node = run.trajectories.path_nodes[position].index();
    let text = format!(
        "{} · step {}\n{} = {}\nA = {} · B = {}\noutcome {}\n{}",
        run.trajectory_key(t),
        col + 1,
        ctx.state.heat_value.label(),
        format_value(value),
        format_value(a),
        format_value(b),
        format_value(run.trajectories.reward[t.index()]),
        super::run_browser::truncate(&run.text(run.nodes.thought[node]), 160)
    );
    response.clone().on_hover_text_at_pointer(text);
    if response.clicked() {
        ctx.commands.push(Command::SelectStep(position));
    }
}
