//! Reading the parts of a vantage Parquet v2 dataset into a run: each part's `groups`,
//! `trajectories`, `steps` and `tokens` files, given as bytes (natively `source::dataset` reads
//! them from disk, only for the partitions asked for), added to one [`RunBuilder`]. A row that
//! cannot be used (a parent or leaf that is not in its part, a trajectory id given twice, token
//! arrays of different lengths) is a warning that names the file, the row and the column; the
//! rest loads.
//!
//! The Parquet is read with [`crate::load::parquet_file`], so this builds on every target: the
//! web build gives it the byte ranges it fetched.

use std::collections::HashMap;

use super::manifest::{Manifest, Partition, step_span};
use crate::load::parquet_file::{Column, ParquetMeta};
use crate::load::{LoadError, LoadReport};
use crate::model::{GroupId, McStats, NewGroup, NewStep, NewTokens, NodeId, Outcome, Run, RunBuilder, TreeId, Warning};

/// The format name shown to users.
pub const FORMAT_NAME: &str = "vantage Parquet v2";

/// The files of one part of a partition, as the bytes read of each (`tokens` is absent when
/// the part has none).
pub struct PartBytes {
    /// `groups-<part>.parquet`.
    pub groups: FileBytes,
    /// `trajectories-<part>.parquet`.
    pub trajectories: FileBytes,
    /// `steps-<part>.parquet`.
    pub steps: FileBytes,
    /// `tokens-<part>.parquet`, if written.
    pub tokens: Option<FileBytes>,
}

/// What was read of one file: pieces of it, each at its offset, among them its footer (a whole
/// file is one piece at 0).
#[derive(Clone)]
pub struct FileBytes {
    /// The file's length.
    pub len: u64,
    /// (offset, bytes) of each piece read.
    pub pieces: Vec<(u64, Vec<u8>)>,
}

impl From<Vec<u8>> for FileBytes {
    fn from(bytes: Vec<u8>) -> Self {
        Self { len: bytes.len() as u64, pieces: vec![(0, bytes)] }
    }
}

impl FileBytes {
    /// The `len` bytes at `start`, if one piece holds them.
    pub fn get(&self, start: u64, len: u64) -> Option<&[u8]> {
        let end = start.checked_add(len)?;
        self.pieces.iter().find_map(|(at, bytes)| {
            let (from, to) = (start.checked_sub(*at)?, end.checked_sub(*at)?);
            bytes.get(usize::try_from(from).ok()?..usize::try_from(to).ok()?)
        })
    }

    /// The file's footer, parsed.
    pub fn meta(&self) -> Result<ParquetMeta, String> {
        let (start, len) = footer_range(self)?;
        ParquetMeta::parse(self.get(start, len).ok_or("the footer was not read")?, start)
    }
}

/// How many bytes at a file's end a reader that reads pieces reads first: the footer of every
/// file vantage writes fits (a longer one is read next, from [`footer_range`]).
pub const TAIL: u64 = 64 << 10;

/// Where a file's footer is (offset, length), from its last 8 bytes (which `bytes` must hold).
pub fn footer_range(bytes: &FileBytes) -> Result<(u64, u64), String> {
    let at = bytes.len.checked_sub(8).ok_or("not a Parquet file (too short)")?;
    let footer = crate::load::parquet_file::footer_len(bytes.get(at, 8).ok_or("the file's end was not read")?)?;
    let start = at.checked_sub(footer).filter(|&s| s >= 4).ok_or("a footer longer than the file")?;
    Ok((start, footer))
}

/// The byte ranges (offset, length) of the chunks of the columns `names`, neighbours merged.
pub fn column_ranges(meta: &ParquetMeta, names: &[&str]) -> Vec<(u64, u64)> {
    let leaves = names.iter().filter_map(|name| meta.leaf(name));
    merged(leaves.flat_map(|leaf| meta.chunks(leaf)).map(|c| (c.start, c.len)).collect())
}

