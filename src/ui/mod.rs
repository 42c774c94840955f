//! Everything that touches egui: the panels, the views, the theme.

pub mod level;
pub mod shell;
pub mod theme;
pub mod views;
pub mod widgets;

use crate::app::state::Tab;
use crate::app::{AppState, Command, OpenRun, VantageApp};

/// What every view gets: the run shown, the persisted state and the command queue.
pub struct ViewCtx<'a> {
    /// The run shown.
    pub open: &'a mut OpenRun,
    /// Persisted state (schemes, options).
    pub state: &'a mut AppState,
    /// Commands for [`VantageApp::logic`].
    pub commands: &'a mut Vec<Command>,
    /// The other open runs (for run A against run B).
    pub others: Vec<&'a crate::model::Run>,
}

/// Draws the whole app into `ui`: top bar, status bar, side panels and the current tab.
pub fn app_ui(app: &mut VantageApp, ui: &mut egui::Ui) {
    let zoom = if app.state.meeting_mode { theme::MEETING_ZOOM } else { 1.0 };
    ui.ctx().set_zoom_factor(zoom);
    // `--window-size` is in pixels and egui sizes a window in points of the zoom in effect when
    // it sends the command: sent once that zoom is this frame's (the first frame can still have
    // the zoom an earlier meeting-mode session saved), and again over the size eframe restores.
    if let Some(size) = app.window_size
        && !app.window_size_sent
    {
        if ui.ctx().zoom_factor() == zoom {
            ui.ctx().send_viewport_cmd(egui::ViewportCommand::InnerSize(egui::Vec2::from(size) / zoom));
            app.window_size_sent = true;
        } else {
            ui.ctx().request_repaint();
        }
    }
    egui::Panel::top("top_bar").show(ui, |ui| top_bar_ui(app, ui));
    egui::Panel::bottom("status_bar").show(ui, |ui| status_bar_ui(app, ui));
    let meeting = app.state.meeting_mode;
    let VantageApp { runs, selected, state, commands, loads, server, panels, .. } = app;
    if let Some(list) = server.as_mut().filter(|l| l.window_open && !runs.is_empty()) {
        let mut open = true;
        egui::Window::new("Server runs").open(&mut open).default_size([760.0, 420.0]).show(ui.ctx(), |ui| {
            views::server_runs::ui(ui, list, commands);
        });
        list.window_open &= open;
    }
    let at = (*selected).min(runs.len());
    let (before, rest) = runs.split_at_mut(at);
    let Some((open, after)) = rest.split_first_mut() else {
        egui::CentralPanel::default().show(ui, |ui| {
            if let Some(list) = server.as_mut() {
                if loads.pending_names().next().is_some() {
                    ui.horizontal(|ui| {
                        ui.spinner();
                        ui.label("Loading…");
                    });
                }
                views::server_runs::ui(ui, list, commands);
            } else if loads.pending_names().next().is_some() {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Loading…");
                });
            } else {
                ui.label("No run open. Use Open… or drop a file here");
            }
        });
        return;
    };
    let others: Vec<&crate::model::Run> = before.iter().chain(after.iter()).map(|o| &*o.run).collect();
    let mut ctx = ViewCtx { open, state, commands, others };
    if meeting {
        // The step under discussion stays in view for the room: its text and both credits.
        // As tall as its text (measured on the frame before) up to 42% of the window, so that no
        // credit line is cut off below; taller text scrolls.
        let measured = egui::Id::unique("step_strip_content_height");
        let content = ui.data(|d| d.get_temp::<f32>(measured)).unwrap_or(150.0);
        let tallest = (ui.ctx().content_rect().height() * 0.42).max(120.0);
        let height = (content + 12.0).clamp(120.0, tallest);
        egui::Panel::bottom("step_strip").resizable(true).default_size(150.0).min_size(height).show(ui, |ui| {
            let shown = egui::ScrollArea::vertical()
                .id_salt("strip_scroll")
                .show(ui, |ui| views::inspector::strip_ui(ui, &mut ctx));
            ui.data_mut(|d| d.insert_temp(measured, shown.content_size.y));
        });
    }
    if !meeting {
        side_panels_ui(ui, &mut ctx, panels);
    }
    let central = egui::CentralPanel::default().show(ui, |ui| match ctx.state.tab {
        Tab::Group => views::group::ui(ui, &mut ctx),
        Tab::Compare => views::compare::ui(ui, &mut ctx),
        Tab::Overview => views::overview::ui(ui, &mut ctx),
        Tab::Tokens => views::tokens::ui(ui, &mut ctx),
        Tab::Diff => views::diff::ui(ui, &mut ctx),
        Tab::Transcript => views::transcript::ui(ui, &mut ctx),
        Tab::Runs => views::runs::ui(ui, &mut ctx),
        Tab::Summary => {
            egui::ScrollArea::vertical().show(ui, |ui| views::run_summary::ui(ui, &mut ctx));
        }
    });
    ui.data_mut(|d| d.insert_temp(central_rect_id(), central.response.rect));
}

