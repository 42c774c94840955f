//! Scheme panel: pick scheme A and scheme B from the registry (unsupported ones greyed with their
//! reason), a trainer preset, and every parameter as a slider, toggle or choice generated from its
//! descriptor. A change updates the choice; the app recomputes before the next frame.

use crate::app::state::SchemeChoice;
use crate::credit::{Family, ParamKind, ParamSpec, SCHEMES, Scheme, Support};
use crate::ui::{ViewCtx, theme};

/// Draws the A and B pickers.
pub fn ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    ui.heading("Credit schemes");
    let support = &ctx.open.support;
    for (slot, label) in [(0usize, "A"), (1, "B")] {
        let choice = if slot == 0 { &mut ctx.state.scheme_a } else { &mut ctx.state.scheme_b };
        egui::CollapsingHeader::new(egui::RichText::new(format!("Scheme {label}")).strong())
            .id_salt(("scheme_slot", slot))
            .default_open(true)
            .show(ui, |ui| {
                scheme_combo_ui(ui, slot, choice, support);
                if let Ok(scheme) = crate::credit::scheme(&choice.scheme_id) {
                    preset_ui(ui, slot, choice, scheme);
                    params_ui(ui, slot, choice, scheme);
                }
                let credit = &ctx.open.credit[slot];
                if credit.is_computing() {
                    ui.horizontal(|ui| {
                        ui.spinner();
                        ui.label("recomputing…");
                    });
                }
                if let Some(err) = credit.error() {
                    ui.label(egui::RichText::new(err).color(theme::ERROR));
                }
                last_good_note_ui(ui, credit);
            });
    }
}

/// When a slot's latest computation failed and its last good credit is shown: which one.
pub fn last_good_note_ui(ui: &mut egui::Ui, credit: &crate::app::CreditSlot) {
    if credit.error().is_some()
        && let Some((key, _)) = &credit.last_good
    {
        ui.label(egui::RichText::new(format!("showing the last good credit: {key}")).color(theme::WARNING));
    }
}

fn family_label(family: Family) -> &'static str {
    match family {
        Family::Outcome => "outcome",
        Family::Token => "token",
        Family::Process => "process",
        Family::Role => "role",
        Family::Tree => "tree / MC",
        Family::Hybrid => "hybrid",
        Family::Control => "controls",
    }
}

