//! `vantage credit`'s output: credit rows, column by column, written as JSONL, CSV or Parquet.

use std::path::Path;

use crate::model::{Run, TrajectoryId};

/// Credit rows, column by column: per step (`node` column) or per token (`mask` column).
pub struct CreditTable {
    /// Name of the position column: `step` or `token`.
    position_name: &'static str,
    /// Name of the extra column: `node` or `mask`.
    extra_name: &'static str,
    trajectory: Vec<String>,
    group: Vec<String>,
    position: Vec<u32>,
    extra: Vec<u64>,
    credit: Vec<f32>,
}

impl CreditTable {
    fn new(position_name: &'static str, extra_name: &'static str) -> Self {
        Self {
            position_name,
            extra_name,
            trajectory: Vec::new(),
            group: Vec::new(),
            position: Vec::new(),
            extra: Vec::new(),
            credit: Vec::new(),
        }
    }

    /// One row per step of each of `trajectories`, from `credit` aligned with `Credit::step`;
    /// the `node` column is `node_ids[node]` where given (a v2 dataset's ids), else the node's
    /// index in the run.
    pub fn steps(
        run: &Run,
        credit: &[f32],
        trajectories: impl Iterator<Item = TrajectoryId>,
        node_ids: Option<&[u64]>,
    ) -> Self {
        let mut table = Self::new("step", "node");
        for trajectory in trajectories {
            let key = run.trajectory_key(trajectory);
            let group = run.group_key(run.trajectories.group[trajectory.index()]);
            let offset = run.trajectories.path_offsets[trajectory.index()] as usize;
            for (step, node) in run.trajectories.path(trajectory).iter().enumerate() {
                let node = node_ids.map_or(u64::from(node.0), |ids| ids.get(node.index()).copied().unwrap_or(u64::MAX));
                table.push(key, group, step as u32, node, credit.get(offset + step).copied().unwrap_or(f32::NAN));
            }
        }
        table
    }

    /// One row per token of each of `trajectories`, from `credit` aligned with `Credit::token`.
    pub fn tokens(run: &Run, credit: &[f32], trajectories: impl Iterator<Item = TrajectoryId>) -> Self {
        let mut table = Self::new("token", "mask");
        for trajectory in trajectories {
            let key = run.trajectory_key(trajectory);
            let group = run.group_key(run.trajectories.group[trajectory.index()]);
            for (position, token) in run.trajectories.token_range(trajectory).enumerate() {
                let mask = run.tokens.mask.as_ref().is_none_or(|m| m.get(token).copied().unwrap_or(true));
                let value = credit.get(token).copied().unwrap_or(f32::NAN);
                table.push(key, group, position as u32, u64::from(mask), value);
            }
        }
        table
    }

    fn push(&mut self, trajectory: &str, group: &str, position: u32, extra: u64, credit: f32) {
        self.trajectory.push(trajectory.to_owned());
        self.group.push(group.to_owned());
        self.position.push(position);
        self.extra.push(extra);
        self.credit.push(credit);
    }

    /// The rows as columns (the Python package's `Credit.table()`): the keys dictionary-encoded,
    /// the mask as booleans.
    pub fn into_table(self) -> crate::analysis::tables::Table {
        use crate::analysis::tables::{Column, Table, Values, labels_of};
        let names = self.names();
        let column = |name: &str, values| Column { name: name.to_owned(), values, valid: None };
        let extra = if names[3] == "mask" {
            Values::Bool(self.extra.iter().map(|&m| m != 0).collect())
        } else {
            Values::U32(self.extra.iter().map(|&n| u32::try_from(n).unwrap_or(u32::MAX)).collect())
        };
        Table {
            rows: self.credit.len(),
            columns: vec![
                column(names[0], labels_of(self.trajectory.iter().map(String::as_str))),
                column(names[1], labels_of(self.group.iter().map(String::as_str))),
                column(names[2], Values::U32(self.position)),
                column(names[3], extra),
                column(names[4], Values::F32(self.credit)),
            ],
        }
    }

    fn names(&self) -> [&'static str; 5] {
        ["trajectory", "group", self.position_name, self.extra_name, "credit"]
    }

    fn to_csv(&self) -> String {
        use crate::analysis::export::csv_field as quote;
        let mut out = self.names().join(",");
        out.push('\n');
        for i in 0..self.credit.len() {
            let credit = if self.credit[i].is_nan() { String::new() } else { self.credit[i].to_string() };
            let row = [
                quote(&self.trajectory[i]).into_owned(),
                quote(&self.group[i]).into_owned(),
                self.position[i].to_string(),
                self.extra[i].to_string(),
                credit,
            ];
            out.push_str(&row.join(","));
            out.push('\n');
        }
        out
    }

    fn to_jsonl(&self) -> String {
        let [t, g, p, e, c] = self.names();
        let mut out = String::new();
        for i in 0..self.credit.len() {
            let credit = serde_json::Number::from_f64(f64::from(self.credit[i]))
                .map_or(serde_json::Value::Null, serde_json::Value::Number);
            let row = serde_json::json!({ t: self.trajectory[i], g: self.group[i], p: self.position[i], e: self.extra[i], c: credit });
            out.push_str(&row.to_string());
            out.push('\n');
        }
        out
    }

    /// Writes Parquet (native, `parquet` feature).
    #[cfg(feature = "parquet")]
    pub fn write_parquet(self, path: &Path) -> anyhow::Result<()> {
        use polars::prelude::{Column, DataFrame, ParquetWriter};
        let [t, g, p, e, c] = self.names();
        let mut frame = DataFrame::new_infer_height(vec![
            Column::new(t.into(), self.trajectory),
            Column::new(g.into(), self.group),
            Column::new(p.into(), self.position),
            Column::new(e.into(), self.extra),
            Column::new(c.into(), self.credit),
        ])?;
        let mut failed = None;
        crate::source::disk::replace_atomically(path, |temporary| {
            let file = std::fs::File::create(temporary)?;
            ParquetWriter::new(file).finish(&mut frame).map(|_| ()).map_err(|err| {
                failed = Some(err.to_string());
                std::io::Error::other("parquet")
            })
        })
        .map_err(|err| anyhow::anyhow!("{}: {}", failed.unwrap_or_else(|| err.to_string()), path.display()))
    }

    /// Writes to `out` by its extension (`.csv`, `.parquet`, else JSONL), or JSONL to standard output.
    pub fn write(self, out: Option<&Path>) -> anyhow::Result<()> {
        let Some(path) = out else {
            use std::io::Write as _;
            let written = std::io::stdout().lock().write_all(self.to_jsonl().as_bytes());
            // A closed pipe (`| head`) is the reader's choice, not an error.
            return match written {
                Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => Err(err.into()),
                _ => Ok(()),
            };
        };
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        let text = match extension.as_str() {
            "csv" => self.to_csv(),
            #[cfg(feature = "parquet")]
            "parquet" => return self.write_parquet(path),
            #[cfg(not(feature = "parquet"))]
            "parquet" => anyhow::bail!("this build has no Parquet support (build with the `parquet` feature)"),
            _ => self.to_jsonl(),
        };
        crate::source::disk::write_atomically(path, text.as_bytes())
            .map_err(|e| anyhow::anyhow!("{e}: {}", path.display()))
    }
}
