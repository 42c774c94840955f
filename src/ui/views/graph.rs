//! Graph view, beside the tree in the Group view: the behaviour graph of the selected group
//! ([`crate::analysis::behaviour`]), its states merged across rollouts, each drawn at the step of
//! its first arrival, sized by its visits and coloured by its mean credit under A, B or A − B;
//! transitions are lines as thick as their count, a loop an arc back; a fork (next states apart,
//! outcomes apart) is ringed. Hover a state for its numbers; click it to list the rollouts through
//! it (above the graph), and click one of those to select it at its first step there.

use crate::analysis::behaviour::{BehaviourGraph, GraphMerge, MAX_NODES, build, build_task};
use crate::app::Command;
use crate::app::state::GraphColor;
use crate::ui::{ViewCtx, theme};

/// Column and row spacing, in points, before fitting.
const DX: f32 = 140.0;
const DY: f32 = 80.0;

/// The least column spacing, in points, before the graph scrolls sideways.
const MIN_DX: f32 = 36.0;

/// The value a state or transition is coloured by.
fn shown(credit: [f64; 2], color: GraphColor) -> f32 {
    match color {
        GraphColor::CreditA => credit[0] as f32,
        GraphColor::CreditB => credit[1] as f32,
        GraphColor::Difference => (credit[0] - credit[1]) as f32,
    }
}

/// Draws the graph of the selected group with its controls.
pub fn ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    let Some(group) = ctx.open.selection.group else {
        ui.label("Select a group in the browser: its graph shows here");
        return;
    };
    ui.horizontal_wrapped(|ui| {
        for (across, label) in [(false, "this group"), (true, "its task across steps")] {
            let r = ui.selectable_label(ctx.state.graph_across_steps == across, label);
            crate::ui::widgets::name(&r, &format!("graph of {label}"));
            if r.clicked() {
                ctx.state.graph_across_steps = across;
            }
        }
        ui.separator();
        ui.label("colour");
        for color in GraphColor::ALL {
            let on = ctx.state.graph_color == color;
            let r = ui.selectable_label(on, color.label());
            crate::ui::widgets::name(&r, &format!("graph colour {}", color.label()));
            if r.clicked() {
                ctx.state.graph_color = color;
            }
        }
        ui.separator();
        ui.label("states by");
        for merge in GraphMerge::ALL {
            let r = ui.selectable_label(ctx.state.graph_merge == merge, merge.name());
            crate::ui::widgets::name(&r, &format!("graph states by {}", merge.name()));
            if r.clicked() {
                ctx.state.graph_merge = merge;
            }
        }
    });
    let open = &*ctx.open;
    let run = &open.run;
    let none: Vec<f32> = Vec::new();
    let credit = [open.credit[0].step().unwrap_or(&none), open.credit[1].step().unwrap_or(&none)];
    let graph = if ctx.state.graph_across_steps {
        build_task(run, group, credit, ctx.state.graph_merge, MAX_NODES)
    } else {
        build(run, group, credit, ctx.state.graph_merge, MAX_NODES)
    };
    let color = ctx.state.graph_color;
    let values: Vec<f32> = graph.nodes.iter().map(|n| shown(n.credit, color)).filter(|v| v.is_finite()).collect();
    let range = values.iter().fold((0.0f32, 0.0f32), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let colors = theme::ValueColors::credit(range);
    let forks = graph.nodes.iter().filter(|n| n.fork).count();
    let cycles = graph.edges.iter().filter(|e| e.back).count();
    let mut summary = format!(
        "{} by {} · {} · {} · {}",
        crate::ui::widgets::count(graph.nodes.len().saturating_sub(1), "state"),
        graph.merge.name(),
        crate::ui::widgets::count(graph.edges.len(), "transition"),
        crate::ui::widgets::count(cycles, "loop"),
        crate::ui::widgets::count(forks, "fork"),
    );
    if graph.folded > 0 {
        summary.push_str(&format!(" · {} rare states folded into other", graph.folded));
    }
    if !colors.is_flat() {
        summary.push_str(&format!(" · {} from blue −{:.3} to red +{:.3}", color.label(), colors.hi, colors.hi));
    }
    ui.label(egui::RichText::new(summary).color(theme::MUTED));
    let picked_id = egui::Id::unique(("graph_picked", open.instance, group.0));
    let mut picked: Option<u32> = ui.data(|d| d.get_temp::<Option<u32>>(picked_id)).flatten();
    // The rollouts through the picked state, above the graph: always in view, whatever room the
    // graph leaves below it.
    if let Some(i) = picked.filter(|&i| (i as usize) < graph.nodes.len()) {
        rollouts_ui(ui, ctx.commands, run, &graph, i);
    }
    // The horizontal scroll bar's room kept below the graph.
    let height = (ui.available_height() - 14.0).max(80.0);
    let columns = graph.nodes.iter().map(|n| n.column).max().unwrap_or(0) + 1;
    // Columns at least MIN_DX apart: a long group scrolls sideways rather than crowding.
    let width = ui.available_width().max(40.0 + columns as f32 * MIN_DX);
    let (response, _, clicked) = egui::ScrollArea::horizontal()
        .id_salt(("graph", open.instance, group.0))
        .max_height(height)
        .show(ui, |ui| draw_ui(ui, &graph, egui::vec2(width, height), (&colors, color), picked))
        .inner;
    if clicked.is_some() || response.clicked() {
        picked = clicked.map(|i| i as u32);
        ui.data_mut(|d| d.insert_temp(picked_id, picked));
        ui.ctx().request_repaint();
    }
}