/// The byte ranges of every column's chunks but those of texts that can be left in the file
/// ([`TEXT_COLUMNS`]): what reading a part with texts left needs of this file. A file without
/// a [`TEXT_MASK`] column (written before it was) has its text columns read too, since their
/// nulls are what says which rows have a text.
pub fn ranges_without_texts(meta: &ParquetMeta) -> Vec<(u64, u64)> {
    let masked = meta.leaf(TEXT_MASK).is_some();
    let keep = |leaf: &crate::load::parquet_file::Leaf| !masked || !TEXT_COLUMNS.contains(&leaf.name.as_str());
    let leaves = meta.leaves.iter().enumerate().filter(|(_, l)| keep(l)).map(|(i, _)| i);
    merged(leaves.flat_map(|leaf| meta.chunks(leaf)).map(|c| (c.start, c.len)).collect())
}

/// Ranges sorted, and those that touch or overlap joined.
fn merged(mut ranges: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    ranges.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (start, len) in ranges {
        match out.last_mut() {
            Some((s, l)) if *s + *l >= start => *l = (*l).max(start + len - *s),
            _ => out.push((start, len)),
        }
    }
    out
}

/// Column `name` of a file, decoded from the pieces read of it.
pub fn read_column(meta: &ParquetMeta, bytes: &FileBytes, name: &str) -> Result<Column, String> {
    let leaf = meta.leaf(name).ok_or_else(|| format!("no column {name}"))?;
    let chunks = meta
        .chunks(leaf)
        .map(|c| bytes.get(c.start, c.len).ok_or_else(|| format!("column {name}: its bytes were not read")))
        .collect::<Result<Vec<_>, _>>()?;
    crate::load::parquet_file::decode(meta, leaf, &chunks)
}

/// The partitions of `manifest` whose training step is in `range` (all when `None`); an error
/// naming the dataset `name` and its steps when none is.
pub fn select<'m>(
    manifest: &'m Manifest,
    range: Option<(i64, i64)>,
    name: &str,
) -> Result<Vec<&'m Partition>, LoadError> {
    let partitions = manifest.select(range);
    if let (Some(range), true) = (range, partitions.is_empty()) {
        let has = match step_span(&manifest.partitions) {
            Some((a, b)) => format!("its training steps are {a}–{b}"),
            None => "it has no training steps".to_owned(),
        };
        let reason = format!("no training step of the dataset is in --steps {} ({has})", range_text(range));
        return Err(LoadError::NothingLoadable { reason }.with_path(name));
    }
    Ok(partitions)
}

/// A `--steps` range as it was given: `17`, `3..9`, `3..`, `..9`.
fn range_text((lo, hi): (i64, i64)) -> String {
    if lo == hi {
        return lo.to_string();
    }
    let end = |v: i64, open: i64| if v == open { String::new() } else { v.to_string() };
    format!("{}..{}", end(lo, i64::MIN), end(hi, i64::MAX))
}

/// What a run read from some of a dataset's partitions says of the training steps it holds:
/// a note, its step window, and the outcome of every step (from the manifest) for the overview.
pub fn note_window(run: &mut Run, manifest: &Manifest, partitions: &[&Partition]) {
    let (open, all) = (step_span(partitions.iter().copied()), step_span(&manifest.partitions));
    let ((lo, hi), (all_lo, all_hi)) = (open.unwrap_or((0, 0)), all.unwrap_or((0, 0)));
    run.meta.notes.push(format!(
        "{} of the {} training-step partitions read (steps {lo}–{hi} of {all_lo}–{all_hi})",
        partitions.len(),
        manifest.partitions.len()
    ));
    run.meta.step_window = open.zip(all).map(|(open, all)| crate::model::StepWindow {
        open,
        all,
        partitions: (partitions.len(), manifest.partitions.len()),
    });
    run.meta.all_steps = manifest.partitions.iter().filter_map(step_outcome).collect();
}

/// A partition's outcomes as the overview draws them (`None` for the null partition).
fn step_outcome(p: &Partition) -> Option<crate::model::StepOutcome> {
    Some(crate::model::StepOutcome {
        train_step: p.train_step?,
        trajectories: p.trajectories,
        mean_reward: p.reward_mean().unwrap_or(f64::NAN),
        success_rate: p.success_rate().unwrap_or(f64::NAN),
    })
}

