//! Group view: the rollout tree of the selected group above its steps × rollouts heatmap (beside it
//! in meeting mode), under the group's baseline findings (`forensics::group_ui`).

use crate::ui::ViewCtx;

/// Draws the tree in the upper part and the heatmap below.
pub fn ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    let mut in_their_room = false;
    if let Some(g) = ctx.open.selection.group {
        let run = &ctx.open.run;
        let prompt = run.text(run.groups.prompt[g.index()]);
        let task = run.label(run.groups.task[g.index()]);
        let task = if task.is_empty() || run.group_key(g).ends_with(task) {
            String::new()
        } else {
            format!(" · task {task}")
        };
        ui.horizontal_wrapped(|ui| {
            // A key that holds the prompt is titled by its own part: the prompt is the line below.
            let title =
                match crate::ui::widgets::key_without_prompt(run.group_key(g), &prompt).filter(|own| !own.is_empty()) {
                    Some(own) => own.to_owned(),
                    _ => crate::ui::widgets::group_title(run, g),
                };
            ui.label(egui::RichText::new(format!("Group {title}{task}")).strong());
            walk_ui(ui, ctx.open, ctx.commands, g);
            shows_ui(ui, ctx.state);
        });
        let headline = crate::analysis::runs::headline(&prompt);
        if headline.is_empty() {
        } else if ctx.state.meeting_mode {
            // One line in meeting mode (the tree and heatmap need the height); the whole on hover.
            let line = headline.split_whitespace().collect::<Vec<_>>().join(" ");
            ui.add(egui::Label::new(line).truncate()).on_hover_text(headline);
        } else {
            ui.label(super::run_browser::truncate(headline, 400));
        }
        in_their_room = super::forensics::group_ui(ui, ctx, g);
    }
    // Meeting mode's credit with and without a finding's rows, in the tree and heatmap's room.
    if in_their_room {
        return;
    }
    // In meeting mode the window holds too little height for both one above the other: side by
    // side, rows level (the heatmap's rows follow the tree's leaves), each as tall as the view.
    if ctx.state.meeting_mode {
        ui.columns(2, |columns| {
            tree_or_graph_ui(&mut columns[0], ctx);
            super::heatmap::ui(&mut columns[1], ctx);
        });
        return;
    }
    let size = ui.available_size();
    ui.allocate_ui(egui::vec2(size.x, size.y * 0.55), |ui| {
        ui.set_min_height(size.y * 0.55);
        tree_or_graph_ui(ui, ctx);
    });
    ui.separator();
    super::heatmap::ui(ui, ctx);
}

/// The switch between the tree and the behaviour graph, on the title line (the rows below keep
/// their height).
fn shows_ui(ui: &mut egui::Ui, state: &mut crate::app::state::AppState) {
    use crate::app::state::GroupShows;
    ui.separator();
    for (shows, label) in [(GroupShows::Tree, "Tree"), (GroupShows::Graph, "Graph")] {
        let r = ui.selectable_label(state.group_shows == shows, label);
        crate::ui::widgets::name(&r, &format!("group shows {label}"));
        if r.clicked() {
            state.group_shows = shows;
        }
    }
}

/// The tree, or the behaviour graph beside it.
fn tree_or_graph_ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    match ctx.state.group_shows {
        crate::app::state::GroupShows::Tree => super::tree::ui(ui, ctx),
        crate::app::state::GroupShows::Graph => super::graph::ui(ui, ctx),
    }
}

/// The groups being walked (an alarm's), on the title line: which of them this is, previous,
/// next, and a way out.
fn walk_ui(
    ui: &mut egui::Ui,
    open: &crate::app::OpenRun,
    commands: &mut Vec<crate::app::Command>,
    g: crate::model::GroupId,
) {
    use crate::app::Command;
    let Some(walk) = &open.walk else { return };
    ui.separator();
    let n = walk.groups.len();
    let here = if walk.groups.get(walk.at) == Some(&g) {
        format!("{}: group {} of {n}", walk.what, walk.at + 1)
    } else {
        format!("{}: {} (this one is not among them)", walk.what, crate::ui::widgets::count(n, "group"))
    };
    ui.label(egui::RichText::new(here).color(crate::ui::theme::WARNING));
    let previous = ui.add_enabled(n > 1, egui::Button::new("< previous").small());
    crate::ui::widgets::name(&previous, "previous group of the walk");
    if previous.clicked() {
        commands.push(Command::WalkBy(-1));
    }
    let next = ui.add_enabled(n > 1, egui::Button::new("next >").small());
    crate::ui::widgets::name(&next, "next group of the walk");
    if next.clicked() {
        commands.push(Command::WalkBy(1));
    }
    if ui.small_button("stop").on_hover_text("stop walking these groups").clicked() {
        commands.push(Command::EndWalk);
    }
}
