//! Scheme panel: pick scheme A and scheme B from the registry (unsupported ones greyed with their
//! reason), a trainer preset, and every parameter as a slider, toggle or choice generated from its
//! descriptor; or a credit formula (docs/EXPRESSIONS.md), typed in an editor that underlines what
//! is wrong as you type, its `$parameters` as sliders. A change updates the choice; the app
//! recomputes before the next frame.

use crate::app::Command;
use crate::app::state::{FORMULA_KEY, SavedFormula, SchemeChoice};
use crate::credit::expr::builtins::BUILTINS;
use crate::credit::expr::{Formula, FormulaError};
use crate::credit::{Family, ParamKind, ParamSpec, SCHEMES, Scheme, Support};
use crate::ui::{ViewCtx, theme};

/// Draws the A and B pickers.
pub fn ui(ui: &mut egui::Ui, ctx: &mut ViewCtx<'_>) {
    ui.heading("Credit schemes");
    let support = &ctx.open.support;
    for (slot, label) in [(0usize, "A"), (1, "B")] {
        let state = &mut *ctx.state;
        let choice = if slot == 0 { &mut state.scheme_a } else { &mut state.scheme_b };
        let saved = &state.formulas;
        egui::CollapsingHeader::new(egui::RichText::new(format!("Scheme {label}")).strong())
            .id_salt(("scheme_slot", slot))
            .default_open(true)
            .show(ui, |ui| {
                scheme_combo_ui(ui, slot, choice, support, saved);
                // The editor shows a formula's own error at its place; the slot's would repeat it.
                let mut shown_by_editor = false;
                if choice.formula().is_some() {
                    shown_by_editor = formula_ui(ui, slot, choice, &ctx.open.run, saved, ctx.commands);
                } else if let Ok(scheme) = crate::credit::scheme(&choice.scheme_id) {
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
                if let Some(err) = credit.error().filter(|_| !shown_by_editor) {
                    ui.label(egui::RichText::new(err).color(theme::ERROR));
                }
                last_good_note_ui(ui, credit);
            });
    }
}

/// Whether the scheme `info` describes matches `search` (every word of it, in any case, in its
/// id, name, family or citation).
pub fn scheme_matches(info: &crate::credit::SchemeInfo, search: &str) -> bool {
    let haystack =
        format!("{} {} {} {}", info.id, info.display_name, family_label(info.family), info.citation).to_lowercase();
    search.split_whitespace().all(|word| haystack.contains(&word.to_lowercase()))
}

/// When a slot's latest computation failed and its last good credit is shown: which one.
pub fn last_good_note_ui(ui: &mut egui::Ui, credit: &crate::app::CreditSlot) {
    if credit.error().is_some()
        && let Some((key, _)) = &credit.last_good
    {
        let name = crate::app::display_name(key);
        ui.label(egui::RichText::new(format!("showing the last good credit: {name}")).color(theme::WARNING));
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

/// What a custom choice is called: the built-in or saved formula it equals, else "Custom formula".
fn formula_label(text: &str, saved: &[SavedFormula]) -> String {
    if let Some(b) = BUILTINS.iter().find(|b| b.text == text) {
        return format!("formula: {}", b.name);
    }
    match saved.iter().find(|f| f.text == text) {
        Some(f) => format!("formula: {}", f.name),
        None => "Custom formula".to_owned(),
    }
}

fn scheme_combo_ui(
    ui: &mut egui::Ui,
    slot: usize,
    choice: &mut SchemeChoice,
    support: &[(&'static crate::credit::SchemeInfo, Support)],
    saved: &[SavedFormula],
) {
    let current = match choice.formula() {
        Some(text) => formula_label(text, saved),
        None => crate::credit::scheme(&choice.scheme_id)
            .map_or(choice.scheme_id.as_str(), |s| s.info().display_name)
            .to_owned(),
    };
    let focused_id = egui::Id::unique(("scheme_search_focused", slot));
    // The list stays open while its search box is used; choosing an entry closes it.
    let combo = egui::ComboBox::from_id_salt(("scheme_combo", slot))
        .selected_text(current)
        .width(280.0)
        .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside)
        .show_ui(ui, |ui| {
            let before = choice.clone();
            // A search over 35 schemes: id, name, family and citation, focused as the list opens
            // so typing filters at once.
            let search_id = egui::Id::unique(("scheme_search", slot));
            let mut search: String = ui.data(|d| d.get_temp(search_id)).unwrap_or_default();
            let field = ui.add(egui::TextEdit::singleline(&mut search).hint_text("search schemes"));
            crate::ui::widgets::name(&field, "search schemes");
            if ui.data(|d| d.get_temp::<bool>(focused_id)).is_none() {
                field.request_focus();
                ui.data_mut(|d| d.insert_temp(focused_id, true));
            }
            ui.data_mut(|d| d.insert_temp(search_id, search.clone()));
            // Your own formula, first (not under 35 schemes).
            custom_formula_ui(ui, choice, saved);
            let mut schemes: Vec<&dyn Scheme> =
                SCHEMES.iter().copied().filter(|s| scheme_matches(s.info(), &search)).collect();
            schemes.sort_by_key(|s| s.info().family);
            if schemes.is_empty() {
                ui.label(egui::RichText::new("no scheme matches").color(theme::MUTED));
            }
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
            formula_entries_ui(ui, choice, saved, &search);
            if *choice != before {
                ui.close();
            }
        });
    if combo.inner.is_none() {
        // Closed: the next opening focuses the search box again.
        ui.data_mut(|d| d.remove_temp::<bool>(focused_id));
    }
    crate::ui::widgets::name(&combo.response, if slot == 0 { "scheme A" } else { "scheme B" });
    if let Ok(scheme) = crate::credit::scheme(&choice.scheme_id) {
        let source = match scheme.info().source {
            crate::credit::SourceQuality::FromCode(at) => format!("from code: {at}"),
            crate::credit::SourceQuality::Approximate(why) => format!("approximate: {why}"),
        };
        ui.label(egui::RichText::new(source).small().color(theme::MUTED));
    }
}

/// "Custom formula": a new formula of your own, starting from the one shown (or GRPO's).
fn custom_formula_ui(ui: &mut egui::Ui, choice: &mut SchemeChoice, saved: &[SavedFormula]) {
    let current = choice.formula().map(str::to_owned);
    let custom = current.as_deref().is_some_and(|t| formula_label(t, saved) == "Custom formula");
    if ui
        .add(egui::Button::selectable(custom, "Custom formula"))
        .on_hover_text("write your own credit scheme (docs/EXPRESSIONS.md)")
        .clicked()
        && !custom
    {
        *choice = SchemeChoice::custom(current.as_deref().unwrap_or(crate::credit::expr::builtins::GRPO));
    }
}

/// The formulas in the scheme list that match `search`: the built-in schemes written as
/// formulas, and the saved ones.
fn formula_entries_ui(ui: &mut egui::Ui, choice: &mut SchemeChoice, saved: &[SavedFormula], search: &str) {
    let current = choice.formula().map(str::to_owned);
    let matches = |label: &str, hover: &str| {
        let haystack = format!("{label} {hover}").to_lowercase();
        search.split_whitespace().all(|word| haystack.contains(&word.to_lowercase()))
    };
    let entries: Vec<(String, &str, &str)> = BUILTINS
        .iter()
        .map(|b| (format!("formula: {}", b.name), b.text, b.title))
        .chain(saved.iter().map(|f| (format!("formula: {}", f.name), f.text.as_str(), "saved")))
        .filter(|(label, _, hover)| matches(label, hover))
        .collect();
    if !entries.is_empty() {
        ui.label(egui::RichText::new("formulas (docs/EXPRESSIONS.md)").color(theme::MUTED).small());
    }
    for (label, text, hover) in entries {
        let selected = current.as_deref() == Some(text);
        if ui.add(egui::Button::selectable(selected, label)).on_hover_text(hover).clicked() && !selected {
            *choice = SchemeChoice::custom(text);
        }
    }
}

/// The formula editor's memory: the text typed (valid or not), the formula last applied to the
/// choice (to notice when the choice changes from elsewhere: the list, a link), and the check of
/// the text typed.
#[derive(Clone, Default)]
struct Editor {
    text: String,
    applied: String,
    checked: Option<(String, Result<(), FormulaError>)>,
    name: String,
}

/// The editor of a custom choice: the text (what is wrong underlined as you type), the error, a
/// slider per `$parameter`, and saving under a name. Whether it shows an error of the formula the
/// choice holds (not only of text being typed).
fn formula_ui(
    ui: &mut egui::Ui,
    slot: usize,
    choice: &mut SchemeChoice,
    run: &crate::model::Run,
    saved: &[SavedFormula],
    commands: &mut Vec<Command>,
) -> bool {
    let id = egui::Id::unique(("formula_editor", slot));
    let current = choice.formula().unwrap_or("").to_owned();
    let mut editor: Editor = ui.data_mut(|d| d.get_temp(id)).unwrap_or_default();
    if editor.applied != current {
        editor.text.clone_from(&current);
        editor.applied.clone_from(&current);
    }
    // Checked against the run when the text changes (a check reads the run's columns).
    let check = |text: &str| (text.to_owned(), Formula::parse(text).and_then(|f| f.compile(run).map(|_| ())));
    if editor.checked.as_ref().is_none_or(|(text, _)| *text != editor.text) {
        editor.checked = Some(check(&editor.text));
    }
    let error = editor.checked.as_ref().and_then(|(_, r)| r.as_ref().err().cloned());
    let span = error.as_ref().map(|e| e.span.clone());
    let mut layouter = |ui: &egui::Ui, text: &dyn egui::TextBuffer, wrap_width: f32| {
        let job = highlighted(ui, text.as_str(), span.clone(), wrap_width);
        ui.fonts_mut(|f| f.layout_job(job))
    };
    let edit = egui::TextEdit::multiline(&mut editor.text)
        .code_editor()
        .desired_rows(3)
        .desired_width(f32::INFINITY)
        .layouter(&mut layouter);
    let response = ui.add(edit);
    crate::ui::widgets::name(&response, if slot == 0 { "formula A" } else { "formula B" });
    if response.changed() {
        let checked = check(&editor.text);
        if checked.1.is_ok() {
            choice.set(FORMULA_KEY, editor.text.clone());
            editor.applied.clone_from(&editor.text);
        }
        editor.checked = Some(checked);
    }
    if let Some(error) = editor.checked.as_ref().and_then(|(_, r)| r.as_ref().err()) {
        ui.label(egui::RichText::new(error.to_string()).color(theme::ERROR));
    }
    // Sliders for the parameters of the formula applied.
    if let Ok(formula) = Formula::parse(&editor.applied) {
        let mut moved = None;
        egui::Grid::new(("formula_params", slot)).num_columns(2).show(ui, |ui| {
            for param in formula.params() {
                let (low, high) = param.range.unwrap_or((param.value.min(0.0) * 2.0, (param.value * 2.0).max(1.0)));
                let mut value = param.value;
                let label = ui.label(format!("${}", param.name));
                let slider = egui::Slider::new(&mut value, low..=high)
                    .custom_formatter(|v, _| crate::credit::expr::format_number((v * 1e6).round() / 1e6));
                if ui.add(slider).labelled_by(label.id).changed() {
                    moved = formula.with_param(&param.name, (value * 1e6).round() / 1e6);
                }
                ui.end_row();
            }
        });
        if let Some(text) = moved {
            choice.set(FORMULA_KEY, text.clone());
            editor.text.clone_from(&text);
            editor.applied = text;
        }
    }
    ui.horizontal(|ui| {
        let name = egui::TextEdit::singleline(&mut editor.name).hint_text("name").desired_width(120.0);
        let name_response = ui.add(name);
        crate::ui::widgets::name(&name_response, if slot == 0 { "formula name A" } else { "formula name B" });
        let valid = !editor.name.is_empty()
            && editor.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && error.is_none();
        let save = ui.add_enabled(valid, egui::Button::new("Save formula"));
        if save
            .on_hover_text("keep it in the scheme list (and natively as NAME.vx, which `vantage schemes` lists)")
            .clicked()
        {
            commands.push(Command::SaveFormula { name: editor.name.clone(), text: editor.applied.clone() });
        }
        if let Some(f) = saved.iter().find(|f| f.text == editor.applied)
            && ui
                .button("Forget")
                .on_hover_text(format!("remove {} from the scheme list (and delete its .vx file)", f.name))
                .clicked()
        {
            commands.push(Command::DeleteFormula(f.name.clone()));
        }
    });
    let applied_error = editor.checked.as_ref().is_some_and(|(text, r)| r.is_err() && *text == editor.applied);
    ui.data_mut(|d| d.insert_temp(id, editor));
    applied_error
}

/// The formula's text in the code font, the part at fault underlined.
fn highlighted(
    ui: &egui::Ui,
    text: &str,
    fault: Option<std::ops::Range<usize>>,
    wrap_width: f32,
) -> egui::text::LayoutJob {
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let plain = egui::TextFormat::simple(font, ui.visuals().text_color());
    let mut job = egui::text::LayoutJob::default();
    job.wrap.max_width = wrap_width;
    let Some(fault) = fault.filter(|f| f.start <= text.len() && text.is_char_boundary(f.start)) else {
        job.append(text, 0.0, plain);
        return job;
    };
    // An error at the end (something missing) underlines the last character.
    let mut fault = fault.start..fault.end.min(text.len()).max(fault.start);
    if fault.is_empty() {
        let start = text[..fault.start].char_indices().next_back().map_or(0, |(i, _)| i);
        fault = start..fault.start.max(start);
    }
    let end = (fault.end..=text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
    let underlined =
        egui::TextFormat { underline: egui::Stroke::new(2.0, theme::ERROR), color: theme::ERROR, ..plain.clone() };
    job.append(&text[..fault.start], 0.0, plain.clone());
    job.append(&text[fault.start..end], 0.0, underlined);
    job.append(&text[end..], 0.0, plain);
    job
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
        ParamKind::Text => {
            // The text being typed lives in egui's memory until the user leaves the field or
            // presses Enter; only then is it applied (the credit is not recomputed on every key).
            let key = egui::Id::unique(("param text", id));
            let mut v = ui.data_mut(|d| d.get_temp::<String>(key)).unwrap_or_else(|| text.to_owned());
            let edit = egui::TextEdit::singleline(&mut v).desired_width(160.0);
            let response = ui.add(edit).labelled_by(label).on_hover_text(spec.doc);
            if response.lost_focus() {
                ui.data_mut(|d| d.remove::<String>(key));
                return (v != text).then_some(v);
            }
            if response.has_focus() {
                ui.data_mut(|d| d.insert_temp(key, v));
            }
            None
        }
    }
}
