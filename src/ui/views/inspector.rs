//! Step inspector: the selected step's text (long text virtualised), scores, role, state key, MC
//! statistics and retrieved documents, and its credit under A, B and every supported scheme with
//! the terms that produced each number.

use crate::analysis::step_credit::{formula_line, own_values, token_terms};
use crate::credit::Credit;
use crate::ui::widgets::format_value;
use crate::ui::{ViewCtx, theme};

/// Above this many steps the every-scheme list is computed only on request.
const LARGE_RUN_STEPS: usize = 200_000;

/// Draws the inspector.
pub fn ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    ui.heading("Step");
    let open = &mut *ctx.open;
    let (Some(t), Some(p)) = (open.selection.trajectory, open.selection.position) else {
        // A rollout of no step (a trial whose agent ran nothing): its outcome and files alone.
        if let Some(t) = open.selection.trajectory.filter(|&t| open.run.trajectories.num_steps(t) == 0) {
            let run = &open.run;
            let reward = format_value(run.trajectories.reward[t.index()]);
            ui.label(
                egui::RichText::new(format!("{} · no steps: its outcome alone, {reward}", run.trajectory_key(t)))
                    .strong(),
            );
            trial_files_ui(ui, run, t);
            return;
        }
        ui.label("Click a step in the tree, the heatmap or a table");
        return;
    };
    let step_index = open.selected_step_index().unwrap_or(0);
    let run = &open.run;
    let tr = &run.trajectories;
    let node = tr.path_nodes[p];
    let n = node.index();
    let g = tr.group[t.index()];
    ui.label(
        egui::RichText::new(format!("{} · step {} of {}", run.trajectory_key(t), step_index + 1, tr.num_steps(t)))
            .strong(),
    );
    ui.label(
        egui::RichText::new(format!(
            "group {} · outcome {}{}",
            crate::ui::widgets::group_title(run, g),
            format_value(tr.reward[t.index()]),
            match tr.success[t.index()] {
                Some(true) => " · success",
                Some(false) => " · failure",
                None => "",
            }
        ))
        .color(theme::MUTED),
    );
    trial_files_ui(ui, &open.run, t);
    labels_ui(ui, open, ctx.commands, t, p);
    let open = &*ctx.open;
    let run = &open.run;
    let nodes = &run.nodes;
    fields_ui(ui, run, node);
    for (label, text) in
        [("thought", nodes.thought[n]), ("action", nodes.action[n]), ("observation", nodes.observation[n])]
    {
        let text = run.text(text);
        if !text.is_empty() {
            ui.label(egui::RichText::new(label).color(theme::MUTED));
            long_text_ui(ui, label, &text);
        }
    }
    if ui.button("Compare with… (diff against another rollout of the group)").clicked() {
        ctx.state.tab = crate::app::Tab::Diff;
    }
    let open = &mut *ctx.open;
    ui.separator();
    ui.label(egui::RichText::new("Credit").strong());
    shared_note_ui(ui, open, g, p);
    for (slot, name) in [(0, "A"), (1, "B")] {
        let key = open.credit[slot].shown_name().to_owned();
        let extra = step_terms(ui, open, ctx.state.scheme(slot), (slot, t, p), true);
        slot_line_ui(ui, &open.credit[slot], &format!("{name}: {key}"), t.index(), p, &extra);
        super::scheme_panel::last_good_note_ui(ui, &open.credit[slot]);
    }
    egui::CollapsingHeader::new("Under every supported scheme (defaults)").id_salt("every_scheme").show(ui, |ui| {
        // On a large run computing some thirty schemes takes seconds: only when asked.
        let large = open.run.num_path_steps() > LARGE_RUN_STEPS;
        let asked_id = egui::Id::unique(("every_scheme_asked", open.cache_key()));
        let asked = ui.data(|d| d.get_temp::<bool>(asked_id).unwrap_or(false));
        if large && open.every_scheme.is_none() && !asked {
            let steps = open.run.num_path_steps();
            if ui.button(format!("Compute all schemes ({steps} steps: takes a few seconds)")).clicked() {
                ui.data_mut(|d| d.insert_temp(asked_id, true));
            }
            return;
        }
        let run = std::sync::Arc::clone(&open.run);
        for scheme in open.every_scheme() {
            let mut extra = crate::credit::scheme(scheme.info.id)
                .map(|s| s.step_terms(&run, &crate::credit::Params::defaults(s), &scheme.credit, t, p))
                .unwrap_or_default();
            extra.extend(token_terms(&run, &scheme.credit, t, p));
            credit_line_ui(ui, scheme.info.display_name, &scheme.credit, None, t.index(), p, &extra);
        }
    });
}

