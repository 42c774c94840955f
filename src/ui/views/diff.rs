//! Diff view: two rollouts of one group aligned step by step (the selected one on the left, by
//! default one with the other outcome on the right), each step with its credit under A and B, the
//! first row where they part marked, so "where did the successful rollout diverge, and what credit
//! did that step get" is one table. Click a step to select it.

use crate::analysis::diff::{AlignBy, MAX_ALIGNED, align, align_group, default_partner, divergence};
use crate::app::Command;
use crate::model::TrajectoryId;
use crate::ui::widgets::format_value;
use crate::ui::{ViewCtx, theme};

/// Draws the diff.
pub fn ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    let open = &*ctx.open;
    let run = &open.run;
    let Some(left) = open.selection.trajectory else {
        ui.label("Select a rollout: the diff aligns it with another of its group");
        return;
    };
    let tr = &run.trajectories;
    let members = run.groups.members(tr.group[left.index()]);
    let partner_id = egui::Id::unique("diff_partner");
    let by_id = egui::Id::unique("diff_align_by");
    let mut right: Option<TrajectoryId> = ui
        .data(|d| d.get_temp::<(TrajectoryId, TrajectoryId)>(partner_id))
        .filter(|(l, r)| *l == left && members.contains(r))
        .map(|(_, r)| r)
        .or_else(|| default_partner(run, left));
    let mut by: AlignBy = ui.data(|d| d.get_temp(by_id)).unwrap_or_default();
    let outcome = |t: TrajectoryId| format!("{} (R {})", run.trajectory_key(t), format_value(tr.reward[t.index()]));
    ui.horizontal_wrapped(|ui| {
        ui.label(egui::RichText::new("Diff").strong());
        ui.label(outcome(left));
        ui.label("against");
        let combo = egui::ComboBox::from_id_salt("diff_partner")
            .selected_text(right.map_or_else(|| "—".to_owned(), outcome))
            .show_ui(ui, |ui| {
                for &t in members.iter().filter(|&&t| t != left) {
                    ui.selectable_value(&mut right, Some(t), outcome(t));
                }
            });
        crate::ui::widgets::name(&combo.response, "diff against");
        ui.label("steps match by");
        let combo = egui::ComboBox::from_id_salt("diff_align_by").selected_text(by.label()).show_ui(ui, |ui| {
            for way in AlignBy::ALL {
                ui.selectable_value(&mut by, way, way.label());
            }
        });
        crate::ui::widgets::name(&combo.response, "diff match by");
        group_toggle_ui(ui, ctx.state);
    });
    ui.data_mut(|d| {
        d.insert_temp(by_id, by);
        if let Some(r) = right {
            d.insert_temp(partner_id, (left, r));
        }
    });
    let Some(right) = right else {
        ui.label("This rollout is alone in its group: nothing to align it with");
        return;
    };
    if ctx.state.diff_align_group {
        // The selected rollout first, then the rest of its group (up to 16 in all).
        let rollouts: Vec<TrajectoryId> =
            std::iter::once(left).chain(members.iter().copied().filter(|&t| t != left)).take(MAX_ALIGNED).collect();
        group_ui(ui, ctx.commands, open, &rollouts, by);
        return;
    }
    let rows = align(run, left, right, by);
    let parted = divergence(&rows);
    let matched = rows.iter().filter(|r| r.matched()).count();
    ui.label(
        egui::RichText::new(match parted {
            Some(i) => format!(
                "{matched} matching step{}; they part at row {} (left step {}, right step {})",
                if matched == 1 { "" } else { "s" },
                i + 1,
                rows[i].left.map_or_else(|| "—".to_owned(), |k| (k + 1).to_string()),
                rows[i].right.map_or_else(|| "—".to_owned(), |k| (k + 1).to_string()),
            ),
            None => format!("{matched} steps, all matching"),
        })
        .color(theme::MUTED),
    );
    let mut clicked = None;
    // Two step columns that fit the view: each cell "k. kind: text  A / B", cut to its width.
    let chars = ((ui.available_width() - 110.0) / 2.0 / 7.0).max(16.0) as usize;
    ui.label(egui::RichText::new("each step: its number, kind and text, then its credit A / B").color(theme::MUTED));
    egui::ScrollArea::vertical().id_salt("diff_scroll").show(ui, |ui| {
        egui::Grid::new("diff_rows").striped(true).num_columns(3).show(ui, |ui| {
            for h in ["", "left", "right"] {
                ui.label(egui::RichText::new(h).color(theme::MUTED));
            }
            ui.end_row();
            for (i, row) in rows.iter().enumerate() {
                let mark = match (row.left, row.right) {
                    (Some(_), Some(_)) => "=",
                    (Some(_), None) => "−",
                    _ => "+",
                };
                let text = if parted == Some(i) { format!("{mark} parts here") } else { mark.to_owned() };
                ui.label(egui::RichText::new(text).color(if row.matched() { theme::MUTED } else { theme::WARNING }));
                for (side, t) in [(row.left, left), (row.right, right)] {
                    step_cell(ui, open, t, side, chars, &mut clicked);
                }
                ui.end_row();
            }
        });
    });
    if let Some(p) = clicked {
        ctx.commands.push(Command::SelectStep(p));
    }
}

