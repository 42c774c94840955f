//! Token view: the selected rollout's tokens colored by token credit under A, policy logprob,
//! entropy, or the weight its loss gets under a loss-aggregation mode (the length bias Dr.GRPO is
//! about). One text layout per rollout; hover a token for its numbers.

use std::sync::Arc;

use crate::app::state::TokenColor;
use crate::credit::loss_agg::{MODES, weights};
use crate::model::Run;
use crate::ui::theme::ValueColors;
use crate::ui::widgets::{format_value, legend_ui};
use crate::ui::{ViewCtx, theme};

/// Loss-aggregation weights of every token of the run under `mode` (cached per run and mode).
fn loss_weights(ui: &egui::Ui, run: &Run, mode: &str) -> Arc<Vec<f32>> {
    // Keyed on the run's revision and size too: a followed or still-loading run keeps its name
    // while it grows, and weights of an older revision would be too short for it.
    let id = egui::Id::unique(("loss_weights", &run.meta.name, run.meta.revision, run.tokens.len, mode));
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
    let mode_id = egui::Id::unique("loss_mode");
    let mut mode: usize = ui.data(|d| d.get_temp(mode_id)).unwrap_or(0);
    ui.horizontal(|ui| {
        ui.label("color by");
        for (color, label) in [
            (TokenColor::Credit, "credit A"),
            (TokenColor::Logprob, "logprob"),
            (TokenColor::Entropy, "entropy"),
            (TokenColor::LossWeight, "loss weight"),
        ] {
            ui.selectable_value(&mut ctx.state.token_color, color, label);
        }
        if ctx.state.token_color == TokenColor::LossWeight {
            let combo = egui::ComboBox::from_id_salt("loss_mode").selected_text(MODES[mode]).show_ui(ui, |ui| {
                for (i, m) in MODES.iter().enumerate() {
                    ui.selectable_value(&mut mode, i, *m);
                }
            });
            crate::ui::widgets::name(&combo.response, "loss aggregation mode");
        }
    });
    ui.data_mut(|d| d.insert_temp(mode_id, mode));
    let range = run.trajectories.token_range(t);
    let tk = &run.tokens;
    let column: Option<Vec<f32>> = match ctx.state.token_color {
        TokenColor::Credit => {
            ctx.open.credit[0].credit().and_then(|c| c.token.as_ref()).map(|v| v[range.clone()].to_vec())
        }
        TokenColor::Logprob => tk.logprob.as_ref().map(|v| v[range.clone()].to_vec()),
        TokenColor::Entropy => tk.entropy.as_ref().map(|v| v[range.clone()].to_vec()),
        TokenColor::LossWeight => Some(loss_weights(ui, run, MODES[mode])[range.clone()].to_vec()),
    };
    let Some(values) = column else {
        ui.label(match ctx.state.token_color {
            TokenColor::Credit => "Scheme A gives no token credit on this run (it is step-level here)",
            _ => "This run does not log that token array",
        });
        return;
    };
    let (lo, hi) = values
        .iter()
        .filter(|v| v.is_finite())
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
    let range_v = if lo <= hi { (lo, hi) } else { (0.0, 0.0) };
    let colors = if ctx.state.token_color == TokenColor::Credit {
        ValueColors::credit(range_v)
    } else {
        ValueColors::field(range_v)
    };
    legend_ui(ui, &colors, "");
    let mut job = egui::text::LayoutJob::default();
    let font = egui::FontId::monospace(13.0);
    for (i, &v) in values.iter().enumerate() {
        let p = range.start + i;
        let piece = tk.text.as_ref().map_or_else(|| format!("·{i}"), |text| run.text(text[p]).into_owned());
        let policy = tk.mask.as_ref().is_none_or(|m| m[p]);
        let background = if policy { colors.color(v) } else { theme::MISSING };
        let text_color = if policy { theme::TOKEN_TEXT } else { theme::MUTED };
        job.append(
            &piece,
            0.0,
            egui::TextFormat { font_id: font.clone(), color: text_color, background, ..Default::default() },
        );
    }
    job.wrap.max_width = ui.available_width();
    ui.label(format!("{} tokens · {}", values.len(), run.trajectory_key(t)));
    egui::ScrollArea::vertical().id_salt("tokens_scroll").show(ui, |ui| {
        ui.label(job).on_hover_text(format!("range {} … {}", format_value(range_v.0), format_value(range_v.1)));
    });
}
