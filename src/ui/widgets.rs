//! Small reusable widgets: the colormap legend, role colors, value formatting.

use crate::analysis::heatmap::HeatValue;
use crate::ui::theme::{self, ValueColors};

/// A plot's key as a row above it (a legend inside the plot covers points): each series' name in
/// its colour, then `marker` (a line the plot marks, such as the selected step) when given.
pub fn series_key_ui(
    ui: &mut egui::Ui,
    series: &[(impl AsRef<str>, egui::Color32)],
    marker: Option<(&str, egui::Color32)>,
) {
    ui.horizontal_wrapped(|ui| key_items(ui, series, marker));
}

/// [`series_key_ui`]'s items, in a row the caller lays out (beside a title, before a note).
pub fn key_items(
    ui: &mut egui::Ui,
    series: &[(impl AsRef<str>, egui::Color32)],
    marker: Option<(&str, egui::Color32)>,
) {
    for (name, color) in series {
        whole(ui, egui::RichText::new(format!("— {}", name.as_ref())).color(*color));
    }
    if let Some((text, color)) = marker {
        whole(ui, egui::RichText::new(format!("| {text}")).color(color));
    }
}

/// One item of a row that wraps between items, never inside one.
pub fn whole(ui: &mut egui::Ui, text: egui::RichText) {
    ui.add(egui::Label::new(text).wrap_mode(egui::TextWrapMode::Extend));
}

/// A horizontal legend: the colormap from `colors.lo` to `colors.hi` with its end values.
pub fn legend_ui(ui: &mut egui::Ui, colors: &ValueColors, label: &str) {
    ui.horizontal(|ui| {
        ui.label(egui::RichText::new(label).color(theme::MUTED));
        if colors.is_flat() {
            ui.label(if label == HeatValue::Difference.label() {
                "A and B agree everywhere (within rounding)"
            } else {
                "0 everywhere (no credit to color)"
            });
            return;
        }
        ui.label(format_value(colors.lo));
        let (rect, _) = ui.allocate_exact_size(egui::vec2(160.0, 14.0), egui::Sense::hover());
        let painter = ui.painter_at(rect);
        let steps = 32;
        for i in 0..steps {
            let t0 = i as f32 / steps as f32;
            let t1 = (i + 1) as f32 / steps as f32;
            let r = egui::Rect::from_min_max(
                egui::pos2(rect.left() + t0 * rect.width(), rect.top()),
                egui::pos2(rect.left() + t1 * rect.width(), rect.bottom()),
            );
            painter.rect_filled(r, 0.0, colors.map.at((t0 + t1) / 2.0));
        }
        ui.label(format_value(colors.hi));
    });
}

/// Index of a role label in the categorical palette: the four TRIAGE roles first.
pub fn role_index(role: &str, other_index: usize) -> usize {
    match role {
        "progress" => 0,
        "exploration" => 1,
        "infrastructure" => 2,
        "regression" => 3,
        _ => 4 + other_index,
    }
}

pub use crate::analysis::{count, shown_path};

/// A number with 4 significant digits (or "—" when missing).
pub fn format_value(v: f32) -> String {
    if !v.is_finite() {
        return "—".to_owned();
    }
    let a = v.abs();
    // Rounding noise of a zero (2.776e-17) is shown as 0, a whole number without decimals.
    if a < 1e-12 {
        return "0".to_owned();
    }
    if v.fract() == 0.0 && a < 1e7 {
        return format!("{v:.0}");
    }
    if !(1e-3..1e5).contains(&a) { format!("{v:.3e}") } else { format!("{v:.4}") }
}

/// Gives a widget an accessible name (screen readers, UI tests) when it shows none itself, as a
/// combo box showing only its current value.
pub fn name(response: &egui::Response, name: &str) {
    let name = name.to_owned();
    let enabled = response.enabled();
    response.widget_info(move || egui::WidgetInfo::labeled(egui::Role::ComboBox, enabled, name.clone()));
}

