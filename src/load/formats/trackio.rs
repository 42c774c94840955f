//! Trackio databases (`<project>.db`, SQLite): the rollout traces TRL, verl and other trainers log
//! with `trackio.log({key: [trackio.Trace(messages, metadata)]}, step=…)`, one row of the
//! `traces` table each (`run_name`, `step`, `key`, `trace_index`, OpenAI-style `messages`,
//! `metadata`). Every trace is a trajectory: each assistant turn a step (its tool calls the action,
//! its text the thought; a turn without tool calls has its text as the action), tool results and
//! later user turns its observation, the messages before the first assistant turn the prompt.
//! TRL's metadata gives the outcome (`reward`), its parts (`rewards/<function>`), the logged
//! `advantage` (a component and the step score `logged_advantage`) and the group (`group_id`);
//! without a `group_id` the traces of one step with the same prompt are a group. The training
//! step is the trace's `step`. Each run's `configs` row goes into the run's metadata.
//!
//! Natively the database is read with rusqlite (SQLite compiled in), from the file itself when
//! opened by path (so a run still being written, in WAL mode, reads what it has), or from its bytes.
//! The web build has no SQLite reader (SQLite is C; a pure-Rust reader would be a project of its
//! own), and says so.

use crate::load::{LoadError, LoadReport, Loader};
use crate::model::Run;

/// The format name.
pub const FORMAT: &str = "Trackio traces";

/// The first bytes of every SQLite database.
pub const MAGIC: &[u8] = b"SQLite format 3\0";

/// The Trackio loader.
pub struct Trackio;

impl Loader for Trackio {
    fn name(&self) -> &'static str {
        "trackio"
    }

    fn description(&self) -> &'static str {
        "Trackio database (<project>.db, SQLite): the `traces` table of trackio.Trace rows (native only)"
    }

    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        if !bytes.starts_with(MAGIC) {
            return Err(LoadError::Incompatible { format: FORMAT, reason: "not an SQLite database".to_owned() });
        }
        read_bytes(name, bytes, report)
    }
}

#[cfg(all(not(target_arch = "wasm32"), feature = "sqlite"))]
pub use sqlite::load_path;
#[cfg(all(not(target_arch = "wasm32"), feature = "sqlite"))]
use sqlite::read_bytes;

#[cfg(any(target_arch = "wasm32", not(feature = "sqlite")))]
fn read_bytes(_name: &str, _bytes: &[u8], _report: &mut LoadReport) -> Result<Run, LoadError> {
    Err(LoadError::Unsupported {
        line: 0,
        field: "file".to_owned(),
        reason: "a Trackio SQLite database: this build has no SQLite reader (the web build cannot have one); open it in the desktop app, or `vantage convert` it to vantage JSONL there".to_owned(),
    })
}

#[cfg(all(not(target_arch = "wasm32"), feature = "sqlite"))]
mod sqlite {
    //! The reader: rusqlite, native only.
    use std::collections::BTreeMap;

    use super::FORMAT;
    use crate::load::{LoadError, LoadReport};
    use crate::model::Run;

    pub fn read_bytes(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        use std::io::Read as _;
        let mut image = bytes.to_vec();
        // A database in WAL mode is read from its bytes as a rollback-journal one (the WAL is not here).
        if image.len() > 19 {
            image[18] = 1;
            image[19] = 1;
        }
        let mut conn = rusqlite::Connection::open_in_memory().map_err(|e| sql_error(&e))?;
        let len = image.len();
        conn.deserialize_read_exact(rusqlite::MAIN_DB, image.as_slice().take(len as u64), len, true)
            .map_err(|e| sql_error(&e))?;
        read(name, &conn, report)
    }

    /// Reads the database at `path` (read-only: the file is never written).
    pub fn load_path(path: &std::path::Path, report: &mut LoadReport) -> Result<Run, LoadError> {
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = rusqlite::Connection::open_with_flags(path, flags).map_err(|e| sql_error(&e))?;
        read(&path.display().to_string(), &conn, report)
    }

