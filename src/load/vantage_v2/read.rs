//! Reading the parts of a vantage Parquet v2 dataset into a run: each part's `groups`,
//! `trajectories`, `steps` and `tokens` files, given as bytes (natively `crate::dataset` reads
//! them from disk, only for the partitions asked for), added to one [`RunBuilder`]. A row that
//! cannot be used (a parent or leaf that is not in its part, a trajectory id given twice, token
//! arrays of different lengths) is a warning that names the file, the row and the column; the
//! rest loads.

use std::collections::HashMap;

use polars::prelude::{
    BooleanChunked, ChunkedArray, DataFrame, DataType, Float32Chunked, ListChunked, ParquetReader, SerReader as _,
    StringChunked, UInt32Chunked, UInt64Chunked,
};

use super::manifest::{Manifest, Partition};
use crate::load::{LoadError, LoadReport};
use crate::model::{GroupId, McStats, NewGroup, NewStep, NewTokens, NodeId, Outcome, Run, RunBuilder, TreeId, Warning};

/// The format name shown to users.
pub const FORMAT_NAME: &str = "vantage Parquet v2";

/// The files of one part of a partition, as bytes (`tokens` is absent when the part has none).
pub struct PartBytes {
    /// `groups-<part>.parquet`.
    pub groups: Vec<u8>,
    /// `trajectories-<part>.parquet`.
    pub trajectories: Vec<u8>,
    /// `steps-<part>.parquet`.
    pub steps: Vec<u8>,
    /// `tokens-<part>.parquet`, if written.
    pub tokens: Option<Vec<u8>>,
}

/// A run being read from the parts of a dataset.
pub struct DatasetReader {
    builder: RunBuilder,
    /// The dataset's id of each node added, in arena order.
    node_ids: Vec<u64>,
    /// Texts are left in the files ([`text_key`]): the part files they are in, by index.
    lazy: Option<Vec<String>>,
}

/// The text columns that can be left in the files, by their code in a [`text_key`].
pub const TEXT_COLUMNS: [&str; 5] = ["thought", "action", "observation", "prompt", "gold"];

