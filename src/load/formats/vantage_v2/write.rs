//! Writing a run, piece by piece, as a vantage Parquet v2 dataset: each piece (a whole run, or a
//! segment of a stream) becomes one part of every partition it has rows in, as Parquet bytes with
//! their paths; the manifest is made from what every piece added. Nothing here touches the
//! filesystem: `source::dataset` writes the files.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use polars::prelude::{
    Column, DataFrame, DataType, Float32Type, IntoColumn as _, IntoSeries as _, ListBooleanChunkedBuilder,
    ListBuilderTrait as _, ListPrimitiveChunkedBuilder, ListStringChunkedBuilder, ParquetWriter,
};

use super::manifest::{FORMAT, Manifest, Partition, VERSION};
use super::read::TOKEN_FLOATS;
use crate::model::{NodeId, Run, TrajectoryId};

/// One file of the dataset: its path under the root, and its bytes.
pub struct DatasetFile {
    /// Relative path, `train_step=17/steps-00000.parquet`.
    pub path: String,
    /// Parquet bytes.
    pub bytes: Vec<u8>,
}

/// The state of a dataset being written: what earlier pieces placed, and the manifest so far.
#[derive(Default)]
pub struct DatasetWriter {
    /// The partition of every group written, by key: a group met again in a later piece of a
    /// stream goes where it first went, and its row is not written twice.
    group_partition: HashMap<String, Option<i64>>,
    /// The id of the next node (node ids are unique in the dataset).
    next_node: u64,
    partitions: BTreeMap<(bool, i64), Partition>,
    scores: BTreeSet<String>,
    components: BTreeSet<String>,
    token_columns: BTreeSet<String>,
    labels: BTreeMap<String, BTreeSet<String>>,
    header: Option<serde_json::Value>,
}

/// Which rows of one piece go to one partition.
#[derive(Default)]
struct Rows {
    groups: Vec<usize>,
    trajectories: Vec<usize>,
    nodes: Vec<usize>,
}

impl DatasetWriter {
    /// A writer with nothing written.
    pub fn new() -> Self {
        Self::default()
    }

    /// The files of one piece of the run: one part of each partition the piece has rows in, each
    /// handed to `sink` as soon as it is made (so only one partition's tables are held at a time).
    /// The header is taken from the first piece.
    pub fn write(&mut self, run: &Run, sink: &mut dyn FnMut(DatasetFile) -> Result<(), String>) -> Result<(), String> {
        if self.header.is_none() {
            self.header = Some(header(run));
        }
        self.note_names(run);
        let mut by_partition: BTreeMap<(bool, i64), Rows> = BTreeMap::new();
        let mut group_step = Vec::with_capacity(run.groups.len());
        for group in run.groups.ids() {
            let key = run.group_key(group);
            let (step, new) = if let Some(&step) = self.group_partition.get(key) {
                (step, false)
            } else {
                let step = run.groups.train_step[group.index()];
                self.group_partition.insert(key.to_owned(), step);
                (step, true)
            };
            group_step.push(step);
            let rows = by_partition.entry(sort_key(step)).or_default();
            if new {
                rows.groups.push(group.index());
            }
        }
        let step_of = |group: crate::model::GroupId| group_step.get(group.index()).copied().flatten();
        for trajectory in run.trajectories.ids() {
            let step = step_of(run.trajectories.group[trajectory.index()]);
            by_partition.entry(sort_key(step)).or_default().trajectories.push(trajectory.index());
        }
        for (node, group) in run.nodes.group.iter().enumerate() {
            by_partition.entry(sort_key(step_of(*group))).or_default().nodes.push(node);
        }
        let context = Context::of(run, self);
        let mut jobs = Vec::with_capacity(by_partition.len());
        for (key, rows) in by_partition {
            let step = (!key.0).then_some(key.1);
            let partition = self.partitions.entry(key).or_insert_with(|| Partition {
                train_step: step,
                dir: Partition::dir_of(step),
                ..Partition::default()
            });
            let part = partition.parts;
            partition.parts += 1;
            count(partition, run, &rows);
            jobs.push((partition.clone(), part, rows));
        }
        // The partitions are encoded on every core, and handed to `sink` in order as they are done.
        let mut failed = None;
        let mut written: Vec<(String, u64)> = Vec::new();
        crate::par::pipeline(
            jobs,
            |(partition, part, rows)| partition_files(&context, &partition, part, &rows),
            |files| match files {
                Ok(files) if failed.is_none() => {
                    for file in files {
                        let (dir, len) = (file.path.split('/').next().unwrap_or("").to_owned(), file.bytes.len());
                        if let Err(err) = sink(file) {
                            failed = Some(err);
                            break;
                        }
                        written.push((dir, len as u64));
                    }
                }
                Ok(_) => {}
                Err(err) => failed = failed.take().or(Some(err)),
            },
        );
        for (dir, len) in written {
            if let Some(partition) = self.partitions.values_mut().find(|p| p.dir == dir) {
                partition.bytes += len;
            }
        }
        self.next_node += run.nodes.len() as u64;
        failed.map_or(Ok(()), Err)
    }