    fn sql_error(err: &rusqlite::Error) -> LoadError {
        LoadError::Unsupported { line: 0, field: "database".to_owned(), reason: format!("SQLite: {err}") }
    }

    /// A JSON column as text: Trackio writes `orjson.dumps` bytes (a BLOB) where older versions
    /// wrote TEXT.
    fn text_or_blob(row: &rusqlite::Row<'_>, index: usize) -> rusqlite::Result<String> {
        use rusqlite::types::ValueRef;
        Ok(match row.get_ref(index)? {
            ValueRef::Text(bytes) | ValueRef::Blob(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            ValueRef::Null => String::new(),
            ValueRef::Integer(i) => i.to_string(),
            ValueRef::Real(x) => x.to_string(),
        })
    }

    /// One row of `traces`.
    #[derive(Debug)]
    struct TraceRow {
        id: String,
        run_name: String,
        step: i64,
        key: String,
        messages: String,
        metadata: String,
    }

    fn read(name: &str, conn: &rusqlite::Connection, report: &mut LoadReport) -> Result<Run, LoadError> {
        let has_traces: bool = conn
            .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'traces'", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n > 0)
            .map_err(|e| sql_error(&e))?;
        if !has_traces {
            return Err(LoadError::Incompatible {
                format: FORMAT,
                reason: "an SQLite database without a `traces` table".to_owned(),
            });
        }
        let mut statement = conn
            .prepare(
                "SELECT id, run_name, step, key, messages, metadata FROM traces \
                 ORDER BY run_name, step, key, coalesce(trace_index, 0), id",
            )
            .map_err(|e| sql_error(&e))?;
        let rows: Vec<TraceRow> = statement
            .query_map([], |r| {
                Ok(TraceRow {
                    id: r.get(0)?,
                    run_name: r.get(1)?,
                    step: r.get(2)?,
                    key: r.get(3)?,
                    messages: text_or_blob(r, 4)?,
                    metadata: text_or_blob(r, 5)?,
                })
            })
            .map_err(|e| sql_error(&e))?
            .collect::<Result<_, _>>()
            .map_err(|e| sql_error(&e))?;
        let mut configs: BTreeMap<String, serde_json::Value> = BTreeMap::new();
        let has_configs: bool = conn
            .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'configs'", [], |r| {
                r.get::<_, i64>(0)
            })
            .is_ok_and(|n| n > 0);
        if has_configs && let Ok(mut s) = conn.prepare("SELECT run_name, config FROM configs") {
            let pairs = s.query_map([], |r| Ok((r.get::<_, String>(0)?, text_or_blob(r, 1)?)));
            for (run, config) in pairs.into_iter().flatten().flatten() {
                if let Ok(value) = serde_json::from_str(&config) {
                    configs.insert(run, value);
                }
            }
        }
        Ok(build(name, &rows, &configs, report))
    }

    /// The run of the trace rows (see the module's documentation).
    fn build(
        name: &str,
        rows: &[TraceRow],
        configs: &BTreeMap<String, serde_json::Value>,
        report: &mut LoadReport,
    ) -> Run {
        use crate::model::{NewGroup, NewStep, NewTokens, Outcome, RunBuilder, Warning};
        let mut b = RunBuilder::new(name, FORMAT);
        let runs: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.run_name.as_str()).collect();
        for (run, config) in configs {
            b.meta_mut()
                .metadata
                .insert(if configs.len() == 1 { "config".to_owned() } else { format!("config/{run}") }, config.clone());
        }
        for (i, row) in rows.iter().enumerate() {
            let line = i as u64 + 1;
            report.records_seen += 1;
            let messages: Vec<serde_json::Value> = match serde_json::from_str(&row.messages) {
                Ok(m) => m,
                Err(e) => {
                    report.warn(Warning::skipped(
                        line,
                        format!("traces[{}].messages", row.id),
                        crate::load::lenient::describe_json_error(&e),
                    ));
                    continue;
                }
            };
            let metadata: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&row.metadata).unwrap_or_default();
            let (prompt, steps) = steps_of(&messages);
            if steps.is_empty() {
                report.warn(Warning::skipped(line, format!("traces[{}].messages", row.id), "no assistant turn"));
                continue;
            }
            report.records_loaded += 1;
            let number = |k: &str| metadata.get(k).and_then(serde_json::Value::as_f64).map(|x| x as f32);
            let run_prefix = if runs.len() > 1 { format!("{}/", row.run_name) } else { String::new() };
            let group_key = match metadata.get("group_id").filter(|g| !g.is_null()) {
                Some(g) => {
                    format!("{run_prefix}{}/step{}/g{}", row.key, row.step, crate::load::records::message_text(Some(g)))
                }
                None => format!(
                    "{run_prefix}{}/step{}/p{:016x}",
                    row.key,
                    row.step,
                    crate::load::records::stable_hash(&prompt)
                ),
            };
            let group = if let Some(g) = b.group(&group_key) {
                g
            } else {
                let new = NewGroup {
                    key: &group_key,
                    train_step: Some(row.step),
                    prompt: Some(&prompt),
                    ..NewGroup::default()
                };
                b.add_group(&new).0
            };
            let advantage = number("advantage");
            let mut components: Vec<(String, f32)> = metadata
                .iter()
                .filter_map(|(k, v)| Some((k.strip_prefix("rewards/")?.to_owned(), v.as_f64()? as f32)))
                .collect();
            if let Some(a) = advantage {
                components.push(("advantage".to_owned(), a));
            }
            let reward = number("reward").filter(|r| !r.is_nan());
            let components: Vec<(&str, f32)> = components.iter().map(|(k, v)| (k.as_str(), *v)).collect();
            let outcome = Outcome { reward, success: reward.map(|r| r > 0.5), components, finish: None };
            let new_steps: Vec<NewStep<'_>> = steps
                .iter()
                .map(|(kind, thought, action, observation)| NewStep {
                    scores: advantage.map(|a| vec![("logged_advantage", a)]).unwrap_or_default(),
                    ..crate::load::records::text_step(kind, thought, action, observation)
                })
                .collect();
            if b.has_trajectory(&row.id) {
                report.warn(Warning::skipped(line, "id", format!("duplicate trace {:?}", row.id)));
                continue;
            }
            b.add_chain_trajectory(&row.id, group, &new_steps, &outcome, &NewTokens::default());
        }
        if runs.len() > 1 {
            let names: Vec<&str> = runs.into_iter().collect();
            b.meta_mut().notes.push(format!("traces of {} runs: {}", names.len(), names.join(", ")));
        }
        let mut run = b.finish();
        run.meta.warnings.clone_from(&report.warnings);
        if run.trajectories.is_empty() {
            let warning = Warning::kept(0, "traces", "the database has no traces");
            report.warn(warning.clone());
            run.meta.warnings.push(warning);
        }
        run
    }

    /// The prompt (the messages before the first assistant turn) and one step per assistant turn:
    /// (kind, thought, action, observation).
    fn steps_of(messages: &[serde_json::Value]) -> (String, Vec<(&'static str, String, String, String)>) {
        let mut prompt: Vec<String> = Vec::new();
        let mut steps: Vec<(&'static str, String, String, String)> = Vec::new();
        for m in messages {
            let role = m.get("role").and_then(serde_json::Value::as_str).unwrap_or("");
            let text = crate::load::records::message_text(m.get("content"));
            let calls: Vec<String> = m
                .get("tool_calls")
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| {
                    let name =
                        c.pointer("/function/name").or_else(|| c.get("name")).and_then(serde_json::Value::as_str);
                    let args = c.pointer("/function/arguments").or_else(|| c.get("arguments"));
                    crate::load::records::call_text(name.unwrap_or("tool"), args)
                })
                .collect();
            if role == "assistant" {
                steps.push(if calls.is_empty() {
                    ("message", String::new(), text, String::new())
                } else {
                    ("tool_call", text, calls.join("\n"), String::new())
                });
            } else if let Some(last) = steps.last_mut() {
                crate::load::records::push_observation(&mut last.3, role, &text);
            } else {
                prompt.push(format!("[{role}] {text}"));
            }
        }
        (prompt.join("\n"), steps)
    }
}
