//! Run overview over training steps: mean reward, success rate, share of zero-variance groups, mean
//! |credit| and its std under A and B; and, when a task recurs, a slider that walks the same prompt
//! across training steps.

use egui_plot::{Line, PlotPoints, PlotUi, Points, VLine};

use std::sync::Arc;

use crate::analysis::overview::{TrainStepStats, per_train_step};
use crate::app::Command;
use crate::ui::widgets::format_value;
use crate::ui::{ViewCtx, theme};

/// Draws the overview.
pub fn ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    let open = &*ctx.open;
    let key = (open.cache_key(), open.credit[0].generation, open.credit[1].generation);
    let id = egui::Id::unique("overview_cache");
    let cached =
        ui.data(|d| d.get_temp::<(((u64, u64), u64, u64), Arc<Vec<TrainStepStats>>)>(id)).filter(|(k, _)| *k == key);
    let stats = if let Some((_, stats)) = cached {
        stats
    } else {
        let stats = Arc::new(per_train_step(&open.run, [open.credit[0].step(), open.credit[1].step()]));
        ui.data_mut(|d| d.insert_temp(id, (key, Arc::clone(&stats))));
        stats
    };
    // The heading, the health alarms and the baseline findings share a line (meeting mode has
    // little height to spare).
    ui.horizontal_wrapped(|ui| {
        ui.label(egui::RichText::new(crate::ui::widgets::count(stats.len(), "training step")).strong());
        ui.separator();
        alarms_ui(ui, ctx);
        ui.separator();
        super::forensics::strip_ui(ui, ctx);
    });
    // Above the plots, where the page's scrolling cannot hide it (with one training step nothing
    // can recur).
    if stats.len() > 1 {
        same_prompt_ui(ui, ctx);
    }
    let open = &*ctx.open;
    if !open.run.meta.all_steps.is_empty() {
        whole_run_ui(ui, open.instance, &open.run.meta);
    }
    label_mass_ui(ui, open);
    // Two plots to a screen at the desk; one to a screen, with its title and key, in meeting
    // mode's larger type (the page scrolls to the others).
    let height = if ctx.state.meeting_mode {
        // Its title and key (one line) and x axis take about 64 points; never so short that its
        // scale has one mark (the page scrolls instead).
        (ui.available_height() - 64.0).max(MEETING_PLOT_HEIGHT)
    } else {
        (ui.available_height() / 2.0 - 60.0).max(160.0)
    };
    // Per opened run: a run opens at the top, not where an earlier session's run was scrolled to.
    egui::ScrollArea::vertical()
        .id_salt(("overview_scroll", open.instance))
        .show(ui, |ui| plots_ui(ui, open, &stats, height));
}

/// Each label's |credit| mass per training step under A and B, and its share of the step's
/// (docs/LABELS.md): what each scheme spends on the labelled behaviour as training goes on.
fn label_mass_ui(ui: &mut egui::Ui, open: &crate::app::OpenRun) {
    if open.run.meta.labels.names.is_empty() {
        return;
    }
    let key = (open.cache_key(), open.credit[0].generation, open.credit[1].generation, open.labels_revision);
    let id = egui::Id::unique("label_mass_cache");
    type Rows = Vec<(crate::analysis::labels::Mass, Option<crate::analysis::labels::Mass>)>;
    type Cached = (((u64, u64), u64, u64, u64), Arc<Rows>);
    let rows = if let Some((_, rows)) = ui.data(|d| d.get_temp::<Cached>(id)).filter(|(k, _)| *k == key) {
        rows
    } else {
        {
            let (Some(a), b) = (open.credit[0].step(), open.credit[1].step()) else { return };
            let mass_a = crate::analysis::labels::mass_by_train_step(&open.run, &open.run.meta.labels, a);
            let mass_b = b.map(|b| crate::analysis::labels::mass_by_train_step(&open.run, &open.run.meta.labels, b));
            let rows: Rows = mass_a
                .into_iter()
                .enumerate()
                .map(|(i, m)| (m, mass_b.as_ref().and_then(|b| b.get(i).cloned())))
                .collect();
            let rows = Arc::new(rows);
            ui.data_mut(|d| d.insert_temp(id, (key, Arc::clone(&rows))));
            rows
        }
    };
    let share = |m: &crate::analysis::labels::Mass| {
        if m.share.is_nan() { format!("{:.3}", m.mass) } else { format!("{:.3} ({:.0}%)", m.mass, m.share * 100.0) }
    };
    egui::CollapsingHeader::new(egui::RichText::new("Credit by label, per training step").strong())
        .id_salt(("label_mass", open.instance))
        .default_open(true)
        .show(ui, |ui| {
            egui::ScrollArea::vertical().id_salt("label_mass_rows").max_height(150.0).show(ui, |ui| {
                egui::Grid::new("label_mass").striped(true).num_columns(5).show(ui, |ui| {
                    for h in ["label", "training step", "steps", "|A| (share of the step's)", "|B| (share)"] {
                        ui.label(egui::RichText::new(h).color(theme::MUTED));
                    }
                    ui.end_row();
                    for (a, b) in rows.iter() {
                        ui.label(egui::RichText::new(&a.label).color(theme::LABEL));
                        ui.label(a.train_step.map_or_else(|| "—".to_owned(), |s| s.to_string()));
                        ui.label(a.steps.to_string());
                        ui.label(share(a));
                        ui.label(b.as_ref().map_or_else(|| "—".to_owned(), share));
                        ui.end_row();
                    }
                });
            });
        });
}

