//! The run list of `vantage serve` (web): each run the server found, with its format, size, last
//! change and status; a click opens it. It fills the page while no run is open, and opens as a
//! window from the top bar's "Server runs" when one is.

use crate::app::Command;
use crate::app::server::ServerRuns;

/// Draws the list; a click on a ready run pushes [`Command::OpenServerRun`].
pub fn ui(ui: &mut egui::Ui, list: &mut ServerRuns, commands: &mut Vec<Command>) {
    ui.horizontal(|ui| {
        ui.heading(format!("Runs on this server ({})", list.runs.len()));
        if list.runs.len() > 8 {
            ui.add(
                egui::TextEdit::singleline(&mut list.filter).hint_text("filter by name or format").desired_width(220.0),
            );
        }
    });
    if let Some(error) = &list.error {
        ui.colored_label(ui.visuals().warn_fg_color, format!("The run list could not be read: {error}"));
    }
    if !list.loaded {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label("Asking the server for its runs…");
        });
        return;
    }
    if list.runs.is_empty() {
        ui.label("No runs found under the paths the server was given (logs, folders of runs, v2 datasets).");
        return;
    }
    let filter = list.filter.to_lowercase();
    egui::ScrollArea::both().id_salt("server_runs_scroll").auto_shrink([false, true]).show(ui, |ui| {
        egui::Grid::new("server_runs").striped(true).num_columns(5).spacing([16.0, 6.0]).show(ui, |ui| {
            for header in ["run", "format", "size", "last changed", "status"] {
                ui.label(egui::RichText::new(header).weak());
            }
            ui.end_row();
            for run in list.runs.iter().filter(|r| {
                filter.is_empty() || r.id.to_lowercase().contains(&filter) || r.format.to_lowercase().contains(&filter)
            }) {
                match &run.url {
                    Some(url) => {
                        let link = ui.link(&run.id).on_hover_text(if run.follow {
                            "open it; the page follows it while the trainer writes"
                        } else {
                            "open it"
                        });
                        if link.clicked() {
                            commands.push(Command::OpenServerRun { url: url.clone(), follow: run.follow });
                        }
                    }
                    None => {
                        ui.label(&run.id);
                    }
                }
                ui.label(&run.format);
                ui.label(run.size_text());
                ui.label(run.modified_text());
                match run.status.as_str() {
                    "ready" if run.follow => ui.label("ready · followed"),
                    "ready" => ui.label("ready"),
                    "converting" if run.url.is_some() => ui.label("converting to v2… · its first steps open"),
                    "converting" => ui.label("converting to v2…"),
                    _ => ui.colored_label(ui.visuals().warn_fg_color, format!("{}: {}", run.status, run.detail)),
                };
                ui.end_row();
            }
        });
        if list.left_out > 0 {
            ui.label(format!("and {} more runs the server left out of its list", list.left_out));
        }
    });
}
