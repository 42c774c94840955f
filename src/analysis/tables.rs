//! A run as tables, column by column in Arrow's layouts: its steps, trajectories and tokens, for a
//! binding to hand over without a copy per value (the Python package builds Arrow arrays on these
//! buffers, docs/PYTHON.md). One row of [`steps`] per path step, in the order of
//! `run.trajectories.path_nodes`, which is the order of step credit and of `vantage credit`'s rows.

use std::collections::HashMap;

use crate::model::{Run, Sym, TextId, TrajectoryId};

/// Strings in Arrow's large-string layout: string `i` is `data[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Strings {
    /// `len + 1` byte offsets, the first 0.
    pub offsets: Vec<i64>,
    /// The UTF-8 bytes of every string, one after the other.
    pub data: Vec<u8>,
}

impl Default for Strings {
    fn default() -> Self {
        Self { offsets: vec![0], data: Vec::new() }
    }
}

impl Strings {
    /// Appends one string.
    pub fn push(&mut self, text: &str) {
        self.data.extend_from_slice(text.as_bytes());
        self.offsets.push(self.data.len() as i64);
    }

    /// Number of strings.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// String `i` (`""` past the end).
    pub fn get(&self, i: usize) -> &str {
        let (Some(&start), Some(&end)) = (self.offsets.get(i), self.offsets.get(i + 1)) else {
            return "";
        };
        std::str::from_utf8(&self.data[start as usize..end as usize]).unwrap_or("")
    }
}

/// One column's values.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// 32-bit floats (`NaN` where the run has none, as in the model).
    F32(Vec<f32>),
    /// Unsigned 32-bit integers.
    U32(Vec<u32>),
    /// Unsigned 64-bit integers.
    U64(Vec<u64>),
    /// Signed 64-bit integers.
    I64(Vec<i64>),
    /// Booleans.
    Bool(Vec<bool>),
    /// Strings.
    Text(Strings),
    /// Dictionary-encoded strings (labels: groups, trajectories, kinds, roles): row `i` is
    /// `dictionary[keys[i]]`.
    Labels {
        /// Each row's index into the dictionary.
        keys: Vec<u32>,
        /// The distinct strings, in order of first appearance.
        dictionary: Strings,
    },
}

/// A named column; rows where `valid` is false are missing (null).
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// Its name.
    pub name: String,
    /// Its values.
    pub values: Values,
    /// Which rows hold a value (`None`: all of them).
    pub valid: Option<Vec<bool>>,
}

impl Column {
    fn new(name: impl Into<String>, values: Values) -> Self {
        Self { name: name.into(), values, valid: None }
    }

    fn with_valid(mut self, valid: Vec<bool>) -> Self {
        self.valid = (!valid.iter().all(|&v| v)).then_some(valid);
        self
    }
}

/// Columns of equal length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// Number of rows.
    pub rows: usize,
    /// The columns, in order.
    pub columns: Vec<Column>,
}

impl Table {
    /// The column named `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }
}

/// Dictionary-encodes the labels `syms` of `run` (each distinct label once, in order of first
/// appearance).
pub fn labels(run: &Run, syms: impl Iterator<Item = Sym>) -> Values {
    // Symbols are dense: a table by symbol (the last slot for `Sym::NONE`) finds each one's key.
    let none = run.labels.len();
    let mut index = vec![u32::MAX; none + 1];
    let mut dictionary = Strings::default();
    let keys = syms
        .map(|sym| {
            let slot = if sym == Sym::NONE { none } else { sym.index().min(none) };
            if index[slot] == u32::MAX {
                dictionary.push(run.label(sym));
                index[slot] = (dictionary.len() - 1) as u32;
            }
            index[slot]
        })
        .collect();
    Values::Labels { keys, dictionary }
}

/// Dictionary-encodes strings that are not labels of the run (the credit table's keys).
pub fn labels_of<'a>(texts: impl Iterator<Item = &'a str>) -> Values {
    let mut index: HashMap<&'a str, u32> = HashMap::new();
    let mut dictionary = Strings::default();
    let keys = texts
        .map(|text| {
            *index.entry(text).or_insert_with(|| {
                dictionary.push(text);
                (dictionary.len() - 1) as u32
            })
        })
        .collect();
    Values::Labels { keys, dictionary }
}

