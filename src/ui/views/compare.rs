//! Compare view: scheme A against scheme B on the same steps. Scatter of A vs B per step (colored
//! by role or outcome), histograms of both, Spearman rank correlation, mean credit per role, and the
//! tables of steps where they disagree in sign, named by what that means; each row selects its step.

use std::hash::{Hash as _, Hasher as _};
use std::sync::Arc;

use egui_plot::{Bar, BarChart, HLine, MarkerShape, Points, VLine};

use crate::analysis::compare::{Comparison, Disagreement, is_success};
use crate::app::{Command, OpenRun};
use crate::ui::widgets::{format_credit, format_value, role_index};
use crate::ui::{ViewCtx, theme};

/// At most this many points in the scatter (a deterministic stride over the steps beyond it).
const MAX_POINTS: usize = 50_000;
/// Rows listed per disagreement table.
const MAX_ROWS: usize = 200;

fn comparison(ui: &egui::Ui, open: &OpenRun) -> Option<Arc<Comparison>> {
    let (a, b) = (open.credit[0].step()?, open.credit[1].step()?);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (open.cache_key(), open.credit[0].generation, open.credit[1].generation).hash(&mut h);
    let key = h.finish();
    let id = egui::Id::unique("comparison_cache");
    if let Some((k, c)) = ui.data(|d| d.get_temp::<(u64, Arc<Comparison>)>(id))
        && k == key
    {
        return Some(c);
    }
    let c = Arc::new(Comparison::of(&open.run, a, b));
    ui.data_mut(|d| d.insert_temp(id, (key, Arc::clone(&c))));
    Some(c)
}

/// Draws the comparison.
pub fn ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    let open = &*ctx.open;
    ui.label(
        egui::RichText::new(format!("A {}   vs   B {}", open.credit[0].shown_name(), open.credit[1].shown_name()))
            .strong(),
    );
    let Some(c) = comparison(ui, open) else {
        for slot in 0..2 {
            if let Some(err) = open.credit[slot].error() {
                ui.label(egui::RichText::new(err).color(theme::ERROR));
            }
        }
        return;
    };
    ui.label(format!(
        "{} with both · Spearman ρ = {} · signs differ on {:.1}%",
        crate::ui::widgets::count(c.num_paired, "step"),
        format_value(c.spearman as f32),
        c.sign_disagreement * 100.0
    ))
    .on_hover_text(format!(
        "values within {} (A) and {} (B) of 0 count as 0: {} of each scheme's largest |value|",
        format_value(c.sign_tolerance[0]),
        format_value(c.sign_tolerance[1]),
        crate::analysis::compare::SIGN_TOLERANCE
    ));
    // The scatter and the histograms fit whole in what the view shows at first (above the
    // meeting strip at 1280×720 too), up to 320 points high.
    let plots_height = (ui.available_height() - 16.0).clamp(180.0, 320.0);
    let meeting = ctx.state.meeting_mode;
    // Per opened run: a run opens at the top, not where an earlier session's run was scrolled to.
    egui::ScrollArea::vertical().id_salt(("compare_scroll", open.instance)).show(ui, |ui| {
        ui.horizontal(|ui| {
            let width = (ui.available_width() / 2.0 - 8.0).max(200.0);
            ui.allocate_ui(egui::vec2(width, plots_height), |ui| ui.vertical(|ui| scatter_ui(ui, open, meeting)));
            ui.allocate_ui(egui::vec2(width, plots_height), |ui| ui.vertical(|ui| histograms_ui(ui, open)));
        });
        ui.separator();
        ui.label(egui::RichText::new("Mean credit per role").strong());
        egui::Grid::new("per_role").striped(true).num_columns(4).show(ui, |ui| {
            for h in ["role", "steps", "mean A", "mean B"] {
                ui.label(egui::RichText::new(h).color(theme::MUTED));
            }
            ui.end_row();
            // Rounding noise of a mean (−2.346e-9 of a credit of ±2) reads 0.
            let (la, lb) = (open.credit[0].largest(), open.credit[1].largest());
            for (role, (n, a, b)) in &c.per_role {
                ui.label(if role.is_empty() { "(unlabelled)" } else { role });
                ui.label(n.to_string());
                ui.label(format_credit(*a as f32, la));
                ui.label(format_credit(*b as f32, lb));
                ui.end_row();
            }
        });
        by_label_ui(ui, open);
        triage_fit_ui(ui, &c);
        length_ui(ui, open);
        most_different_ui(ui, ctx.commands, open, &c, [&ctx.state.scheme_a.scheme_id, &ctx.state.scheme_b.scheme_id]);
        groups_ui(ui, ctx.commands, open, &c);
        ui.separator();
        ui.label(egui::RichText::new("Where A and B disagree in sign").strong());
        for kind in Disagreement::ALL {
            let rows = c.disagreements.get(&kind).map_or(&[][..], Vec::as_slice);
            disagreement_table_ui(ui, ctx.commands, open, kind, rows);
        }
    });
}

