//! `vantage compare RUN --a SCHEME --b SCHEME [--json]`: two schemes on one run, as the app's
//! Compare view sets them side by side (docs/JSON.md has the JSON).

use std::path::PathBuf;

use super::Analysis;
use crate::source::OpenOptions;

/// Compare two credit schemes on a run (docs/JSON.md): Spearman ρ, the share of steps whose signs
/// differ and the disagreements by name, the steps where they differ most with their text, the
/// groups they disagree on most.
#[derive(Debug, clap::Args, serde::Deserialize)]
pub struct Args {
    /// The run: a log, a folder of runs or a v2 dataset.
    #[serde(rename = "path")]
    pub file: PathBuf,
    /// Scheme A (an id, `expr:FORMULA` or `formula:NAME`).
    #[arg(long)]
    pub a: String,
    /// Scheme A's trainer preset.
    #[arg(long)]
    #[serde(default)]
    pub a_preset: Option<String>,
    /// Scheme B.
    #[arg(long)]
    pub b: String,
    /// Scheme B's trainer preset.
    #[arg(long)]
    #[serde(default)]
    pub b_preset: Option<String>,
    /// Split the comparison by the run's labels (docs/LABELS.md): for each label, and each word a
    /// label takes, the steps that carry it and what A and B give them, beside the steps with no
    /// label.
    #[arg(long)]
    #[serde(default)]
    pub by_label: bool,
    /// `--json`, `--limit`, `--offset`.
    #[command(flatten)]
    #[serde(flatten)]
    pub page: super::Page,
}

impl Analysis for Args {
    const NAME: &'static str = "compare";

    fn page(&self) -> Option<&super::Page> {
        Some(&self.page)
    }

    fn json(&self, options: &OpenOptions) -> anyhow::Result<serde_json::Value> {
        json(self, options)
    }

    fn text(&self, json: &serde_json::Value) -> String {
        let kinds = json["disagreements"].as_object().cloned().unwrap_or_default();
        text(self, json, &kinds)
    }
}

/// The comparison as docs/JSON.md's object.
fn json(args: &Args, options: &OpenOptions) -> anyhow::Result<serde_json::Value> {
    let run = super::open(&args.file, options)?;
    let credit = |flag: &str, id: &str, preset: Option<&str>| super::step_credit(&run, flag, id, preset);
    let a = credit("--a", &args.a, args.a_preset.as_deref())?;
    let b = credit("--b", &args.b, args.b_preset.as_deref())?;
    let name = |id: &str, preset: &Option<String>| {
        preset.as_ref().map_or_else(|| id.to_owned(), |p| format!("{id} --preset {p}"))
    };
    let names = [name(&args.a, &args.a_preset), name(&args.b, &args.b_preset)];
    let c = crate::analysis::compare::Comparison::of(&run, &a, &b);
    let mut json = comparison(&run, &args.file.display().to_string(), &names, &c, &args.page);
    if args.by_label {
        let (rows, notes) = by_label(&args.file, &run, &a, &b);
        json["by_label"] = rows;
        json["label_notes"] = notes.into();
    }
    Ok(json)
}

/// What a scheme gives a set of steps, as docs/LABELS.md writes it.
fn given(g: &crate::analysis::labels::Given) -> serde_json::Value {
    serde_json::json!({
        "steps": g.steps,
        "mean": super::number(g.mean),
        "mean_abs": super::number(g.mean_abs),
        "sum": super::number(g.sum),
        "positive": super::number(g.positive),
    })
}

/// The split of step credits `a` and `b` of the run at `path` by its labels (docs/LABELS.md's
/// `by_label` rows), and the notes on its labels; also the Python package's
/// `Comparison.by_label`.
pub fn by_label(
    path: &std::path::Path,
    run: &crate::model::Run,
    a: &[f32],
    b: &[f32],
) -> (serde_json::Value, Vec<String>) {
    let (labels, notes) = super::label::of(path, run);
    let rows: Vec<serde_json::Value> = crate::analysis::labels::split(run, &labels, a, b)
        .iter()
        .map(|r| {
            serde_json::json!({
                "label": r.label,
                "word": r.word,
                "steps": r.steps,
                "trajectories": r.trajectories,
                "a": given(&r.a),
                "b": given(&r.b),
                "sign_disagreement": super::number(r.sign_disagreement),
            })
        })
        .collect();
    (rows.into(), notes)
}