/// Each path step's trajectory, in path order.
pub(crate) fn step_trajectories(run: &Run) -> Vec<TrajectoryId> {
    let mut out = Vec::with_capacity(run.num_path_steps());
    for t in run.trajectories.ids() {
        out.extend(std::iter::repeat_n(t, run.trajectories.path_range(t).len()));
    }
    out
}

fn texts(run: &Run, ids: impl Iterator<Item = TextId>) -> Values {
    let mut strings = Strings::default();
    for id in ids {
        strings.push(&run.text(id));
    }
    Values::Text(strings)
}

/// A trajectory's training step column, null where its group has none.
fn train_steps(run: &Run, trajectories: &[TrajectoryId]) -> Column {
    let step =
        |t: &TrajectoryId| run.groups.train_step.get(run.trajectories.group[t.index()].index()).copied().flatten();
    let valid = trajectories.iter().map(|t| step(t).is_some()).collect();
    Column::new("train_step", Values::I64(trajectories.iter().map(|t| step(t).unwrap_or(0)).collect()))
        .with_valid(valid)
}

/// A trajectory's success column, null where it has none.
fn successes(run: &Run, trajectories: &[TrajectoryId]) -> Column {
    let success = |t: &TrajectoryId| run.trajectories.success[t.index()];
    let valid = trajectories.iter().map(|t| success(t).is_some()).collect();
    Column::new("success", Values::Bool(trajectories.iter().map(|t| success(t).unwrap_or(false)).collect()))
        .with_valid(valid)
}

/// Adds a `label.NAME` column per label to a table of one row per path step (as [`steps`] makes):
/// the step's value of the label (its own, else its rollout's) as shown (`true` for a flag, the
/// word, the number), null where it has none.
pub fn add_label_columns(table: &mut Table, run: &Run, labels: &crate::model::labels::RunLabels) {
    let trajectories = step_trajectories(run);
    for named in &labels.names {
        let mut strings = Strings::default();
        let mut valid = Vec::with_capacity(trajectories.len());
        for (position, &t) in trajectories.iter().enumerate() {
            let value = named.at(t, position);
            valid.push(value.is_some());
            strings.push(&value.map_or_else(String::new, crate::model::labels::Value::cell));
        }
        table.columns.push(Column::new(format!("label.{}", named.name), Values::Text(strings)).with_valid(valid));
    }
}

/// One row per label (docs/LABELS.md): `name`, `value` (as shown: a word, a number, empty for a
/// flag), `number` (a flag 1, a word null), `trajectory`, `step` (null on a whole trajectory),
/// `source_kind`, `source`, `note`, `time`.
pub fn labels_table(labels: &[crate::model::labels::Label]) -> Table {
    let text = |values: Vec<Option<&str>>| {
        let valid = values.iter().map(Option::is_some).collect();
        let mut strings = Strings::default();
        for value in values {
            strings.push(value.unwrap_or_default());
        }
        (Values::Text(strings), valid)
    };
    let shown: Vec<String> = labels.iter().map(|l| l.value.shown()).collect();
    let numbers: Vec<f64> = labels.iter().map(|l| l.value.number()).collect();
    let (notes, notes_valid) = text(labels.iter().map(|l| l.note.as_deref()).collect());
    let (times, times_valid) = text(labels.iter().map(|l| l.time.as_deref()).collect());
    let mut value_strings = Strings::default();
    for value in &shown {
        value_strings.push(value);
    }
    Table {
        rows: labels.len(),
        columns: vec![
            Column::new("name", labels_of(labels.iter().map(|l| l.name.as_str()))),
            Column::new("value", Values::Text(value_strings)),
            Column::new("number", Values::F32(numbers.iter().map(|&n| n as f32).collect()))
                .with_valid(numbers.iter().map(|n| !n.is_nan()).collect()),
            Column::new("trajectory", labels_of(labels.iter().map(|l| l.target.trajectory.as_str()))),
            Column::new("step", Values::U32(labels.iter().map(|l| l.target.step.unwrap_or(0)).collect()))
                .with_valid(labels.iter().map(|l| l.target.step.is_some()).collect()),
            Column::new("source_kind", labels_of(labels.iter().map(|l| l.source.kind.name()))),
            Column::new("source", labels_of(labels.iter().map(|l| l.source.name.as_str()))),
            Column::new("note", notes).with_valid(notes_valid),
            Column::new("time", times).with_valid(times_valid),
        ],
    }
}