    /// Adds the names and labels of `run` to those the manifest lists.
    fn note_names(&mut self, run: &Run) {
        self.scores.extend(run.nodes.scores.keys().cloned());
        self.components.extend(run.trajectories.components.keys().cloned());
        let tk = &run.tokens;
        if tk.mask.is_some() {
            self.token_columns.insert("mask".to_owned());
        }
        for (name, column) in TOKEN_FLOATS.iter().zip(float_token_columns(run)) {
            if column.is_some() {
                self.token_columns.insert((*name).to_owned());
            }
        }
        if tk.text.is_some() {
            self.token_columns.insert("text".to_owned());
        }
        for (column, syms) in
            [("kind", &run.nodes.kind), ("role", &run.nodes.role), ("finish", &run.trajectories.finish)]
        {
            let set = self.labels.entry(column.to_owned()).or_default();
            let distinct: BTreeSet<_> = syms.iter().filter(|s| s.get().is_some()).collect();
            set.extend(distinct.into_iter().map(|&s| run.label(s).to_owned()));
        }
    }

    /// The manifest of everything written so far.
    pub fn manifest(&self) -> Manifest {
        Manifest {
            format: FORMAT.to_owned(),
            version: VERSION,
            header: self.header.clone().unwrap_or_else(|| serde_json::json!({ "vantage": 1 })),
            scores: self.scores.iter().cloned().collect(),
            components: self.components.iter().cloned().collect(),
            token_columns: self.token_columns.iter().cloned().collect(),
            labels: self.labels.iter().map(|(k, v)| (k.clone(), v.iter().cloned().collect())).collect(),
            partitions: self.partitions.values().cloned().collect(),
        }
    }
}

/// The files of one part of one partition: its rows of each table as Parquet.
fn partition_files(c: &Context<'_>, partition: &Partition, part: u32, rows: &Rows) -> Result<Vec<DatasetFile>, String> {
    let mut files = Vec::with_capacity(4);
    let frames = [
        ("groups", Some(groups_frame(c.run, &rows.groups).map_err(|e| e.to_string())?)),
        ("trajectories", Some(trajectories_frame(c, &rows.trajectories).map_err(|e| e.to_string())?)),
        ("steps", Some(steps_frame(c, &rows.nodes).map_err(|e| e.to_string())?)),
        ("tokens", tokens_frame(c, &rows.trajectories).map_err(|e| e.to_string())?),
    ];
    for (table, frame) in frames {
        if let Some(frame) = frame {
            let path = partition.file(table, part);
            files.push(DatasetFile { bytes: parquet(frame).map_err(|e| format!("{path}: {e}"))?, path });
        }
    }
    Ok(files)
}

/// Partitions sort by training step, the null partition last.
fn sort_key(step: Option<i64>) -> (bool, i64) {
    (step.is_none(), step.unwrap_or(0))
}

