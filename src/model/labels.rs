//! Labels (docs/LABELS.md): a name, maybe a value, on a trajectory or on one step of it, from a
//! person, a file, an agent or a rule, with an optional note. They live beside a run, never in its
//! log; what a labels file holds is a list of [`Entry`]s in the order written, additions and
//! removals, which [`labels_of`] turns into the labels in force, and [`RunLabels::resolve`] puts on
//! a run's trajectories and path steps.

use std::collections::{BTreeMap, HashMap};

use super::{Run, TrajectoryId};

/// A label's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Present or not (`hack`).
    Flag,
    /// A word of a set (`severity=high`).
    Word(String),
    /// A number (`confidence=0.8`).
    Number(f64),
}

impl Value {
    /// `NAME=VALUE`'s value as text: a number when it reads as one, `true` a flag, else a word.
    pub fn parse(text: &str) -> Self {
        let text = text.trim();
        if text.is_empty() || text == "true" {
            return Self::Flag;
        }
        match text.parse::<f64>() {
            Ok(number) if number.is_finite() => Self::Number(number),
            _ => Self::Word(text.to_owned()),
        }
    }

    /// The value as a number: a flag 1, a number itself, a word `NaN`.
    pub fn number(&self) -> f64 {
        match self {
            Self::Flag => 1.0,
            Self::Number(number) => *number,
            Self::Word(_) => f64::NAN,
        }
    }

    /// The value as a table's cell: `true` for a flag, else as shown.
    pub fn cell(&self) -> String {
        match self {
            Self::Flag => "true".to_owned(),
            _ => self.shown(),
        }
    }

    /// The value as it is shown (`hack`, `severity=high`, `confidence=0.8`): empty for a flag.
    pub fn shown(&self) -> String {
        match self {
            Self::Flag => String::new(),
            Self::Word(word) => word.clone(),
            Self::Number(number) => number.to_string(),
        }
    }
}

/// Who or what made a label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceKind {
    /// A person, in the app, on the command line or from Python.
    Person,
    /// A file it was imported from (a grader's verdicts, a scanner's results).
    File,
    /// An agent, through `vantage mcp`.
    Agent,
    /// A rule: a formula that selected the steps.
    Rule,
}

impl SourceKind {
    /// Every kind, in the order the docs list them.
    pub const ALL: [Self; 4] = [Self::Person, Self::File, Self::Agent, Self::Rule];

    /// The kind's name in a labels file.
    pub fn name(self) -> &'static str {
        match self {
            Self::Person => "person",
            Self::File => "file",
            Self::Agent => "agent",
            Self::Rule => "rule",
        }
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// Who or what made a label: its kind and a name (a user, a file's name, an agent's name, the
/// formula).
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    /// What kind of source.
    pub kind: SourceKind,
    /// Which one.
    pub name: String,
}

/// What a label is on: a trajectory (its id in the run), or one step of it (from 0, along its
/// path).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// The trajectory's id.
    pub trajectory: String,
    /// The step along its path, from 0; `None`: the whole trajectory.
    pub step: Option<u32>,
}

/// One label.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    /// Its name (`hack`, `format_error`).
    pub name: String,
    /// Its value.
    pub value: Value,
    /// What it is on.
    pub target: Target,
    /// Who or what made it.
    pub source: Source,
    /// A note.
    pub note: Option<String>,
    /// When it was made (RFC 3339, UTC), when known.
    pub time: Option<String>,
}

/// One line of a labels file.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    /// A label added.
    Add(Label),
    /// The labels of this name on this target, added before, taken off.
    Remove {
        /// The name.
        name: String,
        /// The target.
        target: Target,
    },
}

/// Why a name is not a label's name, or `None` when it is one: 1 to 100 characters, no control
/// character, no `=` (which `NAME=VALUE` splits at), not blank at either end.
pub fn bad_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("a label needs a name")
    } else if name.chars().count() > 100 {
        Some("a label's name is at most 100 characters")
    } else if name.contains('=') {
        Some("a label's name has no `=` (NAME=VALUE sets a value)")
    } else if name.chars().any(char::is_control) {
        Some("a label's name has no control characters")
    } else if name.trim() != name {
        Some("a label's name does not begin or end with a space")
    } else {
        None
    }
}

/// The labels in force after `entries`, in the order added: a removal takes off every label of its
/// name on its target added before it.
pub fn labels_of(entries: impl IntoIterator<Item = Entry>) -> Vec<Label> {
    let mut labels: Vec<Option<Label>> = Vec::new();
    let mut at: HashMap<(String, Target), Vec<usize>> = HashMap::new();
    for entry in entries {
        match entry {
            Entry::Add(label) => {
                at.entry((label.name.clone(), label.target.clone())).or_default().push(labels.len());
                labels.push(Some(label));
            }
            Entry::Remove { name, target } => {
                for i in at.remove(&(name, target)).unwrap_or_default() {
                    labels[i] = None;
                }
            }
        }
    }
    labels.into_iter().flatten().collect()
}

/// Why `target` is not on `run` (no such trajectory, a step past its end), or its trajectory.
pub fn check_target(run: &Run, target: &Target) -> Result<TrajectoryId, String> {
    let Some(trajectory) = run.trajectory_by_key(&target.trajectory) else {
        return Err(format!("no trajectory {:?} in the run", target.trajectory));
    };
    let steps = run.trajectories.num_steps(trajectory);
    match target.step {
        Some(step) if step as usize >= steps => Err(format!(
            "step {step} is past the end of trajectory {:?}, which has {steps} step(s) (numbered from 0)",
            target.trajectory
        )),
        _ => Ok(trajectory),
    }
}

