//! Token view: the selected rollout's tokens colored by token credit under A or B (a step-level
//! scheme's step credit on each step's tokens), A − B, policy logprob,
//! entropy, or the weight its loss gets under a loss-aggregation mode (the length bias Dr.GRPO is
//! about). One text layout per rollout; hover a token for its numbers.

use std::sync::Arc;

use crate::app::state::TokenColor;
use crate::credit::params::declare::Choice as _;
use crate::credit::schemes::loss_agg::{LossAgg, weights};
use crate::model::Run;
use crate::ui::theme::ValueColors;
use crate::ui::widgets::{format_value, legend_ui};
use crate::ui::{ViewCtx, theme};

/// Loss-aggregation weights of every token of the run under `mode` (cached per run and mode).
fn loss_weights(ui: &egui::Ui, run: &Run, key: (u64, u64), mode: LossAgg) -> Arc<Vec<f32>> {
    // Keyed on the run's revision and size too: a followed or still-loading run keeps its name
    // while it grows, and weights of an older revision would be too short for it.
    let id = egui::Id::unique(("loss_weights", key, run.tokens.len, mode));
    if let Some(w) = ui.data(|d| d.get_temp::<Arc<Vec<f32>>>(id)) {
        return w;
    }
    let tk = &run.tokens;
    let mask: Option<Vec<f32>> = tk.mask.as_ref().map(|m| m.iter().map(|&b| f32::from(u8::from(b))).collect());
    let offsets: Vec<usize> = run.trajectories.token_offsets.iter().map(|&o| o as usize).collect();
    let w = Arc::new(weights(mask.as_deref(), &offsets, mode));
    ui.data_mut(|d| d.insert_temp(id, Arc::clone(&w)));
    w
}

/// Draws the token view.
pub fn ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    let run = &ctx.open.run;
    if run.tokens.len == 0 {
        ui.label("This run logs no tokens; the token view needs token arrays (see docs/FORMAT.md)");
        return;
    }
    let Some(t) = ctx.open.selection.trajectory else {
        ui.label("Select a rollout");
        return;
    };
    let mode = controls_ui(ui, &mut ctx.state.token_color);
    let run = &ctx.open.run;
    let range = run.trajectories.token_range(t);
    let tk = &run.tokens;
    let credit = |slot: usize| token_credit(run, ctx.open.credit[slot].credit(), t);
    let column: Option<Vec<f32>> = match ctx.state.token_color {
        TokenColor::Credit => credit(0),
        TokenColor::CreditB => credit(1),
        TokenColor::Difference => credit(0).zip(credit(1)).map(|(a, b)| a.iter().zip(&b).map(|(x, y)| x - y).collect()),
        TokenColor::Logprob => tk.logprob.as_ref().map(|v| v[range.clone()].to_vec()),
        TokenColor::Entropy => tk.entropy.as_ref().map(|v| v[range.clone()].to_vec()),
        TokenColor::LossWeight => {
            Some(loss_weights(ui, run, ctx.open.cache_key(), LossAgg::ALL[mode])[range.clone()].to_vec())
        }
    };
    let Some(values) = column else {
        ui.label(match ctx.state.token_color {
            TokenColor::Credit | TokenColor::CreditB | TokenColor::Difference => {
                "No credit on these tokens yet (a scheme still computing, or steps without token spans)"
            }
            _ => "This run does not log that token array",
        });
        return;
    };
    let (lo, hi) = values
        .iter()
        .filter(|v| v.is_finite())
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
    let range_v = if lo <= hi { (lo, hi) } else { (0.0, 0.0) };
    let colors = if matches!(ctx.state.token_color, TokenColor::Credit | TokenColor::CreditB | TokenColor::Difference) {
        ValueColors::credit(range_v)
    } else {
        ValueColors::field(range_v)
    };
    legend_ui(ui, &colors, "");
    let mut job = egui::text::LayoutJob::default();
    let font = egui::FontId::monospace(13.0);
    // Where each token's characters start in the laid-out text, to find the hovered token.
    let mut starts = Vec::with_capacity(values.len() + 1);
    let mut chars = 0usize;
    for (i, &v) in values.iter().enumerate() {
        let p = range.start + i;
        let piece = tk.text.as_ref().map_or_else(|| format!("·{i}"), |text| run.text(text[p]).into_owned());
        let policy = tk.mask.as_ref().is_none_or(|m| m[p]);
        let background = if policy { colors.color(v) } else { theme::MISSING };
        let text_color = if policy { readable_on(background) } else { theme::MUTED };
        starts.push(chars);
        chars += piece.chars().count();
        job.append(
            &piece,
            0.0,
            egui::TextFormat { font_id: font.clone(), color: text_color, background, ..Default::default() },
        );
    }
    job.wrap.max_width = ui.available_width();
    ui.label(format!("{} tokens · {}", values.len(), run.trajectory_key(t)));
    let what = color_label(ctx.state.token_color);
    egui::ScrollArea::vertical().id_salt("tokens_scroll").show(ui, |ui| {
        let (origin, galley, response) = egui::Label::new(job).sense(egui::Sense::hover()).layout_in_ui(ui);
        ui.painter().add(egui::epaint::TextShape::new(
            origin,
            std::sync::Arc::clone(&galley),
            ui.visuals().text_color(),
        ));
        let Some(pointer) = response.hover_pos() else { return };
        let at = galley.cursor_from_pos(pointer - origin).index.0;
        let i = starts.partition_point(|&s| s <= at).saturating_sub(1);
        let Some(&v) = values.get(i) else { return };
        let mut text = token_tooltip(run, range.start + i, &format!("token {i} of {}", values.len()), what, v);
        text.push_str(&format!("\nrange {} … {}", format_value(range_v.0), format_value(range_v.1)));
        response.on_hover_text_at_pointer(text);
    });
}