/// Draws the states and transitions into a rect of `size`; the canvas's response, the state under
/// the pointer and the state clicked.
fn draw_ui(
    ui: &mut egui::Ui,
    graph: &BehaviourGraph,
    size: egui::Vec2,
    (colors, color): (&theme::ValueColors, GraphColor),
    picked: Option<u32>,
) -> (egui::Response, Option<usize>, Option<usize>) {
    let columns = graph.nodes.iter().map(|n| n.column).max().unwrap_or(0) + 1;
    let (rect, response) = ui.allocate_exact_size(size, egui::Sense::click());
    let rows = graph.nodes.iter().map(|n| n.row).max().unwrap_or(0) + 1;
    // Fit: the spacing shrinks to the rect, never grows past its own.
    let dx = (rect.width() - 40.0).max(40.0) / columns as f32;
    let dy = (rect.height() - 30.0).max(30.0) / rows as f32;
    let (dx, dy) = (dx.min(DX), dy.min(DY));
    let at = |i: usize| {
        let n = &graph.nodes[i];
        rect.min + egui::vec2(20.0 + (n.column as f32 + 0.5) * dx, 15.0 + (n.row as f32 + 0.5) * dy)
    };
    let painter = ui.painter_at(rect);
    draw_edges(&painter, graph, &at, (colors, color), dx.min(dy));
    let max_visits = graph.nodes.iter().map(|n| n.visits).max().unwrap_or(1).max(1) as f32;
    let largest = (dx.min(dy) * 0.4).clamp(3.0, 14.0);
    let (mut hovered, mut clicked) = (None, None);
    // The widget a tooltip hangs on: the state's own where it has one, else the canvas.
    let mut tip_on: Option<egui::Response> = None;
    for (i, node) in graph.nodes.iter().enumerate() {
        let center = at(i);
        let radius = (largest * (node.visits as f32 / max_visits).sqrt()).max(2.5);
        let value = shown(node.credit, color);
        let fill = if i == 0 { theme::EDGE } else { colors.color(value) };
        painter.circle_filled(center, radius, fill);
        if node.fork {
            painter.circle_stroke(center, radius + 3.0, egui::Stroke::new(2.0, theme::WARNING));
        }
        if picked == Some(i as u32) {
            painter.circle_stroke(center, radius + 6.0, egui::Stroke::new(2.0, theme::SELECTED));
        }
        if let Some(pointer) = response.hover_pos()
            && pointer.distance(center) <= radius + 4.0
        {
            hovered = Some(i);
        }
        // Each state in view is a widget of its own, named, so it can be found and clicked (by a
        // screen reader or a test) as the pointer does.
        let area = egui::Rect::from_center_size(center, egui::Vec2::splat(2.0 * radius + 6.0));
        if ui.clip_rect().contains_rect(area) {
            let state = ui.interact(area, ui.scope_id().with(("graph_state", i)), egui::Sense::click());
            crate::ui::widgets::name(&state, &format!("graph state {}", crate::model::truncate(&node.label, 40)));
            if state.clicked() {
                clicked = Some(i);
            }
            if state.hovered() {
                hovered = Some(i);
                tip_on = Some(state);
            }
        }
    }
    if let Some(i) = hovered {
        let node = &graph.nodes[i];
        tip_on.unwrap_or_else(|| response.clone()).on_hover_ui_at_pointer(|ui| {
            ui.label(egui::RichText::new(crate::model::truncate(&node.label, 120)).strong());
            ui.label(format!(
                "{} · {} · outcome spread {}",
                crate::ui::widgets::count(node.visits as usize, "visit"),
                crate::ui::widgets::count(node.rollouts.len(), "rollout"),
                crate::ui::widgets::format_value(node.spread as f32)
            ));
            ui.label(format!(
                "mean credit A {} · B {}",
                crate::ui::widgets::format_value(node.credit[0] as f32),
                crate::ui::widgets::format_value(node.credit[1] as f32)
            ));
            if node.fork {
                ui.label(
                    egui::RichText::new("a fork: its rollouts part here and their outcomes differ")
                        .color(theme::WARNING),
                );
            }
        });
    }
    if clicked.is_none() && response.clicked() {
        clicked = hovered;
    }
    (response, hovered, clicked)
}