/// Adds one piece's rows to a partition's counts.
fn count(partition: &mut Partition, run: &Run, rows: &Rows) {
    let tr = &run.trajectories;
    partition.groups += rows.groups.len() as u64;
    partition.trajectories += rows.trajectories.len() as u64;
    partition.steps += rows.nodes.len() as u64;
    for &t in &rows.trajectories {
        let id = TrajectoryId::from_index(t);
        partition.tokens += tr.token_range(id).len() as u64;
        if !tr.reward[t].is_nan() {
            partition.rewarded += 1;
            partition.reward_sum += f64::from(tr.reward[t]);
        }
        if let Some(success) = tr.success[t] {
            partition.with_success += 1;
            partition.successes += u64::from(success);
        }
    }
}

/// The header as vantage JSONL writes it.
pub fn header(run: &Run) -> serde_json::Value {
    let mut header = serde_json::Map::new();
    header.insert("vantage".to_owned(), serde_json::Value::from(1));
    let (name, meta) = crate::load::formats::vantage_jsonl::write::header_fields(run);
    if let Some(name) = name {
        header.insert("name".to_owned(), serde_json::Value::from(name));
    }
    if !meta.is_empty() {
        header.insert("meta".to_owned(), serde_json::Value::Object(meta));
    }
    serde_json::Value::Object(header)
}

/// What the frames of one piece read besides the run: node ids, the trajectory of each chain
/// node, each node's step index, and the names every file of a table carries.
struct Context<'r> {
    run: &'r Run,
    first_node: u64,
    node_trajectory: Vec<TrajectoryId>,
    node_tree: Vec<crate::model::TreeId>,
    node_step: Vec<u32>,
    scores: Vec<String>,
    components: Vec<String>,
    token_columns: BTreeSet<String>,
}

impl<'r> Context<'r> {
    fn of(run: &'r Run, writer: &DatasetWriter) -> Self {
        let mut node_trajectory = vec![TrajectoryId::NONE; run.nodes.len()];
        let mut node_tree = vec![crate::model::TreeId::NONE; run.nodes.len()];
        for trajectory in run.trajectories.ids() {
            let tree = run.trajectories.tree[trajectory.index()];
            for node in run.trajectories.path(trajectory) {
                if tree.get().is_none() {
                    node_trajectory[node.index()] = trajectory;
                } else {
                    node_tree[node.index()] = tree;
                }
            }
        }
        // Parents precede children, so one forward pass gives every depth.
        let mut node_step = vec![0u32; run.nodes.len()];
        for (n, parent) in run.nodes.parent.iter().enumerate() {
            if let Some(p) = parent.get().filter(|p| p.index() < n) {
                node_step[n] = node_step[p.index()] + 1;
            }
        }
        Self {
            run,
            first_node: writer.next_node,
            node_trajectory,
            node_tree,
            node_step,
            scores: writer.scores.iter().cloned().collect(),
            components: writer.components.iter().cloned().collect(),
            token_columns: writer.token_columns.clone(),
        }
    }

    fn node_id(&self, node: NodeId) -> Option<u64> {
        node.get().map(|n| self.first_node + n.index() as u64)
    }
}

/// `frame` as Parquet, zstd at level 1 (what pyarrow writes by default): level 3, polars'
/// default, made two fifths of a conversion's time compressing for files 11 % smaller.
fn parquet(mut frame: DataFrame) -> polars::prelude::PolarsResult<Vec<u8>> {
    use polars::polars_utils::compression::ZstdLevel;
    use polars::prelude::ParquetCompression;
    let mut bytes = Vec::new();
    let zstd = ParquetCompression::Zstd(Some(ZstdLevel::try_new(1)?));
    ParquetWriter::new(&mut bytes).with_compression(zstd).finish(&mut frame)?;
    Ok(bytes)
}

/// A label as a nullable string.
fn label(run: &Run, sym: crate::model::Sym) -> Option<String> {
    sym.get().is_some().then(|| run.label(sym).to_owned())
}