/// The files that came with the rollout's outcome (a Harbor trial's verifier files: its test
/// output, its CTRF report's counts), when the run keeps any.
fn trial_files_ui(ui: &mut egui::Ui, run: &crate::model::Run, t: crate::model::TrajectoryId) {
    let files =
        run.meta.metadata.get(crate::load::formats::outcomes::FILES_KEY).and_then(|m| m.get(run.trajectory_key(t)));
    let names: Vec<&str> = files
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(serde_json::Value::as_str)
        .collect();
    if !names.is_empty() {
        ui.label(egui::RichText::new(format!("trial files: {}", names.join(" · "))).color(theme::MUTED));
    }
}

/// The step's fields: kind, role, state key, env reward, scores, MC statistics, first error,
/// documents.
fn fields_ui(ui: &mut egui::Ui, run: &crate::model::Run, node: crate::model::NodeId) {
    let nodes = &run.nodes;
    let n = node.index();
    egui::Grid::new("step_fields").num_columns(2).striped(true).show(ui, |ui| {
        let mut row = |name: &str, value: String| {
            if !value.is_empty() {
                ui.label(egui::RichText::new(name).color(theme::MUTED));
                ui.label(value);
                ui.end_row();
            }
        };
        row("kind", run.label(nodes.kind[n]).to_owned());
        row("role", run.label(nodes.role[n]).to_owned());
        row("state key", run.label(nodes.state_key[n]).to_owned());
        if !nodes.env_reward[n].is_nan() {
            row("env reward", format_value(nodes.env_reward[n]));
        }
        for (name, column) in &nodes.scores {
            if let Some(v) = column.get(n).filter(|v| !v.is_nan()) {
                row(&format!("score {name}"), format_value(*v));
            }
        }
        if let Some(mc) = nodes.mc(node) {
            row("MC", mc_text(mc));
        }
        if let Some(flag) = nodes.first_error(node) {
            row("first error", flag.to_string());
        }
        let docs: Vec<&str> = nodes.docs(node).iter().map(|&d| run.label(d)).collect();
        row("docs", docs.join(", "));
    });
}