/// The transitions: a line from state to state as thick as its count, a loop an arc above.
fn draw_edges(
    painter: &egui::Painter,
    graph: &BehaviourGraph,
    at: &dyn Fn(usize) -> egui::Pos2,
    (colors, color): (&theme::ValueColors, GraphColor),
    spacing: f32,
) {
    let max_count = graph.edges.iter().map(|e| e.count).max().unwrap_or(1).max(1) as f32;
    for edge in &graph.edges {
        let (a, b) = (at(edge.from as usize), at(edge.to as usize));
        let width = 0.8 + 3.0 * (edge.count as f32 / max_count);
        let value = shown(edge.credit, color);
        let stroke = egui::Stroke::new(width, if value.is_finite() { colors.color(value) } else { theme::EDGE });
        if edge.from == edge.to {
            painter.circle_stroke(a + egui::vec2(0.0, -spacing * 0.35), spacing * 0.25, stroke);
        } else if edge.back {
            let lift = egui::vec2(0.0, -spacing * 0.6 - (b.x - a.x).abs() * 0.15);
            let control = egui::pos2((a.x + b.x) / 2.0, a.y.min(b.y)) + lift;
            let curve = egui::epaint::QuadraticBezierShape::from_points_stroke(
                [a, control, b],
                false,
                egui::Color32::TRANSPARENT,
                stroke,
            );
            painter.add(curve);
        } else {
            painter.line_segment([a, b], stroke);
        }
    }
}

/// The rollouts through state `i`: a button each, selecting the rollout at its first step there.
fn rollouts_ui(
    ui: &mut egui::Ui,
    commands: &mut Vec<Command>,
    run: &crate::model::Run,
    graph: &BehaviourGraph,
    i: u32,
) {
    let node = &graph.nodes[i as usize];
    ui.label(
        egui::RichText::new(format!(
            "{} through {}",
            crate::ui::widgets::count(node.rollouts.len(), "rollout"),
            crate::model::truncate(&node.label, 60)
        ))
        .strong(),
    );
    egui::ScrollArea::horizontal().id_salt(("graph_rollouts", i)).show(ui, |ui| {
        ui.horizontal(|ui| {
            for (t, states) in &graph.paths {
                let Some(k) = states.iter().position(|&s| s == i) else { continue };
                let outcome = run.trajectories.reward[t.index()];
                let text = format!("{} ({})", run.trajectory_key(*t), crate::ui::widgets::format_value(outcome));
                let r = ui.button(text);
                crate::ui::widgets::name(&r, &format!("graph rollout {}", run.trajectory_key(*t)));
                // `start` is no step: the rollout's first.
                let step = k.saturating_sub(1);
                if r.clicked() {
                    commands.push(Command::SelectStep(run.trajectories.path_range(*t).start + step));
                }
            }
        });
    });
}
