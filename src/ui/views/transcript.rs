//! Transcript view: the selected rollout whole, every step's thought, action and observation in
//! one scrolling column, with its credit under A and B in the margin, so a failed rollout reads
//! top to bottom instead of one step at a time. Click a step's heading to select it; the selected one is
//! marked and brought into view when it changes.

use crate::app::Command;
use crate::ui::widgets::{folded_text, format_credit};
use crate::ui::{ViewCtx, theme};

/// Width of the margin with the two credits, in points.
const MARGIN: f32 = 150.0;

/// How much of the prompt shows folded: lines, characters.
const PROMPT_LINES: usize = 4;
const PROMPT_CHARS: usize = 480;

/// How much of a step's text shows folded (a tool's output can be thousands of lines).
const STEP_LINES: usize = 24;
const STEP_CHARS: usize = 2400;

/// Draws the transcript.
pub fn ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    let open = &*ctx.open;
    let run = &open.run;
    let Some(t) = open.selection.trajectory else {
        ui.label("Select a rollout: the transcript shows all of it");
        return;
    };
    let tr = &run.trajectories;
    let range = tr.path_range(t);
    ui.label(
        egui::RichText::new(format!(
            "Transcript · {} · {}",
            run.trajectory_key(t),
            crate::ui::widgets::count(range.len(), "step")
        ))
        .strong(),
    );
    let credits: [(Option<&[f32]>, f32, &str); 2] = [
        (open.credit[0].step(), open.credit[0].largest(), open.credit[0].shown_name()),
        (open.credit[1].step(), open.credit[1].largest(), open.credit[1].shown_name()),
    ];
    ui.label(
        egui::RichText::new(format!("margin: credit A ({}) and B ({}) of each step", credits[0].2, credits[1].2))
            .color(theme::MUTED),
    );
    let selected = open.selection.position;
    let nodes = &run.nodes;
    egui::ScrollArea::vertical().id_salt(("transcript", open.instance, t.0)).auto_shrink(false).show(ui, |ui| {
        // The prompt scrolls with the steps and folds: a system prompt with a pull request and
        // its instructions would otherwise fill the view above them.
        // Meeting mode's view is a third as tall: two lines of the prompt.
        let fold = if ctx.state.meeting_mode { (2, PROMPT_CHARS / 2) } else { (PROMPT_LINES, PROMPT_CHARS) };
        let start = ui.scope(|ui| start_ui(ui, run, t, open.instance, fold)).response.rect;
        for (k, p) in range.clone().enumerate() {
            let n = tr.path_nodes[p].index();
            let is_selected = selected == Some(p);
            let frame = egui::Frame::new().inner_margin(egui::Margin::symmetric(6, 4)).stroke(egui::Stroke::new(
                if is_selected { 2.0 } else { 0.5 },
                if is_selected { theme::SELECTED } else { theme::EDGE },
            ));
            let mut heading = egui::Rect::NOTHING;
            frame.show(ui, |ui| {
                // Every step as wide as the column, whatever the length of its texts.
                ui.set_width(ui.available_width());
                ui.horizontal_top(|ui| {
                    ui.allocate_ui_with_layout(
                        egui::vec2(MARGIN, 0.0),
                        egui::Layout::top_down(egui::Align::Min),
                        |ui| {
                            ui.set_width(MARGIN);
                            for ((credit, largest, _), (name, color)) in
                                credits.iter().zip([("A", theme::category(1)), ("B", theme::category(4))])
                            {
                                let value = credit.and_then(|c| c.get(p)).copied().unwrap_or(f32::NAN);
                                let text = format!("{name} {}", fixed(value, *largest));
                                ui.label(egui::RichText::new(text).monospace().color(color));
                            }
                        },
                    );
                    ui.vertical(|ui| {
                        let kind = run.label(nodes.kind[n]);
                        let role = run.label(nodes.role[n]);
                        let head = if role.is_empty() {
                            format!("step {} · {kind}", k + 1)
                        } else {
                            format!("step {} · {kind} · {role}", k + 1)
                        };
                        // The heading selects the step (the texts stay selectable as text).
                        let response = ui.selectable_label(is_selected, egui::RichText::new(head).strong());
                        heading = response.rect;
                        if response.clicked() && !is_selected {
                            ctx.commands.push(Command::SelectStep(p));
                        }
                        for (label, text) in [
                            ("thought", nodes.thought[n]),
                            ("action", nodes.action[n]),
                            ("observation", nodes.observation[n]),
                        ] {
                            let text = run.text(text);
                            let text = text.trim();
                            if !text.is_empty() {
                                // What the text is, muted, above it (the step strip's own lines
                                // read "action: …"; the transcript's are apart from them).
                                ui.label(egui::RichText::new(label).small().color(theme::MUTED));
                                let id = egui::Id::unique(("transcript_text", open.instance, p, label));
                                folded_text(ui, id, text, STEP_LINES, STEP_CHARS);
                            }
                        }
                    });
                });
            });
            // Brought into view when it becomes the selected step (not on every frame: the
            // reader scrolls freely): its heading at the top, a first step with the prompt
            // above it (a step's texts can be taller than the view, so not its middle).
            let shown_id = egui::Id::unique(("transcript_shown", open.instance));
            if is_selected && ui.data(|d| d.get_temp::<usize>(shown_id)) != Some(p) {
                let target = if k == 0 { start.union(heading) } else { heading.expand2(egui::vec2(0.0, 6.0)) };
                ui.scroll_to_rect(target, Some(egui::Align::Min));
                ui.data_mut(|d| d.insert_temp(shown_id, p));
            }
        }
        end_ui(ui, run, t);
    });
}