/// The step's labels and its rollout's, each with a button that takes it off, and the field that
/// labels the step (`L` puts the keyboard there; Enter adds; "whole rollout" labels the rollout).
fn labels_ui(
    ui: &mut egui::Ui,
    open: &crate::app::OpenRun,
    commands: &mut Vec<crate::app::Command>,
    t: crate::model::TrajectoryId,
    p: usize,
) {
    let step = p - open.run.trajectories.path_range(t).start;
    let key = open.run.trajectory_key(t);
    ui.horizontal_wrapped(|ui| {
        ui.label(egui::RichText::new("labels").color(theme::MUTED));
        for named in &open.run.meta.labels.names {
            let on_step = named.steps.get(&p).map(|v| (v, Some(step as u32)));
            let on_rollout = named.trajectories.get(&t).map(|v| (v, None));
            for (value, at) in on_step.into_iter().chain(on_rollout) {
                let shown = value.shown();
                let text = match (shown.is_empty(), at) {
                    (true, Some(_)) => named.name.clone(),
                    (false, Some(_)) => format!("{}={shown}", named.name),
                    (true, None) => format!("{} (rollout)", named.name),
                    (false, None) => format!("{}={shown} (rollout)", named.name),
                };
                let chip =
                    ui.add(egui::Button::new(egui::RichText::new(format!("{text} ×")).color(theme::LABEL)).small());
                if chip.on_hover_text("take this label off").clicked() {
                    let target = crate::model::labels::Target { trajectory: key.to_owned(), step: at };
                    commands.push(crate::app::Command::RemoveLabel { name: named.name.clone(), target });
                }
            }
        }
        let draft_id = egui::Id::unique(("label_draft", open.instance));
        let whole_id = egui::Id::unique(("label_whole", open.instance));
        let mut draft = ui.data(|d| d.get_temp::<String>(draft_id).unwrap_or_default());
        let mut whole = ui.data(|d| d.get_temp::<bool>(whole_id).unwrap_or(false));
        let field = ui.add(
            egui::TextEdit::singleline(&mut draft)
                .id(egui::Id::unique(crate::app::LABEL_FIELD))
                .hint_text("label (L): hack, severity=high")
                .desired_width(170.0),
        );
        crate::ui::widgets::name(&field, "label this step");
        // `L` focuses the field wherever the panel is scrolled.
        if field.gained_focus() {
            field.scroll_to_me(Some(egui::Align::Center));
        }
        if field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) && !draft.trim().is_empty() {
            commands.push(crate::app::Command::AddLabel { text: std::mem::take(&mut draft), whole });
        }
        ui.checkbox(&mut whole, "whole rollout");
        ui.data_mut(|d| {
            d.insert_temp(draft_id, draft);
            d.insert_temp(whole_id, whole);
        });
    });
}

/// Meeting mode's step strip: the selected step's text beside its credit under A and B with their
/// terms, in the room's type size.
pub fn strip_ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    let open = &*ctx.open;
    let (Some(t), Some(p)) = (open.selection.trajectory, open.selection.position) else {
        ui.label("Select a step: the strip shows its text and both credits");
        return;
    };
    let run = &open.run;
    let tr = &run.trajectories;
    let n = tr.path_nodes[p].index();
    let step_index = open.selected_step_index().unwrap_or(0);
    ui.label(
        egui::RichText::new(format!(
            "Step strip · {} · step {} of {} · outcome {}",
            run.trajectory_key(t),
            step_index + 1,
            tr.num_steps(t),
            format_value(tr.reward[t.index()])
        ))
        .strong(),
    );
    // Each column ragged right: the columns' justified layout would stretch wrapped lines to
    // the edge (and let the last glyph of a stretched line run past it).
    let ragged = egui::Layout::top_down(egui::Align::Min);
    ui.columns(2, |columns| {
        let nodes = &run.nodes;
        columns[0].with_layout(ragged, |ui| {
            for (label, text) in
                [("thought", nodes.thought[n]), ("action", nodes.action[n]), ("observation", nodes.observation[n])]
            {
                let text = run.text(text);
                if !text.is_empty() {
                    // Three lines at most: a tool's output of a hundred lines would push the
                    // view above off the screen (the Transcript shows all of it).
                    let text = text.trim();
                    match crate::ui::widgets::fold(text, 3, 320) {
                        Some(head) => ui.label(format!("{label}: {} …", head.trim_end())),
                        None => ui.label(format!("{label}: {text}")),
                    };
                }
            }
        });
        columns[1].with_layout(ragged, |ui| {
            for (slot, name) in [(0, "A"), (1, "B")] {
                let key = open.credit[slot].shown_name().to_owned();
                // A token-level scheme's token values stay in the inspector: two dozen of them would
                // push the view above off a room's screen.
                let extra = step_terms(ui, open, ctx.state.scheme(slot), (slot, t, p), false);
                slot_line_ui(ui, &open.credit[slot], &format!("{name}: {key}"), t.index(), p, &extra);
                super::scheme_panel::last_good_note_ui(ui, &open.credit[slot]);
            }
        });
    });
}