/// Below this window width (points) the rollout list starts as a strip and the scheme panel
/// narrows: a 1280-pixel laptop or projector gives the view the room.
pub const COMPACT_WIDTH: f32 = 1500.0;

/// Below this width the scheme panel starts as a strip too.
pub const NARROW_WIDTH: f32 = 1100.0;

/// Width of a collapsed side panel (its strip).
const STRIP_WIDTH: f32 = 30.0;

fn central_rect_id() -> egui::Id {
    egui::Id::unique("central_panel_rect")
}

/// The central view's rectangle as last drawn (tests check that plots and text stay inside it).
pub fn central_rect(ctx: &egui::Context) -> Option<egui::Rect> {
    ctx.data(|d| d.get_temp(central_rect_id()))
}

/// The rollout list (left) and the scheme panel with the inspector (right), each open or a strip
/// as the window's width says (`COMPACT_WIDTH`, `NARROW_WIDTH`) until the user opens or closes it
/// (`panels`: the user's choice for this session, left and right); the rollout list stays open
/// while its filters hide rollouts. No slide animation: the layout
/// a room sees is the one the width gives, on the first frame.
fn side_panels_ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>, panels: &mut [Option<bool>; 2]) {
    let width = ui.ctx().content_rect().width();
    let compact = width < COMPACT_WIDTH;
    // A filter kept from an earlier session hides rollouts: the list stays open to say so.
    if panels[0].unwrap_or(!compact || ctx.state.browser.filters_on()) {
        egui::Panel::left("run_browser").resizable(true).default_size(if compact { 250.0 } else { 300.0 }).show(
            ui,
            |ui| {
                if compact && strip_button(ui, "«", "hide the rollout list") {
                    panels[0] = Some(false);
                }
                views::run_browser::ui(ui, ctx);
            },
        );
    } else {
        egui::Panel::left("run_browser_strip").exact_size(STRIP_WIDTH).resizable(false).show(ui, |ui| {
            if strip_button(ui, "»", "show the rollout list") {
                panels[0] = Some(true);
            }
        });
    }
    if panels[1].unwrap_or(width >= NARROW_WIDTH) {
        egui::Panel::right("side_panel").resizable(true).default_size(360.0).show(ui, |ui| {
            if width < NARROW_WIDTH && strip_button(ui, "»", "hide the scheme panel and the step inspector") {
                panels[1] = Some(false);
            }
            egui::ScrollArea::vertical().id_salt("side_scroll").show(ui, |ui| {
                views::scheme_panel::ui(ui, ctx);
                ui.separator();
                views::inspector::ui(ui, ctx);
            });
        });
    } else {
        egui::Panel::right("side_panel_strip").exact_size(STRIP_WIDTH).resizable(false).show(ui, |ui| {
            if strip_button(ui, "«", "show the scheme panel and the step inspector") {
                panels[1] = Some(true);
            }
        });
    }
}