/// One row per path step: `group`, `trajectory`, `step` (its index on the path), `node`,
/// `train_step`, `kind`, `role`, `env_reward`, the trajectory's outcome `reward` and `success`,
/// `first_error`, a `scores.NAME` column per step score, and with `text` the step's `thought`,
/// `action` and `observation`.
pub fn steps(run: &Run, text: bool) -> Table {
    let tr = &run.trajectories;
    let nodes = &run.nodes;
    let owners = step_trajectories(run);
    let path = &tr.path_nodes;
    let node_at = |f: &dyn Fn(usize) -> Sym| labels(run, path.iter().map(|n| f(n.index())));
    let mut columns = vec![
        Column::new("group", labels(run, owners.iter().map(|t| run.groups.key[tr.group[t.index()].index()]))),
        Column::new("trajectory", labels(run, owners.iter().map(|t| tr.key[t.index()]))),
        Column::new(
            "step",
            Values::U32(
                owners.iter().enumerate().map(|(position, t)| (position - tr.path_range(*t).start) as u32).collect(),
            ),
        ),
        Column::new("node", Values::U32(path.iter().map(|n| n.0).collect())),
        train_steps(run, &owners),
        Column::new("kind", node_at(&|n| nodes.kind[n])),
        Column::new("role", node_at(&|n| nodes.role[n])),
        Column::new("env_reward", Values::F32(path.iter().map(|n| nodes.env_reward[n.index()]).collect())),
        Column::new("reward", Values::F32(owners.iter().map(|t| tr.reward[t.index()]).collect())),
        successes(run, &owners),
    ];
    let first_error: Vec<Option<bool>> = path.iter().map(|&n| nodes.first_error(n)).collect();
    columns.push(
        Column::new("first_error", Values::Bool(first_error.iter().map(|e| e.unwrap_or(false)).collect()))
            .with_valid(first_error.iter().map(Option::is_some).collect()),
    );
    for (name, values) in &nodes.scores {
        let column = path.iter().map(|n| values.get(n.index()).copied().unwrap_or(f32::NAN)).collect();
        columns.push(Column::new(format!("scores.{name}"), Values::F32(column)));
    }
    if text {
        columns.push(Column::new("thought", texts(run, path.iter().map(|n| nodes.thought[n.index()]))));
        columns.push(Column::new("action", texts(run, path.iter().map(|n| nodes.action[n.index()]))));
        columns.push(Column::new("observation", texts(run, path.iter().map(|n| nodes.observation[n.index()]))));
    }
    Table { rows: path.len(), columns }
}

/// One row per trajectory: `trajectory`, `group`, `train_step`, `task`, `reward`, `success`,
/// `finish`, `steps` and `tokens` (counts), and an `outcome.NAME` column per outcome component.
pub fn trajectories(run: &Run) -> Table {
    let tr = &run.trajectories;
    let ids: Vec<TrajectoryId> = tr.ids().collect();
    let group_of = |t: &TrajectoryId| tr.group[t.index()].index();
    let mut columns = vec![
        Column::new("trajectory", labels(run, ids.iter().map(|t| tr.key[t.index()]))),
        Column::new("group", labels(run, ids.iter().map(|t| run.groups.key[group_of(t)]))),
        train_steps(run, &ids),
        Column::new(
            "task",
            labels(run, ids.iter().map(|t| run.groups.task.get(group_of(t)).copied().unwrap_or(Sym::NONE))),
        ),
        Column::new("reward", Values::F32(tr.reward.clone())),
        successes(run, &ids),
        Column::new("finish", labels(run, tr.finish.iter().copied())),
        Column::new("steps", Values::U32(ids.iter().map(|&t| tr.path_range(t).len() as u32).collect())),
        Column::new("tokens", Values::U64(ids.iter().map(|&t| tr.token_range(t).len() as u64).collect())),
    ];
    for (name, values) in &tr.components {
        columns.push(Column::new(format!("outcome.{name}"), Values::F32(values.clone())));
    }
    Table { rows: ids.len(), columns }
}

