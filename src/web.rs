//! Web entry point: starts the eframe web runner on the page's canvas.

use eframe::wasm_bindgen::JsCast as _;

/// Starts the app on the `<canvas id="the_canvas_id">` of the page.
pub fn start() {
    eframe::WebLogger::init(log::LevelFilter::Info).ok();
    wasm_bindgen_futures::spawn_local(async {
        let Some(document) = web_sys::window().and_then(|w| w.document()) else {
            log::error!("no document");
            return;
        };
        let Some(canvas) =
            document.get_element_by_id("the_canvas_id").and_then(|e| e.dyn_into::<web_sys::HtmlCanvasElement>().ok())
        else {
            log::error!("no canvas with id the_canvas_id");
            return;
        };
        let result = eframe::WebRunner::new()
            .start(
                canvas,
                eframe::WebOptions::default(),
                Box::new(|cc| Ok(Box::new(crate::VantageApp::new(cc, Vec::new())))),
            )
            .await;
        if let Some(loading) = document.get_element_by_id("loading_text") {
            match result {
                Ok(()) => loading.remove(),
                Err(err) => {
                    loading.set_inner_html("<p>The app has crashed. See the developer console for details.</p>");
                    log::error!("failed to start: {err:?}");
                }
            }
        }
    });
}