/// A small button of a side panel's strip (or to fold the panel into one), named for the tests and
/// screen readers by `what`; whether it was clicked.
fn strip_button(ui: &mut egui::Ui, arrow: &str, what: &str) -> bool {
    let response = ui.small_button(arrow).on_hover_text(what);
    let (name, enabled) = (what.to_owned(), response.enabled());
    response.widget_info(move || egui::WidgetInfo::labeled(egui::Role::Button, enabled, name.clone()));
    response.clicked()
}

fn top_bar_ui(app: &mut VantageApp, ui: &mut egui::Ui) {
    ui.horizontal_wrapped(|ui| {
        // The app's name is the window's (and page's) title: the bar keeps its row for controls.
        if app.runs.is_empty() {
            ui.strong("vantage");
            ui.separator();
        }
        if let Some(list) = app.server.as_mut().filter(|_| !app.runs.is_empty()) {
            ui.toggle_value(&mut list.window_open, "Server runs").on_hover_text("the runs vantage serve offers");
        }
        if ui.button("Open…").clicked() {
            let ctx = ui.ctx().clone();
            app.loads.start_picker(false, move || ctx.request_repaint());
        }
        let folders = if cfg!(target_arch = "wasm32") {
            "a vantage Parquet v2 dataset (its folder, read in slices)"
        } else {
            "a verl or TRL directory, or a vantage Parquet v2 dataset"
        };
        if ui.button("Open folder…").on_hover_text(folders).clicked() {
            let ctx = ui.ctx().clone();
            app.loads.start_picker(true, move || ctx.request_repaint());
        }
        #[cfg(not(target_arch = "wasm32"))]
        recent_files_ui(app, ui);
        follow_toggle_ui(app, ui);
        if app.runs.len() > 1 {
            // The runs by the last parts of their paths that tell them apart (no machine paths).
            let names = widgets::short_run_names(&app.runs.iter().map(|r| r.run.meta.name.clone()).collect::<Vec<_>>());
            let combo = egui::ComboBox::from_id_salt("run_picker")
                .selected_text(names.get(app.selected).cloned().unwrap_or_default())
                .show_ui(ui, |ui| {
                    for (i, name) in names.iter().enumerate() {
                        if ui.selectable_label(i == app.selected, name).clicked() {
                            app.commands.push(Command::SelectRun(i));
                        }
                    }
                    ui.separator();
                    if ui.button("Close this run").clicked() {
                        app.commands.push(Command::CloseRun(app.selected));
                    }
                });
            widgets::name(&combo.response, "open run");
        }
        ui.separator();
        for tab in Tab::ALL {
            ui.selectable_value(&mut app.state.tab, tab, tab.label());
        }
        ui.separator();
        let meeting = ui
            .selectable_label(app.state.meeting_mode, "Meeting (F2)")
            .on_hover_text("meeting mode: larger type, side panels hidden, schemes and step pinned in this bar");
        if meeting.clicked() {
            app.commands.push(Command::ToggleMeetingMode);
        }
        // Copy link is in the Export menu: the bar holds one row at the desk and two in meeting
        // mode at 1280×720.
        ui.menu_button("Export", |ui| {
            if ui.button("Current view as PNG…").clicked() {
                app.commands.push(Command::ExportPng);
            }
            if ui.button("Credit table as CSV…").clicked() {
                app.commands.push(Command::ExportCsv);
            }
            if ui.button("Copy link").on_hover_text("a link to this view and step, for a meeting chat").clicked() {
                copy_link(app, ui.ctx());
            }
        });
        bookmarks_menu_ui(app, ui);
        if app.state.meeting_mode {
            ui.separator();
            pinned_comparison_ui(app, ui);
        }
    });
}

/// Copies the deep link to this view and step.
fn copy_link(app: &mut VantageApp, ctx: &egui::Context) {
    let fragment = app.shared_fragment();
    let text = match crate::app::page_base_url() {
        Some(base) => format!("{base}#{fragment}"),
        None => format!("#{fragment}"),
    };
    ctx.copy_text(text);
    app.notifications.push("link to this step copied".to_owned());
}