/// A picker of what a heatmap cell or tree node shows, named `name`.
pub fn heat_value_ui(
    ui: &mut egui::Ui,
    name: &str,
    value: &mut crate::analysis::heatmap::HeatValue,
    choices: &[crate::analysis::heatmap::HeatValue],
) {
    let combo = egui::ComboBox::from_id_salt(name).selected_text(value.label()).show_ui(ui, |ui| {
        for choice in choices {
            ui.selectable_value(value, choice.clone(), choice.label());
        }
    });
    self::name(&combo.response, name);
}

/// A credit beside another in fixed form, so the two read alike ("1.0000" beside "0.0000", not
/// beside "0"): four decimals (scientific below 0.001 and from 100000), rounding noise of a zero
/// (within a millionth of `largest`) as 0.0000, "—" when missing.
pub fn fixed_credit(v: f32, largest: f32) -> String {
    if !v.is_finite() {
        return "—".to_owned();
    }
    if v.abs() <= largest * 1e-6 || v == 0.0 {
        return "0.0000".to_owned();
    }
    if (1e-3..1e5).contains(&v.abs()) { format!("{v:.4}") } else { format!("{v:.3e}") }
}

/// `v` as [`format_value`] writes it, but 0 when it is within a millionth of `largest` (the
/// largest |value| of the credit it is one of): rounding noise is not data.
pub fn format_credit(v: f32, largest: f32) -> String {
    if v.is_finite() && v.abs() <= largest * 1e-6 { "0".to_owned() } else { format_value(v) }
}

