//! Baseline forensics in the app (docs/FORENSICS.md): the Overview's strip of findings counted by
//! kind with a window listing a kind's findings, a group's findings with its credit drawn with and
//! without the flagged rows, and what Compare says of a flagged row.

use std::sync::Arc;

use egui_plot::{MarkerShape, Points};

use crate::analysis::forensics::{Finding, Forensics, Kind, Options};
use crate::app::{Command, OpenRun};
use crate::model::{GroupId, TrajectoryId};
use crate::ui::widgets::format_value;
use crate::ui::{ViewCtx, theme};

/// The findings of `open`, computed once per run revision on the UI's thread; `None` for a run
/// larger than the audit's limit (`vantage forensics` computes them).
pub fn cached(ui: &egui::Ui, open: &OpenRun) -> Option<Arc<Forensics>> {
    if open.run.num_path_steps() > crate::app::AUDIT_STEPS {
        return None;
    }
    let key = open.cache_key();
    let id = egui::Id::unique(("baseline_forensics", open.instance));
    type Cached = ((u64, u64), Arc<Forensics>);
    if let Some((_, found)) = ui.data(|d| d.get_temp::<Cached>(id)).filter(|(k, _)| *k == key) {
        return Some(found);
    }
    // A run whose texts stay in its log is not read for duplicates here (`vantage forensics` is).
    let options = Options { texts: open.run.text.holds_every_text(), ..Options::default() };
    let found = Arc::new(crate::analysis::forensics::forensics(&open.run, &options));
    ui.data_mut(|d| d.insert_temp(id, (key, Arc::clone(&found))));
    Some(found)
}

/// The largest credit moved among `findings`, as a suffix (` · moved up to 0.72`).
fn moved_text<'a>(findings: impl Iterator<Item = &'a Finding>) -> String {
    let moved = crate::analysis::forensics::largest_credit_moved(findings);
    moved.map(|m| format!(" · moved up to {}", format_value(m as f32))).unwrap_or_default()
}

/// The Overview's strip: the findings counted by kind, each kind a button that lists its findings.
pub fn strip_ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    let help = "baseline forensics (docs/FORENSICS.md): rows that entered a group's baseline when they should \
                not have, as `vantage forensics` lists them";
    let Some(found) = cached(ui, ctx.open) else {
        ui.label(egui::RichText::new("Baseline: run too large to look here (vantage forensics)").color(theme::MUTED))
            .on_hover_text(help);
        return;
    };
    let list_id = egui::Id::unique(("baseline_findings_window", ctx.open.instance));
    let counts = found.counts();
    if counts.is_empty() {
        ui.label(egui::RichText::new("Baseline: no finding").color(theme::MUTED)).on_hover_text(help);
    } else {
        ui.label(
            egui::RichText::new(format!("Baseline: {} finding(s)", found.findings.len()))
                .color(theme::WARNING)
                .strong(),
        )
        .on_hover_text(help);
    }
    for (kind, n) in counts {
        let moved = moved_text(found.findings.iter().filter(|f| f.kind == kind));
        let text = format!("{} ×{n}{moved}", kind.name().replace('_', " "));
        let hover = format!("{} (as fixed in {}); click to list them", kind.describe(), kind.source());
        if ui.small_button(egui::RichText::new(text).color(theme::WARNING)).on_hover_text(hover).clicked() {
            ui.data_mut(|d| d.insert_temp(list_id, Some(kind)));
        }
    }
    let shown: Option<Kind> = ui.data(|d| d.get_temp::<Option<Kind>>(list_id)).flatten();
    if let Some(kind) = shown {
        let mut open = true;
        egui::Window::new(format!("Baseline findings: {}", kind.name().replace('_', " ")))
            .id(list_id.with("window"))
            .open(&mut open)
            .default_size([680.0, 360.0])
            .show(ui.ctx(), |ui| findings_list_ui(ui, ctx, &found, kind));
        if !open {
            ui.data_mut(|d| d.insert_temp::<Option<Kind>>(list_id, None));
        }
    }
}