/// Recently opened files (native only: the web has no paths to reopen).
#[cfg(not(target_arch = "wasm32"))]
fn recent_files_ui(app: &mut VantageApp, ui: &mut egui::Ui) {
    ui.menu_button("Recent", |ui| {
        if app.state.recent_files.is_empty() {
            ui.label("No recent files");
        }
        // By the last parts of their paths that tell them apart, the whole path on hover.
        let recent = app.state.recent_files.clone();
        for (path, name) in recent.iter().zip(widgets::short_run_names(&recent)) {
            if ui.button(name).on_hover_text(widgets::shown_path(path)).clicked() {
                let ctx = ui.ctx().clone();
                app.open_all(vec![crate::source::open::LoadSource::Path(path.into())], move || ctx.request_repaint());
            }
        }
    });
}

/// The Follow toggle, for a run opened from a path (native: reads what the path gains, every
/// half second) or fetched by URL (web: asks the server for the new bytes every second).
fn follow_toggle_ui(app: &mut VantageApp, ui: &mut egui::Ui) {
    let Some(open) = app.current() else { return };
    #[cfg(not(target_arch = "wasm32"))]
    let (followable, mut following, hover) = (
        open.source_path.is_some(),
        open.follower.is_some(),
        "read the records the log gains while the run trains, every half second",
    );
    #[cfg(target_arch = "wasm32")]
    let (followable, mut following, hover) = (
        open.web_source.is_some() || matches!(open.web_dataset, Some(crate::source::web_dataset::WebDataset::Url(_))),
        open.web_follower.is_some() || open.web_dataset_follower.is_some(),
        "ask the server every second for what the run gained (a log's new bytes, a dataset's new manifest)",
    );
    if !followable || !ui.checkbox(&mut following, "Follow").on_hover_text(hover).changed() {
        return;
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let ctx = ui.ctx().clone();
        app.toggle_follow(move || ctx.request_repaint());
    }
    #[cfg(target_arch = "wasm32")]
    app.toggle_web_follow(ui.input(|i| i.time));
}

fn bookmarks_menu_ui(app: &mut VantageApp, ui: &mut egui::Ui) {
    let marks = app.current_bookmarks();
    ui.menu_button(format!("Bookmarks ({})", marks.len()), |ui| {
        if ui.button("Bookmark this step (B)").clicked() {
            app.commands.push(Command::ToggleBookmark);
        }
        ui.label(egui::RichText::new("PageDown / PageUp: next / previous").color(theme::MUTED));
        ui.separator();
        let count = marks.len();
        for (k, i) in marks.into_iter().enumerate() {
            ui.horizontal(|ui| {
                let m = &mut app.state.bookmarks[i];
                let go = ui.button(format!("{} of {count}: {} · step {}", k + 1, m.trajectory_key, m.step_index + 1));
                if go.clicked() {
                    app.commands.push(Command::GoToBookmark(i));
                }
                let note = ui.add(egui::TextEdit::singleline(&mut m.note).hint_text("note").desired_width(180.0));
                crate::ui::widgets::name(&note, &format!("bookmark {} note", k + 1));
                if ui.button("delete").on_hover_text("delete this bookmark").clicked() {
                    app.commands.push(Command::DeleteBookmark(i));
                }
            });
        }
    });
}

/// In meeting mode the comparison stays in view: scheme A, scheme B and the selected step.
fn pinned_comparison_ui(app: &VantageApp, ui: &mut egui::Ui) {
    let Some(open) = app.current() else { return };
    // Each item whole: the bar wraps between items, never inside one.
    let item = widgets::whole;
    item(ui, egui::RichText::new(format!("A {}", app.state.scheme_a.cache_key())).strong());
    item(ui, egui::RichText::new(format!("B {}", app.state.scheme_b.cache_key())).strong());
    if let (Some(t), Some(k)) = (open.selection.trajectory, open.selected_step_index()) {
        // A long rollout id is cut to the row's end (whole on hover) rather than open a third row.
        let text = format!("{} · step {}", open.run.trajectory_key(t), k + 1);
        let room = ui.available_size_before_wrap().x;
        if room >= 160.0 {
            ui.scope(|ui| {
                ui.set_max_width(room);
                ui.add(egui::Label::new(text.clone()).truncate()).on_hover_text(text);
            });
        } else {
            item(ui, egui::RichText::new(text));
        }
    }
}