/// The least height of a meeting-mode plot with its x axis, in points (its frame some 120).
pub const MEETING_PLOT_HEIGHT: f32 = 150.0;

/// A plot over training steps: its x axis marked at whole steps only, its y axis at the page
/// plots' 1, 2, 5 steps, each y mark with as many decimals as its spacing needs.
fn steps_plot(name: &'static str, run: u64, axis: &StepAxis) -> egui_plot::Plot<'static> {
    let marks = axis.clone();
    crate::ui::widgets::page_plot(name, run)
        .y_axis_formatter(|mark, _| tick_label(mark.value, mark.step_size))
        .x_axis_label(if axis.ranks.is_some() {
            "training step (in order: they are unevenly apart)"
        } else {
            "training step"
        })
        .x_axis_formatter(move |mark, _| marks.label(mark.value))
}

/// Where a training step lies on the Overview's x axis: at its number, or, when the steps are so
/// unevenly apart that one gap would take most of the axis (thirty steps one apart, then step
/// 300: the thirty crushed into a comb at one end), at its rank, each mark naming its step.
#[derive(Clone, Debug, Default)]
pub struct StepAxis {
    /// The training steps in order, when they are placed by rank.
    pub ranks: Option<Arc<Vec<i64>>>,
}

impl StepAxis {
    /// The axis for these training steps.
    pub fn of(steps: impl IntoIterator<Item = i64>) -> Self {
        let mut steps: Vec<i64> = steps.into_iter().collect();
        steps.sort_unstable();
        steps.dedup();
        if steps.len() < 3 {
            return Self::default();
        }
        let mut gaps: Vec<i64> = steps.windows(2).map(|w| w[1] - w[0]).collect();
        let span = steps[steps.len() - 1] - steps[0];
        gaps.sort_unstable();
        let (median, largest) = (gaps[gaps.len() / 2], gaps[gaps.len() - 1]);
        let comb = 2 * largest >= span && largest >= 5 * median.max(1);
        Self { ranks: comb.then(|| Arc::new(steps)) }
    }

    /// Where `step` lies.
    pub fn x(&self, step: i64) -> f64 {
        match &self.ranks {
            Some(ranks) => match ranks.binary_search(&step) {
                Ok(i) => i as f64,
                Err(i) => i as f64 - 0.5,
            },
            None => step as f64,
        }
    }

    /// The label of a mark at `value`: a whole step's number, nothing between steps.
    pub fn label(&self, value: f64) -> String {
        if value.fract() != 0.0 {
            return String::new();
        }
        match &self.ranks {
            Some(ranks) => {
                usize::try_from(value as i64).ok().and_then(|i| ranks.get(i)).map_or_else(String::new, i64::to_string)
            }
            None => format!("{value:.0}"),
        }
    }
}

/// The overview's plots, each `height` tall.
fn plots_ui(ui: &mut egui::Ui, open: &crate::app::OpenRun, stats: &[TrainStepStats], height: f32) {
    let axis = StepAxis::of(stats.iter().map(|s| s.train_step));
    let series = |f: &dyn Fn(&TrainStepStats) -> f64| -> Vec<[f64; 2]> {
        stats.iter().map(|s| [axis.x(s.train_step), f(s)]).filter(|p| p[1].is_finite()).collect()
    };
    // Each plot's key sits above it (a legend inside would cover the last points); a lone step
    // gets an axis around it.
    let (first, last) = stats.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| {
        (lo.min(axis.x(s.train_step)), hi.max(axis.x(s.train_step)))
    });
    let span = if last > first { last - first } else { 1.0 };
    let (x_min, x_max) = if first.is_finite() { (first - span * 0.05, last + span * 0.05) } else { (0.0, 1.0) };
    // The training step of the selected group, marked on both plots.
    let chosen = open.selection.group.and_then(|g| open.run.groups.train_step[g.index()]).map(|s| axis.x(s));
    let mark = |plot: &mut PlotUi<'_>| {
        if let Some(x) = chosen {
            plot.vline(VLine::new("selected step", x).color(theme::SELECTED));
        }
    };
    title_key_ui(
        ui,
        "Outcomes",
        &[
            ("mean reward (wide)", theme::category(0)),
            ("success rate (dashed)", theme::category(1)),
            ("zero-variance groups", theme::category(3)),
        ],
        chosen.is_some(),
    );
    steps_plot("overview_outcomes", open.instance, &axis).height(height).include_x(x_min).include_x(x_max).show(
        ui,
        |plot| {
            // Mean reward and success rate coincide for 0/1 rewards: the wide line under the dashed one.
            series_ui(plot, "mean reward", series(&|s| s.mean_reward), theme::category(0), false, 3.0);
            series_ui(plot, "success rate", series(&|s| s.success_rate), theme::category(1), true, 1.5);
            series_ui(plot, "zero-variance groups", series(&|s| s.zero_variance_share), theme::category(3), false, 1.5);
            mark(plot);
        },
    );
    title_key_ui(
        ui,
        "Credit magnitude (mean solid, std dashed)",
        &[("|A|", theme::category(1)), ("|B|", theme::category(4))],
        chosen.is_some(),
    );
    steps_plot("overview_credit", open.instance, &axis).height(height).include_x(x_min).include_x(x_max).show(
        ui,
        |plot| {
            for (slot, name, color) in [(0, "A", 1), (1, "B", 4)] {
                let color = theme::category(color);
                series_ui(plot, &format!("mean |{name}|"), series(&|s| s.abs_credit[slot].0), color, false, 2.0);
                series_ui(plot, &format!("std |{name}|"), series(&|s| s.abs_credit[slot].1), color, true, 1.5);
            }
            mark(plot);
        },
    );
    title_key_ui(
        ui,
        "Signal budget: rollouts that teach nothing",
        &[
            ("in zero-variance groups", theme::category(3)),
            ("truncated", theme::category(5)),
            ("no credit under A (dashed)", theme::category(1)),
            ("no credit under B (dashed)", theme::category(4)),
        ],
        chosen.is_some(),
    );
    steps_plot("overview_budget", open.instance, &axis)
        .height(height)
        .y_axis_label("share of rollouts")
        .include_x(x_min)
        .include_x(x_max)
        .include_y(0.0)
        .show(ui, |plot| {
            series_ui(
                plot,
                "in zero-variance groups",
                series(&|s| s.zero_variance_rollouts),
                theme::category(3),
                false,
                2.0,
            );
            series_ui(plot, "truncated", series(&|s| s.truncated_share), theme::category(5), false, 1.5);
            series_ui(plot, "no credit under A", series(&|s| s.uncredited_share[0]), theme::category(1), true, 1.5);
            series_ui(plot, "no credit under B", series(&|s| s.uncredited_share[1]), theme::category(4), true, 1.5);
            mark(plot);
        });
    credit_share_ui(ui, open.instance, stats, height, (&axis, x_min, x_max), chosen);
}

