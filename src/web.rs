//! Web entry point: starts the eframe web runner on the page's canvas.

use eframe::wasm_bindgen::JsCast as _;

/// Starts the app on the `<canvas id="the_canvas_id">` of the page.
pub fn start() {
    eframe::WebLogger::init(log::LevelFilter::Info).ok();
    if web_sys::window().is_none() {
        // The credit worker runs this module too; it starts through `vantage_credit_worker`.
        return;
    }
    // Loads give the page its frames: after 25 ms of work they wait for a `setTimeout(0)`, and
    // after handing a first view over they wait for the frame that draws it.
    crate::load::pace::set_yielder(
        std::time::Duration::from_millis(25),
        || Box::pin(next_task()),
        || Box::pin(after_next_frame()),
    );
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
            .start(canvas, eframe::WebOptions::default(), Box::new(|cc| Ok(Box::new(app_from_page(cc)))))
            .await;
        if let Some(loading) = document.get_element_by_id("loading_text") {
            match result {
                Ok(()) => loading.remove(),
                Err(err) => {
                    // Most often the browser cannot draw: say what vantage needs and what failed. (The
                    // page does not test for WebGL2 before this: a test context cost each start 30 to
                    // 90 ms on SwiftShader, and this start finds out anyway.)
                    let why = format!("{err:?}").replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
                    loading.set_inner_html(&format!(
                        "<p>vantage could not start drawing: it needs WebGL2, which this browser does not \
                         give it.</p><p>Enable hardware acceleration, or try a current Chrome, Firefox \
                         or Safari; the desktop app draws without it.</p><p><small>{why}</small></p>"
                    ));
                    log::error!("failed to start: {err:?}");
                }
            }
        }
    });
}

/// The app for this page: `?url=…` (or a deep link's `run=…`) is fetched instead of the bundled
/// sample, and the `#…` deep link selects its step once the run is in.
fn app_from_page(cc: &eframe::CreationContext<'_>) -> crate::app::VantageApp {
    let location = web_sys::window().map(|w| w.location());
    let search = location.as_ref().and_then(|l| l.search().ok()).unwrap_or_default();
    let hash = location.as_ref().and_then(|l| l.hash().ok()).unwrap_or_default();
    let query = crate::app::deeplink::DeepLink::parse(&search);
    let link = crate::app::deeplink::DeepLink::parse(&hash);
    let url = query.run_url.clone().or_else(|| link.run_url.clone());
    // A page sent by `vantage serve` opens on its run list, not on the bundled sample.
    let served = crate::source::web_dataset::served_page();
    let mut app = if let Some(url) = url {
        let mut app = crate::app::VantageApp::restored(cc);
        // `?url=…&follow=1`: follow the log once it is in (as the Follow toggle does).
        app.follow_on_load = search.trim_start_matches('?').split('&').any(|p| p == "follow=1" || p == "follow");
        if served {
            // A deep link to a served run: followed when the server's list says it can be.
            let mut list = crate::app::server::ServerRuns::default();
            list.follow_when_listed = Some(url.clone());
            app.server = Some(list);
        }
        let ctx = cc.egui_ctx.clone();
        app.loads.start_url(url, move || ctx.request_repaint());
        app
    } else if served {
        crate::app::VantageApp::restored(cc)
    } else {
        crate::app::VantageApp::new(cc, Vec::new(), crate::source::OpenOptions::default())
    };
    if served && app.server.is_none() {
        app.server = Some(crate::app::server::ServerRuns::default());
    }
    if !hash.is_empty() {
        app.set_link(link);
    }
    let (sender, receiver) = std::sync::mpsc::channel();
    listen_for_folders(&cc.egui_ctx, sender);
    app.dropped_folders = Some(receiver);
    app
}

/// Catches a folder dropped on the page before eframe (which reads dropped files, not folders)
/// sees it: its files (with their paths from the folder's parent) are listed through the entries
/// API and sent to the app, which opens it as a vantage Parquet v2 dataset.
fn listen_for_folders(ctx: &egui::Context, sender: std::sync::mpsc::Sender<Vec<(String, web_sys::File)>>) {
    let Some(window) = web_sys::window() else { return };
    let ctx = ctx.clone();
    let on_drop = eframe::wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::DragEvent)>::new(
        move |event: web_sys::DragEvent| {
            let Some(items) = event.data_transfer().map(|d| d.items()) else { return };
            let folders: Vec<web_sys::FileSystemEntry> = (0..items.length())
                .filter_map(|i| items.get(i))
                .filter_map(|item| item.webkit_get_as_entry().ok().flatten())
                .filter(web_sys::FileSystemEntry::is_directory)
                .collect();
            if folders.is_empty() {
                return;
            }
            event.prevent_default();
            event.stop_immediate_propagation();
            let (ctx, sender) = (ctx.clone(), sender.clone());
            wasm_bindgen_futures::spawn_local(async move {
                for folder in folders {
                    let files = crate::source::web_dataset::entry_files(folder).await;
                    let _: Result<(), _> = sender.send(files);
                }
                ctx.request_repaint();
            });
        },
    );
    let options = web_sys::AddEventListenerOptions::new();
    options.set_capture(true);
    let added = window.add_event_listener_with_callback_and_add_event_listener_options(
        "drop",
        on_drop.as_ref().unchecked_ref(),
        &options,
    );
    if added.is_ok() {
        on_drop.forget();
    }
}

/// Completes once the page has drawn its next frame: after the next animation frame's callbacks
/// (eframe paints in one, asked for before this one when the app was told to repaint), in the
/// task after them; or after 100 ms where no frame comes (a hidden tab, whose timers the browser
/// may slow further).
async fn after_next_frame() {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        if let Some(window) = web_sys::window() {
            let after_paint = resolve.clone();
            let later = eframe::wasm_bindgen::closure::Closure::once_into_js(move || {
                if let Some(window) = web_sys::window() {
                    let _: Result<i32, _> = window.set_timeout_with_callback(&after_paint);
                }
            });
            let _: Result<i32, _> = window.request_animation_frame(later.unchecked_ref());
            let _: Result<i32, _> = window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 100);
        }
    });
    let _: Result<_, _> = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// Completes in a later task of the event loop (after the browser has had its chance to draw).
async fn next_task() {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        if let Some(window) = web_sys::window() {
            let _: Result<i32, _> = window.set_timeout_with_callback(&resolve);
        }
    });
    let _: Result<_, _> = wasm_bindgen_futures::JsFuture::from(promise).await;
}