/// The task and the prompt the rollout started from.
fn start_ui(
    ui: &mut egui::Ui,
    run: &crate::model::Run,
    t: crate::model::TrajectoryId,
    instance: u64,
    (lines, chars): (usize, usize),
) {
    let g = run.trajectories.group[t.index()].index();
    let task = run.label(run.groups.task[g]);
    if !task.is_empty() {
        ui.label(format!("task: {task}"));
    }
    let prompt = run.text(run.groups.prompt[g]);
    if !prompt.trim().is_empty() {
        let frame = egui::Frame::new().inner_margin(egui::Margin::symmetric(6, 4));
        frame.stroke(egui::Stroke::new(0.5, theme::EDGE)).show(ui, |ui| {
            ui.set_width(ui.available_width());
            ui.label(egui::RichText::new("prompt").small().color(theme::MUTED));
            folded_text(ui, egui::Id::unique(("transcript_prompt", instance, g)), prompt.trim(), lines, chars);
        });
    }
}

/// How the rollout ended: its reward, success and finish reason.
fn end_ui(ui: &mut egui::Ui, run: &crate::model::Run, t: crate::model::TrajectoryId) {
    let tr = &run.trajectories;
    let mut end = vec![format!("outcome: reward {}", fixed(tr.reward[t.index()], f32::INFINITY))];
    if let Some(success) = tr.success[t.index()] {
        end.push(if success { "success".to_owned() } else { "failure".to_owned() });
    }
    let finish = run.label(tr.finish[t.index()]);
    if !finish.is_empty() {
        end.push(format!("finish: {finish}"));
    }
    ui.label(egui::RichText::new(end.join(" · ")).strong());
}

/// Every number of the transcript alike: four decimals, signed ("+1.0000", "-0.3536"), "—" when
/// missing, rounding noise (within a millionth of `largest`) as "+0.0000".
fn fixed(v: f32, largest: f32) -> String {
    if !v.is_finite() {
        return "—".to_owned();
    }
    let v = if format_credit(v, largest) == "0" { 0.0 } else { v };
    format!("{v:+.4}")
}