fn status_bar_ui(app: &mut VantageApp, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        let mut cancel = None;
        for (i, (name, share)) in app.loads.pending_progress().enumerate() {
            match share {
                Some(share) => {
                    ui.add(egui::ProgressBar::new(share).desired_width(160.0).show_percentage());
                }
                None => {
                    ui.spinner();
                }
            }
            ui.label(format!("Loading {name}"));
            if ui.small_button("Cancel").clicked() {
                cancel = Some(i);
            }
        }
        if let Some(id) = cancel.and_then(|i| app.loads.cancel(i)) {
            for open in app.runs.iter_mut().filter(|r| r.load_id == Some(id)) {
                open.load_id = None;
                app.notifications.push(format!("{}: loading cancelled; showing the part read", open.run.meta.name));
            }
        }
        for open in &app.runs {
            if let Some(lazy) = &open.lazy {
                let ((read, all), (done, total)) = (lazy.progress(), lazy.bytes());
                let share = if total > 0 { done as f32 / total as f32 } else { read as f32 / all.max(1) as f32 };
                ui.add(egui::ProgressBar::new(share.min(1.0)).desired_width(160.0).show_percentage());
                ui.label(format!("Reading samples of {}: {read} of {all}", open.run.meta.name));
            }
        }
        let full: Vec<String> = app.runs.iter().map(|r| r.run.meta.name.clone()).collect();
        let short = widgets::short_run_names(&full);
        if let Some(open) = app.current() {
            ui.label(format!(
                "{} · {} · {} · {}",
                short.get(app.selected).map_or(open.run.meta.name.as_str(), String::as_str),
                widgets::count(open.run.groups.len(), "group"),
                widgets::count(open.run.trajectories.len(), "trajectory"),
                widgets::count(open.run.num_path_steps(), "step")
            ));
            #[cfg(not(target_arch = "wasm32"))]
            if let Some(follower) = &open.follower {
                ui.label(egui::RichText::new(follower.status()).color(theme::MUTED));
            }
            #[cfg(target_arch = "wasm32")]
            if let Some(follower) = &open.web_follower {
                let now = ui.input(|i| i.time);
                ui.label(egui::RichText::new(follower.status(now)).color(theme::MUTED));
            }
        }
        let n = app.notifications.len();
        if n > 0 {
            let label = egui::RichText::new(format!("{n} notice(s)")).color(theme::WARNING);
            if ui.button(label).clicked() {
                app.show_notifications = !app.show_notifications;
            }
            // Cut with "…" at the window's edge (whole on hover and in the list of notices).
            if let Some(last) = app.notifications.last() {
                let last = widgets::with_short_names(last, &full, &short);
                ui.add(egui::Label::new(egui::RichText::new(last).color(theme::WARNING)).truncate());
            }
        }
    });
    if app.show_notifications {
        let full: Vec<String> = app.runs.iter().map(|r| r.run.meta.name.clone()).collect();
        let short = widgets::short_run_names(&full);
        let mut open = true;
        egui::Window::new("Notices").open(&mut open).default_size([640.0, 300.0]).show(ui.ctx(), |ui| {
            if ui.button("Clear").clicked() {
                app.notifications.clear();
            }
            let row = ui.text_style_height(&egui::TextStyle::Monospace);
            egui::ScrollArea::vertical().show_rows(ui, row, app.notifications.len(), |ui, rows| {
                for line in &app.notifications[rows] {
                    ui.label(egui::RichText::new(widgets::with_short_names(line, &full, &short)).monospace());
                }
            });
        });
        app.show_notifications = open;
    }
}