/// docs/JSON.md's comparison object of `c`, two step credits (named `names`) compared on `run`
/// (shown as `run_name`), its rows and groups paged by `page`; also the Python package's
/// `vantage.compare`, which computes the comparison once and asks for pages of it.
pub fn comparison(
    run: &crate::model::Run,
    run_name: &str,
    names: &[String; 2],
    c: &crate::analysis::compare::Comparison,
    page: &super::Page,
) -> serde_json::Value {
    let tr = &run.trajectories;
    let step_of = |position: usize| {
        let t = tr.at_position(position)?;
        Some((t, position - tr.path_range(t).start))
    };
    let rows: Vec<serde_json::Value> = page
        .of(c.most_different.iter())
        .filter_map(|d| {
            let (t, k) = step_of(d.position)?;
            Some(serde_json::json!({
                "trajectory": run.trajectory_key(t),
                "group": run.group_key(tr.group[t.index()]),
                "step": k,
                "kind": run.label(run.nodes.kind[tr.path_nodes[d.position].index()]),
                "a": super::number32(d.a),
                "b": super::number32(d.b),
                "text": super::step_text(run, tr.path_nodes[d.position], 200),
            }))
        })
        .collect();
    let groups: Vec<serde_json::Value> = page
        .of(c.groups.iter())
        .map(|g| {
            serde_json::json!({
                "group": run.group_key(g.group),
                "steps": g.steps,
                "spearman": if g.spearman.is_finite() { Some(g.spearman) } else { None },
                "sign_disagreement": g.sign_disagreement,
                "silent": g.silent_name(),
            })
        })
        .collect();
    let kinds: serde_json::Map<String, serde_json::Value> = crate::analysis::compare::Disagreement::ALL
        .iter()
        .map(|k| (k.label().to_owned(), serde_json::json!(c.disagreements.get(k).map_or(0, Vec::len))))
        .collect();
    serde_json::json!({
        "vantage_compare": 1,
        "run": run_name,
        "a": names[0],
        "b": names[1],
        "paired": c.num_paired,
        "spearman": if c.spearman.is_finite() { Some(c.spearman) } else { None },
        "sign_disagreement": c.sign_disagreement,
        "differing": c.num_differing,
        "disagreements": kinds,
        "offset": page.offset,
        "limit": page.limit,
        "rows_total": c.most_different.len(),
        "rows": rows,
        "groups_total": c.groups.len(),
        "groups": groups,
    })
}

/// The comparison in words, one line a row.
fn text(args: &Args, json: &serde_json::Value, kinds: &serde_json::Map<String, serde_json::Value>) -> String {
    let (rows, groups) =
        (json["rows"].as_array().cloned().unwrap_or_default(), json["groups"].as_array().cloned().unwrap_or_default());
    let mut out = format!(
        "{}: A {} vs B {} · {} steps with both · Spearman ρ {} · signs differ on {:.1}%",
        args.file.display(),
        json["a"].as_str().unwrap_or_default(),
        json["b"].as_str().unwrap_or_default(),
        json["paired"],
        json["spearman"].as_f64().map_or_else(|| "—".to_owned(), |r| format!("{r:.4}")),
        json["sign_disagreement"].as_f64().unwrap_or(0.0) * 100.0
    );
    for (kind, count) in kinds {
        out.push_str(&format!("\n  {kind}: {count}"));
    }
    out.push_str(&format!("\nsteps where A and B differ most ({} of {}):", rows.len(), json["rows_total"]));
    for row in &rows {
        out.push_str(&format!(
            "\n  {} step {} [{}] A {:.4} B {:.4}: {}",
            row["trajectory"].as_str().unwrap_or_default(),
            row["step"].as_u64().unwrap_or(0) + 1,
            row["kind"].as_str().unwrap_or_default(),
            row["a"].as_f64().unwrap_or(f64::NAN),
            row["b"].as_f64().unwrap_or(f64::NAN),
            row["text"].as_str().unwrap_or_default()
        ));
    }
    out.push_str(&format!("\ngroups where they disagree most ({} of {}):", groups.len(), json["groups_total"]));
    for g in &groups {
        let silent = match g["silent"].as_str() {
            Some("both") => " · neither gives credit here",
            Some("a") => " · A gives no credit here",
            Some("b") => " · B gives no credit here",
            _ => "",
        };
        out.push_str(&format!(
            "\n  {} · {} steps · signs differ {:.0}%{silent}",
            g["group"].as_str().unwrap_or_default(),
            g["steps"],
            g["sign_disagreement"].as_f64().unwrap_or(0.0) * 100.0
        ));
    }
    if let Some(rows) = json["by_label"].as_array() {
        out.push_str("\nby label (mean credit of the steps that carry it; |mean|; signs differ):");
        for r in rows {
            let name = match (r["label"].as_str(), r["word"].as_str()) {
                (Some(label), Some(word)) => format!("{label}={word}"),
                (Some(label), None) => label.to_owned(),
                _ => "(no label)".to_owned(),
            };
            let share =
                r["sign_disagreement"].as_f64().map_or_else(|| "—".to_owned(), |s| format!("{:.0}%", s * 100.0));
            out.push_str(&format!(
                "\n  {name} · {} steps on {} rollouts · A {} (|{}|) · B {} (|{}|) · signs differ {share}",
                r["steps"],
                r["trajectories"],
                super::shown(&r["a"]["mean"]),
                super::shown(&r["a"]["mean_abs"]),
                super::shown(&r["b"]["mean"]),
                super::shown(&r["b"]["mean_abs"]),
            ));
        }
        for note in json["label_notes"].as_array().into_iter().flatten() {
            out.push_str(&format!("\nnote: {}", note.as_str().unwrap_or_default()));
        }
    }
    out
}