/// One kind's findings, a row each; a click on its group opens it.
fn findings_list_ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>, found: &Forensics, kind: Kind) {
    ui.label(egui::RichText::new(format!("{}, as fixed in {}", kind.describe(), kind.source())).color(theme::MUTED));
    if let Some((scheme, why)) = &found.scheme {
        ui.label(egui::RichText::new(format!("credit moved under {scheme}: {why}")).color(theme::MUTED));
    }
    let run = &ctx.open.run;
    egui::ScrollArea::vertical().show(ui, |ui| {
        egui::Grid::new("baseline_findings").striped(true).num_columns(5).show(ui, |ui| {
            for h in ["step", "group", "rows", "credit moved", "logged advantages"] {
                ui.label(egui::RichText::new(h).color(theme::MUTED));
            }
            ui.end_row();
            for f in found.findings.iter().filter(|f| f.kind == kind) {
                ui.label(f.train_step.map_or_else(|| "—".to_owned(), |s| s.to_string()));
                let selected = ctx.open.selection.group == Some(f.group);
                if ui.selectable_label(selected, run.group_key(f.group)).on_hover_text(&f.evidence).clicked() {
                    ctx.commands.push(Command::OpenGroup(f.group));
                    // Opened from its finding: its credit with and without the rows is what is asked.
                    ui.data_mut(|d| d.insert_temp(plot_toggle(ctx.open), true));
                }
                let keys: Vec<&str> = f.trajectories.iter().take(3).map(|&t| run.trajectory_key(t)).collect();
                let more =
                    if f.trajectories.len() > 3 { format!(" +{}", f.trajectories.len() - 3) } else { String::new() };
                ui.label(format!("{}{more}", keys.join(", ")));
                ui.label(f.credit_moved.map_or_else(|| "—".to_owned(), |m| format_value(m as f32)));
                ui.label(included_text(f.trainer_included));
                ui.end_row();
            }
        });
    });
}

fn included_text(included: Option<bool>) -> &'static str {
    match included {
        Some(true) => "include the rows",
        Some(false) => "leave them out",
        None => "—",
    }
}

/// Where meeting mode keeps whether a flagged group shows its credit with and without the rows
/// in the room of its tree and heatmap.
fn plot_toggle(open: &OpenRun) -> egui::Id {
    egui::Id::unique(("baseline_with_without_shown", open.instance))
}

/// A group's findings under its title, and its credit with and without the flagged rows: below
/// them at the desk; in meeting mode, where the window has no height to spare, in the room of the
/// tree and heatmap while a button says so (on when the group was opened from its finding).
/// Whether it took that room.
pub fn group_ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>, g: GroupId) -> bool {
    let Some(found) = cached(ui, ctx.open) else { return false };
    let findings: Vec<&Finding> = found.in_group(g).collect();
    if findings.is_empty() {
        return false;
    }
    let run = &ctx.open.run;
    for f in &findings {
        let keys: Vec<&str> = f.trajectories.iter().take(4).map(|&t| run.trajectory_key(t)).collect();
        let more =
            if f.trajectories.len() > 4 { format!(" and {} more", f.trajectories.len() - 4) } else { String::new() };
        let moved = f.credit_moved.map(|m| format!(" · credit moved {}", format_value(m as f32))).unwrap_or_default();
        let included = match f.trainer_included {
            Some(true) => " · the logged advantages include them",
            Some(false) => " · the logged advantages leave them out",
            None => "",
        };
        let line = format!("Baseline: {}: {}{more}{moved}{included}", f.kind.describe(), keys.join(", "));
        ui.add(egui::Label::new(egui::RichText::new(line).color(theme::WARNING)).truncate()).on_hover_text(format!(
            "{}\nas fixed in {}",
            f.evidence,
            f.kind.source()
        ));
    }
    let Some(f) = findings.iter().find(|f| !f.credit_rows.is_empty()) else { return false };
    let scheme = found.scheme.as_ref().map_or("the matching scheme", |(s, _)| s.as_str());
    if !ctx.state.meeting_mode {
        with_without_ui(ui, ctx.open, f, scheme, 110.0);
        return false;
    }
    let toggle = plot_toggle(ctx.open);
    let shown = ui.data(|d| d.get_temp::<bool>(toggle)).unwrap_or(false);
    let label = if shown { "back to the tree and heatmap" } else { "credit with and without the flagged rows" };
    if ui.small_button(label).clicked() {
        ui.data_mut(|d| d.insert_temp(toggle, !shown));
    }
    if shown {
        let height = (ui.available_height() - 60.0).max(80.0);
        with_without_ui(ui, ctx.open, f, scheme, height);
    }
    shown
}