/// Where each scheme's |credit| goes, per training step: one line per kind of step, A solid, B
/// dashed.
fn credit_share_ui(
    ui: &mut egui::Ui,
    run: u64,
    stats: &[TrainStepStats],
    height: f32,
    (axis, x_min, x_max): (&StepAxis, f64, f64),
    chosen: Option<f64>,
) {
    let series = |f: &dyn Fn(&TrainStepStats) -> f64| -> Vec<[f64; 2]> {
        stats.iter().map(|s| [axis.x(s.train_step), f(s)]).filter(|p| p[1].is_finite()).collect()
    };
    let mark = |plot: &mut PlotUi<'_>| {
        if let Some(x) = chosen {
            plot.vline(VLine::new("selected step", x).color(theme::SELECTED));
        }
    };
    let title = "Where each scheme's |credit| goes (share of the step's total; A solid, B dashed)";
    let kinds: std::collections::BTreeSet<&String> =
        stats.iter().flat_map(|s| s.credit_share.iter().flat_map(|m| m.keys())).collect();
    let keys: Vec<(&str, egui::Color32)> =
        kinds.iter().enumerate().map(|(i, k)| (k.as_str(), share_color(i, k))).collect();
    title_key_ui(ui, title, &keys, chosen.is_some());
    steps_plot("overview_credit_share", run, axis)
        .height(height)
        .y_axis_label("share of |credit|")
        .include_x(x_min)
        .include_x(x_max)
        .include_y(0.0)
        .show(ui, |plot| {
            for (i, kind) in kinds.iter().enumerate() {
                let color = share_color(i, kind);
                for (slot, dashed) in [(0usize, false), (1, true)] {
                    let name = format!("{} {kind}", if slot == 0 { "A" } else { "B" });
                    let points = series(&|s| s.credit_share[slot].get(*kind).copied().unwrap_or(f64::NAN));
                    series_ui(plot, &name, points, color, dashed, 1.5);
                }
            }
            mark(plot);
        });
}

