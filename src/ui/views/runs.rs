//! Runs view: run A against run B on the same prompts. B is another open run, or A and B are two
//! ranges of training steps of this run (a checkpoint before and after). Per prompt, its pass rate
//! in A and in B with its successes, rollouts and 95 % interval, prompts grouped as learned,
//! forgotten, unclear (too few rollouts to tell), still failing, still solved or seen by one side
//! only; a chosen prompt's groups side by side, each as a small tree (identical prefixes
//! merged, leaves marked pass or fail) above its rollouts.

use crate::analysis::runs::{Change, PromptRow, Side, compare, step_range};
use crate::app::Command;
use crate::model::{GroupId, Run};
use crate::ui::widgets::format_value;
use crate::ui::{ViewCtx, theme};

/// What B is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Against {
    /// Later training steps of this run (A: up to `split`, B: after it).
    LaterSteps,
    /// Another open run (index into the other runs).
    Run(usize),
}

/// Rows of a change shown at most.
const MAX_ROWS: usize = 200;

/// Rollouts of a group listed under its tree at most.
const MAX_LISTED: usize = 16;

/// Draws the view.
pub fn ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    let run = &ctx.open.run;
    let against_id = egui::Id::unique("runs_against");
    let split_id = egui::Id::unique(("runs_split", &run.meta.name));
    let chosen_id = egui::Id::unique("runs_chosen");
    let range = step_range(run);
    let default_against = if ctx.others.is_empty() { Against::LaterSteps } else { Against::Run(0) };
    let mut against: Against = ui
        .data(|d| d.get_temp::<Against>(against_id))
        .filter(|a| matches!(a, Against::LaterSteps) || matches!(a, Against::Run(i) if *i < ctx.others.len()))
        .unwrap_or(default_against);
    let mut split: i64 =
        ui.data(|d| d.get_temp(split_id)).unwrap_or_else(|| range.map_or(0, |(lo, hi)| lo + (hi - lo) / 2));
    // Short names (the last path components that tell the runs apart), not machine paths.
    let all: Vec<String> =
        std::iter::once(&run.meta.name).chain(ctx.others.iter().map(|r| &r.meta.name)).cloned().collect();
    let short = crate::ui::widgets::short_run_names(&all);
    let (this_name, others) = (short[0].clone(), short[1..].to_vec());
    ui.horizontal_wrapped(|ui| {
        ui.label(egui::RichText::new("Run A against run B").strong());
        ui.label("B:");
        let label = |a: Against| match a {
            Against::LaterSteps => "later training steps of this run".to_owned(),
            Against::Run(i) => others[i].clone(),
        };
        let combo = egui::ComboBox::from_id_salt("runs_against").selected_text(label(against)).show_ui(ui, |ui| {
            ui.selectable_value(&mut against, Against::LaterSteps, label(Against::LaterSteps));
            for i in 0..others.len() {
                ui.selectable_value(&mut against, Against::Run(i), label(Against::Run(i)));
            }
        });
        crate::ui::widgets::name(&combo.response, "run B");
        if against == Against::LaterSteps
            && let Some((lo, hi)) = range.filter(|(lo, hi)| hi > lo)
        {
            let slider = egui::Slider::new(&mut split, lo..=hi - 1).text("A: steps up to");
            ui.add(slider);
        }
    });
    ui.data_mut(|d| {
        d.insert_temp(against_id, against);
        d.insert_temp(split_id, split);
    });
    let (a, b, names) = match against {
        Against::LaterSteps => {
            let Some((lo, hi)) = range.filter(|(lo, hi)| hi > lo) else {
                ui.label("This run has one training step: open another run to compare against");
                return;
            };
            let split = split.clamp(lo, hi - 1);
            (
                Side { run, steps: Some((lo, split)) },
                Side { run, steps: Some((split + 1, hi)) },
                [steps_label(lo, split), steps_label(split + 1, hi)],
            )
        }
        Against::Run(i) => (
            Side { run, steps: None },
            Side { run: ctx.others[i], steps: None },
            [this_name.clone(), others[i].clone()],
        ),
    };
    let rows = compare(a, b);
    let count = |c: Change| rows.iter().filter(|r| r.change == c).count();
    ui.label(
        egui::RichText::new(format!(
            "A = {}, B = {} · {} prompts · learned {} · forgotten {} · unclear {} · still failing {} · still solved {} (passing: at least half the rollouts succeed; learned or forgotten only when the 95 % intervals of the two pass rates are apart)",
            names[0],
            names[1],
            rows.len(),
            count(Change::Learned),
            count(Change::Forgotten),
            count(Change::Unclear),
            count(Change::StillFailing),
            count(Change::StillSolved),
        ))
        .color(theme::MUTED),
    );
    let mut chosen: Option<String> = ui.data(|d| d.get_temp(chosen_id));
    let before = chosen.clone();
    egui::ScrollArea::vertical().id_salt("runs_scroll").show(ui, |ui| {
        for change in Change::ALL {
            let of: Vec<&PromptRow> = rows.iter().filter(|r| r.change == change).collect();
            egui::CollapsingHeader::new(format!("{} ({})", change.label(), of.len()))
                .id_salt(("runs_change", change as u8))
                .default_open(matches!(change, Change::Learned | Change::Forgotten | Change::Unclear) && !of.is_empty())
                .show(ui, |ui| prompt_table_ui(ui, &of, &mut chosen, change));
        }
        if let Some(row) = chosen.as_ref().and_then(|key| rows.iter().find(|r| &r.key == key)) {
            ui.separator();
            // A prompt just clicked scrolls its groups into view.
            if before.as_deref() != Some(row.key.as_str()) {
                ui.scroll_to_cursor(Some(egui::Align::TOP));
            }
            side_by_side_ui(ui, ctx.commands, a, b, row, &names);
        }
    });
    if let Some(key) = &chosen {
        ui.data_mut(|d| d.insert_temp(chosen_id, key.clone()));
    }
}

