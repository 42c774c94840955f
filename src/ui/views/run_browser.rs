//! Run browser: the run's trajectories in a virtualised table (only visible rows are laid out),
//! filtered by text, role, tool / step kind, success and zero-variance groups, and sorted by
//! outcome, length or training step. The filtered order is cached until the options change.

use std::hash::{Hash as _, Hasher as _};
use std::sync::Arc;

use crate::analysis::is_zero_variance;
use crate::app::Command;
use crate::app::state::{BrowserOptions, SortBy};
use crate::model::{Run, TrajectoryId};
use crate::ui::widgets::format_value;
use crate::ui::{ViewCtx, theme};

/// Whether group `g` has at least two rollouts with an outcome reward.
fn has_two_rewards(run: &Run, g: crate::model::GroupId) -> bool {
    run.groups.members(g).iter().filter(|t| !run.trajectories.reward[t.index()].is_nan()).nth(1).is_some()
}

/// Trajectories passing `options`, in their sort order (a run without labels).
pub fn filtered(run: &Run, options: &BrowserOptions) -> Vec<TrajectoryId> {
    filtered_by(run, &crate::model::labels::RunLabels::default(), options)
}

/// Trajectories passing `options` on a run with `labels`, in their sort order.
pub fn filtered_by(run: &Run, labels: &crate::model::labels::RunLabels, options: &BrowserOptions) -> Vec<TrajectoryId> {
    let labelled = (!options.label.is_empty()).then(|| labels.named(&options.label));
    let tr = &run.trajectories;
    let query = options.search.trim().to_lowercase();
    let contains = |text: &str| !text.is_empty() && text.to_lowercase().contains(&query);
    let zero_variance: Vec<bool> = if options.zero_variance_only || options.mixed_only {
        run.groups.ids().map(|g| is_zero_variance(run, g)).collect()
    } else {
        Vec::new()
    };
    let mut rows: Vec<TrajectoryId> = tr
        .ids()
        .filter(|&t| {
            let g = tr.group[t.index()];
            if options.zero_variance_only && !zero_variance[g.index()] {
                return false;
            }
            // Mixed outcomes: two or more rewarded rollouts that differ.
            if options.mixed_only && (zero_variance[g.index()] || !has_two_rewards(run, g)) {
                return false;
            }
            if let Some(want) = options.success
                && crate::analysis::compare::is_success(run, t) != want
            {
                return false;
            }
            // A label no rollout carries keeps none.
            if let Some(named) = labelled
                && !named.is_some_and(|n| n.on_trajectory(run, t))
            {
                return false;
            }
            let path = tr.path(t);
            let nodes = &run.nodes;
            if !options.role.is_empty() && !path.iter().any(|n| run.label(nodes.role[n.index()]) == options.role) {
                return false;
            }
            if !options.kind.is_empty() && !path.iter().any(|n| run.label(nodes.kind[n.index()]) == options.kind) {
                return false;
            }
            if query.is_empty() {
                return true;
            }
            contains(&run.text(run.groups.prompt[g.index()]))
                || contains(run.trajectory_key(t))
                || path.iter().any(|n| {
                    let i = n.index();
                    contains(&run.text(nodes.thought[i]))
                        || contains(&run.text(nodes.action[i]))
                        || contains(&run.text(nodes.observation[i]))
                })
        })
        .collect();
    let key = |t: &TrajectoryId| -> f64 {
        match options.sort {
            SortBy::Order => t.index() as f64,
            SortBy::Outcome => f64::from(tr.reward[t.index()]),
            SortBy::Length => tr.num_steps(*t) as f64,
            SortBy::TrainStep => run.groups.train_step[tr.group[t.index()].index()].map_or(f64::NAN, |s| s as f64),
            SortBy::Group => tr.group[t.index()].index() as f64,
        }
    };
    // Stable: equal keys keep log order.
    rows.sort_by(|a, b| key(a).total_cmp(&key(b)));
    if options.descending {
        rows.reverse();
    }
    rows
}