/// A plot on a page that scrolls: the mouse wheel scrolls the page and never pans the plot;
/// Ctrl (⌘ on a Mac) with the wheel zooms it, dragging pans it and a double-click fits it again.
/// Its memory is under [`plot_id`]`(name, run)`: each opened run (`OpenRun::instance`) fits its
/// own plots, whatever an earlier run's were zoomed or panned to.
///
/// Its marks are labelled closer together than `egui_plot`'s default (y labels from 14 points apart,
/// x from 40), so a short plot in meeting mode still has a scale, not a lone "0".
pub fn page_plot(name: &'static str, run: u64) -> egui_plot::Plot<'static> {
    egui_plot::Plot::new(name)
        .id(plot_id(name, run))
        .allow_scroll(false)
        // Room for a row of marks and the axis's label under it, and for marks like "-0.25"
        // beside it (egui_plot's 14 points let them overlap or be cut at the window's edge).
        .custom_x_axes(vec![egui_plot::AxisHints::new_x().label_spacing(40.0..=60.0).min_thickness(30.0)])
        .custom_y_axes(vec![egui_plot::AxisHints::new_y().label_spacing(14.0..=22.0).min_thickness(40.0)])
        .x_grid_spacer(egui_plot::uniform_grid_spacer(|input| nice_steps(&input, 60.0 / 8.0)))
        .y_grid_spacer(egui_plot::uniform_grid_spacer(|input| nice_steps(&input, 22.0 / 8.0)))
        .x_axis_formatter(|mark, _| tick_label(mark.value, mark.step_size))
        .y_axis_formatter(|mark, _| tick_label(mark.value, mark.step_size))
}

/// A mark's label with as many decimals as the marks' spacing `step` needs, so that marks 0.04
/// apart read 0.12, 0.16, 0.20 (not 0.1, 0.2, 0.2).
pub fn tick_label(value: f64, step: f64) -> String {
    let decimals = if step > 0.0 && step.is_finite() { (-step.log10().floor()).max(0.0) as usize } else { 2 };
    let text = format!("{value:.decimals$}");
    // No "-0.00" at zero.
    if text.trim_start_matches('-').chars().all(|c| c == '0' || c == '.') {
        text.trim_start_matches('-').to_owned()
    } else {
        text
    }
}

/// The grid's three step sizes, nested (each a multiple of the last), from the 1, 2, 5 sequence:
/// the middle one the smallest whose marks are `label` times the thinnest lines' spacing apart
/// (`egui_plot` draws its lines from 8 points apart and labels them from 14 points on y, 40 on x,
/// fully from 22 and 60), so its marks are labelled. Powers of 10 alone leave a short plot with
/// one labelled mark (a range of ±0.9 has marks 0.1 apart, too close to label, or 1 apart, outside it).
pub fn nice_steps(input: &egui_plot::GridInput, label: f64) -> [f64; 3] {
    let base = input.base_step_size.abs().max(f64::MIN_POSITIVE) * label;
    let power = 10f64.powf(base.log10().floor());
    let m = base / power;
    let (m, below, above) = if m <= 1.0 + 1e-9 {
        (1.0, 5.0, 5.0)
    } else if m <= 2.0 + 1e-9 {
        (2.0, 2.0, 5.0)
    } else if m <= 5.0 + 1e-9 {
        (5.0, 5.0, 2.0)
    } else {
        (10.0, 5.0, 5.0)
    };
    let labelled = m * power;
    [labelled / below, labelled, labelled * above]
}

/// The id of the [`page_plot`] named `name` of the opened run `run` (where its bounds are kept).
pub fn plot_id(name: &str, run: u64) -> egui::Id {
    egui::Id::unique(("page plot", name, run))
}

/// A rollout's name within its group, short enough for a row label: its key without the group's
/// key in front (`s0-task0-r3` in group `s0-task0` is `r3`), else its whole key.
pub fn rollout_name(run: &crate::model::Run, t: crate::model::TrajectoryId) -> &str {
    let key = run.trajectory_key(t);
    let group = run.group_key(run.trajectories.group[t.index()]);
    match key.strip_prefix(group).map(|rest| rest.trim_start_matches(['/', '-', '_', ':', '.', '#', ' '])) {
        Some(rest) if !group.is_empty() && !rest.is_empty() => rest,
        _ => key,
    }
}

/// A group's name for a heading: its key; or, when the key is a hash (`prompt-94a41ed12d627c37`,
/// nothing a room can read), the start of its prompt in quotes with the key's start after it; or,
/// when the key holds the prompt itself (TRL's `step12/<chat-template prompt>`), the key's own part
/// and the prompt's start in quotes, so that the whole prompt is not printed twice (in the title
/// and under it).
pub fn group_title(run: &crate::model::Run, g: crate::model::GroupId) -> String {
    let key = run.group_key(g);
    let prompt = run.text(run.groups.prompt[g.index()]);
    let quoted = || {
        let headline = crate::analysis::runs::headline(&prompt);
        let line = headline.split_whitespace().collect::<Vec<_>>().join(" ");
        (!line.is_empty()).then(|| format!("\u{201c}{}\u{201d}", crate::analysis::cut_at_word(&line, 48)))
    };
    if let Some(own) = key_without_prompt(key, &prompt) {
        return match (own.is_empty(), quoted()) {
            (_, None) => key.to_owned(),
            (true, Some(q)) => q,
            (false, Some(q)) => format!("{own} · {q}"),
        };
    }
    if !is_hash_key(key) {
        return key.to_owned();
    }
    match quoted() {
        None => key.to_owned(),
        Some(q) => {
            // The prompt is the title; the hash only tells two groups of one prompt apart.
            let short: String = key.rsplit('/').next().unwrap_or(key).chars().take(16).collect();
            format!("{q} ({short}…)")
        }
    }
}

/// The part of a group's `key` before its `prompt`, when the key holds the whole prompt (TRL's
/// `step12/<chat-template prompt>` is `step12`); `None` when it does not.
pub fn key_without_prompt<'k>(key: &'k str, prompt: &str) -> Option<&'k str> {
    let body = prompt.trim();
    if body.chars().count() < 16 {
        return None;
    }
    let at = key.find(body)?;
    Some(key[..at].trim_end_matches(['/', ' ', ':', '-']))
}

/// Whether a key holds a hash: a part of 12 or more hexadecimal digits with letters and digits both.
pub fn is_hash_key(key: &str) -> bool {
    key.split(|c: char| !c.is_ascii_alphanumeric()).any(|part| {
        part.len() >= 12
            && part.bytes().all(|b| b.is_ascii_hexdigit())
            && part.bytes().any(|b| b.is_ascii_digit())
            && part.bytes().any(|b| b.is_ascii_alphabetic())
    })
}