/// A slider over the training steps at which the selected group's task recurs.
fn same_prompt_ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    let run = &ctx.open.run;
    let tasks = &ctx.open.facets.recurring_tasks;
    if tasks.is_empty() {
        // Not in meeting mode, where the plots need the line.
        if !ctx.state.meeting_mode {
            ui.label(egui::RichText::new("No task recurs across training steps").color(theme::MUTED));
        }
        return;
    }
    let selected = ctx.open.selection.group;
    let task = selected
        .map(|g| run.label(run.groups.task[g.index()]).to_owned())
        .filter(|t| tasks.contains_key(t))
        .or_else(|| tasks.keys().next().cloned());
    let Some(task) = task else { return };
    let Some(groups) = tasks.get(&task) else { return };
    let mut index = selected.and_then(|g| groups.iter().position(|&x| x == g)).unwrap_or(0);
    ui.horizontal(|ui| {
        ui.label(format!("same prompt across steps: {task}"));
        let slider =
            egui::Slider::new(&mut index, 0..=groups.len() - 1).text("training step").custom_formatter(|v, _| {
                let g = groups[(v as usize).min(groups.len() - 1)];
                format!("step {}", run.groups.train_step[g.index()].unwrap_or(0))
            });
        if ui.add(slider).changed() {
            ctx.commands.push(Command::SelectGroup(groups[index]));
        }
        let g = groups[index];
        let rewards: Vec<String> =
            run.groups.members(g).iter().map(|&t| format_value(run.trajectories.reward[t.index()])).collect();
        ui.label(egui::RichText::new(format!("rewards {}", rewards.join(" "))).color(theme::MUTED));
    });
}

/// One series as a line with a marker at each training step (a run of one step still shows it).
fn series_ui(plot: &mut PlotUi<'_>, name: &str, points: Vec<[f64; 2]>, color: egui::Color32, dashed: bool, width: f32) {
    let mut line = Line::new(name, PlotPoints::from(points.clone())).color(color).width(width);
    if dashed {
        line = line.style(egui_plot::LineStyle::dashed_loose());
    }
    plot.line(line);
    plot.points(Points::new(name, PlotPoints::from(points)).color(color).radius(2.5));
}

/// A plot's key above it: each series' name in its color, and the selected step's mark.
fn key_ui(ui: &mut egui::Ui, series: &[(&str, egui::Color32)], marked: bool) {
    crate::ui::widgets::series_key_ui(ui, series, marked.then_some(("selected group's step", theme::SELECTED)));
}