/// The text columns of `rows` (the texts `of` each row gives, in column order) as nullable strings
/// (`None` for an absent or empty text, as vantage JSONL omits it), and the `text_mask` column
/// (bit `1 << codes[c]` where column `c` has a text; codes into `read::TEXT_COLUMNS`). Every text
/// is read once, the rows' texts together ([`Run::texts`]).
fn text_columns<const N: usize>(
    run: &Run,
    rows: &[usize],
    codes: [u32; N],
    of: impl Fn(usize) -> [crate::model::TextId; N],
) -> ([Vec<Option<String>>; N], Vec<u32>) {
    let ids: Vec<crate::model::TextId> = rows.iter().flat_map(|&i| of(i)).collect();
    let mut texts = run.texts(&ids).into_iter();
    let mut columns: [Vec<Option<String>>; N] = std::array::from_fn(|_| Vec::with_capacity(rows.len()));
    let mut mask = Vec::with_capacity(rows.len());
    for _ in rows {
        let mut bits = 0;
        for (column, code) in columns.iter_mut().zip(codes) {
            let text = texts.next().filter(|t| !t.is_empty()).map(std::borrow::Cow::into_owned);
            bits |= u32::from(text.is_some()) << code;
            column.push(text);
        }
        mask.push(bits);
    }
    (columns, mask)
}

fn finite(value: f32) -> Option<f32> {
    (!value.is_nan()).then_some(value)
}

/// Monte-Carlo rollouts as two list columns (reward, finish), null where a row has none.
fn rollout_columns<'a>(
    prefix: &str,
    rows: impl Iterator<Item = Vec<(f32, Option<&'a str>)>>,
    len: usize,
) -> [Column; 2] {
    let mut rewards =
        ListPrimitiveChunkedBuilder::<Float32Type>::new(format!("{prefix}_reward").into(), len, len, DataType::Float32);
    let mut finishes = ListStringChunkedBuilder::new(format!("{prefix}_finish").into(), len, len);
    for rollouts in rows {
        if rollouts.is_empty() {
            rewards.append_null();
            finishes.append_null();
        } else {
            let reward: Vec<f32> = rollouts.iter().map(|r| r.0).collect();
            rewards.append_slice(&reward);
            finishes.append_values_iter(rollouts.iter().map(|r| r.1.unwrap_or("")));
        }
    }
    [rewards.finish().into_series().into_column(), finishes.finish().into_series().into_column()]
}

fn groups_frame(run: &Run, rows: &[usize]) -> polars::prelude::PolarsResult<DataFrame> {
    let g = &run.groups;
    let sym = |s: crate::model::Sym| label(run, s);
    let [rollout_reward, rollout_finish] = rollout_columns(
        "mc_rollout",
        rows.iter()
            .map(|&i| g.mc_rollouts[i].iter().map(|&(r, f)| (r, sym(f).is_some().then(|| run.label(f)))).collect()),
        rows.len(),
    );
    let ([prompt, gold], mask) = text_columns(run, rows, [3, 4], |i| [g.prompt[i], g.gold[i]]);
    DataFrame::new_infer_height(vec![
        Column::new("group".into(), rows.iter().map(|&i| run.label(g.key[i])).collect::<Vec<_>>()),
        Column::new("task".into(), rows.iter().map(|&i| sym(g.task[i])).collect::<Vec<_>>()),
        Column::new("prompt".into(), prompt),
        Column::new("gold".into(), gold),
        Column::new(super::read::TEXT_MASK.into(), mask),
        Column::new("mc_n".into(), rows.iter().map(|&i| g.mc[i].map(|m| m.n)).collect::<Vec<_>>()),
        Column::new("mc_mean".into(), rows.iter().map(|&i| g.mc[i].map(|m| m.mean)).collect::<Vec<_>>()),
        rollout_reward,
        rollout_finish,
    ])
}