/// "step 2" or "steps 0–1".
fn steps_label(lo: i64, hi: i64) -> String {
    if lo == hi { format!("step {lo}") } else { format!("steps {lo}–{hi}") }
}

/// The prompts of one change: key, pass rate and rollouts in A and B; click one to see it.
fn prompt_table_ui(ui: &mut egui::Ui, rows: &[&PromptRow], chosen: &mut Option<String>, change: Change) {
    egui::Grid::new(("runs_table", change as u8)).striped(true).num_columns(4).show(ui, |ui| {
        for h in ["prompt", "pass A", "pass B", "B − A"] {
            ui.label(egui::RichText::new(h).color(theme::MUTED));
        }
        ui.end_row();
        for row in rows.iter().take(MAX_ROWS) {
            let selected = chosen.as_deref() == Some(row.key.as_str());
            if ui.selectable_label(selected, super::run_browser::truncate(&row.key, 70)).clicked() {
                *chosen = Some(row.key.clone());
            }
            let rate = |s: &crate::analysis::runs::PromptStats| {
                if s.rollouts == 0 {
                    "—".to_owned()
                } else {
                    let (lo, hi) = s.interval();
                    format!(
                        "{} ({}/{}, 95 % {:.2}–{:.2})",
                        format_value(s.pass_rate() as f32),
                        s.successes,
                        s.rollouts,
                        lo,
                        hi
                    )
                }
            };
            ui.label(rate(&row.a));
            ui.label(rate(&row.b));
            ui.label(format_value((row.b.pass_rate() - row.a.pass_rate()) as f32));
            ui.end_row();
        }
    });
    if rows.len() > MAX_ROWS {
        ui.label(egui::RichText::new(format!("… {} more", rows.len() - MAX_ROWS)).color(theme::MUTED));
    }
}

/// One prompt's rollouts in A and in B side by side (this run's can be opened in the group view).
fn side_by_side_ui(
    ui: &mut egui::Ui,
    commands: &mut Vec<Command>,
    a: Side<'_>,
    b: Side<'_>,
    row: &PromptRow,
    names: &[String; 2],
) {
    ui.label(egui::RichText::new(format!("{} in A and in B", super::run_browser::truncate(&row.key, 90))).strong());
    ui.columns(2, |columns| {
        for (column, (side, stats, name)) in columns.iter_mut().zip([(a, &row.a, &names[0]), (b, &row.b, &names[1])]) {
            column.label(egui::RichText::new(name).strong());
            for &g in &stats.groups {
                group_rollouts_ui(column, commands, side.run, g, std::ptr::eq(side.run, a.run));
            }
            if stats.groups.is_empty() {
                column.label(egui::RichText::new("not sampled here").color(theme::MUTED));
            }
        }
    });
}

/// A group's small tree and its rollouts, one line each; those of the run shown open the group view when clicked.
fn group_rollouts_ui(ui: &mut egui::Ui, commands: &mut Vec<Command>, run: &Run, g: GroupId, this_run: bool) {
    let step = run.groups.train_step[g.index()].map_or_else(String::new, |s| format!(" · step {s}"));
    let header = format!("group {}{step}", crate::ui::widgets::group_title(run, g));
    if this_run {
        if ui.link(header).clicked() {
            commands.push(Command::SelectGroup(g));
        }
    } else {
        ui.label(header);
    }
    super::tree::mini_ui(ui, run, g);
    let members = run.groups.members(g);
    let id = (std::ptr::from_ref(run) as usize, g.0);
    egui::CollapsingHeader::new(crate::ui::widgets::count(members.len(), "rollout")).id_salt(id).show(ui, |ui| {
        rollout_lines_ui(ui, run, members);
    });
}

/// One line per rollout: pass or fail, key, reward and length.
fn rollout_lines_ui(ui: &mut egui::Ui, run: &Run, members: &[crate::model::TrajectoryId]) {
    let tr = &run.trajectories;
    for &t in members.iter().take(MAX_LISTED) {
        let mark = match crate::analysis::compare::outcome(run, t) {
            Some(true) => "pass",
            Some(false) => "fail",
            None => "—",
        };
        ui.label(format!(
            "  {mark} {} · R {} · {}",
            run.trajectory_key(t),
            format_value(tr.reward[t.index()]),
            crate::ui::widgets::count(tr.num_steps(t), "step")
        ));
    }
    if members.len() > MAX_LISTED {
        ui.label(egui::RichText::new(format!("  … {} more rollouts", members.len() - MAX_LISTED)).color(theme::MUTED));
    }
}