/// The group's rows (x: their place in the group) with their advantage with the flagged rows, without
/// them, and as logged; the flagged rows crossed.
fn with_without_ui(ui: &mut egui::Ui, open: &OpenRun, f: &Finding, scheme: &str, height: f32) {
    let point = |i: usize, v: f64| [i as f64, v];
    let with: Vec<[f64; 2]> =
        f.credit_rows.iter().enumerate().filter(|(_, r)| r.with.is_finite()).map(|(i, r)| point(i, r.with)).collect();
    let without: Vec<[f64; 2]> = f
        .credit_rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.without.filter(|v| v.is_finite()).map(|v| point(i, v)))
        .collect();
    let logged: Vec<[f64; 2]> =
        f.credit_rows.iter().enumerate().filter_map(|(i, r)| r.logged.map(|v| point(i, v))).collect();
    let flagged: Vec<[f64; 2]> = f
        .credit_rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.without.is_none() && r.with.is_finite())
        .map(|(i, r)| point(i, r.with))
        .collect();
    let [c_with, c_without] = [theme::category(4), theme::category(1)];
    let mut key = vec![(format!("with the flagged rows ({scheme})"), c_with), ("without them".to_owned(), c_without)];
    if !logged.is_empty() {
        key.push(("logged".to_owned(), theme::MUTED));
    }
    crate::ui::widgets::series_key_ui(ui, &key, Some(("× flagged row", theme::FAILURE)));
    let names: Vec<String> = f.credit_rows.iter().map(|r| row_name(open, r.trajectory)).collect();
    // A margin above and below the points, so that none sits on the frame.
    let ys = with.iter().chain(&without).chain(&logged).map(|p| p[1]);
    let (lo, hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| (lo.min(y), hi.max(y)));
    let margin = if hi > lo { (hi - lo) * 0.15 } else { 0.5 };
    crate::ui::widgets::page_plot("baseline_with_without", open.instance)
        .height(height)
        .include_y(lo - margin)
        .include_y(hi + margin)
        .y_axis_label("advantage")
        .x_axis_formatter(move |mark, _| names.get(mark.value.round() as usize).cloned().unwrap_or_default())
        .show(ui, |plot| {
            plot.points(Points::new("with the flagged rows", with).color(c_with).radius(4.0));
            plot.points(Points::new("without them", without).color(c_without).radius(4.0).shape(MarkerShape::Diamond));
            if !logged.is_empty() {
                plot.points(Points::new("logged", logged).color(theme::MUTED).radius(6.0).filled(false));
            }
            plot.points(Points::new("flagged", flagged).color(theme::FAILURE).radius(7.0).shape(MarkerShape::Cross));
        });
}

/// A row's short name on the plot's axis: its id's last part (`r6` of `s1-p9-r6`).
fn row_name(open: &OpenRun, t: TrajectoryId) -> String {
    let key = open.run.trajectory_key(t);
    key.rsplit(['-', '/', ':']).next().unwrap_or(key).to_owned()
}

/// What Compare says of trajectory `t`: the kinds of finding that flag it, or its group's.
pub fn flag_of(found: &Forensics, open: &OpenRun, t: TrajectoryId) -> String {
    let own: Vec<&str> = found.kinds_of(t).iter().map(|k| k.name()).collect();
    if !own.is_empty() {
        return own.join(", ");
    }
    let g = open.run.trajectories.group.get(t.index()).copied();
    let kinds: Vec<&str> = g.map(|g| found.in_group(g).map(|f| f.kind.name()).collect()).unwrap_or_default();
    if kinds.is_empty() { String::new() } else { format!("in a group with {}", kinds.join(", ")) }
}