/// A step's number, kind and text and its credit under A and B, cut to `chars`; empty where the
/// side has no step here.
fn step_cell(
    ui: &mut egui::Ui,
    open: &crate::app::OpenRun,
    t: TrajectoryId,
    step: Option<usize>,
    chars: usize,
    clicked: &mut Option<usize>,
) {
    let Some(k) = step else {
        ui.label("");
        return;
    };
    let run = &open.run;
    let p = run.trajectories.path_range(t).start + k;
    let node = run.trajectories.path_nodes[p];
    let credit = |slot: usize| open.credit[slot].step().and_then(|s| s.get(p)).copied().unwrap_or(f32::NAN);
    let numbers = format!("{} / {}", format_value(credit(0)), format_value(credit(1)));
    let room = chars.saturating_sub(numbers.chars().count() + 6).max(6);
    let text = super::run_browser::truncate(&super::tree::node_label(run, node), room);
    let selected = open.selection.position == Some(p);
    if ui.selectable_label(selected, format!("{}. {text}  {numbers}", k + 1)).clicked() {
        *clicked = Some(p);
    }
}

/// The "align the group" switch.
fn group_toggle_ui(ui: &mut egui::Ui, state: &mut crate::app::state::AppState) {
    let group = ui.selectable_label(state.diff_align_group, "align the group");
    crate::ui::widgets::name(&group, "diff align the group");
    if group.clicked() {
        state.diff_align_group = !state.diff_align_group;
    }
}

/// The group aligned at once: a row per rollout (the selected one first), its steps in the
/// aligned columns coloured by credit A (gaps dark), the columns where the rollouts part marked
/// above; click a step to select it.
fn group_ui(
    ui: &mut egui::Ui,
    commands: &mut Vec<Command>,
    open: &crate::app::OpenRun,
    rollouts: &[TrajectoryId],
    by: AlignBy,
) {
    let run = &open.run;
    let tr = &run.trajectories;
    let alignment = align_group(run, rollouts, by);
    let forks = alignment.forks();
    let credit = open.credit[0].step();
    let largest = open.credit[0].largest();
    let colors = theme::ValueColors::credit((-largest, largest));
    ui.label(
        egui::RichText::new(format!(
            "{} on {} · {} where they part (marked) · cells: credit A, gaps dark · rows: the selected rollout, then its group",
            crate::ui::widgets::count(rollouts.len(), "rollout"),
            crate::ui::widgets::count(alignment.columns.len(), "column"),
            crate::ui::widgets::count(forks.len(), "column"),
        ))
        .color(theme::MUTED),
    );
    let name_width = 150.0;
    let cell = ((ui.available_width() - name_width - 10.0) / alignment.columns.len().max(1) as f32).clamp(6.0, 28.0);
    let row_height = ((ui.available_height() - 40.0) / (rollouts.len() as f32 + 1.0)).clamp(12.0, 26.0);
    let width = name_width + cell * alignment.columns.len() as f32 + 10.0;
    egui::ScrollArea::both().id_salt(("diff_group", open.instance)).auto_shrink(false).show(ui, |ui| {
        let (rect, response) =
            ui.allocate_exact_size(egui::vec2(width, row_height * (rollouts.len() as f32 + 1.0)), egui::Sense::click());
        let painter = ui.painter_at(rect);
        let x0 = rect.left() + name_width;
        for &c in &forks {
            // A small triangle pointing down at the column.
            let (x, h) = (x0 + (c as f32 + 0.5) * cell, (row_height * 0.5).min(10.0));
            let top = rect.top() + (row_height - h) / 2.0;
            painter.add(egui::Shape::convex_polygon(
                vec![egui::pos2(x - h / 2.0, top), egui::pos2(x + h / 2.0, top), egui::pos2(x, top + h)],
                theme::WARNING,
                egui::Stroke::NONE,
            ));
        }
        let selected = open.selection.position;
        let mut hit = None;
        for (r, &t) in rollouts.iter().enumerate() {
            let y = rect.top() + row_height * (r as f32 + 1.0);
            let name = format!(
                "{} · R {}",
                crate::model::truncate(run.trajectory_key(t), 18),
                format_value(tr.reward[t.index()])
            );
            painter.text(
                egui::pos2(rect.left(), y + row_height / 2.0),
                egui::Align2::LEFT_CENTER,
                name,
                egui::FontId::proportional((row_height * 0.55).clamp(9.0, 13.0)),
                if r == 0 { theme::SELECTED } else { theme::MUTED },
            );
            for (c, column) in alignment.columns.iter().enumerate() {
                let cell_rect = egui::Rect::from_min_size(
                    egui::pos2(x0 + c as f32 * cell, y),
                    egui::vec2(cell - 1.0, row_height - 2.0),
                );
                let Some(k) = column[r] else {
                    painter.rect_filled(cell_rect, 0.0, theme::MISSING);
                    continue;
                };
                let p = tr.path_range(t).start + k;
                let value = credit.and_then(|v| v.get(p)).copied().unwrap_or(f32::NAN);
                painter.rect_filled(cell_rect, 0.0, colors.color(value));
                if selected == Some(p) {
                    painter.rect_stroke(
                        cell_rect,
                        0.0,
                        egui::Stroke::new(2.0, theme::SELECTED),
                        egui::StrokeKind::Inside,
                    );
                }
                if response.hover_pos().is_some_and(|h| cell_rect.contains(h)) {
                    hit = Some((p, t, k, value));
                }
            }
        }
        if let Some((p, t, k, value)) = hit {
            let node = tr.path_nodes[p];
            response.clone().on_hover_text(format!(
                "{} step {}: {} · credit A {}",
                run.trajectory_key(t),
                k + 1,
                crate::model::truncate(&crate::analysis::behaviour::normalized_action(run, node), 80),
                format_value(value)
            ));
            if response.clicked() {
                commands.push(Command::SelectStep(p));
            }
        }
    });
}
