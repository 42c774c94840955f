//! Run overview over training steps: mean reward, success rate, share of zero-variance groups, mean
//! |credit| and its std under A and B; and, when a task recurs, a slider that walks the same prompt
//! across training steps.

use egui_plot::{Legend, Line, Plot, PlotPoints};

use std::sync::Arc;

use crate::analysis::overview::{TrainStepStats, per_train_step};
use crate::app::Command;
use crate::ui::widgets::format_value;
use crate::ui::{ViewCtx, theme};

/// Draws the overview.
pub fn ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    let open = &*ctx.open;
    let key = (open.run.meta.name.clone(), open.credit[0].generation, open.credit[1].generation);
    let id = egui::Id::unique("overview_cache");
    let cached =
        ui.data(|d| d.get_temp::<((String, u64, u64), Arc<Vec<TrainStepStats>>)>(id)).filter(|(k, _)| *k == key);
    let stats = if let Some((_, stats)) = cached {
        stats
    } else {
        let stats = Arc::new(per_train_step(&open.run, [open.credit[0].step(), open.credit[1].step()]));
        ui.data_mut(|d| d.insert_temp(id, (key, Arc::clone(&stats))));
        stats
    };
    ui.label(egui::RichText::new(format!("{} training step(s)", stats.len())).strong());
    let series = |f: &dyn Fn(&TrainStepStats) -> f64| -> Vec<[f64; 2]> {
        stats.iter().map(|s| [s.train_step as f64, f(s)]).filter(|p| p[1].is_finite()).collect()
    };
    let height = (ui.available_height() / 2.0 - 60.0).max(160.0);
    ui.label("Outcomes");
    Plot::new("overview_outcomes").legend(Legend::default()).height(height).x_axis_label("training step").show(
        ui,
        |plot| {
            plot.line(Line::new("mean reward", PlotPoints::from(series(&|s| s.mean_reward))).color(theme::category(0)));
            plot.line(
                Line::new("success rate", PlotPoints::from(series(&|s| s.success_rate))).color(theme::category(1)),
            );
            plot.line(
                Line::new("zero-variance groups", PlotPoints::from(series(&|s| s.zero_variance_share)))
                    .color(theme::category(3)),
            );
        },
    );
    ui.label("Credit magnitude");
    Plot::new("overview_credit").legend(Legend::default()).height(height).x_axis_label("training step").show(
        ui,
        |plot| {
            for (slot, name, color) in [(0, "A", 1), (1, "B", 4)] {
                plot.line(
                    Line::new(format!("mean |{name}|"), PlotPoints::from(series(&|s| s.abs_credit[slot].0)))
                        .color(theme::category(color)),
                );
                plot.line(
                    Line::new(format!("std |{name}|"), PlotPoints::from(series(&|s| s.abs_credit[slot].1)))
                        .color(theme::category(color))
                        .style(egui_plot::LineStyle::dashed_loose()),
                );
            }
        },
    );
    same_prompt_ui(ui, ctx);
}

/// A slider over the training steps at which the selected group's task recurs.
fn same_prompt_ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    let run = &ctx.open.run;
    let tasks = &ctx.open.facets.recurring_tasks;
    if tasks.is_empty() {
        ui.label(egui::RichText::new("No task recurs across training steps").color(theme::MUTED));
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