/// A run being read from the parts of a dataset.
pub struct DatasetReader {
    builder: RunBuilder,
    /// The dataset's id of each node added, in arena order.
    node_ids: Vec<u64>,
    /// Texts are left in the files ([`text_key`]): the part files they are in, by index.
    lazy: Option<Vec<String>>,
}

/// The token columns as named in the `tokens` table, in the order written.
pub const TOKEN_FLOATS: [&str; 9] = [
    "reward",
    "logprob",
    "ref_logprob",
    "value",
    "entropy",
    "sum_pi_squared",
    "prm_logprob",
    "advantage",
    "trainer_logprob",
];

/// The text columns that can be left in the files, by their code in a [`text_key`].
pub const TEXT_COLUMNS: [&str; 5] = ["thought", "action", "observation", "prompt", "gold"];

/// The column of `steps` and `groups` whose bit `1 << code` says that the row's text of column
/// `code` of [`TEXT_COLUMNS`] is there (not empty), so that texts left in the files need not be
/// read to know which rows have one.
pub const TEXT_MASK: &str = "text_mask";

/// The key of a text left in a file: the file's index among those the reader registered, the
/// column's index in [`TEXT_COLUMNS`], and the row.
pub fn text_key(file: usize, column: usize, row: usize) -> u64 {
    ((file as u64) << 36) | ((column as u64) << 32) | row as u64
}

/// A text as the arena reads a source's texts: the inside of a JSON string literal.
pub fn json_inside(text: &str) -> Vec<u8> {
    let quoted = serde_json::Value::from(text).to_string();
    quoted.as_bytes()[1..quoted.len() - 1].to_vec()
}

/// The (file, column, row) of a [`text_key`].
pub fn split_text_key(key: u64) -> (usize, usize, usize) {
    ((key >> 36) as usize, ((key >> 32) & 0xF) as usize, (key & 0xFFFF_FFFF) as usize)
}

