//! Everything that touches egui: panels, views, theme.

pub mod theme;
pub mod views;

use crate::app::VantageApp;

/// Draws the whole app into `ui`: top bar, status bar, and the current run.
pub fn app_ui(app: &mut VantageApp, ui: &mut egui::Ui) {
    egui::Panel::top("top_bar").show(ui, |ui| top_bar_ui(app, ui));
    egui::Panel::bottom("status_bar").show(ui, |ui| status_bar_ui(app, ui));
    egui::CentralPanel::default().show(ui, |ui| {
        let mut options = views::run_summary::Options::default();
        match app.current() {
            Some(open) => {
                egui::ScrollArea::vertical().show(ui, |ui| views::run_summary::ui(ui, &mut options, open));
            }
            None if app.loader.pending_names().next().is_some() => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Loading…");
                });
            }
            None => {
                ui.label("No run open. Use Open… or drop a file here");
            }
        }
    });
}

fn top_bar_ui(app: &mut VantageApp, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        ui.strong("vantage");
        ui.separator();
        if ui.button("Open…").clicked() {
            let ctx = ui.ctx().clone();
            app.loader.start_picker(move || ctx.request_repaint());
        }
        if app.runs.len() > 1 {
            let names: Vec<String> = app.runs.iter().map(|r| r.run.meta.name.clone()).collect();
            egui::ComboBox::from_id_salt("run_picker")
                .selected_text(names.get(app.selected).cloned().unwrap_or_default())
                .show_ui(ui, |ui| {
                    for (i, name) in names.iter().enumerate() {
                        ui.selectable_value(&mut app.selected, i, name);
                    }
                });
        }
    });
}

fn status_bar_ui(app: &VantageApp, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        for name in app.loader.pending_names() {
            ui.spinner();
            ui.label(format!("Loading {name}"));
        }
        match app.notifications.last() {
            Some(last) => {
                ui.label(egui::RichText::new(last).color(theme::WARNING));
            }
            None => {
                if let Some(open) = app.current() {
                    ui.label(format!(
                        "{} · {} trajectories · {} warnings",
                        open.run.meta.name,
                        open.run.trajectories.len(),
                        open.report.warnings.len()
                    ));
                }
            }
        }
    });
}
