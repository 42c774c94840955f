//! Analysis: derived, cacheable views of a run: summaries, heatmap grids, tree layout, scheme
//! comparison and the exported credit table. Pure functions, no egui, no I/O.

pub mod audit;
pub mod behaviour;
pub mod compare;
pub mod diff;
pub mod export;
pub mod forensics;
pub mod health;
pub mod heatmap;
pub mod labels;
pub mod overview;
pub mod runs;
pub mod step_credit;
pub mod summary;
pub mod tables;
pub mod tree_layout;

pub use summary::{RunSummary, is_zero_variance};

pub use crate::model::count;

/// `text` in at most `limit` characters, cut after its last whole word that fits (mid-word only
/// when its first word alone is longer), with "…" when anything was cut.
pub fn cut_at_word(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_owned();
    }
    let head: String = text.chars().take(limit.saturating_sub(1)).collect();
    // The last space of the head, when the cut falls inside a word.
    let next = text.chars().nth(limit.saturating_sub(1)).unwrap_or(' ');
    let kept = if next.is_whitespace() {
        head.trim_end()
    } else {
        head.rfind(char::is_whitespace).map_or(head.as_str(), |at| head[..at].trim_end())
    };
    let kept = if kept.is_empty() { head.as_str() } else { kept };
    format!("{kept}…")
}

/// A path as the app shows it: under the home folder as `~/…` (a machine's absolute path says
/// little on a projector, and less in a screenshot shared afterwards).
pub fn shown_path(path: &str) -> String {
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() && home != "/" => match path.strip_prefix(home.trim_end_matches('/')) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("~{rest}"),
            _ => path.to_owned(),
        },
        _ => path.to_owned(),
    }
}

#[cfg(test)]
mod words_tests {
    #[test]
    fn a_text_is_cut_between_words() {
        let title = "GRPO plus a PRM bonus weighted by the judge's confidence";
        assert_eq!(super::cut_at_word(title, 24), "GRPO plus a PRM bonus…");
        assert_eq!(super::cut_at_word(title, 100), title);
        assert_eq!(super::cut_at_word("supercalifragilistic", 8), "superca…");
        assert_eq!(super::cut_at_word("ab cd", 3), "ab…");
    }

    #[test]
    fn a_path_under_home_is_shown_from_the_tilde() {
        let Ok(home) = std::env::var("HOME") else { return };
        if home.is_empty() || home == "/" {
            return;
        }
        let home = home.trim_end_matches('/');
        assert_eq!(super::shown_path(&format!("{home}/vantage-exports/a.png")), "~/vantage-exports/a.png");
        assert_eq!(super::shown_path(&format!("{home}x/a.png")), format!("{home}x/a.png"), "not a folder of home");
        assert_eq!(super::shown_path("/srv/runs/a.jsonl"), "/srv/runs/a.jsonl");
    }
}