fn trajectories_frame(c: &Context<'_>, rows: &[usize]) -> polars::prelude::PolarsResult<DataFrame> {
    let run = c.run;
    let tr = &run.trajectories;
    let tree = |i: usize| tr.tree[i].get().map(|t| run.label(run.trees.key[t.index()]).to_owned());
    let mut columns = vec![
        Column::new("trajectory".into(), rows.iter().map(|&i| run.label(tr.key[i])).collect::<Vec<_>>()),
        Column::new("group".into(), rows.iter().map(|&i| run.group_key(tr.group[i])).collect::<Vec<_>>()),
        Column::new("tree".into(), rows.iter().map(|&i| tree(i)).collect::<Vec<_>>()),
        Column::new("leaf".into(), rows.iter().map(|&i| c.node_id(tr.leaf[i])).collect::<Vec<_>>()),
        Column::new("reward".into(), rows.iter().map(|&i| finite(tr.reward[i])).collect::<Vec<_>>()),
        Column::new("success".into(), rows.iter().map(|&i| tr.success[i]).collect::<Vec<_>>()),
        Column::new("finish".into(), rows.iter().map(|&i| label(run, tr.finish[i])).collect::<Vec<_>>()),
        Column::new(
            "steps".into(),
            rows.iter().map(|&i| tr.num_steps(TrajectoryId::from_index(i)) as u32).collect::<Vec<_>>(),
        ),
        Column::new(
            "tokens".into(),
            rows.iter().map(|&i| tr.token_range(TrajectoryId::from_index(i)).len() as u32).collect::<Vec<_>>(),
        ),
    ];
    for name in &c.components {
        let values = tr.components.get(name);
        let column: Vec<Option<f32>> = rows.iter().map(|&i| values.and_then(|v| finite(v[i]))).collect();
        columns.push(Column::new(format!("component_{name}").into(), column));
    }
    DataFrame::new_infer_height(columns)
}

fn steps_frame(c: &Context<'_>, rows: &[usize]) -> polars::prelude::PolarsResult<DataFrame> {
    let run = c.run;
    let n = &run.nodes;
    let id = |i: usize| NodeId::from_index(i);
    let strings = |f: &dyn Fn(usize) -> Option<String>| rows.iter().map(|&i| f(i)).collect::<Vec<_>>();
    let trajectory = |i: usize| c.node_trajectory[i].get().map(|t| run.trajectory_key(t).to_owned());
    let tree_of = |i: usize| c.node_tree[i].get().map(|t| run.label(run.trees.key[t.index()]).to_owned());
    let ([thought, action, observation], mask) =
        text_columns(run, rows, [0, 1, 2], |i| [n.thought[i], n.action[i], n.observation[i]]);
    let mut columns = vec![
        Column::new("node".into(), rows.iter().map(|&i| c.first_node + i as u64).collect::<Vec<_>>()),
        Column::new("parent".into(), rows.iter().map(|&i| c.node_id(n.parent[i])).collect::<Vec<_>>()),
        Column::new("group".into(), rows.iter().map(|&i| run.group_key(n.group[i])).collect::<Vec<_>>()),
        Column::new("trajectory".into(), strings(&trajectory)),
        Column::new("tree".into(), strings(&tree_of)),
        Column::new("node_key".into(), strings(&|i| label(run, n.key[i]))),
        Column::new("step".into(), rows.iter().map(|&i| c.node_step[i]).collect::<Vec<_>>()),
        Column::new("kind".into(), strings(&|i| label(run, n.kind[i]))),
        Column::new("role".into(), strings(&|i| label(run, n.role[i]))),
        Column::new("thought".into(), thought),
        Column::new("action".into(), action),
        Column::new("observation".into(), observation),
        Column::new(super::read::TEXT_MASK.into(), mask),
        Column::new("env_reward".into(), rows.iter().map(|&i| finite(n.env_reward[i])).collect::<Vec<_>>()),
        Column::new("state".into(), strings(&|i| label(run, n.state_key[i]))),
        Column::new("first_error".into(), rows.iter().map(|&i| n.first_error(id(i))).collect::<Vec<_>>()),
        Column::new("invalid_action".into(), rows.iter().map(|&i| n.invalid_action(id(i))).collect::<Vec<_>>()),
        Column::new("selected".into(), rows.iter().map(|&i| !n.unselected(id(i))).collect::<Vec<_>>()),
    ];
    for name in &c.scores {
        let values = n.scores.get(name);
        let column: Vec<Option<f32>> = rows.iter().map(|&i| values.and_then(|v| finite(v[i]))).collect();
        columns.push(Column::new(format!("score_{name}").into(), column));
    }
    columns.push(Column::new("mc_n".into(), rows.iter().map(|&i| n.mc(id(i)).map(|m| m.n)).collect::<Vec<_>>()));
    columns.push(Column::new("mc_mean".into(), rows.iter().map(|&i| n.mc(id(i)).map(|m| m.mean)).collect::<Vec<_>>()));
    let rollouts = rows.iter().map(|&i| {
        let (reward, finish) = n.mc_rollouts.of(i);
        reward.iter().zip(finish).map(|(&r, &f)| (r, f.get().is_some().then(|| run.label(f)))).collect()
    });
    columns.extend(rollout_columns("mc_rollout", rollouts, rows.len()));
    let mut docs = ListStringChunkedBuilder::new("docs".into(), rows.len(), rows.len());
    for &i in rows {
        let list = n.docs(id(i));
        if list.is_empty() {
            docs.append_null();
        } else {
            docs.append_values_iter(list.iter().map(|&d| run.label(d)));
        }
    }
    columns.push(docs.finish().into_series().into_column());
    let span = |i: usize, k: usize| n.token_span(id(i)).map(|s| s[k]);
    columns.push(Column::new("token_start".into(), rows.iter().map(|&i| span(i, 0)).collect::<Vec<_>>()));
    columns.push(Column::new("token_end".into(), rows.iter().map(|&i| span(i, 1)).collect::<Vec<_>>()));
    DataFrame::new_infer_height(columns)
}