/// A plot's title and key on one line (wrapped between items): the plot keeps the height.
fn title_key_ui(ui: &mut egui::Ui, title: &str, series: &[(&str, egui::Color32)], marked: bool) {
    ui.horizontal_wrapped(|ui| {
        crate::ui::widgets::whole(ui, egui::RichText::new(title).strong());
        crate::ui::widgets::key_items(ui, series, marked.then_some(("selected group's step", theme::SELECTED)));
    });
}

/// The whole partitioned run, every training step from its manifest (no Parquet read), the steps
/// open shaded.
fn whole_run_ui(ui: &mut egui::Ui, run: u64, meta: &crate::model::RunMeta) {
    let steps = &meta.all_steps;
    ui.label(format!("Whole run: {} training steps, from the dataset's manifest (the open steps shaded)", steps.len()));
    key_ui(ui, &[("mean reward", theme::category(0)), ("success rate (dashed)", theme::category(1))], false);
    let series = |f: &dyn Fn(&crate::model::StepOutcome) -> f64| -> Vec<[f64; 2]> {
        steps.iter().map(|s| [s.train_step as f64, f(s)]).filter(|p| p[1].is_finite()).collect()
    };
    let (reward, success) = (series(&|s| s.mean_reward), series(&|s| s.success_rate));
    let (bottom, top) =
        reward.iter().chain(&success).fold((0.0_f64, 1.0_f64), |(lo, hi), p| (lo.min(p[1]), hi.max(p[1])));
    steps_plot("overview_whole_run", run, &StepAxis::default()).height(140.0).include_y(0.0).show(ui, |plot| {
        if let Some(window) = meta.step_window {
            let (lo, hi) = (window.open.0 as f64 - 0.5, window.open.1 as f64 + 0.5);
            let corners = vec![[lo, bottom], [hi, bottom], [hi, top], [lo, top]];
            let band = egui_plot::Polygon::new("open steps", PlotPoints::from(corners))
                .fill_color(theme::SELECTED.gamma_multiply(0.25))
                .stroke(egui::Stroke::NONE);
            plot.polygon(band);
        }
        series_ui(plot, "mean reward", reward, theme::category(0), false, 2.0);
        series_ui(plot, "success rate", success, theme::category(1), true, 1.5);
    });
}

