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
            if !self.first_view_said {
                println!("first view after {:.3} s", started.elapsed().as_secs_f64());
                self.first_view_said = true;
            }
            // With `--window-size`, the window's size in pixels too, once it is the size asked
            // for (or five seconds on): what the window system gave the window.
            let pixels = ui.ctx().input(|i| i.viewport().inner_rect.map(|r| (r.size() * i.pixels_per_point).round()));
            let asked = self.window_size.map(egui::Vec2::from);
            let settled = asked.is_none_or(|a| self.window_size_sent && pixels == Some(a));
            if settled || started.elapsed().as_secs_f64() > 5.0 {
                if let (Some(_), Some(p)) = (asked, pixels) {
                    println!("window {}x{} pixels", p.x, p.y);
                }
                self.exit_after_first_view = None;
                ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
            } else {
                ui.ctx().request_repaint();
            }
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        match serde_json::to_string(&self.state) {
            Ok(text) => storage.set_string(AppState::KEY, text),
            Err(err) => log::warn!("could not save settings: {err}"),
        }
    }
}