/// The key of a text left in a file: the file's index among those the reader registered, the
/// column's index in [`TEXT_COLUMNS`], and the row.
pub fn text_key(file: usize, column: usize, row: usize) -> u64 {
    ((file as u64) << 36) | ((column as u64) << 32) | row as u64
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

    /// The ids of a row's texts left in file `file`: one per column of `columns` (codes into
    /// [`TEXT_COLUMNS`]), none for an empty text.
    fn external<const N: usize>(
        &mut self,
        file: usize,
        row: usize,
        columns: [(usize, Option<&str>); N],
    ) -> [crate::model::TextId; N] {
        columns.map(|(code, text)| match text {
            Some(t) if !t.is_empty() => self.builder.push_external_text(text_key(file, code, row)),
            _ => crate::model::TextId::NONE,
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
        let groups = Table::parse(partition.file("groups", part), &files.groups)?;
        self.add_groups(&groups, partition.train_step)?;
        let steps = Table::parse(partition.file("steps", part), &files.steps)?;
        let nodes = self.add_steps(&steps, partition.train_step, report)?;
        let tokens = match &files.tokens {
            Some(bytes) => Some(Table::parse(partition.file("tokens", part), bytes)?),
            None => None,
        };
        let trajectories = Table::parse(partition.file("trajectories", part), &files.trajectories)?;
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

    fn add_groups(&mut self, t: &Table, train_step: Option<i64>) -> Result<(), LoadError> {
        let key = t.required_str("group")?;
        let (task, prompt, gold) = (t.str("task")?, t.str("prompt")?, t.str("gold")?);
        let (mc_n, mc_mean) = (t.u32("mc_n")?, t.f32("mc_mean")?);
        let (reward, finish) = (t.list("mc_rollout_reward")?, t.list("mc_rollout_finish")?);
        let file = self.register(&t.path);
        for row in 0..t.height() {
            let Some(key) = key.get(row) else { continue };
            let rollouts = rollouts(reward.as_ref(), finish.as_ref(), row)?;
            let (prompt, gold) = (get(prompt.as_ref(), row), get(gold.as_ref(), row));
            let fresh = self.builder.group(key).is_none();
            let group = NewGroup {
                key,
                task: get(task.as_ref(), row),
                train_step,
                prompt: if file.is_some() { None } else { prompt },
                gold: if file.is_some() { None } else { gold },
                mc: mc(mc_n.as_ref(), mc_mean.as_ref(), row),
                mc_rollouts: rollouts.iter().map(|(r, f)| (*r, f.as_deref())).collect(),
            };
            let (id, _) = self.builder.add_group(&group);
            if let (Some(file), true) = (file, fresh) {
                let texts = self.external(file, row, [(3, prompt), (4, gold)]);
                self.builder.set_group_texts(id, texts);
            }
        }
        Ok(())
    }

    /// Adds the nodes of a `steps` file, parents first; returns each node id's node.
    fn add_steps(
        &mut self,
        t: &Table,
        train_step: Option<i64>,
        report: &mut LoadReport,
    ) -> Result<HashMap<u64, NodeId>, LoadError> {
        let (node, group) = (t.required_u64("node")?, t.required_str("group")?);
        let (parent, tree) = (t.u64("parent")?, t.str("tree")?);
        let s = StepColumns::of(t)?;
        let file = self.register(&t.path);
        let mut nodes = HashMap::with_capacity(t.height());
        for row in 0..t.height() {
            let (Some(id), Some(group_key)) = (node.get(row), group.get(row)) else {
                report.warn(Warning::skipped(row as u64 + 1, t.field("node"), "no node id or group"));
                continue;
            };
            let parent_node = match parent.as_ref().and_then(|p| p.get(row)) {
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
            let rollouts = rollouts(s.rollout_reward.as_ref(), s.rollout_finish.as_ref(), row)?;
            let docs = list_strings(s.docs.as_ref(), row, &t.field("docs"))?;
            let mut step = s.step(row);
            step.mc_rollouts = rollouts.iter().map(|(r, f)| (*r, f.as_deref())).collect();
            step.docs = docs.iter().map(String::as_str).collect();
            let texts = [(0, step.thought), (1, step.action), (2, step.observation)];
            if file.is_some() {
                (step.thought, step.action, step.observation) = (None, None, None);
            }
            let node = self.builder.add_node(group, parent_node, &step);
            if let Some(file) = file {
                let texts = self.external(file, row, texts);
                self.builder.set_node_texts(node, texts);
            }
            nodes.insert(id, node);
            self.node_ids.push(id);
        }
        Ok(nodes)
    }

    fn add_trajectories(
        &mut self,
        t: &Table,
        tokens: Option<&Table>,
        nodes: &HashMap<u64, NodeId>,
        train_step: Option<i64>,
        report: &mut LoadReport,
    ) -> Result<(), LoadError> {
        let (key, group, leaf) = (t.required_str("trajectory")?, t.required_str("group")?, t.required_u64("leaf")?);
        let (tree, reward, success, finish) = (t.str("tree")?, t.f32("reward")?, t.bool("success")?, t.str("finish")?);
        let components = t.prefixed_f32("component_")?;
        let tokens = tokens.map(TokenColumns::of).transpose()?;
        for row in 0..t.height() {
            let line = row as u64 + 1;
            let (Some(key), Some(group_key)) = (key.get(row), group.get(row)) else {
                report.warn(Warning::skipped(line, t.field("trajectory"), "no trajectory id or group"));
                continue;
            };
            let Some(&leaf) = leaf.get(row).and_then(|l| nodes.get(&l)) else {
                report.warn(Warning::skipped(line, t.field("leaf"), "not a node of this part's steps file"));
                continue;
            };
            let group = self.group(group_key, train_step);
            let tree = get(tree.as_ref(), row).and_then(|k| self.builder.tree(k)).unwrap_or(TreeId::NONE);
            let outcome = Outcome {
                reward: reward.as_ref().and_then(|r| r.get(row)),
                success: success.as_ref().and_then(|s| s.get(row)),
                components: components.iter().filter_map(|(name, c)| Some((name.as_str(), c.get(row)?))).collect(),
                finish: get(finish.as_ref(), row),
            };
            let arrays = match &tokens {
                Some(columns) => columns.arrays(key)?,
                None => TokenArrays::default(),
            };
            let text: Option<Vec<&str>> = arrays.text.as_ref().map(|t| t.iter().map(String::as_str).collect());
            let mut new_tokens = arrays.borrow();
            new_tokens.text = text.as_deref();
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

fn get(column: Option<&StringChunked>, row: usize) -> Option<&str> {
    column.and_then(|c| c.get(row)).filter(|s| !s.is_empty())
}

fn mc(n: Option<&UInt32Chunked>, mean: Option<&Float32Chunked>, row: usize) -> Option<McStats> {
    Some(McStats { n: n?.get(row)?, mean: mean.and_then(|m| m.get(row)).unwrap_or(f32::NAN) })
}

/// The Monte-Carlo rollouts of a row: rewards and finish reasons, from two list columns.
fn rollouts(
    reward: Option<&ListChunked>,
    finish: Option<&ListChunked>,
    row: usize,
) -> Result<Vec<(f32, Option<String>)>, LoadError> {
    let Some(rewards) = reward.and_then(|r| r.get_as_series(row)) else { return Ok(Vec::new()) };
    let rewards = cast_series(&rewards, &DataType::Float32)?;
    let rewards: Vec<f32> = rewards.f32().map_err(polars_error)?.iter().map(|v| v.unwrap_or(f32::NAN)).collect();
    let finishes: Vec<Option<String>> = match finish.and_then(|f| f.get_as_series(row)) {
        Some(series) => {
            let series = cast_series(&series, &DataType::String)?;
            series.str().map_err(polars_error)?.iter().map(|f| f.filter(|f| !f.is_empty()).map(str::to_owned)).collect()
        }
        None => Vec::new(),
    };
    Ok(rewards.into_iter().enumerate().map(|(i, r)| (r, finishes.get(i).cloned().flatten())).collect())
}

fn list_strings(column: Option<&ListChunked>, row: usize, field: &str) -> Result<Vec<String>, LoadError> {
    let Some(series) = column.and_then(|c| c.get_as_series(row)) else { return Ok(Vec::new()) };
    let series = cast_series(&series, &DataType::String).map_err(|e| e.with_path(field))?;
    Ok(series.str().map_err(polars_error)?.iter().map(|s| s.unwrap_or("").to_owned()).collect())
}

fn cast_series(series: &polars::prelude::Series, to: &DataType) -> Result<polars::prelude::Series, LoadError> {
    series.strict_cast(to).map_err(polars_error)
}

#[expect(clippy::needless_pass_by_value, reason = "used as map_err(polars_error)")]
fn polars_error(err: polars::prelude::PolarsError) -> LoadError {
    LoadError::Incompatible { format: FORMAT_NAME, reason: err.to_string() }
}

/// The columns of a `steps` file besides the node, parent, group and tree.
struct StepColumns {
    key: Option<StringChunked>,
    kind: Option<StringChunked>,
    role: Option<StringChunked>,
    thought: Option<StringChunked>,
    action: Option<StringChunked>,
    observation: Option<StringChunked>,
    env_reward: Option<Float32Chunked>,
    state: Option<StringChunked>,
    first_error: Option<BooleanChunked>,
    invalid_action: Option<BooleanChunked>,
    selected: Option<BooleanChunked>,
    scores: Vec<(String, Float32Chunked)>,
    mc_n: Option<UInt32Chunked>,
    mc_mean: Option<Float32Chunked>,
    rollout_reward: Option<ListChunked>,
    rollout_finish: Option<ListChunked>,
    docs: Option<ListChunked>,
    token_start: Option<UInt32Chunked>,
    token_end: Option<UInt32Chunked>,
}

impl StepColumns {
    fn of(t: &Table) -> Result<Self, LoadError> {
        Ok(Self {
            key: t.str("node_key")?,
            kind: t.str("kind")?,
            role: t.str("role")?,
            thought: t.str("thought")?,
            action: t.str("action")?,
            observation: t.str("observation")?,
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

    /// The step of one row (its rollouts and documents are added by the caller).
    fn step(&self, row: usize) -> NewStep<'_> {
        let flag = |c: &Option<BooleanChunked>| c.as_ref().and_then(|c| c.get(row));
        let span = match (
            self.token_start.as_ref().and_then(|c| c.get(row)),
            self.token_end.as_ref().and_then(|c| c.get(row)),
        ) {
            (Some(start), Some(end)) => Some([start, end]),
            _ => None,
        };
        NewStep {
            key: get(self.key.as_ref(), row),
            kind: get(self.kind.as_ref(), row),
            role: get(self.role.as_ref(), row),
            thought: get(self.thought.as_ref(), row),
            action: get(self.action.as_ref(), row),
            observation: get(self.observation.as_ref(), row),
            scores: self.scores.iter().filter_map(|(name, c)| Some((name.as_str(), c.get(row)?))).collect(),
            env_reward: self.env_reward.as_ref().and_then(|c| c.get(row)),
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
struct TokenArrays {
    mask: Option<Vec<bool>>,
    floats: [Option<Vec<f32>>; 8],
    text: Option<Vec<String>>,
}

impl TokenArrays {
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
            text: None,
        }
    }
}

/// The columns of a `tokens` file, with each trajectory's row.
struct TokenColumns {
    field: String,
    rows: HashMap<String, usize>,
    mask: Option<ListChunked>,
    floats: Vec<Option<ListChunked>>,
    text: Option<ListChunked>,
}

impl TokenColumns {
    fn of(t: &Table) -> Result<Self, LoadError> {
        let key = t.required_str("trajectory")?;
        let rows = (0..t.height()).filter_map(|row| Some((key.get(row)?.to_owned(), row))).collect();
        let floats = super::write::TOKEN_FLOATS.iter().map(|name| t.list(name)).collect::<Result<_, _>>()?;
        Ok(Self { field: t.field("tokens"), rows, mask: t.list("mask")?, floats, text: t.list("text")? })
    }

    fn arrays(&self, trajectory: &str) -> Result<TokenArrays, LoadError> {
        let Some(&row) = self.rows.get(trajectory) else { return Ok(TokenArrays::default()) };
        let series =
            |column: &Option<ListChunked>, to: &DataType| -> Result<Option<polars::prelude::Series>, LoadError> {
                match column.as_ref().and_then(|c| c.get_as_series(row)) {
                    Some(series) => cast_series(&series, to).map(Some).map_err(|e| e.with_path(&self.field)),
                    None => Ok(None),
                }
            };
        let mut arrays = TokenArrays::default();
        if let Some(mask) = series(&self.mask, &DataType::Boolean)? {
            arrays.mask = Some(mask.bool().map_err(polars_error)?.iter().map(|m| m.unwrap_or(true)).collect());
        }
        for (slot, column) in arrays.floats.iter_mut().zip(&self.floats) {
            if let Some(values) = series(column, &DataType::Float32)? {
                *slot = Some(values.f32().map_err(polars_error)?.iter().map(|v| v.unwrap_or(f32::NAN)).collect());
            }
        }
        if let Some(text) = series(&self.text, &DataType::String)? {
            arrays.text = Some(text.str().map_err(polars_error)?.iter().map(|s| s.unwrap_or("").to_owned()).collect());
        }
        Ok(arrays)
    }
}

/// One Parquet file of a part, read whole.
struct Table {
    path: String,
    frame: DataFrame,
}

impl Table {
    fn parse(path: String, bytes: &[u8]) -> Result<Self, LoadError> {
        let located = |reason: String| LoadError::Incompatible { format: FORMAT_NAME, reason }.with_path(&path);
        crate::load::parquet_guard::check(bytes).map_err(|e| located(format!("damaged Parquet: {e}")))?;
        let read = || ParquetReader::new(std::io::Cursor::new(bytes)).finish();
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)) {
            Ok(Ok(frame)) => Ok(Self { path, frame }),
            Ok(Err(e)) => Err(located(format!("unreadable Parquet ({e})"))),
            Err(_) => Err(located("unreadable Parquet (the reader stopped on it: a damaged file?)".to_owned())),
        }
    }

    fn height(&self) -> usize {
        self.frame.height()
    }

    /// A warning's field: the file and the column.
    fn field(&self, column: &str) -> String {
        format!("{}: {column}", self.path)
    }

    /// A column cast to `to`, `None` when the file lacks it (written before it first appeared).
    fn typed<T: polars::prelude::PolarsDataType>(
        &self,
        name: &str,
        to: &DataType,
        pick: impl Fn(&polars::prelude::Series) -> polars::prelude::PolarsResult<&ChunkedArray<T>>,
    ) -> Result<Option<ChunkedArray<T>>, LoadError> {
        let Ok(column) = self.frame.column(name) else { return Ok(None) };
        let wrong = |e: polars::prelude::PolarsError| {
            LoadError::Incompatible { format: FORMAT_NAME, reason: format!("column {name}: {e}") }.with_path(&self.path)
        };
        let series = column.as_materialized_series().strict_cast(to).map_err(wrong)?;
        pick(&series).map(|ca| Some(ca.rechunk().into_owned())).map_err(wrong)
    }

    fn str(&self, name: &str) -> Result<Option<StringChunked>, LoadError> {
        self.typed(name, &DataType::String, polars::prelude::Series::str)
    }

    fn f32(&self, name: &str) -> Result<Option<Float32Chunked>, LoadError> {
        self.typed(name, &DataType::Float32, polars::prelude::Series::f32)
    }

    fn u32(&self, name: &str) -> Result<Option<UInt32Chunked>, LoadError> {
        self.typed(name, &DataType::UInt32, polars::prelude::Series::u32)
    }

    fn u64(&self, name: &str) -> Result<Option<UInt64Chunked>, LoadError> {
        self.typed(name, &DataType::UInt64, polars::prelude::Series::u64)
    }

    fn bool(&self, name: &str) -> Result<Option<BooleanChunked>, LoadError> {
        self.typed(name, &DataType::Boolean, polars::prelude::Series::bool)
    }

    fn list(&self, name: &str) -> Result<Option<ListChunked>, LoadError> {
        let Ok(column) = self.frame.column(name) else { return Ok(None) };
        match column.as_materialized_series().list() {
            Ok(list) => Ok(Some(list.clone())),
            Err(e) => Err(LoadError::Incompatible { format: FORMAT_NAME, reason: format!("column {name}: {e}") }
                .with_path(&self.path)),
        }
    }

    fn required<T>(&self, name: &str, column: Option<T>) -> Result<T, LoadError> {
        column.ok_or_else(|| {
            LoadError::Incompatible { format: FORMAT_NAME, reason: format!("no column {name}") }.with_path(&self.path)
        })
    }

    fn required_str(&self, name: &str) -> Result<StringChunked, LoadError> {
        let column = self.str(name)?;
        self.required(name, column)
    }

    fn required_u64(&self, name: &str) -> Result<UInt64Chunked, LoadError> {
        let column = self.u64(name)?;
        self.required(name, column)
    }

    /// Every column named `<prefix><name>`, as (name, values).
    fn prefixed_f32(&self, prefix: &str) -> Result<Vec<(String, Float32Chunked)>, LoadError> {
        let mut out = Vec::new();
        for name in self.frame.get_column_names() {
            if let Some(short) = name.strip_prefix(prefix)
                && let Some(values) = self.f32(name)?
            {
                out.push((short.to_owned(), values));
            }
        }
        Ok(out)
    }
}