/// The colour of the `i`-th kind of the credit-share chart: success and failure in the colours
/// they have everywhere else, roles and the rest by their order.
fn share_color(i: usize, kind: &str) -> egui::Color32 {
    match kind {
        "successful rollouts" => theme::SUCCESS,
        "failed rollouts" => theme::FAILURE,
        _ => theme::category(i),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn failed_rollouts_are_drawn_in_the_failure_colour() {
        // "failed rollouts" sorts first, where the first category colour (green) would be.
        assert_eq!(super::share_color(0, "failed rollouts"), super::theme::FAILURE);
        assert_eq!(super::share_color(1, "successful rollouts"), super::theme::SUCCESS);
        assert_eq!(super::share_color(2, "progress"), super::theme::category(2));
    }
}

pub use crate::ui::widgets::tick_label;

#[cfg(test)]
mod axis_tests {
    #[test]
    fn uneven_steps_are_placed_by_rank_and_even_ones_by_number() {
        let comb = super::StepAxis::of((1..=30).chain([300]));
        assert_eq!((comb.x(1), comb.x(30), comb.x(300)), (0.0, 29.0, 30.0));
        assert_eq!((comb.label(30.0), comb.label(29.5)), ("300".to_owned(), String::new()));
        for even in [super::StepAxis::of((10..=120).step_by(10)), super::StepAxis::of([1, 2, 4, 8, 16])] {
            assert!(even.ranks.is_none());
            assert_eq!(even.x(40), 40.0);
        }
    }
}

#[cfg(test)]
mod tick_tests {
    #[test]
    fn marks_a_fine_spacing_apart_read_apart() {
        let labels: Vec<String> = [0.12, 0.16, 0.2, 0.24].iter().map(|&v| super::tick_label(v, 0.04)).collect();
        assert_eq!(labels, ["0.12", "0.16", "0.20", "0.24"]);
        assert_eq!(super::tick_label(0.4, 0.2), "0.4");
        assert_eq!(super::tick_label(25.0, 5.0), "25");
        assert_eq!(super::tick_label(-0.0000001, 0.008), "0.000");
    }
}

/// The run-health alarms (`analysis::health`, as `vantage health` prints them) in one strip: a
/// button per alarm naming its training step and value (or how many steps raised it and the worst),
/// its messages on hover; a click walks the groups behind it in the Group view.
fn alarms_ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    let open = &*ctx.open;
    let key = open.cache_key();
    let id = egui::Id::unique("overview_alarms");
    type Cached = ((u64, u64), Arc<Vec<crate::analysis::health::Alarm>>);
    let cached = ui.data(|d| d.get_temp::<Cached>(id)).filter(|(k, _)| *k == key);
    let alarms = if let Some((_, alarms)) = cached {
        alarms
    } else {
        let thresholds = crate::analysis::health::Thresholds::default();
        // A run whose texts stay in its log or dataset is not read whole here (the UI's thread;
        // on the web every text column would be fetched): its text alarms are `vantage health`'s.
        // The baseline findings have a strip of their own (`forensics::strip_ui`): none are
        // computed here, so the health strip has no baseline alarm.
        let none = crate::analysis::forensics::Forensics::default();
        let texts = open.run.text.holds_every_text();
        let alarms = Arc::new(crate::analysis::health::alarms_with_findings(&open.run, &thresholds, texts, &none));
        ui.data_mut(|d| d.insert_temp(id, (key, Arc::clone(&alarms))));
        alarms
    };
    if alarms.is_empty() {
        ui.label(egui::RichText::new("Health: no alarm").color(theme::MUTED))
            .on_hover_text("the run-health alarms of docs/HEALTH.md, as `vantage health` prints them");
    } else {
        ui.label(egui::RichText::new(format!("Health: {} alarm(s)", alarms.len())).color(theme::WARNING).strong());
    }
    // One button per alarm, not per training step (a run of 31 steps with one alarm each would
    // be a wall): its steps and its worst value; a click walks the groups behind it.
    let mut by_name: Vec<(&str, Vec<&crate::analysis::health::Alarm>)> = Vec::new();
    for alarm in alarms.iter() {
        match by_name.iter_mut().find(|(name, _)| *name == alarm.name) {
            Some((_, list)) => list.push(alarm),
            None => by_name.push((alarm.name, vec![alarm])),
        }
    }
    for (name, list) in by_name {
        let value = |a: &crate::analysis::health::Alarm| {
            if a.name == "length_hacking" { format!("ρ {:.2}", a.value) } else { format!("{:.0}%", a.value * 100.0) }
        };
        let step =
            |a: &crate::analysis::health::Alarm| a.train_step.map_or_else(|| "run".to_owned(), |s| format!("step {s}"));
        // The first step with the largest value.
        let worst =
            list.iter().copied().reduce(|best, a| if a.value > best.value { a } else { best }).unwrap_or(list[0]);
        let text = match list.as_slice() {
            [one] => format!("{} · {} · {}", name.replace('_', " "), step(one), value(one)),
            _ => format!(
                "{} · {} · worst {} ({})",
                name.replace('_', " "),
                crate::ui::widgets::count(list.len(), "step"),
                value(worst),
                step(worst)
            ),
        };
        let mut groups: Vec<crate::model::GroupId> = Vec::new();
        for g in list.iter().flat_map(|a| a.groups.iter().copied()) {
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
        let mut hover: Vec<String> = list.iter().take(6).map(|a| a.message.clone()).collect();
        if list.len() > 6 {
            hover.push(format!("… and {} more", list.len() - 6));
        }
        hover.push(format!(
            "click to walk its {} (previous and next in the Group view)",
            crate::ui::widgets::count(groups.len(), "group")
        ));
        let button = ui.small_button(egui::RichText::new(text).color(theme::WARNING)).on_hover_text(hover.join("\n"));
        if button.clicked() && !groups.is_empty() {
            ctx.commands.push(Command::WalkGroups { what: format!("{} alarm", name.replace('_', " ")), groups });
        }
    }
    if !open.run.text.holds_every_text() {
        ui.label(egui::RichText::new("(text alarms: vantage health)").color(theme::MUTED)).on_hover_text(
            "empty, repetitive and undecodable rollouts and length hacking read every rollout's text, \
             which this run keeps in its log or dataset: `vantage health` computes them",
        );
    }
}