/// Draws the browser.
pub fn ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    let run = &ctx.open.run;
    let options = &mut ctx.state.browser;
    ui.heading("Rollouts");
    ui.add(egui::TextEdit::singleline(&mut options.search).hint_text("search prompts and steps"));
    ui.horizontal_wrapped(|ui| {
        let roles: Vec<String> = ctx.open.facets.roles.iter().map(|(_, r)| r.clone()).collect();
        filter_combo(ui, "role", &mut options.role, &roles);
        filter_combo(ui, "kind / tool", &mut options.kind, &ctx.open.facets.kinds);
        let labels: Vec<String> = ctx.open.run.meta.labels.names.iter().map(|n| n.name.clone()).collect();
        if !labels.is_empty() || !options.label.is_empty() {
            filter_combo(ui, "label", &mut options.label, &labels);
        }
        let combo = egui::ComboBox::from_id_salt("success_filter")
            .selected_text(match options.success {
                None => "any outcome",
                Some(true) => "successes",
                Some(false) => "failures",
            })
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut options.success, None, "any outcome");
                ui.selectable_value(&mut options.success, Some(true), "successes");
                ui.selectable_value(&mut options.success, Some(false), "failures");
            });
        crate::ui::widgets::name(&combo.response, "outcome filter");
        if ui.checkbox(&mut options.zero_variance_only, "zero-variance groups").changed() && options.zero_variance_only
        {
            options.mixed_only = false;
        }
        if ui.checkbox(&mut options.mixed_only, "mixed-outcome groups").changed() && options.mixed_only {
            options.zero_variance_only = false;
        }
    });
    ui.horizontal(|ui| {
        ui.label("sort");
        for (sort, label) in [
            (SortBy::Order, "log order"),
            (SortBy::Outcome, "outcome"),
            (SortBy::Length, "length"),
            (SortBy::TrainStep, "train step"),
            (SortBy::Group, "group"),
        ] {
            ui.selectable_value(&mut options.sort, sort, label);
        }
        ui.checkbox(&mut options.descending, "descending");
    });
    let rows =
        cached_rows(ui, run, (&ctx.open.run.meta.labels, ctx.open.labels_revision), ctx.open.cache_key(), options);
    let shown = format!("{} of {} rollouts", rows.len(), run.trajectories.len());
    if options.filters_on() {
        // Filters are kept between sessions: say so where the list is, with a way out.
        ui.horizontal_wrapped(|ui| {
            ui.label(egui::RichText::new(format!("Filters on: {shown} shown")).color(theme::WARNING).strong());
            if ui.button("Clear filters").clicked() {
                options.clear_filters();
            }
        });
    } else {
        ui.label(egui::RichText::new(shown).color(theme::MUTED));
    }
    ui.separator();
    let selected = ctx.open.selection.trajectory;
    let tr = &run.trajectories;
    let row_height = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    egui::ScrollArea::vertical().id_salt("browser_rows").auto_shrink(false).show_rows(
        ui,
        row_height,
        rows.len(),
        |ui, range| {
            // One line per row, so the virtualised rows keep their height.
            ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
            for &t in &rows[range] {
                let g = tr.group[t.index()];
                let reward = tr.reward[t.index()];
                let flag = if is_zero_variance(run, g) { " · zero variance" } else { "" };
                let text = format!(
                    "{}  ·  R {}  ·  {}{}",
                    run.trajectory_key(t),
                    format_value(reward),
                    crate::ui::widgets::count(tr.num_steps(t), "step"),
                    flag
                );
                let response = ui.selectable_label(selected == Some(t), text);
                let response = response.on_hover_text(format!(
                    "group {}\n{}",
                    run.group_key(g),
                    truncate(&run.text(run.groups.prompt[g.index()]), 300)
                ));
                if response.clicked() {
                    ctx.commands.push(Command::SelectTrajectory(t));
                }
            }
        },
    );
}

fn filter_combo(ui: &mut egui::Ui, what: &str, value: &mut String, choices: &[String]) {
    if choices.is_empty() {
        return;
    }
    let shown = if value.is_empty() { format!("any {what}") } else { value.clone() };
    let combo = egui::ComboBox::from_id_salt(what).selected_text(shown).show_ui(ui, |ui| {
        ui.selectable_value(value, String::new(), format!("any {what}"));
        for choice in choices {
            ui.selectable_value(value, choice.clone(), choice);
        }
    });
    crate::ui::widgets::name(&combo.response, what);
}

/// The filtered rows, recomputed only when the options or the run change.
fn cached_rows(
    ui: &egui::Ui,
    run: &Run,
    labels: (&crate::model::labels::RunLabels, u64),
    key: (u64, u64),
    options: &BrowserOptions,
) -> Arc<Vec<TrajectoryId>> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    labels.1.hash(&mut h);
    run.trajectories.len().hash(&mut h);
    serde_json::to_string(options).unwrap_or_default().hash(&mut h);
    let key = h.finish();
    let id = egui::Id::unique("browser_rows_cache");
    if let Some((k, rows)) = ui.data(|d| d.get_temp::<(u64, Arc<Vec<TrajectoryId>>)>(id))
        && k == key
    {
        return rows;
    }
    let rows = Arc::new(filtered_by(run, labels.0, options));
    ui.data_mut(|d| d.insert_temp(id, (key, Arc::clone(&rows))));
    rows
}

pub use crate::model::truncate;