/// A hovered token's text and numbers: token `p` of the run, its value `v` of `what`.
fn token_tooltip(run: &Run, p: usize, place: &str, what: &str, v: f32) -> String {
    let tk = &run.tokens;
    let mut text = format!("{place}\n{what} = {}", format_value(v));
    if let Some(piece) = tk.text.as_ref().map(|text| run.text(text[p]).into_owned()) {
        text = format!("{piece:?}\n{text}");
    }
    for (name, column) in [("logprob", &tk.logprob), ("entropy", &tk.entropy), ("ref logprob", &tk.ref_logprob)] {
        if let Some(x) = column.as_ref().and_then(|c| c.get(p)) {
            text.push_str(&format!("\n{name} = {}", format_value(*x)));
        }
    }
    if tk.mask.as_ref().is_some_and(|m| !m[p]) {
        text.push_str("\nnot a policy token (masked)");
    }
    text
}

/// The color picker (and the loss-aggregation mode when coloring by loss weight); the mode's index.
fn controls_ui(ui: &mut egui::Ui, token_color: &mut TokenColor) -> usize {
    let mode_id = egui::Id::unique("loss_mode");
    let mut mode: usize = ui.data(|d| d.get_temp(mode_id)).unwrap_or(0);
    ui.horizontal(|ui| {
        ui.label("color by");
        for color in [
            TokenColor::Credit,
            TokenColor::CreditB,
            TokenColor::Difference,
            TokenColor::Logprob,
            TokenColor::Entropy,
            TokenColor::LossWeight,
        ] {
            ui.selectable_value(token_color, color, color_label(color));
        }
        if *token_color == TokenColor::LossWeight {
            let combo =
                egui::ComboBox::from_id_salt("loss_mode").selected_text(LossAgg::ALL[mode].name()).show_ui(ui, |ui| {
                    for (i, m) in LossAgg::NAMES.iter().enumerate() {
                        ui.selectable_value(&mut mode, i, *m);
                    }
                });
            crate::ui::widgets::name(&combo.response, "loss aggregation mode");
        }
    });
    ui.data_mut(|d| d.insert_temp(mode_id, mode));
    mode
}

/// What a token color shows.
fn color_label(color: TokenColor) -> &'static str {
    match color {
        TokenColor::Credit => "credit A",
        TokenColor::CreditB => "credit B",
        TokenColor::Difference => "A − B",
        TokenColor::Logprob => "logprob",
        TokenColor::Entropy => "entropy",
        TokenColor::LossWeight => "loss weight",
    }
}

/// Dark text on a light background, light text on a dark one.
pub fn readable_on(background: egui::Color32) -> egui::Color32 {
    let [r, g, b, _] = background.to_array();
    let luminance = 0.2126 * f32::from(r) + 0.7152 * f32::from(g) + 0.0722 * f32::from(b);
    if luminance > 140.0 { theme::TOKEN_TEXT } else { theme::TOKEN_TEXT_LIGHT }
}

/// Credit on each of trajectory `t`'s tokens: the scheme's token credit, or its step credit on
/// each step's token span (a step-level scheme); `None` when neither reaches a token.
fn token_credit(run: &Run, credit: Option<&crate::credit::Credit>, t: crate::model::TrajectoryId) -> Option<Vec<f32>> {
    let credit = credit?;
    let range = run.trajectories.token_range(t);
    if let Some(token) = credit.token.as_ref() {
        return token.get(range).map(<[f32]>::to_vec);
    }
    let mut out = vec![f32::NAN; range.len()];
    let mut any = false;
    let path = run.trajectories.path(t);
    for (k, &node) in path.iter().enumerate() {
        let Some([start, end]) = run.nodes.token_span(node) else { continue };
        let value = credit.step.get(run.trajectories.path_range(t).start + k).copied().unwrap_or(f32::NAN);
        for slot in out.iter_mut().take(end as usize).skip(start as usize) {
            *slot = value;
            any = true;
        }
    }
    any.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::readable_on;
    use crate::ui::theme;

    #[test]
    fn token_text_stays_readable_on_dark_and_light_colors() {
        assert_eq!(readable_on(theme::TOKEN_TEXT_LIGHT), theme::TOKEN_TEXT);
        assert_eq!(readable_on(theme::TOKEN_TEXT), theme::TOKEN_TEXT_LIGHT);
    }
}