impl DatasetReader {
    /// A reader for the dataset of `manifest`, shown as `name`.
    pub fn new(name: &str, manifest: &Manifest) -> Self {
        let mut builder = RunBuilder::new(name, FORMAT_NAME);
        let meta = builder.meta_mut();
        if let Some(name @ serde_json::Value::String(_)) = manifest.header.get("name") {
            meta.metadata.insert("name".to_owned(), name.clone());
        }
        if let Some(serde_json::Value::Object(entries)) = manifest.header.get("meta") {
            meta.metadata.extend(entries.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        Self { builder, node_ids: Vec::new(), lazy: None }
    }

    /// Leaves the texts of steps and groups in the files, read from `source` when asked (it gets
    /// the list of files from [`Self::text_files`] once reading is done); the run then holds 12
    /// bytes per text instead of the text.
    pub fn leave_texts(&mut self, source: std::sync::Arc<dyn crate::model::TextSource>) {
        self.builder.set_text_source(source);
        self.lazy = Some(Vec::new());
    }

    /// The files the texts left in them are in, by the index their keys hold.
    pub fn text_files(&self) -> Vec<String> {
        self.lazy.clone().unwrap_or_default()
    }

    /// Registers `path` as a file texts are left in; its index (`None` when texts are copied).
    fn register(&mut self, path: &str) -> Option<usize> {
        let files = self.lazy.as_mut()?;
        files.push(path.to_owned());
        Some(files.len() - 1)
    }

    /// The ids of a row's texts left in file `file`: one per (code into [`TEXT_COLUMNS`],
    /// whether the text is there), none for an absent text.
    fn external<const N: usize>(
        &mut self,
        file: usize,
        row: usize,
        columns: [(usize, bool); N],
    ) -> [crate::model::TextId; N] {
        columns.map(|(code, there)| {
            if there { self.builder.push_external_text(text_key(file, code, row)) } else { crate::model::TextId::NONE }
        })
    }

    /// Adds part `part` of `partition`.
    pub fn add_part(
        &mut self,
        partition: &Partition,
        part: u32,
        files: &PartBytes,
        report: &mut LoadReport,
    ) -> Result<(), LoadError> {
        let lazy = self.lazy.is_some();
        let groups = Table::parse(partition.file("groups", part), &files.groups, lazy)?;
        self.add_groups(&groups, partition.train_step)?;
        let steps = Table::parse(partition.file("steps", part), &files.steps, lazy)?;
        let nodes = self.add_steps(&steps, partition.train_step, report)?;
        let tokens = match &files.tokens {
            Some(bytes) => Some(Table::parse(partition.file("tokens", part), bytes, false)?),
            None => None,
        };
        let trajectories = Table::parse(partition.file("trajectories", part), &files.trajectories, false)?;
        self.add_trajectories(&trajectories, tokens.as_ref(), &nodes, partition.train_step, report)
    }

    /// The run read so far (an error when it has no trajectory), with the dataset's id of each
    /// node of the run (the `node` column), so that what is computed on the run can be written
    /// back keyed as the dataset is.
    pub fn finish_with_ids(self, report: &LoadReport) -> Result<(Run, Vec<u64>), LoadError> {
        let ids = self.node_ids;
        Ok((crate::load::records::finish(self.builder, report, "trajectories")?, ids))
    }

    fn group(&mut self, key: &str, train_step: Option<i64>) -> GroupId {
        match self.builder.group(key) {
            Some(group) => group,
            None => self.builder.add_group(&NewGroup { key, train_step, ..NewGroup::default() }).0,
        }
    }

    fn add_groups(&mut self, t: &Table<'_>, train_step: Option<i64>) -> Result<(), LoadError> {
        let key = t.required_str("group")?;
        let task = t.str("task")?;
        let [prompt, gold] = [t.text(3)?, t.text(4)?];
        let (mc_n, mc_mean) = (t.u32("mc_n")?, t.f32("mc_mean")?);
        let (reward, finish) = (t.list("mc_rollout_reward")?, t.list("mc_rollout_finish")?);
        let file = self.register(&t.path);
        for row in 0..t.rows() {
            let Some(key) = key.str(row) else { continue };
            let rollouts = rollouts(reward.as_ref(), finish.as_ref(), row);
            let fresh = self.builder.group(key).is_none();
            let group = NewGroup {
                key,
                task: get(task.as_ref(), row),
                train_step,
                prompt: if file.is_some() { None } else { prompt.get(row) },
                gold: if file.is_some() { None } else { gold.get(row) },
                mc: mc(mc_n.as_ref(), mc_mean.as_ref(), row),
                mc_rollouts: rollouts.iter().map(|(r, f)| (*r, *f)).collect(),
            };
            let (id, _) = self.builder.add_group(&group);
            if let (Some(file), true) = (file, fresh) {
                let texts = self.external(file, row, [(3, prompt.there(row)), (4, gold.there(row))]);
                self.builder.set_group_texts(id, texts);
            }
        }
        Ok(())
    }

    /// Adds the nodes of a `steps` file, parents first; returns each node id's node.
    fn add_steps(
        &mut self,
        t: &Table<'_>,
        train_step: Option<i64>,
        report: &mut LoadReport,
    ) -> Result<HashMap<u64, NodeId>, LoadError> {
        let (node, group) = (t.required_u64("node")?, t.required_str("group")?);
        let (parent, tree) = (t.u64("parent")?, t.str("tree")?);
        let s = StepColumns::of(t)?;
        let file = self.register(&t.path);
        let mut nodes = HashMap::with_capacity(t.rows());
        for row in 0..t.rows() {
            let (Some(id), Some(group_key)) = (node.u64(row), group.str(row)) else {
                report.warn(Warning::skipped(row as u64 + 1, t.field("node"), "no node id or group"));
                continue;
            };
            let parent_node = match parent.as_ref().and_then(|p| p.u64(row)) {
                None => NodeId::NONE,
                Some(p) => {
                    let Some(&n) = nodes.get(&p) else {
                        let reason = format!(
                            "node {p} is not an earlier row of this file (the node and what hangs below it are left out)"
                        );
                        report.warn(Warning::skipped(row as u64 + 1, t.field("parent"), reason));
                        continue;
                    };
                    n
                }
            };
            let group = self.group(group_key, train_step);
            if let Some(tree_key) = get(tree.as_ref(), row) {
                // A tree's first node adds it; a key taken already is that tree.
                self.builder.add_tree(tree_key, group);
            }
            let rollouts = rollouts(s.rollout_reward.as_ref(), s.rollout_finish.as_ref(), row);
            let mut step = s.step(row);
            step.mc_rollouts = rollouts;
            step.docs = list_strings(s.docs.as_ref(), row);
            let there = [(0, s.texts[0].there(row)), (1, s.texts[1].there(row)), (2, s.texts[2].there(row))];
            let node = self.builder.add_node(group, parent_node, &step);
            if let Some(file) = file {
                let texts = self.external(file, row, there);
                self.builder.set_node_texts(node, texts);
            }
            nodes.insert(id, node);
            self.node_ids.push(id);
        }
        Ok(nodes)
    }

    fn add_trajectories(
        &mut self,
        t: &Table<'_>,
        tokens: Option<&Table<'_>>,
        nodes: &HashMap<u64, NodeId>,
        train_step: Option<i64>,
        report: &mut LoadReport,
    ) -> Result<(), LoadError> {
        let (key, group, leaf) = (t.required_str("trajectory")?, t.required_str("group")?, t.required_u64("leaf")?);
        let (tree, reward, success, finish) = (t.str("tree")?, t.f32("reward")?, t.bool("success")?, t.str("finish")?);
        let components = t.prefixed_f32("component_")?;
        let tokens = tokens.map(TokenColumns::of).transpose()?;
        for row in 0..t.rows() {
            let line = row as u64 + 1;
            let (Some(key), Some(group_key)) = (key.str(row), group.str(row)) else {
                report.warn(Warning::skipped(line, t.field("trajectory"), "no trajectory id or group"));
                continue;
            };
            // No leaf: a trajectory of no step, its outcome alone.
            let leaf = match leaf.u64(row).map(|l| nodes.get(&l)) {
                None => crate::model::NodeId::NONE,
                Some(Some(&leaf)) => leaf,
                Some(None) => {
                    report.warn(Warning::skipped(line, t.field("leaf"), "not a node of this part's steps file"));
                    continue;
                }
            };
            let group = self.group(group_key, train_step);
            let tree = get(tree.as_ref(), row).and_then(|k| self.builder.tree(k)).unwrap_or(TreeId::NONE);
            let outcome = Outcome {
                reward: reward.as_ref().and_then(|r| r.f32(row)),
                success: success.as_ref().and_then(|s| s.bool(row)),
                components: components.iter().filter_map(|(name, c)| Some((name.as_str(), c.f32(row)?))).collect(),
                finish: get(finish.as_ref(), row),
            };
            let arrays = match &tokens {
                Some(columns) => columns.arrays(key),
                None => TokenArrays::default(),
            };
            let mut new_tokens = arrays.borrow();
            if let Err((name, len, common)) = new_tokens.len() {
                let reason = format!("{name} has {len} tokens, the other arrays {common}; the tokens are left out");
                report.warn(Warning::kept(line, t.field("tokens"), reason));
                new_tokens = NewTokens::default();
            }
            if self.builder.add_trajectory(key, group, tree, leaf, &outcome, &new_tokens).is_none() {
                report.warn(Warning::skipped(line, t.field("trajectory"), format!("the id {key:?} was given before")));
            }
        }
        Ok(())
    }
}

/// A non-empty text of a column.
fn get(column: Option<&Column>, row: usize) -> Option<&str> {
    column.and_then(|c| c.str(row)).filter(|s| !s.is_empty())
}

fn mc(n: Option<&Column>, mean: Option<&Column>, row: usize) -> Option<McStats> {
    Some(McStats { n: n?.u32(row)?, mean: mean.and_then(|m| m.f32(row)).unwrap_or(f32::NAN) })
}

/// The Monte-Carlo rollouts of a row: rewards and finish reasons, from two list columns.
fn rollouts<'a>(reward: Option<&Column>, finish: Option<&'a Column>, row: usize) -> Vec<(f32, Option<&'a str>)> {
    let Some(slots) = reward.and_then(|r| r.list(row)) else { return Vec::new() };
    let reward = reward.map(|r| slots.clone().map(|i| r.f32(i).unwrap_or(f32::NAN)));
    let finishes = finish.and_then(|f| Some((f, f.list(row)?)));
    reward
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(k, r)| {
            let finish = finishes.as_ref().and_then(|(f, range)| {
                let i = range.start + k;
                (i < range.end).then(|| f.str(i)).flatten().filter(|s| !s.is_empty())
            });
            (r, finish)
        })
        .collect()
}