/// One row per token: `trajectory`, `position` (within the trajectory), `mask` (null when the run
/// logs none), and each per-token column the run holds (`reward`, `logprob`, `ref_logprob`,
/// `value`, `entropy`, `sum_pi_squared`, `prm_logprob`, `advantage`, `trainer_logprob`).
pub fn tokens(run: &Run) -> Table {
    let tr = &run.trajectories;
    let tokens = &run.tokens;
    let mut owners = Vec::with_capacity(tokens.len);
    let mut position = Vec::with_capacity(tokens.len);
    for t in tr.ids() {
        let range = tr.token_range(t);
        owners.extend(std::iter::repeat_n(tr.key[t.index()], range.len()));
        position.extend(0..range.len() as u32);
    }
    let rows = owners.len();
    let mut columns = vec![
        Column::new("trajectory", labels(run, owners.into_iter())),
        Column::new("position", Values::U32(position)),
    ];
    let mask = tokens.mask.as_ref().map_or_else(|| vec![true; rows], |m| m.iter().take(rows).copied().collect());
    let valid = vec![tokens.mask.is_some(); rows];
    columns.push(Column::new("mask", Values::Bool(mask)).with_valid(valid));
    let named = [
        ("reward", &tokens.reward),
        ("logprob", &tokens.logprob),
        ("ref_logprob", &tokens.ref_logprob),
        ("value", &tokens.value),
        ("entropy", &tokens.entropy),
        ("sum_pi_squared", &tokens.sum_pi_squared),
        ("prm_logprob", &tokens.prm_logprob),
        ("advantage", &tokens.advantage),
        ("trainer_logprob", &tokens.trainer_logprob),
    ];
    for (name, values) in named {
        if let Some(values) = values {
            let column = (0..rows).map(|i| values.get(i).copied().unwrap_or(f32::NAN)).collect();
            columns.push(Column::new(name, Values::F32(column)));
        }
    }
    Table { rows, columns }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{LoadReport, load_bytes};

    fn run() -> Run {
        let log = concat!(
            "{\"vantage\": 1}\n",
            "{\"type\": \"trajectory\", \"id\": \"t0\", \"group\": \"g\", \"train_step\": 3, \"outcome\": {\"reward\": 1, \"success\": true}, ",
            "\"steps\": [{\"kind\": \"think\", \"action\": \"a\", \"scores\": {\"prm\": 0.5}}, {\"kind\": \"answer\", \"action\": \"b\"}]}\n",
            "{\"type\": \"trajectory\", \"id\": \"t1\", \"group\": \"g\", \"outcome\": {\"reward\": 0}, \"steps\": [{\"kind\": \"answer\", \"action\": \"é\"}]}\n",
        );
        load_bytes("t.jsonl", log.as_bytes(), &mut LoadReport::new("t.jsonl")).unwrap()
    }

    #[test]
    fn the_step_table_has_a_row_per_path_step_with_labels_once_each() {
        let run = run();
        let table = steps(&run, true);
        assert_eq!(table.rows, 3);
        let Some(Column { values: Values::Labels { keys, dictionary }, .. }) = table.column("trajectory") else {
            panic!("trajectory is not labels")
        };
        assert_eq!((keys.as_slice(), dictionary.len()), ([0, 0, 1].as_slice(), 2));
        assert_eq!(table.column("step").map(|c| &c.values), Some(&Values::U32(vec![0, 1, 0])));
        let Some(Values::F32(prm)) = table.column("scores.prm").map(|c| &c.values) else { panic!("no prm") };
        assert_eq!(prm[0], 0.5);
        assert!(prm[1].is_nan());
        // Both trajectories share group "g", whose training step is 3.
        assert_eq!(table.column("train_step").map(|c| &c.values), Some(&Values::I64(vec![3, 3, 3])));
        let Some(Values::Text(action)) = table.column("action").map(|c| &c.values) else { panic!("no action") };
        assert_eq!((action.get(0), action.get(2)), ("a", "é"));
        for column in &table.columns {
            let len = match &column.values {
                Values::F32(v) => v.len(),
                Values::U32(v) => v.len(),
                Values::U64(v) => v.len(),
                Values::I64(v) => v.len(),
                Values::Bool(v) => v.len(),
                Values::Text(s) => s.len(),
                Values::Labels { keys, .. } => keys.len(),
            };
            assert_eq!(len, table.rows, "{}", column.name);
        }
    }

    #[test]
    fn the_trajectory_table_has_nulls_where_the_run_has_no_value() {
        let run = run();
        let table = trajectories(&run);
        let success = table.column("success").unwrap();
        assert_eq!(success.values, Values::Bool(vec![true, false]));
        assert_eq!(success.valid, Some(vec![true, false]));
        assert_eq!(table.column("steps").map(|c| &c.values), Some(&Values::U32(vec![2, 1])));
        assert_eq!(tokens(&run).rows, 0);
    }
}