/// The comparison split by the run's labels (docs/LABELS.md): per label, and per word of a label
/// that takes words, the steps that carry it and what A and B give them, beside the steps with no
/// label; the numbers `vantage compare --by-label` prints.
fn by_label_ui(ui: &mut egui::Ui, open: &OpenRun) {
    ui.separator();
    ui.label(egui::RichText::new("Credit by label").strong());
    if open.run.meta.labels.names.is_empty() {
        ui.label(
            egui::RichText::new("No labels yet: press L on a step to label it (or `vantage label RUN --add NAME …`)")
                .color(theme::MUTED),
        );
        return;
    }
    let (Some(a), Some(b)) = (open.credit[0].step(), open.credit[1].step()) else { return };
    let key = (open.cache_key(), open.credit[0].generation, open.credit[1].generation, open.labels_revision);
    let id = egui::Id::unique("by_label_cache");
    type Cached = (((u64, u64), u64, u64, u64), Arc<Vec<crate::analysis::labels::Split>>);
    let rows = if let Some((_, rows)) = ui.data(|d| d.get_temp::<Cached>(id)).filter(|(k, _)| *k == key) {
        rows
    } else {
        let rows = Arc::new(crate::analysis::labels::split(&open.run, &open.run.meta.labels, a, b));
        ui.data_mut(|d| d.insert_temp(id, (key, Arc::clone(&rows))));
        rows
    };
    let (la, lb) = (open.credit[0].largest(), open.credit[1].largest());
    egui::Grid::new("by_label").striped(true).num_columns(8).show(ui, |ui| {
        for h in ["label", "steps", "rollouts", "mean A", "mean B", "mean |A|", "mean |B|", "signs differ"] {
            ui.label(egui::RichText::new(h).color(theme::MUTED));
        }
        ui.end_row();
        for r in rows.iter() {
            let name = match (&r.label, &r.word) {
                (Some(label), Some(word)) => format!("{label}={word}"),
                (Some(label), None) => label.clone(),
                _ => "(no label)".to_owned(),
            };
            let color = if r.label.is_some() { theme::LABEL } else { theme::MUTED };
            ui.label(egui::RichText::new(name).color(color));
            ui.label(r.steps.to_string());
            ui.label(r.trajectories.to_string());
            ui.label(format_credit(r.a.mean as f32, la));
            ui.label(format_credit(r.b.mean as f32, lb));
            ui.label(format_credit(r.a.mean_abs as f32, la));
            ui.label(format_credit(r.b.mean_abs as f32, lb));
            ui.label(if r.sign_disagreement.is_nan() {
                "—".to_owned()
            } else {
                format!("{:.0}%", r.sign_disagreement * 100.0)
            });
            ui.end_row();
        }
    });
    for note in &open.label_notes {
        ui.label(egui::RichText::new(note).color(theme::WARNING));
    }
}

/// The TRIAGE constants each scheme implies: per role, the mean of (credit − outcome advantage).
fn triage_fit_ui(ui: &mut egui::Ui, c: &Comparison) {
    if c.role_fit[1].is_empty() {
        return;
    }
    ui.separator();
    ui.label(egui::RichText::new("Role constants each scheme implies (TRIAGE fit)").strong());
    ui.label(
        egui::RichText::new("per role, the mean of (credit − GRPO outcome advantage): the projection TRIAGE describes")
            .color(theme::MUTED),
    );
    egui::Grid::new("triage_fit").striped(true).num_columns(5).show(ui, |ui| {
        for h in ["role", "steps", "implied by A", "implied by B", "TRIAGE default"] {
            ui.label(egui::RichText::new(h).color(theme::MUTED));
        }
        ui.end_row();
        for (role, &(b_const, n)) in &c.role_fit[1] {
            ui.label(role);
            ui.label(n.to_string());
            ui.label(c.role_fit[0].get(role).map_or_else(|| "—".to_owned(), |(v, _)| format_value(*v as f32)));
            ui.label(format_value(b_const as f32));
            ui.label(format_value(crate::credit::schemes::triage::default_constant(role) as f32));
            ui.end_row();
        }
    });
}