fn list_strings(column: Option<&Column>, row: usize) -> Vec<&str> {
    let Some((column, slots)) = column.and_then(|c| Some((c, c.list(row)?))) else { return Vec::new() };
    slots.map(|i| column.str(i).unwrap_or("")).collect()
}

/// A text column of a file, or only which of its rows have a text (when texts are left in the
/// file): from the file's `text_mask` column, or from the column's nulls.
enum Texts {
    Read(Option<Column>),
    Mask(Column, u8),
    Valid(Column),
}

impl Texts {
    fn get(&self, row: usize) -> Option<&str> {
        match self {
            Self::Read(column) => get(column.as_ref(), row),
            _ => None,
        }
    }

    fn there(&self, row: usize) -> bool {
        match self {
            Self::Read(column) => get(column.as_ref(), row).is_some(),
            Self::Mask(mask, bit) => mask.int(row).is_some_and(|m| m & i64::from(*bit) != 0),
            Self::Valid(valid) => valid.is_valid(row),
        }
    }
}

/// The columns of a `steps` file besides the node, parent, group and tree.
struct StepColumns {
    key: Option<Column>,
    kind: Option<Column>,
    role: Option<Column>,
    /// thought, action, observation.
    texts: [Texts; 3],
    env_reward: Option<Column>,
    state: Option<Column>,
    first_error: Option<Column>,
    invalid_action: Option<Column>,
    selected: Option<Column>,
    scores: Vec<(String, Column)>,
    mc_n: Option<Column>,
    mc_mean: Option<Column>,
    rollout_reward: Option<Column>,
    rollout_finish: Option<Column>,
    docs: Option<Column>,
    token_start: Option<Column>,
    token_end: Option<Column>,
}

