//! Per-frame CPU time of the app (criterion, no GPU): one frame is `App::logic` + every view's
//! `ui()` + tessellation into triangles, at 1600 × 1000 points. Cases: the whole-run heatmap of 10⁶
//! rollouts × 32 steps, and the rollout tree of one group with 10⁵ nodes (plus that group's
//! heatmap). Textures upload during warm-up; the target is under 8 ms a frame.
//! `cargo bench --no-default-features --bench frame`.
#![expect(clippy::unwrap_used, reason = "a benchmark fails loudly")]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use vantage::VantageApp;
use vantage::app::state::Tab;
use vantage::load::LoadReport;

mod synthetic;

fn frame(ctx: &egui::Context, app: &mut VantageApp) -> usize {
    let input = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1600.0, 1000.0))),
        ..egui::RawInput::default()
    };
    let output = ctx.run_ui(input, |ui| {
        app.logic(ui.ctx());
        vantage::ui::app_ui(app, ui);
    });
    let primitives = ctx.tessellate(output.shapes, output.pixels_per_point);
    primitives.len()
}

fn bench_app(c: &mut Criterion, name: &str, run: vantage::model::Run, whole_run_heatmap: bool) {
    let mut app = VantageApp::default();
    app.open_loaded(run, LoadReport::new(name));
    app.state.tab = Tab::Group;
    app.state.heat_whole_run = whole_run_heatmap;
    let ctx = egui::Context::default();
    // Warm-up: credit under A and B (on worker threads for large runs), layout, textures.
    frame(&ctx, &mut app);
    while app.current().unwrap().credit.iter().any(vantage::app::CreditSlot::is_computing) {
        std::thread::sleep(Duration::from_millis(20));
        frame(&ctx, &mut app);
    }
    for _ in 0..3 {
        frame(&ctx, &mut app);
    }
    let mut group = c.benchmark_group("frame");
    group.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    group.bench_function(name, |b| b.iter(|| black_box(frame(&ctx, &mut app))));
    group.finish();
}

fn heatmap(c: &mut Criterion) {
    bench_app(c, "heatmap 1e6x32 (whole run)", synthetic::step_run(1_000_000, 32), true);
}

fn tree(c: &mut Criterion) {
    bench_app(c, "tree 1e5 nodes (one group)", synthetic::tree_run(1, 100_000), false);
}

criterion_group!(benches, tree, heatmap);
criterion_main!(benches);
