//! Analysis: derived, cacheable views of a run: summaries, heatmap grids, tree layout, scheme
//! comparison and the exported credit table. Pure functions, no egui, no I/O.

pub mod audit;
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

/// `n` things of a kind, in words: `1 step`, `2 steps`, `3 trajectories` (`what` singular).
pub fn count(n: usize, what: &str) -> String {
    match (n, what.strip_suffix('y')) {
        (1, _) => format!("1 {what}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        _ => format!("{n} {what}s"),
    }
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