/// One label's name on a run: where it is, by trajectory and by path step.
#[derive(Clone, Debug, Default)]
pub struct Named {
    /// The name.
    pub name: String,
    /// Per trajectory: the value of a label on the whole trajectory (the last one added).
    pub trajectories: BTreeMap<TrajectoryId, Value>,
    /// Per path step (a position in the run's concatenated paths, as step credit is laid out): the
    /// value of a label on that step (the last one added).
    pub steps: BTreeMap<usize, Value>,
}

impl Named {
    /// The value at path position `position` of `trajectory`: the step's own label, else its
    /// trajectory's.
    pub fn at(&self, trajectory: TrajectoryId, position: usize) -> Option<&Value> {
        self.steps.get(&position).or_else(|| self.trajectories.get(&trajectory))
    }

    /// Whether trajectory `trajectory` carries the label, on itself or on one of its steps.
    pub fn on_trajectory(&self, run: &Run, trajectory: TrajectoryId) -> bool {
        self.trajectories.contains_key(&trajectory)
            || run.trajectories.path_range(trajectory).any(|p| self.steps.contains_key(&p))
    }

    /// Per path step of `run`: whether the step carries the label (its own, or its trajectory's).
    pub fn step_mask(&self, run: &Run) -> Vec<bool> {
        let mut mask = vec![false; run.num_path_steps()];
        for &trajectory in self.trajectories.keys() {
            for p in run.trajectories.path_range(trajectory) {
                mask[p] = true;
            }
        }
        for &position in self.steps.keys() {
            if let Some(slot) = mask.get_mut(position) {
                *slot = true;
            }
        }
        mask
    }
}

/// A run's labels, put on its trajectories and path steps, by name.
#[derive(Clone, Debug, Default)]
pub struct RunLabels {
    /// The labels in force, in the order added (those on the run's targets).
    pub labels: Vec<Label>,
    /// Each name, in the order first added.
    pub names: Vec<Named>,
    /// Labels whose trajectory the run does not have (a labels file of another run).
    pub unmatched: usize,
    /// Labels on a step past the end of their trajectory, each with why.
    pub refused: Vec<String>,
}

impl RunLabels {
    /// The labels `labels` on `run`.
    pub fn resolve(run: &Run, labels: Vec<Label>) -> Self {
        let mut out = Self::default();
        let mut index: HashMap<String, usize> = HashMap::new();
        for label in labels {
            let trajectory = match check_target(run, &label.target) {
                Ok(trajectory) => trajectory,
                Err(why) if run.trajectory_by_key(&label.target.trajectory).is_some() => {
                    out.refused.push(format!("{} on {}: {why}", label.name, label.target.trajectory));
                    continue;
                }
                Err(_) => {
                    out.unmatched += 1;
                    continue;
                }
            };
            let i = *index.entry(label.name.clone()).or_insert_with(|| {
                out.names.push(Named { name: label.name.clone(), ..Named::default() });
                out.names.len() - 1
            });
            let named = &mut out.names[i];
            match label.target.step {
                Some(step) => {
                    let position = run.trajectories.path_range(trajectory).start + step as usize;
                    named.steps.insert(position, label.value.clone());
                }
                None => drop(named.trajectories.insert(trajectory, label.value.clone())),
            }
            out.labels.push(label);
        }
        out
    }

    /// The label named `name`.
    pub fn named(&self, name: &str) -> Option<&Named> {
        self.names.iter().find(|n| n.name == name)
    }

    /// What a person should know of labels that did not go on the run: one note each for those of
    /// another run and for those refused.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.unmatched > 0 {
            notes.push(format!(
                "{} label(s) name trajectories this run does not have (a labels file of another run?)",
                self.unmatched
            ));
        }
        if let Some(first) = self.refused.first() {
            notes.push(format!("{} label(s) refused, e.g. {first}", self.refused.len()));
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(name: &str, trajectory: &str, step: Option<u32>) -> Label {
        Label {
            name: name.to_owned(),
            value: Value::Flag,
            target: Target { trajectory: trajectory.to_owned(), step },
            source: Source { kind: SourceKind::Person, name: "ana".to_owned() },
            note: None,
            time: None,
        }
    }

    #[test]
    fn a_removal_takes_off_the_labels_added_before_it_only() {
        let hack = label("hack", "t1", Some(2));
        let entries = vec![
            Entry::Add(hack.clone()),
            Entry::Add(label("hack", "t1", None)),
            Entry::Remove { name: "hack".to_owned(), target: hack.target.clone() },
            Entry::Add(label("loop", "t1", Some(2))),
            Entry::Add(hack.clone()),
        ];
        let names: Vec<(String, Option<u32>)> =
            labels_of(entries).into_iter().map(|l| (l.name, l.target.step)).collect();
        assert_eq!(names, [("hack".to_owned(), None), ("loop".to_owned(), Some(2)), ("hack".to_owned(), Some(2))]);
    }

    #[test]
    fn values_and_names_read_as_the_docs_say() {
        assert_eq!(Value::parse(""), Value::Flag);
        assert_eq!(Value::parse("true"), Value::Flag);
        assert_eq!(Value::parse("0.8"), Value::Number(0.8));
        assert_eq!(Value::parse("high"), Value::Word("high".to_owned()));
        assert_eq!(Value::parse("nan"), Value::Word("nan".to_owned()));
        assert!(bad_name("hack").is_none());
        assert!(bad_name("").is_some() && bad_name("a=b").is_some() && bad_name(" a").is_some());
        assert!(bad_name("a\nb").is_some() && bad_name(&"x".repeat(101)).is_some());
    }
}