/// A step the tree merges with other rollouts' steps: the tree shows the mean over them, the
/// inspector this rollout's value; says so.
fn shared_note_ui(ui: &mut egui::Ui, open: &crate::app::OpenRun, g: crate::model::GroupId, p: usize) {
    let shared = open
        .tree
        .as_ref()
        .filter(|(group, _, _)| *group == g)
        .and_then(|(_, _, tree)| tree.node_of_position.get(&(p as u32)).map(|&i| tree.positions_of(i as usize).len()))
        .filter(|&n| n > 1);
    if let Some(n) = shared {
        ui.label(
            egui::RichText::new(format!(
                "on this rollout's path; the tree node is shared by {n} rollouts and shows their mean"
            ))
            .color(theme::MUTED),
        );
    }
}

/// The terms of slot `slot`'s credit at path step `p` of trajectory `t` that its row does not hold
/// ([`crate::credit::Scheme::step_terms`]), when the credit shown is `choice`'s own; under a
/// token-level scheme, how many policy tokens its mean is over, and their values with
/// `token_values`.
fn step_terms(
    ui: &egui::Ui,
    open: &crate::app::OpenRun,
    choice: &crate::app::state::SchemeChoice,
    (slot, t, p): (usize, crate::model::TrajectoryId, usize),
    token_values: bool,
) -> Vec<(String, Option<f64>)> {
    let index = slot;
    let slot = &open.credit[slot];
    let (Some(Ok(credit)), Ok(scheme)) = (&slot.result, crate::credit::scheme(&choice.scheme_id)) else {
        return Vec::new();
    };
    if slot.key != choice.cache_key() {
        return Vec::new();
    }
    let Ok(params) = crate::credit::Params::resolve(scheme, choice.preset.as_deref(), &choice.values) else {
        return Vec::new();
    };
    let mut terms = scheme.step_terms(&open.run, &params, credit, t, p);
    // A scheme that keeps values per step only when asked (`compute_explained`): computed once
    // per recomputation of the slot, and kept.
    if !credit.terms.step_names.is_empty() && credit.terms.step_values.is_empty() {
        if open.run.num_path_steps() > LARGE_RUN_STEPS {
            terms.push((format!("(each step's own values are kept on runs of up to {LARGE_RUN_STEPS} steps)"), None));
        } else {
            let id = egui::Id::unique(("explained credit", index));
            let key = (slot.key.clone(), slot.generation, open.cache_key());
            let cached = ui.data(|d| d.get_temp::<(ExplainedKey, Option<std::sync::Arc<Credit>>)>(id));
            let explained = match cached {
                Some((k, explained)) if k == key => explained,
                _ => {
                    let explained = scheme.compute_explained(&open.run, &params).ok().map(std::sync::Arc::new);
                    ui.data_mut(|d| d.insert_temp(id, (key, explained.clone())));
                    explained
                }
            };
            if let Some(explained) = explained {
                terms.extend(own_values(&explained, t, p));
            }
        }
    }
    let tokens = token_terms(&open.run, credit, t, p);
    // The first is the note of how many tokens the mean is over; the values follow.
    let keep = if token_values { tokens.len() } else { tokens.len().min(1) };
    terms.extend(tokens.into_iter().take(keep));
    terms
}

/// What an explained credit was computed for: the slot's choice, its generation and the run.
type ExplainedKey = (String, u64, (u64, u64));

/// A scheme slot's credit line, or why it has none; `extra` are its step's own terms.
fn slot_line_ui(
    ui: &mut egui::Ui,
    slot: &crate::app::CreditSlot,
    name: &str,
    row: usize,
    position: usize,
    extra: &[(String, Option<f64>)],
) {
    match slot.credit() {
        Some(credit) => credit_line_ui(ui, name, credit, Some(slot.largest()), row, position, extra),
        None => {
            ui.label(format!("{name}: {}", slot.error().unwrap_or("not computed")));
        }
    }
}

