//! `vantage compare RUN --a SCHEME --b SCHEME [--json]`: two schemes on one run, as the app's
//! Compare view sets them side by side (docs/JSON.md has the JSON).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::source::OpenOptions;

/// `vantage compare`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    pub file: PathBuf,
    /// Scheme A (an id, `expr:FORMULA` or `formula:NAME`).
    #[arg(long)]
    pub a: String,
    /// Scheme A's trainer preset.
    #[arg(long)]
    pub a_preset: Option<String>,
    /// Scheme B.
    #[arg(long)]
    pub b: String,
    /// Scheme B's trainer preset.
    #[arg(long)]
    pub b_preset: Option<String>,
    /// Print JSON (docs/JSON.md).
    #[arg(long)]
    pub json: bool,
    /// The steps and groups listed, at most (1 to 1000).
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Skip this many of them first (paging).
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
}

/// Runs the command: the comparison printed, or an error (as JSON too with `--json`) and exit 2.
pub fn main(args: &Args, options: &OpenOptions) -> ExitCode {
    match compare(args, options) {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            if args.json {
                println!("{}", serde_json::json!({ "vantage_compare": 1, "error": format!("{err:#}") }));
            }
            eprintln!("vantage compare: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// The most rows `vantage compare` lists at once.
const MAX_LIMIT: usize = 1000;

/// `vantage compare`: schemes A and B on one run, as text or JSON (docs/JSON.md).
fn compare(args: &Args, options: &OpenOptions) -> anyhow::Result<String> {
    let json = json(args, options)?;
    if args.json {
        return Ok(json.to_string());
    }
    let kinds = json["disagreements"].as_object().cloned().unwrap_or_default();
    Ok(text(args, &json, &kinds))
}

/// The comparison as docs/JSON.md's object (also `vantage mcp`'s `compare` tool).
pub fn json(args: &Args, options: &OpenOptions) -> anyhow::Result<serde_json::Value> {
    if args.limit == 0 || args.limit > MAX_LIMIT {
        anyhow::bail!("--limit {}: from 1 to {MAX_LIMIT}", args.limit);
    }
    let mut report = options.report(&args.file.display().to_string());
    let run =
        super::load_path(&args.file, options, None, &mut report).map_err(|e| anyhow::anyhow!("{}", e.located()))?;
    let credit = |id: &str, preset: Option<&str>| -> anyhow::Result<Vec<f32>> {
        let computation = super::formulas::Computation::resolve(id, preset, Vec::new())?;
        Ok(std::mem::take(&mut computation.compute(&run)?.step))
    };
    let a = credit(&args.a, args.a_preset.as_deref()).map_err(|e| e.context(format!("--a {}", args.a)))?;
    let b = credit(&args.b, args.b_preset.as_deref()).map_err(|e| e.context(format!("--b {}", args.b)))?;
    let c = crate::analysis::compare::Comparison::of(&run, &a, &b);
    let tr = &run.trajectories;
    let step_of = |position: usize| {
        let t = tr.at_position(position)?;
        Some((t, position - tr.path_range(t).start))
    };
    let text_of = |position: usize| {
        let n = tr.path_nodes[position].index();
        let mut text = run.text(run.nodes.action[n]).trim().to_owned();
        if text.is_empty() {
            text = run.text(run.nodes.thought[n]).trim().to_owned();
        }
        let cut: String = text.chars().take(200).collect();
        if cut.len() < text.len() { format!("{cut}…") } else { cut }
    };
    let rows: Vec<serde_json::Value> = c
        .most_different
        .iter()
        .skip(args.offset)
        .take(args.limit)
        .filter_map(|d| {
            let (t, k) = step_of(d.position)?;
            Some(serde_json::json!({
                "trajectory": run.trajectory_key(t),
                "group": run.group_key(tr.group[t.index()]),
                "step": k,
                "kind": run.label(run.nodes.kind[tr.path_nodes[d.position].index()]),
                "a": d.a,
                "b": d.b,
                "text": text_of(d.position),
            }))
        })
        .collect();
    let groups: Vec<serde_json::Value> = c
        .groups
        .iter()
        .skip(args.offset)
        .take(args.limit)
        .map(|g| {
            serde_json::json!({
                "group": run.group_key(g.group),
                "steps": g.steps,
                "spearman": if g.spearman.is_finite() { Some(g.spearman) } else { None },
                "sign_disagreement": g.sign_disagreement,
            })
        })
        .collect();
    let kinds: serde_json::Map<String, serde_json::Value> = crate::analysis::compare::Disagreement::ALL
        .iter()
        .map(|k| (k.label().to_owned(), serde_json::json!(c.disagreements.get(k).map_or(0, Vec::len))))
        .collect();
    let name = |id: &str, preset: &Option<String>| {
        preset.as_ref().map_or_else(|| id.to_owned(), |p| format!("{id} --preset {p}"))
    };
    let json = serde_json::json!({
        "vantage_compare": 1,
        "run": args.file.display().to_string(),
        "a": name(&args.a, &args.a_preset),
        "b": name(&args.b, &args.b_preset),
        "paired": c.num_paired,
        "spearman": if c.spearman.is_finite() { Some(c.spearman) } else { None },
        "sign_disagreement": c.sign_disagreement,
        "differing": c.num_differing,
        "disagreements": kinds,
        "offset": args.offset,
        "limit": args.limit,
        "rows_total": c.most_different.len(),
        "rows": rows,
        "groups_total": c.groups.len(),
        "groups": groups,
    });
    Ok(json)
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
        out.push_str(&format!(
            "\n  {} · {} steps · signs differ {:.0}%",
            g["group"].as_str().unwrap_or_default(),
            g["steps"],
            g["sign_disagreement"].as_f64().unwrap_or(0.0) * 100.0
        ));
    }
    out
}