fn scatter_ui(ui: &mut egui::Ui, open: &OpenRun, meeting: bool) {
    let (Some(a), Some(b)) = (open.credit[0].step(), open.credit[1].step()) else { return };
    let run = &open.run;
    let tr = &run.trajectories;
    let has_roles = run.nodes.role.iter().any(|r| r.is_some());
    let stride = (a.len() / MAX_POINTS).max(1);
    // Series by role (or by outcome when there are no roles).
    let mut series: std::collections::BTreeMap<(usize, String), Vec<[f64; 2]>> = Default::default();
    for t in tr.ids() {
        let ok = is_success(run, t);
        for p in tr.path_range(t).filter(|p| p % stride == 0) {
            let (x, y) = (a[p], b[p]);
            if !(x.is_finite() && y.is_finite()) {
                continue;
            }
            let key = if has_roles {
                let sym = run.nodes.role[tr.path_nodes[p].index()];
                let name = if sym.is_none() { "unlabelled" } else { run.label(sym) };
                (if sym.is_none() { 99 } else { role_index(name, sym.index()) }, name.to_owned())
            } else if ok {
                (0, "success".to_owned())
            } else {
                (3, "failure".to_owned())
            };
            series.entry(key).or_default().push([f64::from(x), f64::from(y)]);
        }
    }
    // Many steps share a value (every step of a rollout under an outcome scheme): a small
    // deterministic jitter and translucent points show how many lie on each spot.
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for point in series.values().flatten() {
        for axis in 0..2 {
            lo[axis] = lo[axis].min(point[axis]);
            hi[axis] = hi[axis].max(point[axis]);
        }
    }
    // An axis whose credit is one value (0 everywhere) is not jittered: a line, not a cloud.
    let spread = |axis: usize| if hi[axis] > lo[axis] { hi[axis] - lo[axis] } else { 0.0 };
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut jitter = |axis: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        ((seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.012 * spread(axis)
    };
    let total: usize = series.values().map(Vec::len).sum();
    let jittered = match (hi[0] > lo[0], hi[1] > lo[1]) {
        (true, true) => "jittered by up to 0.6% of each axis",
        (true, false) => "jittered by up to 0.6% of the A axis (every B value the same)",
        (false, true) => "jittered by up to 0.6% of the B axis (every A value the same)",
        (false, false) => "not jittered (every value the same)",
    };
    let color_of = |index: usize| if index == 99 { theme::MUTED } else { theme::category(index) };
    let key: Vec<(String, egui::Color32)> =
        series.iter().map(|((index, name), points)| (format!("{name} ({})", points.len()), color_of(*index))).collect();
    // The selected step, where it lies (not jittered), so a speaker can point at it.
    let selected = open.selection.position.and_then(|p| {
        let (x, y) = (*a.get(p)?, *b.get(p)?);
        (x.is_finite() && y.is_finite()).then_some([f64::from(x), f64::from(y)])
    });
    let marked = match selected {
        Some([x, y]) => format!(
            "selected step (ringed): A {} · B {}",
            crate::ui::widgets::format_value(x as f32),
            crate::ui::widgets::format_value(y as f32)
        ),
        None => "selected step: none, or no credit under A or B".to_owned(),
    };
    // The key, the selected step and how the points are jittered share a line (wrapped between
    // items): the plot keeps the height meeting mode has little of.
    ui.horizontal_wrapped(|ui| {
        crate::ui::widgets::key_items(ui, &key, None);
        crate::ui::widgets::whole(ui, egui::RichText::new(marked).color(theme::SELECTED));
        // Not in meeting mode, where the line would wrap to a third row of the plot's height.
        if !meeting {
            crate::ui::widgets::whole(
                ui,
                egui::RichText::new(format!("{total} steps, {jittered}")).color(theme::MUTED),
            );
        }
    });
    crate::ui::widgets::page_plot("scatter_ab", open.instance).x_axis_label("credit A").y_axis_label("credit B").show(
        ui,
        |plot| {
            for ((index, name), points) in series {
                let color = color_of(index);
                let points: Vec<[f64; 2]> = points.iter().map(|p| [p[0] + jitter(0), p[1] + jitter(1)]).collect();
                plot.points(Points::new(name, points).color(color.gamma_multiply(0.45)).radius(2.5));
            }
            if let Some([x, y]) = selected {
                plot.hline(HLine::new("selected step", y).color(theme::SELECTED.gamma_multiply(0.6)));
                plot.vline(VLine::new("selected step", x).color(theme::SELECTED.gamma_multiply(0.6)));
                let ring = Points::new("selected step", vec![[x, y]]).filled(false).radius(7.0).color(theme::SELECTED);
                plot.points(ring.shape(MarkerShape::Circle));
            }
        },
    );
}

/// The key of a plot of A against B, in the colours the plots draw them.
fn ab_key_ui(ui: &mut egui::Ui) {
    crate::ui::widgets::series_key_ui(ui, &[("A", theme::category(1)), ("B", theme::category(4))], None);
}

fn histograms_ui(ui: &mut egui::Ui, open: &OpenRun) {
    let (Some(a), Some(b)) = (open.credit[0].step(), open.credit[1].step()) else { return };
    let finite = |v: &[f32]| v.iter().copied().filter(|x| x.is_finite()).collect::<Vec<f32>>();
    let (a, b) = (finite(a), finite(b));
    let lo = a.iter().chain(&b).copied().fold(f32::INFINITY, f32::min);
    let hi = a.iter().chain(&b).copied().fold(f32::NEG_INFINITY, f32::max);
    if lo > hi {
        return;
    }
    let bins = 40;
    let width = ((hi - lo) / bins as f32).max(1e-6);
    let histogram = |values: &[f32]| {
        let mut counts = vec![0u32; bins];
        for &v in values {
            counts[(((v - lo) / width) as usize).min(bins - 1)] += 1;
        }
        counts
            .iter()
            .enumerate()
            .map(|(i, &c)| Bar::new(f64::from(lo + (i as f32 + 0.5) * width), f64::from(c)).width(f64::from(width)))
            .collect::<Vec<Bar>>()
    };
    ab_key_ui(ui);
    crate::ui::widgets::page_plot("histograms_ab", open.instance).x_axis_label("credit").show(ui, |plot| {
        plot.bar_chart(BarChart::new("A", histogram(&a)).color(theme::category(1)));
        plot.bar_chart(BarChart::new("B", histogram(&b)).color(theme::category(4)));
    });
}

/// Credit against length: each rollout's mean step credit under A and B against its length
/// (tokens, or steps) and its number of turns, with Spearman's ρ, so a length bias shows.
fn length_ui(ui: &mut egui::Ui, open: &OpenRun) {
    use crate::analysis::compare::{credit_by_length, length_correlation};
    let (Some(a), Some(b)) = (open.credit[0].step(), open.credit[1].step()) else { return };
    let run = &open.run;
    let (pa, pb) = (credit_by_length(run, a), credit_by_length(run, b));
    ui.separator();
    let unit = if run.tokens.len > 0 { "tokens" } else { "steps" };
    ui.label(
        egui::RichText::new(format!(
            "mean credit per rollout; Spearman ρ with length ({unit}): A {}, B {}; with turns: A {}, B {}",
            format_value(length_correlation(&pa, 0) as f32),
            format_value(length_correlation(&pb, 0) as f32),
            format_value(length_correlation(&pa, 1) as f32),
            format_value(length_correlation(&pb, 1) as f32),
        ))
        .color(theme::MUTED),
    );
    egui::CollapsingHeader::new("Credit against length").id_salt("credit_length").show(ui, |ui| {
        length_plots_ui(ui, open.instance, &pa, &pb, unit);
    });
}

/// The two plots of credit against length and against turns.
fn length_plots_ui(ui: &mut egui::Ui, run: u64, pa: &[[f64; 3]], pb: &[[f64; 3]], unit: &str) {
    ab_key_ui(ui);
    ui.horizontal(|ui| {
        let width = (ui.available_width() / 2.0 - 8.0).max(200.0);
        for (axis, label, id) in [(0usize, unit, "credit_length"), (1, "turns (steps)", "credit_turns")] {
            ui.allocate_ui(egui::vec2(width, 260.0), |ui| {
                crate::ui::widgets::page_plot(id, run).x_axis_label(label).y_axis_label("mean credit").show(
                    ui,
                    |plot| {
                        for (points, name, color) in [(pa, "A", theme::category(1)), (pb, "B", theme::category(4))] {
                            let xy: Vec<[f64; 2]> = points
                                .iter()
                                .step_by((points.len() / MAX_POINTS).max(1))
                                .map(|p| [p[axis], p[2]])
                                .collect();
                            plot.points(Points::new(name, xy).color(color.gamma_multiply(0.6)).radius(2.5));
                        }
                    },
                );
            });
        }
    });
}

/// The rollouts where A and B part most: each one's step with the largest |A − B|. Beside the
/// trainer's logged advantage (`logged`) this is the mismatch table: a filter, mask or preset the
/// recomputation does not share shows up here.
fn most_different_ui(
    ui: &mut egui::Ui,
    commands: &mut Vec<Command>,
    open: &OpenRun,
    c: &Comparison,
    schemes: [&str; 2],
) {
    let run = &open.run;
    let tr = &run.trajectories;
    ui.separator();
    let logged = schemes.iter().position(|s| *s == "logged");
    let title = if logged.is_some() { "Logged vs recomputed: where they differ" } else { "Where A and B differ most" };
    ui.label(egui::RichText::new(title).strong());
    let found = super::forensics::cached(ui, open);
    if let (Some(_), Some(audit)) = (logged, &open.audit) {
        ui.label(format!("Audit: {}", crate::analysis::audit::describe(&open.run, audit)));
        if let Some(note) = found.as_ref().and_then(|f| crate::analysis::forensics::audit_note(&open.run, audit, f)) {
            ui.label(egui::RichText::new(note).color(theme::WARNING));
        }
    }
    let tolerance = c.sign_tolerance[0].max(c.sign_tolerance[1]);
    ui.label(
        egui::RichText::new(format!(
            "{} differ by more than {}{}",
            if c.num_differing == c.num_paired && c.num_paired > 1 {
                format!("all {} steps", c.num_paired)
            } else {
                format!("{} of {}", c.num_differing, crate::ui::widgets::count(c.num_paired, "step"))
            },
            format_value(tolerance),
            match logged {
                Some(0) =>
                    "; A is the trainer's own advantage: a difference is a filter, mask or preset B does not share",
                Some(_) =>
                    "; B is the trainer's own advantage: a difference is a filter, mask or preset A does not share",
                None => "",
            }
        ))
        .color(theme::MUTED),
    );
    if c.zero_variance_noise > 0 {
        ui.label(
            egui::RichText::new(format!(
                "{} step(s) differ only by the rounding noise of a zero-variance group (every reward of the group \
                 equal; a float32 mean that misses the reward by an ulp, divided by ε): not a filter or mask, \
                 left out of the table",
                c.zero_variance_noise
            ))
            .color(theme::MUTED),
        );
    }
    egui::Grid::new("most_different").striped(true).num_columns(6).show(ui, |ui| {
        for h in ["rollout", "step", "A", "B", "A − B", "baseline"] {
            ui.label(egui::RichText::new(h).color(theme::MUTED));
        }
        ui.end_row();
        for row in c.most_different.iter().take(MAX_ROWS) {
            let Some(t) = tr.at_position(row.position) else { continue };
            let step = row.position - tr.path_range(t).start;
            let selected = open.selection.position == Some(row.position);
            if ui.selectable_label(selected, run.trajectory_key(t)).clicked() {
                commands.push(Command::SelectStep(row.position));
            }
            ui.label(format!("{}", step + 1));
            let largest = open.credit[0].largest().max(open.credit[1].largest());
            ui.label(format_credit(row.a, largest));
            ui.label(format_credit(row.b, largest));
            ui.label(format_credit(row.a - row.b, largest));
            // A flagged row (baseline forensics): the difference may be its, not the scheme's.
            let flag = found.as_ref().map(|f| super::forensics::flag_of(f, open, t)).unwrap_or_default();
            ui.label(egui::RichText::new(flag).color(theme::WARNING));
            ui.end_row();
        }
    });
}

/// The groups A and B disagree on most (most steps of differing sign, then the lowest rank
/// correlation); a click opens the group in the Group view.
fn groups_ui(ui: &mut egui::Ui, commands: &mut Vec<Command>, open: &OpenRun, c: &Comparison) {
    ui.separator();
    ui.label(egui::RichText::new("Groups where A and B disagree most").strong());
    ui.label(
        egui::RichText::new(
            "ranked by the share of steps whose signs differ, then by Spearman ρ; the groups one scheme gives no credit come last; click to open a group",
        )
        .color(theme::MUTED),
    );
    // The prompts are cut to the view's right edge (a long prompt would widen the view under the
    // scheme panel).
    let right = ui.max_rect().right();
    egui::Grid::new("groups_by_disagreement").striped(true).num_columns(5).show(ui, |ui| {
        for h in ["group", "steps", "signs differ", "ρ", "prompt"] {
            ui.label(egui::RichText::new(h).color(theme::MUTED));
        }
        ui.end_row();
        for g in c.groups.iter().take(MAX_ROWS) {
            let selected = open.selection.group == Some(g.group);
            if ui.selectable_label(selected, open.run.group_key(g.group)).clicked() {
                commands.push(Command::OpenGroup(g.group));
            }
            ui.label(g.steps.to_string());
            // A scheme silent on the group: its "disagreement" is that silence, said so.
            match g.silent {
                [true, true] => ui.label(egui::RichText::new("neither gives credit").color(theme::MUTED)),
                [true, false] => ui.label(egui::RichText::new("A gives no credit").color(theme::MUTED)),
                [false, true] => ui.label(egui::RichText::new("B gives no credit").color(theme::MUTED)),
                [false, false] => ui.label(format!("{:.0}%", g.sign_disagreement * 100.0)),
            };
            ui.label(format_value(g.spearman as f32));
            // Something readable beside a group key that is a hash (`prompt-94a41ed12d627c37`).
            let prompt = open.run.text(open.run.groups.prompt[g.group.index()]);
            let width = (right - ui.cursor().left() - 8.0).max(60.0);
            let text = super::run_browser::truncate(crate::analysis::runs::headline(&prompt), 60);
            ui.scope(|ui| {
                ui.set_max_width(width);
                ui.add(egui::Label::new(text).truncate());
            });
            ui.end_row();
        }
    });
}

fn disagreement_table_ui(
    ui: &mut egui::Ui,
    commands: &mut Vec<Command>,
    open: &OpenRun,
    kind: Disagreement,
    rows: &[crate::analysis::compare::DisagreeingStep],
) {
    // An empty kind is a line, not a header a saved state could leave open on nothing.
    if rows.is_empty() {
        ui.label(egui::RichText::new(format!("{} (0)", kind.label())).color(theme::MUTED));
        return;
    }
    let run = &open.run;
    let tr = &run.trajectories;
    egui::CollapsingHeader::new(format!("{} ({})", kind.label(), rows.len()))
        .id_salt(("disagreement", kind as u8))
        .default_open(true)
        .show(ui, |ui| {
            ui.label(egui::RichText::new(kind.explanation()).color(theme::MUTED));
            for row in rows.iter().take(MAX_ROWS) {
                let node = tr.path_nodes[row.position];
                let Some(trajectory) = tr.at_position(row.position) else { continue };
                let step = row.position - tr.path_range(trajectory).start;
                let role = run.label(run.nodes.role[node.index()]);
                let label = crate::ui::views::tree::node_label(run, node);
                let text = format!(
                    "{} · step {}{}{}  A {}  B {}",
                    run.trajectory_key(trajectory),
                    step + 1,
                    if role.is_empty() { String::new() } else { format!(" · {role}") },
                    if label.is_empty() { String::new() } else { format!(" · {label}") },
                    format_value(row.a),
                    format_value(row.b)
                );
                let selected = open.selection.position == Some(row.position);
                if ui.selectable_label(selected, text).clicked() {
                    commands.push(Command::SelectStep(row.position));
                }
            }
            if rows.len() > MAX_ROWS {
                ui.label(egui::RichText::new(format!("… {} more", rows.len() - MAX_ROWS)).color(theme::MUTED));
            }
        });
}