fn float_token_columns(run: &Run) -> [&Option<Vec<f32>>; 9] {
    let tk = &run.tokens;
    [
        &tk.reward,
        &tk.logprob,
        &tk.ref_logprob,
        &tk.value,
        &tk.entropy,
        &tk.sum_pi_squared,
        &tk.prm_logprob,
        &tk.advantage,
        &tk.trainer_logprob,
    ]
}

/// One row per trajectory with tokens: `trajectory` and a list column per token array; `None`
/// when none of `rows` has tokens.
fn tokens_frame(c: &Context<'_>, rows: &[usize]) -> polars::prelude::PolarsResult<Option<DataFrame>> {
    let run = c.run;
    let tr = &run.trajectories;
    let with: Vec<(usize, std::ops::Range<usize>)> =
        rows.iter().map(|&i| (i, tr.token_range(TrajectoryId::from_index(i)))).filter(|(_, r)| !r.is_empty()).collect();
    if with.is_empty() {
        return Ok(None);
    }
    let total: usize = with.iter().map(|(_, r)| r.len()).sum();
    let tk = &run.tokens;
    let mut columns =
        vec![Column::new("trajectory".into(), with.iter().map(|(i, _)| run.label(tr.key[*i])).collect::<Vec<_>>())];
    if c.token_columns.contains("mask") {
        let mut mask = ListBooleanChunkedBuilder::new("mask".into(), with.len(), total);
        for (_, range) in &with {
            mask.append_iter(range.clone().map(|k| Some(tk.mask.as_ref().is_none_or(|m| m[k]))));
        }
        columns.push(mask.finish().into_series().into_column());
    }
    for (name, column) in TOKEN_FLOATS.iter().zip(float_token_columns(run)) {
        if !c.token_columns.contains(*name) {
            continue;
        }
        let mut list =
            ListPrimitiveChunkedBuilder::<Float32Type>::new((*name).into(), with.len(), total, DataType::Float32);
        for (_, range) in &with {
            match column {
                Some(values) => list.append_slice(&values[range.clone()]),
                None => list.append_slice(&vec![f32::NAN; range.len()]),
            }
        }
        columns.push(list.finish().into_series().into_column());
    }
    if c.token_columns.contains("text") {
        let mut list = ListStringChunkedBuilder::new("text".into(), with.len(), total);
        for (_, range) in &with {
            let texts: Vec<std::borrow::Cow<'_, str>> = match &tk.text {
                Some(text) => text[range.clone()].iter().map(|&id| run.text(id)).collect(),
                None => vec![std::borrow::Cow::Borrowed(""); range.len()],
            };
            list.append_values_iter(texts.iter().map(AsRef::as_ref));
        }
        columns.push(list.finish().into_series().into_column());
    }
    DataFrame::new_infer_height(columns).map(Some)
}