impl StepColumns {
    fn of(t: &Table<'_>) -> Result<Self, LoadError> {
        Ok(Self {
            key: t.str("node_key")?,
            kind: t.str("kind")?,
            role: t.str("role")?,
            texts: [t.text(0)?, t.text(1)?, t.text(2)?],
            env_reward: t.f32("env_reward")?,
            state: t.str("state")?,
            first_error: t.bool("first_error")?,
            invalid_action: t.bool("invalid_action")?,
            selected: t.bool("selected")?,
            scores: t.prefixed_f32("score_")?,
            mc_n: t.u32("mc_n")?,
            mc_mean: t.f32("mc_mean")?,
            rollout_reward: t.list("mc_rollout_reward")?,
            rollout_finish: t.list("mc_rollout_finish")?,
            docs: t.list("docs")?,
            token_start: t.u32("token_start")?,
            token_end: t.u32("token_end")?,
        })
    }

    /// The step of one row (its rollouts and documents are added by the caller; its texts are
    /// there only when they were read).
    fn step(&self, row: usize) -> NewStep<'_> {
        let flag = |c: &Option<Column>| c.as_ref().and_then(|c| c.bool(row));
        let u32_of = |c: &Option<Column>| c.as_ref().and_then(|c| c.u32(row));
        let span = u32_of(&self.token_start).zip(u32_of(&self.token_end)).map(<[u32; 2]>::from);
        NewStep {
            key: get(self.key.as_ref(), row),
            kind: get(self.kind.as_ref(), row),
            role: get(self.role.as_ref(), row),
            thought: self.texts[0].get(row),
            action: self.texts[1].get(row),
            observation: self.texts[2].get(row),
            scores: self.scores.iter().filter_map(|(name, c)| Some((name.as_str(), c.f32(row)?))).collect(),
            env_reward: self.env_reward.as_ref().and_then(|c| c.f32(row)),
            state_key: get(self.state.as_ref(), row),
            mc: mc(self.mc_n.as_ref(), self.mc_mean.as_ref(), row),
            mc_rollouts: Vec::new(),
            first_error: flag(&self.first_error),
            invalid_action: flag(&self.invalid_action).unwrap_or(false),
            unselected: flag(&self.selected) == Some(false),
            docs: Vec::new(),
            token_span: span,
        }
    }
}