/// `text` with each run's full name (a path or URL) put as its short name ([`short_run_names`]),
/// the longest first: notices name runs, not the machine's folders.
pub fn with_short_names(text: &str, full: &[String], short: &[String]) -> String {
    let mut pairs: Vec<(&String, &String)> = full.iter().zip(short).filter(|(f, s)| f != s).collect();
    pairs.sort_by_key(|(f, _)| std::cmp::Reverse(f.len()));
    pairs.iter().fold(text.to_owned(), |text, (f, s)| text.replace(f.as_str(), s))
}

/// Names for runs read from paths or URLs, short enough for a room: each name's last path
/// components, as few as tell it from the others (at least its file name).
pub fn short_run_names(names: &[String]) -> Vec<String> {
    let parts: Vec<Vec<&str>> =
        names.iter().map(|n| n.trim_end_matches('/').split(['/', '\\']).filter(|p| !p.is_empty()).collect()).collect();
    let suffix = |p: &[&str], k: usize| p[p.len().saturating_sub(k)..].join("/");
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let unique = (1..=p.len()).find(|&k| {
                let mine = suffix(p, k);
                parts.iter().enumerate().all(|(j, q)| j == i || suffix(q, k) != mine)
            });
            match unique {
                Some(k) => suffix(p, k),
                None => names[i].clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_say_one_thing_or_many() {
        assert_eq!(super::count(1, "step"), "1 step");
        assert_eq!(super::count(0, "step"), "0 steps");
        assert_eq!(super::count(96, "trajectory"), "96 trajectories");
        assert_eq!(super::count(1, "trajectory"), "1 trajectory");
    }

    #[test]
    fn a_hash_keyed_group_is_titled_by_its_prompt() {
        let log = "{\"vantage\": 1}\n{\"type\": \"group\", \"id\": \"train/step-1/prompt-94a41ed12d627c37\", \"prompt\": \"What is the capital of France?\"}\n{\"type\": \"trajectory\", \"id\": \"t\", \"group\": \"train/step-1/prompt-94a41ed12d627c37\", \"outcome\": {\"reward\": 1}, \"steps\": [{\"thought\": \"Paris\"}]}\n";
        let run = crate::load::load_bytes("t.jsonl", log.as_bytes(), &mut crate::load::LoadReport::new("t")).unwrap();
        let title = super::group_title(&run, crate::model::GroupId::from_index(0));
        assert!(title.starts_with("\u{201c}What is the capital of France?\u{201d}"), "{title}");
        assert!(title.ends_with("(prompt-94a41ed12…)"), "{title}");
    }

    #[test]
    fn a_hash_group_key_is_told_by_its_hex_part() {
        assert!(super::is_hash_key("train/step-1/prompt-94a41ed12d627c37"));
        assert!(!super::is_hash_key("s0-task0"));
        assert!(!super::is_hash_key("blackjack_gymnasium_agent/task-0"));
        assert!(!super::is_hash_key("run-123456789012"), "digits alone are a number");
        assert!(!super::is_hash_key("abcdefabcdefab"), "letters alone are a word");
    }

    #[test]
    fn rounding_noise_reads_as_zero_against_the_largest_credit() {
        assert_eq!(super::format_credit(-2.346e-9, 2.47), "0");
        assert_eq!(super::format_credit(-0.3536, 2.47), "-0.3536");
        assert_eq!(super::format_credit(2e-4, 1e-3), "2.000e-4", "small values of a small credit stay");
        assert_eq!(super::format_credit(f32::NAN, 1.0), "—");
    }

    #[test]
    fn notices_name_runs_by_their_short_names() {
        let full = ["/home/me/exp/a/rollouts.jsonl", "/home/me/exp/b/rollouts.jsonl"].map(str::to_owned);
        let short = super::short_run_names(&full);
        let text = "/home/me/exp/b/rollouts.jsonl:3: reward: missing; /home/me/exp/a/rollouts.jsonl: loaded";
        assert_eq!(
            super::with_short_names(text, &full, &short),
            "b/rollouts.jsonl:3: reward: missing; a/rollouts.jsonl: loaded"
        );
    }

    #[test]
    fn run_names_keep_the_last_components_that_tell_them_apart() {
        let names =
            ["/home/me/exp/a/rollouts.jsonl", "/home/me/exp/b/rollouts.jsonl", "/data/other.jsonl"].map(str::to_owned);
        assert_eq!(super::short_run_names(&names), ["a/rollouts.jsonl", "b/rollouts.jsonl", "other.jsonl"]);
        assert_eq!(super::short_run_names(&["https://host/runs/r1/".to_owned()]), ["r1"]);
        let same = ["/x/run.jsonl".to_owned(), "/x/run.jsonl".to_owned()];
        assert_eq!(super::short_run_names(&same), same, "names that cannot be told apart stay whole");
    }
}

/// The part of `text` shown folded: its first `lines` lines that are not blank and at most `chars`
/// characters (cut at a character boundary), or `None` when all of it fits.
pub fn fold(text: &str, lines: usize, chars: usize) -> Option<&str> {
    let mut seen = 0;
    let mut by_lines = text.len();
    let mut start = 0;
    for (i, _) in text.match_indices('\n') {
        if !text[start..i].trim().is_empty() {
            seen += 1;
            if seen == lines {
                by_lines = i;
                break;
            }
        }
        start = i + 1;
    }
    let by_chars = text.char_indices().nth(chars).map_or(text.len(), |(i, _)| i);
    let end = by_lines.min(by_chars);
    (end < text.len()).then(|| &text[..end])
}

/// A text that may be long (a system prompt, a tool's output) folded to its first `lines` lines
/// and `chars` characters, with a button that shows the rest ("show all 214 lines") and one that
/// folds it again; which way it is stays for the session under `id`.
pub fn folded_text(ui: &mut egui::Ui, id: egui::Id, text: &str, lines: usize, chars: usize) {
    let Some(head) = fold(text, lines, chars) else {
        ui.label(text);
        return;
    };
    let open = ui.data(|d| d.get_temp::<bool>(id)).unwrap_or(false);
    ui.label(if open { text } else { head.trim_end() });
    let total = text.lines().count();
    let more = if total > lines {
        format!("show all {} ({})", count(total, "line"), count(text.chars().count(), "character"))
    } else {
        format!("show all {}", count(text.chars().count(), "character"))
    };
    let button = if open { "fold".to_owned() } else { format!("… {more}") };
    if ui.small_button(button).clicked() {
        ui.data_mut(|d| d.insert_temp(id, !open));
    }
}

#[cfg(test)]
mod fold_tests {
    #[test]
    fn a_text_folds_at_its_non_blank_lines_and_characters() {
        let text = "You are opencode.\n\nIMPORTANT: never guess.\n\nIf the user asks\n- /help";
        assert_eq!(super::fold(text, 2, 480), Some("You are opencode.\n\nIMPORTANT: never guess."));
        assert_eq!(super::fold(text, 1, 8), Some("You are "));
        assert_eq!(super::fold(text, 9, 480), None);
        assert_eq!(super::fold("héllo", 1, 2), Some("hé"));
    }
}

#[cfg(test)]
mod nice_steps_tests {
    #[test]
    fn grid_steps_are_nested_and_the_middle_one_is_labelled() {
        let steps = |base| super::nice_steps(&egui_plot::GridInput { bounds: (0.0, 1.0), base_step_size: base }, 1.0);
        assert_eq!(steps(0.142), [0.1, 0.2, 1.0]);
        assert_eq!(steps(0.3), [0.1, 0.5, 1.0]);
        assert_eq!(steps(0.6), [0.2, 1.0, 5.0]);
        assert_eq!(steps(1.0), [0.2, 1.0, 5.0]);
        // A meeting-mode scatter of ±0.95 over 107 points: labelled 0.5 apart.
        let short =
            super::nice_steps(&egui_plot::GridInput { bounds: (-0.95, 0.95), base_step_size: 0.142 }, 22.0 / 8.0);
        assert_eq!(short[1], 0.5);
        for s in [steps(0.0012), steps(37.0), short] {
            for w in s.windows(2) {
                let ratio = w[1] / w[0];
                assert!((ratio - ratio.round()).abs() < 1e-9, "{s:?} nested");
            }
        }
    }
}
