//! Run summary view: counts, fields present, outcome statistics, metadata and load warnings.

use crate::ui::{ViewCtx, theme};

/// Draws the summary of the run: counts, fields, metadata, scheme support, warnings.
pub fn ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    let open = &*ctx.open;
    let run = &open.run;
    // The run by its last name, the path it was opened from under it (`~/…` under the home folder).
    let name = run.meta.name.trim_end_matches(['/', '\\']);
    let short = crate::model::last_name(name);
    ui.label(egui::RichText::new(short).size(theme::TITLE_SIZE).strong());
    if short != name {
        ui.label(egui::RichText::new(crate::ui::widgets::shown_path(name)).color(theme::MUTED));
    }
    ui.label(egui::RichText::new(&run.meta.format).color(theme::MUTED));
    // How the log was read (e.g. groups rebuilt from identical prompts): the user should know,
    // first (also among the notices as the run opens).
    for note in &run.meta.notes {
        ui.horizontal_wrapped(|ui| {
            ui.label(egui::RichText::new("note:").color(theme::MUTED));
            ui.label(note);
        });
    }
    ui.add_space(8.0);
    for line in open.summary.lines() {
        ui.label(line);
    }
    for caution in open.summary.cautions() {
        ui.label(egui::RichText::new(format!("caution: {caution}")).color(theme::WARNING));
    }
    if let Some(window) = run.meta.step_window {
        steps_ui(ui, ctx.commands, window);
    }
    if !run.meta.metadata.is_empty() {
        ui.add_space(8.0);
        ui.collapsing("Run metadata", |ui| {
            egui::Grid::new("run_metadata").striped(true).show(ui, |ui| {
                for (key, value) in &run.meta.metadata {
                    ui.label(egui::RichText::new(key).color(theme::MUTED));
                    ui.label(value.to_string());
                    ui.end_row();
                }
            });
        });
    }
    ui.add_space(8.0);
    egui::CollapsingHeader::new("Credit schemes").default_open(true).show(ui, |ui| {
        egui::Grid::new("scheme_support").striped(true).show(ui, |ui| {
            for (info, support) in &open.support {
                ui.label(info.display_name);
                match support {
                    crate::credit::Support::Yes => ui.label("supported"),
                    crate::credit::Support::No(reason) => ui.label(egui::RichText::new(reason).color(theme::MUTED)),
                };
                ui.end_row();
            }
        });
    });
    ui.add_space(8.0);
    let warnings = &open.report.warnings;
    if warnings.is_empty() {
        ui.label("No load warnings");
        return;
    }
    let count = open.report.num_warnings();
    let more = if open.report.dropped > 0 {
        format!(" (the first {} are listed; the others were only counted)", warnings.len())
    } else {
        String::new()
    };
    ui.label(egui::RichText::new(format!("{count} load warning(s){more}")).color(theme::WARNING));
    let id = egui::Id::unique("all_warnings");
    let mut all_warnings = ui.data(|d| d.get_temp::<bool>(id).unwrap_or(false));
    ui.checkbox(&mut all_warnings, "Show all warnings");
    ui.data_mut(|d| d.insert_temp(id, all_warnings));
    let shown = if all_warnings { warnings.len() } else { warnings.len().min(200) };
    egui::ScrollArea::vertical().id_salt("warnings").max_height(240.0).show_rows(
        ui,
        ui.text_style_height(&egui::TextStyle::Body),
        shown,
        |ui, rows| {
            for warning in &warnings[rows] {
                ui.label(egui::RichText::new(warning.located(&open.report.file)).monospace());
            }
        },
    );
}

/// The training steps open of a partitioned run, and a choice of others (opened as another run).
fn steps_ui(ui: &mut egui::Ui, commands: &mut Vec<crate::app::Command>, window: crate::model::StepWindow) {
    let (lo, hi) = window.open;
    let (all_lo, all_hi) = window.all;
    ui.add_space(4.0);
    ui.label(format!(
        "Training steps {lo}–{hi} open ({} of {} partitions; the run has {all_lo}–{all_hi})",
        window.partitions.0, window.partitions.1
    ));
    let id = ui.scope_id().with("open_steps");
    let mut range: (i64, i64) = ui.data(|d| d.get_temp(id)).unwrap_or(window.open);
    ui.horizontal(|ui| {
        let from = ui.label("from step");
        ui.add(egui::DragValue::new(&mut range.0).range(all_lo..=all_hi)).labelled_by(from.id);
        let to = ui.label("to step");
        ui.add(egui::DragValue::new(&mut range.1).range(all_lo..=all_hi)).labelled_by(to.id);
        range.1 = range.1.max(range.0);
        if ui.button("Open steps").on_hover_text("read these training steps' partitions, as another run").clicked() {
            commands.push(crate::app::Command::OpenSteps(range));
        }
    });
    ui.data_mut(|d| d.insert_temp(id, range));
}
