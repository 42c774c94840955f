//! Group view: the rollout tree of the selected group above its steps × rollouts heatmap.

use crate::ui::ViewCtx;

/// Draws the tree in the upper part and the heatmap below.
pub fn ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    if let Some(g) = ctx.open.selection.group {
        let run = &ctx.open.run;
        let prompt = run.text(run.groups.prompt[g.index()]);
        ui.label(egui::RichText::new(format!("Group {}", run.group_key(g))).strong());
        if !prompt.is_empty() {
            ui.label(super::run_browser::truncate(&prompt, 400));
        }
    }
    let size = ui.available_size();
    ui.allocate_ui(egui::vec2(size.x, size.y * 0.55), |ui| {
        ui.set_min_height(size.y * 0.55);
        super::tree::ui(ui, ctx);
    });
    ui.separator();
    super::heatmap::ui(ui, ctx);
}