/// One trajectory's token arrays, owned.
#[derive(Default)]
struct TokenArrays<'a> {
    mask: Option<Vec<bool>>,
    floats: [Option<Vec<f32>>; TOKEN_FLOATS.len()],
    text: Option<Vec<&'a str>>,
}

impl TokenArrays<'_> {
    fn borrow(&self) -> NewTokens<'_> {
        let f = |i: usize| self.floats[i].as_deref();
        NewTokens {
            mask: self.mask.as_deref(),
            reward: f(0),
            logprob: f(1),
            ref_logprob: f(2),
            value: f(3),
            entropy: f(4),
            sum_pi_squared: f(5),
            prm_logprob: f(6),
            advantage: f(7),
            trainer_logprob: f(8),
            text: self.text.as_deref(),
        }
    }
}

/// The columns of a `tokens` file, with each trajectory's row.
struct TokenColumns {
    rows: HashMap<String, usize>,
    mask: Option<Column>,
    floats: Vec<Option<Column>>,
    text: Option<Column>,
}

impl TokenColumns {
    fn of(t: &Table<'_>) -> Result<Self, LoadError> {
        let key = t.required_str("trajectory")?;
        let rows = (0..t.rows()).filter_map(|row| Some((key.str(row)?.to_owned(), row))).collect();
        let floats = TOKEN_FLOATS.iter().map(|name| t.list(name)).collect::<Result<_, _>>()?;
        Ok(Self { rows, mask: t.list("mask")?, floats, text: t.list("text")? })
    }

    fn arrays(&self, trajectory: &str) -> TokenArrays<'_> {
        let Some(&row) = self.rows.get(trajectory) else { return TokenArrays::default() };
        fn slots(column: Option<&Column>, row: usize) -> Option<(&Column, std::ops::Range<usize>)> {
            column.and_then(|c| Some((c, c.list(row)?)))
        }
        let mut arrays = TokenArrays::default();
        if let Some((mask, slots)) = slots(self.mask.as_ref(), row) {
            arrays.mask = Some(slots.map(|i| mask.bool(i).unwrap_or(true)).collect());
        }
        for (slot, column) in arrays.floats.iter_mut().zip(&self.floats) {
            if let Some((values, slots)) = slots(column.as_ref(), row) {
                *slot = Some(slots.map(|i| values.f32(i).unwrap_or(f32::NAN)).collect());
            }
        }
        if let Some((text, slots)) = slots(self.text.as_ref(), row) {
            arrays.text = Some(slots.map(|i| text.str(i).unwrap_or("")).collect());
        }
        arrays
    }
}

/// One Parquet file of a part: its footer, and the bytes read of it.
struct Table<'b> {
    path: String,
    meta: ParquetMeta,
    bytes: &'b FileBytes,
    /// Texts are left in the file: text columns are read only for which rows have one.
    lazy: bool,
}

impl<'b> Table<'b> {
    fn parse(path: String, bytes: &'b FileBytes, lazy: bool) -> Result<Self, LoadError> {
        match bytes.meta() {
            Ok(meta) => Ok(Self { path, meta, bytes, lazy }),
            Err(e) => Err(LoadError::Incompatible { format: FORMAT_NAME, reason: format!("unreadable Parquet: {e}") }
                .with_path(&path)),
        }
    }

    fn rows(&self) -> usize {
        usize::try_from(self.meta.rows).unwrap_or(usize::MAX)
    }

    /// A warning's field: the file and the column.
    fn field(&self, column: &str) -> String {
        format!("{}: {column}", self.path)
    }

    fn wrong(&self, reason: String) -> LoadError {
        LoadError::Incompatible { format: FORMAT_NAME, reason }.with_path(&self.path)
    }