fn scheme_combo_ui(
    ui: &mut egui::Ui,
    slot: usize,
    choice: &mut SchemeChoice,
    support: &[(&'static crate::credit::SchemeInfo, Support)],
) {
    let current = crate::credit::scheme(&choice.scheme_id).map_or(choice.scheme_id.as_str(), |s| s.info().display_name);
    let combo =
        egui::ComboBox::from_id_salt(("scheme_combo", slot)).selected_text(current).width(280.0).show_ui(ui, |ui| {
            let mut schemes: Vec<&dyn Scheme> = SCHEMES.to_vec();
            schemes.sort_by_key(|s| s.info().family);
            let mut last_family = None;
            for scheme in schemes {
                let info = scheme.info();
                if last_family != Some(info.family) {
                    ui.label(egui::RichText::new(family_label(info.family)).color(theme::MUTED).small());
                    last_family = Some(info.family);
                }
                let reason = support.iter().find(|(i, _)| i.id == info.id).and_then(|(_, s)| match s {
                    Support::Yes => None,
                    Support::No(reason) => Some(reason.clone()),
                });
                let selected = choice.scheme_id == info.id;
                let response = ui.add_enabled(reason.is_none(), egui::Button::selectable(selected, info.display_name));
                let response = match &reason {
                    Some(reason) => response.on_disabled_hover_text(format!("not available: {reason}")),
                    None => response.on_hover_text(info.citation),
                };
                if response.clicked() && !selected {
                    *choice = SchemeChoice::new(info.id);
                }
            }
        });
    crate::ui::widgets::name(&combo.response, if slot == 0 { "scheme A" } else { "scheme B" });
    if let Ok(scheme) = crate::credit::scheme(&choice.scheme_id) {
        let source = match scheme.info().source {
            crate::credit::SourceQuality::FromCode(at) => format!("from code: {at}"),
            crate::credit::SourceQuality::Approximate(why) => format!("approximate: {why}"),
        };
        ui.label(egui::RichText::new(source).small().color(theme::MUTED));
    }
}

fn preset_ui(ui: &mut egui::Ui, slot: usize, choice: &mut SchemeChoice, scheme: &dyn Scheme) {
    ui.horizontal(|ui| {
        if !scheme.presets().is_empty() {
            ui.label("preset");
            let shown = choice.preset.clone().unwrap_or_else(|| "defaults".to_owned());
            let combo = egui::ComboBox::from_id_salt(("preset", slot)).selected_text(shown).show_ui(ui, |ui| {
                if ui.selectable_label(choice.preset.is_none(), "defaults").clicked() {
                    choice.preset = None;
                    choice.values.clear();
                }
                for preset in scheme.presets() {
                    let selected = choice.preset.as_deref() == Some(preset.name);
                    if ui.selectable_label(selected, preset.name).on_hover_text(preset.doc).clicked() {
                        choice.preset = Some(preset.name.to_owned());
                        choice.values.clear();
                    }
                }
            });
            crate::ui::widgets::name(&combo.response, "preset");
        }
        let label = if choice.preset.is_some() { "Reset to preset" } else { "Reset to defaults" };
        if ui.add_enabled(!choice.values.is_empty(), egui::Button::new(label)).clicked() {
            choice.values.clear();
        }
    });
}

/// The value a parameter has under `choice`: its override, else the preset's, else the default.
pub fn current_value(choice: &SchemeChoice, scheme: &dyn Scheme, spec: &ParamSpec) -> String {
    if let Some((_, v)) = choice.values.iter().find(|(n, _)| n == spec.name) {
        return v.clone();
    }
    let preset = choice.preset.as_deref().and_then(|p| scheme.presets().iter().find(|x| x.name == p));
    preset
        .and_then(|p| p.values.iter().find(|(n, _)| *n == spec.name))
        .map_or_else(|| spec.default.to_owned(), |(_, v)| (*v).to_owned())
}

fn params_ui(ui: &mut egui::Ui, slot: usize, choice: &mut SchemeChoice, scheme: &dyn Scheme) {
    egui::Grid::new(("params", slot)).num_columns(2).striped(true).show(ui, |ui| {
        for spec in scheme.params() {
            let text = current_value(choice, scheme, spec);
            let label = ui.label(spec.name).on_hover_text(spec.doc);
            if let Some(new) = param_widget_ui(ui, (slot, spec.name), spec, &text, label.id) {
                choice.set(spec.name, new);
            }
            ui.end_row();
        }
    });
}

/// One parameter's widget, labelled by `label` (for screen readers and UI tests); the new value as
/// text when the user changed it.
fn param_widget_ui(
    ui: &mut egui::Ui,
    id: (usize, &str),
    spec: &ParamSpec,
    text: &str,
    label: egui::Id,
) -> Option<String> {
    match spec.kind {
        ParamKind::Float { min, max } => {
            let mut v: f64 = text.parse().unwrap_or(min);
            // Small defaults (ε = 1e-6) need a logarithmic slider to be reachable.
            let default: f64 = spec.default.parse().unwrap_or(0.0);
            let logarithmic = default > 0.0 && default < max * 1e-3;
            let slider = egui::Slider::new(&mut v, min..=max)
                .logarithmic(logarithmic)
                .custom_formatter(|v, _| format!("{}", (v * 1e9).round() / 1e9));
            ui.add(slider).labelled_by(label).on_hover_text(spec.doc).changed().then(|| format!("{v}"))
        }
        ParamKind::Int { min, max } => {
            let mut v: i64 = text.parse().unwrap_or(min);
            let slider = egui::Slider::new(&mut v, min..=max);
            ui.add(slider).labelled_by(label).on_hover_text(spec.doc).changed().then(|| format!("{v}"))
        }
        ParamKind::Bool => {
            let mut v = matches!(text, "true" | "1" | "on" | "yes");
            ui.checkbox(&mut v, "").labelled_by(label).on_hover_text(spec.doc).changed().then(|| v.to_string())
        }
        ParamKind::Choice(options) => {
            let mut changed = None;
            let combo = egui::ComboBox::from_id_salt(id).selected_text(text).show_ui(ui, |ui| {
                for &option in options {
                    if ui.selectable_label(option == text, option).clicked() && option != text {
                        changed = Some(option.to_owned());
                    }
                }
            });
            crate::ui::widgets::name(&combo.response, id.1);
            changed
        }
    }
}
