//! The eframe shell: the app's per-frame logic, then its drawing, and its state saved on exit.

use crate::app::{AppState, VantageApp};

impl eframe::App for VantageApp {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        Self::logic(self, ctx);
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        super::app_ui(self, ui);
        if let Some(started) = self.exit_after_first_view
            && self.current().is_some_and(|o| o.selection.group.is_some())
        {
            // The benchmark's measure: this frame shows the run browser and a group.
            println!("first view after {:.3} s", started.elapsed().as_secs_f64());
            self.exit_after_first_view = None;
            ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        match serde_json::to_string(&self.state) {
            Ok(text) => storage.set_string(AppState::KEY, text),
            Err(err) => log::warn!("could not save settings: {err}"),
        }
    }
}