    /// Column `name` decoded (only its nulls when `values` is false), `None` when the file
    /// lacks it (written before it first appeared). Its rows must be the file's.
    fn column(&self, name: &str, values: bool) -> Result<Option<Column>, LoadError> {
        let Some(leaf) = self.meta.leaf(name) else { return Ok(None) };
        let mut chunks = Vec::new();
        for chunk in self.meta.chunks(leaf) {
            match self.bytes.get(chunk.start, chunk.len) {
                Some(bytes) => chunks.push(bytes),
                None => return Err(self.wrong(format!("column {name}: its bytes were not read"))),
            }
        }
        let decode =
            if values { crate::load::parquet_file::decode } else { crate::load::parquet_file::decode_validity };
        let column = decode(&self.meta, leaf, &chunks).map_err(|e| self.wrong(e))?;
        let rows = column.lists.as_ref().map_or_else(|| column.slots(), |(_, there)| there.len());
        if rows != self.rows() {
            return Err(self.wrong(format!("column {name} has {rows} rows, the file {}", self.rows())));
        }
        Ok(Some(column))
    }

    /// A flat column whose values `accepts`, named by `what` in the error when not.
    fn typed(&self, name: &str, what: &str, accepts: fn(&Column) -> bool) -> Result<Option<Column>, LoadError> {
        let Some(column) = self.column(name, true)? else { return Ok(None) };
        if column.lists.is_some() || !accepts(&column) {
            let found = if column.lists.is_some() { "lists" } else { column.type_name() };
            return Err(self.wrong(format!("column {name}: {found} where {what} belong")));
        }
        Ok(Some(column))
    }

    fn str(&self, name: &str) -> Result<Option<Column>, LoadError> {
        self.typed(name, "texts", |c| matches!(c.values, crate::load::parquet_file::Values::Text { .. }))
    }

    fn f32(&self, name: &str) -> Result<Option<Column>, LoadError> {
        use crate::load::parquet_file::Values;
        self.typed(name, "numbers", |c| matches!(c.values, Values::F32(_) | Values::F64(_) | Values::Int(_)))
    }

    fn u32(&self, name: &str) -> Result<Option<Column>, LoadError> {
        self.u64(name)
    }

    fn u64(&self, name: &str) -> Result<Option<Column>, LoadError> {
        self.typed(name, "integers", |c| matches!(c.values, crate::load::parquet_file::Values::Int(_)))
    }

    fn bool(&self, name: &str) -> Result<Option<Column>, LoadError> {
        self.typed(name, "booleans", |c| matches!(c.values, crate::load::parquet_file::Values::Bool(_)))
    }

    fn list(&self, name: &str) -> Result<Option<Column>, LoadError> {
        let Some(column) = self.column(name, true)? else { return Ok(None) };
        if column.lists.is_none() {
            return Err(self.wrong(format!("column {name}: {} where lists belong", column.type_name())));
        }
        Ok(Some(column))
    }

    /// Text column `code` of [`TEXT_COLUMNS`]: read, or (texts left in the file) which rows
    /// have one.
    fn text(&self, code: usize) -> Result<Texts, LoadError> {
        let name = TEXT_COLUMNS[code];
        if !self.lazy {
            return Ok(Texts::Read(self.str(name)?));
        }
        if let Some(mask) = self.u32(TEXT_MASK)? {
            return Ok(Texts::Mask(mask, 1 << code));
        }
        Ok(match self.column(name, false)? {
            Some(valid) => Texts::Valid(valid),
            None => Texts::Read(None),
        })
    }

    fn required(&self, name: &str, column: Option<Column>) -> Result<Column, LoadError> {
        column.ok_or_else(|| self.wrong(format!("no column {name}")))
    }

    fn required_str(&self, name: &str) -> Result<Column, LoadError> {
        let column = self.str(name)?;
        self.required(name, column)
    }

    fn required_u64(&self, name: &str) -> Result<Column, LoadError> {
        let column = self.u64(name)?;
        self.required(name, column)
    }

    /// Every column named `<prefix><name>`, as (name, values).
    fn prefixed_f32(&self, prefix: &str) -> Result<Vec<(String, Column)>, LoadError> {
        let mut out = Vec::new();
        for leaf in &self.meta.leaves {
            if let Some(short) = leaf.name.strip_prefix(prefix)
                && let Some(values) = self.f32(&leaf.name)?
            {
                out.push((short.to_owned(), values));
            }
        }
        Ok(out)
    }
}
