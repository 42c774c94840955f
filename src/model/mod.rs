//! The data model: runs, groups, a node arena with parent links, trajectories and tokens.
//!
//! Everything is columnar. A [`Run`] holds struct-of-arrays tables indexed by `u32` newtypes
//! ([`NodeId`], [`TrajectoryId`], [`GroupId`]); labels (kinds, roles, state keys, ids) are interned
//! as [`Sym`]s; all text lives in one [`TextArena`]; a missing number is `f32::NAN`.
//!
//! Every step is a node whose `parent` is the previous step (or `NONE` under the group's prompt).
//! A linear trajectory is a chain; tree rollouts share prefix nodes, so one node can lie on many
//! trajectories. A trajectory is a root-to-leaf path with an outcome; its steps are the nodes on its
//! path, root first. Parents always precede children in the arena.
//!
//! Nothing here touches egui, the filesystem or threads.

mod builder;
pub mod columns;
mod groups;
mod ids;
mod intern;
pub mod labels;
mod nodes;
mod run;
mod slots;
mod text;
mod tokens;
mod trajectories;
mod warning;

pub use builder::{NewGroup, RunBuilder};
pub use columns::Rollouts;
pub use groups::{Groups, Trees};
pub use ids::{GroupId, NodeId, Sym, TextId, TrajectoryId, TreeId};
pub use intern::Interner;
pub use nodes::{
    Children, FLAG_FIRST_ERROR, FLAG_FIRST_ERROR_LABELLED, FLAG_INVALID_ACTION, FLAG_UNSELECTED, McStats, NewStep,
    Nodes,
};
pub use run::{Run, RunMeta, StepOutcome, StepWindow};
pub use slots::StateSlots;
pub use text::{
    BytesSource, GrowingSource, RawWindow, TextArena, TextPart, TextSource, UNREADABLE, decode_escape, decode_raw,
    truncate,
};
pub use tokens::{NewTokens, Tokens};
pub use trajectories::{Outcome, PathCodes, Trajectories};
pub use warning::Warning;

/// `n` things of a kind, in words: `1 step`, `2 steps`, `3 trajectories` (`what` singular).
pub fn count(n: usize, what: &str) -> String {
    match (n, what.strip_suffix('y')) {
        (1, _) => format!("1 {what}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        _ => format!("{n} {what}s"),
    }
}

/// The last part of a path as text (`runs/exp42/` is `exp42`), `/` or `\` apart, a trailing one
/// left out; the whole text when it has no part.
pub fn last_name(path: &str) -> &str {
    let trimmed = path.trim_end_matches(['/', '\\']);
    trimmed.rsplit(['/', '\\']).next().filter(|p| !p.is_empty()).unwrap_or(path)
}

#[cfg(test)]
mod name_tests {
    #[test]
    fn the_last_name_of_a_path() {
        assert_eq!(super::last_name("runs/exp42/"), "exp42");
        assert_eq!(super::last_name("C:\\runs\\a.jsonl"), "a.jsonl");
        assert_eq!(super::last_name("a.jsonl"), "a.jsonl");
        assert_eq!(super::last_name("/"), "/");
    }
}