/// "name = value" with the formula, the terms of its row and the step's own (`extra`); the value 0
/// where it is rounding noise of the `largest` |credit| (when known).
fn credit_line_ui(
    ui: &mut egui::Ui,
    name: &str,
    credit: &Credit,
    largest: Option<f32>,
    row: usize,
    position: usize,
    extra: &[(String, Option<f64>)],
) {
    let value = credit.step.get(position).copied().unwrap_or(f32::NAN);
    // A and B in one form, one under the other.
    let shown = crate::ui::widgets::fixed_credit(value, largest.unwrap_or(0.0));
    ui.horizontal_wrapped(|ui| {
        ui.label(egui::RichText::new(format!("{name} = {shown}")).monospace());
    });
    let terms: Vec<String> = credit
        .terms
        .for_step(row, position)
        .into_iter()
        .map(|(k, v)| format!("{k} = {}", format_value(v as f32)))
        .chain(extra.iter().map(|(k, v)| match v {
            Some(v) => format!("{k} = {}", format_value(*v as f32)),
            None => k.clone(),
        }))
        .collect();
    if !credit.terms.formula.is_empty() {
        ui.label(
            egui::RichText::new(format!("    {}", formula_line(&credit.terms.formula, &terms))).color(theme::MUTED),
        );
    }
}

/// `text` broken into lines of at most `width` characters, at the last space before the limit (a
/// word longer than a line is cut).
pub fn wrap_lines(text: &str, width: usize) -> Vec<&str> {
    let width = width.max(8);
    let mut lines: Vec<&str> = Vec::new();
    for line in text.lines() {
        let mut rest = line;
        while rest.chars().count() > width {
            let cut = rest.char_indices().nth(width).map_or(rest.len(), |(i, _)| i);
            if let Some(space) = rest[..cut].rfind(' ').filter(|&space| space > 0) {
                lines.push(&rest[..space]);
                rest = &rest[space + 1..];
            } else {
                lines.push(&rest[..cut]);
                rest = &rest[cut..];
            }
        }
        lines.push(rest);
    }
    lines
}

/// Long text in a scrolling box that lays out only the visible lines, wrapped at words to the
/// panel's width.
pub fn long_text_ui(ui: &mut egui::Ui, id: &str, text: &str) {
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let glyph = ui.fonts_mut(|f| f.glyph_width(&font, 'x')).max(1.0);
    // The scroll bar's width off the panel's.
    let columns = ((ui.available_width() - 16.0) / glyph).floor().max(8.0) as usize;
    let lines = wrap_lines(text, columns);
    let row = ui.text_style_height(&egui::TextStyle::Monospace);
    egui::ScrollArea::vertical().id_salt(("long_text", id)).max_height(row * 12.0).show_rows(
        ui,
        row,
        lines.len(),
        |ui, range| {
            for line in &lines[range] {
                ui.add(egui::Label::new(egui::RichText::new(*line).monospace()).extend());
            }
        },
    );
}

/// A node's Monte-Carlo statistics in words: a mean without a count (MATH-APS logs none) has an
/// unknown number of continuations, not 0.
fn mc_text(mc: crate::model::McStats) -> String {
    let count = if mc.n == 0 { "an unknown number of".to_owned() } else { mc.n.to_string() };
    format!("{count} continuations, mean {}", format_value(mc.mean))
}

#[cfg(test)]
mod tests {
    use super::wrap_lines;

    #[test]
    fn lines_break_between_words() {
        let text = "you attempted to call the tool twice without waiting for the answer";
        let lines = wrap_lines(text, 20);
        assert!(lines.iter().all(|l| l.chars().count() <= 20), "{lines:?}");
        // Every word is whole on one line.
        for word in text.split(' ') {
            assert!(lines.iter().any(|l| l.split(' ').any(|w| w == word)), "{word} in {lines:?}");
        }
        assert_eq!(lines.join(" "), text);
        // A word longer than a line is cut.
        assert_eq!(wrap_lines(&"x".repeat(30), 10), vec!["x".repeat(10); 3]);
    }
}
