//! The command line: `vantage [FILES…]` opens the app; `check`, `schemes` and `credit` run headless.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod budget;
mod check_json;
mod compare;
pub mod desktop;
mod diff;
pub mod embed;
pub mod forensics;
mod formulas;
mod json_command;
mod mcp;
#[cfg(feature = "parquet")]
mod partitions;
mod runs;
mod step;
mod table;

use table::CreditTable;

use crate::analysis::RunSummary;
use crate::credit::{self, Support};
use crate::load::{LOADERS, LoadReport};
use crate::model::Run;
use crate::source::OpenOptions;

/// Loads a path as the commands do: the options of the command line (`--steps`, `--outcomes`,
/// the memory budget).
fn load_path(
    path: &Path,
    options: &OpenOptions,
    format: Option<&str>,
    report: &mut LoadReport,
) -> Result<Run, crate::load::LoadError> {
    crate::source::path::open(path, options, format, report, None)
}

/// See where outcome-only and process credit agree and disagree on the same RL rollouts.
#[derive(Debug, Parser)]
#[command(name = "vantage", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Rollout logs to open in the app (none: the bundled sample run).
    files: Vec<PathBuf>,
    /// App: the view to open (group, compare, overview, tokens, diff, transcript, runs, summary).
    #[arg(long)]
    view: Option<String>,
    /// App: scheme A (a registry id, `expr:FORMULA` or `formula:NAME`; see `vantage schemes`).
    #[arg(long)]
    scheme_a: Option<String>,
    /// App: scheme B.
    #[arg(long)]
    scheme_b: Option<String>,
    /// App: start in meeting mode.
    #[arg(long)]
    meeting: bool,
    /// App: the window's size, `WIDTHxHEIGHT` in points (1280x720 is a projector); it wins over the
    /// size an earlier run saved, and is not saved (default: the saved size, else 1280x800).
    #[arg(long, value_name = "WxH", value_parser = parse_window_size)]
    window_size: Option<[f32; 2]>,
    /// App: open this deep link (`#traj=…&step=…&a=grpo&b=triage&view=compare`, as "Copy link" writes).
    #[arg(long)]
    link: Option<String>,
    /// App: follow this run while it trains (a vantage JSONL file being appended to, a verl
    /// `rollout_data_dir`, a TRL `completions/` directory); repeatable.
    #[arg(long, value_name = "PATH")]
    follow: Vec<PathBuf>,
    /// App: print the seconds until the first run's group view is drawn, then close (benchmarks).
    #[arg(long)]
    exit_after_first_view: bool,
    /// v2 datasets: read only these training steps (`17`, `10..20` inclusive, `2000..`, `..99`).
    #[arg(long, value_name = "A..B", global = true, value_parser = parse_steps)]
    steps: Option<(i64, i64)>,
    /// Join the outcomes of this results file to the trajectories opened (a SWE-bench report,
    /// `report.json`, `results.json`, StableToolBench pass-rate votes); repeatable. A results file
    /// among the files opened is used the same way.
    #[arg(long, value_name = "FILE", global = true)]
    outcomes: Vec<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Load files, print what they contain and every warning; exit 0 clean, 1 records skipped, 2 nothing loadable.
    Check {
        /// Files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Read as this format instead of detecting it.
        #[arg(long)]
        format: Option<String>,
        /// Print JSON (docs/JSON.md); at most the first 100 warnings of each run are listed.
        #[arg(long)]
        json: bool,
    },
    /// List every credit scheme with its parameters, requirements and citation.
    Schemes {
        /// Print Markdown (docs/SCHEMES.md is generated this way).
        #[arg(long)]
        markdown: bool,
    },
    /// Read a log in any supported format and write it as a vantage Parquet v2 dataset (OUT a new
    /// directory: one partition per training step, written as a stream in bounded memory), as
    /// vantage JSONL (OUT ends in `.jsonl`) or as vantage Parquet v1 (OUT ends in `.parquet`);
    /// docs/FORMAT.md.
    Convert {
        /// The log to read (a file, a verl or TRL directory, a v2 dataset).
        file: PathBuf,
        /// Where to write (never the input, nor inside an input directory).
        out: PathBuf,
        /// Read as this format instead of detecting it (see `vantage formats`).
        #[arg(long)]
        format: Option<String>,
        /// v2: the memory a piece of the log may hold before it is written (`256M`, `64k`).
        #[arg(long, value_name = "SIZE", value_parser = parse_piece)]
        piece: Option<usize>,
        /// v2: follow a log that is still being written (a JSONL file, a verl or TRL directory):
        /// what it gains is written as it comes and the manifest replaced, until interrupted.
        #[arg(long)]
        follow: bool,
        /// With --follow: stop once nothing arrived for this many seconds.
        #[arg(long, value_name = "SECS", requires = "follow")]
        until_idle: Option<f64>,
    },
    /// List the log formats vantage reads, with the name `--format` takes.
    Formats,
    /// Compute credit under one scheme and write it per step (or per token) as JSONL or CSV.
    Credit(CreditArgs),
    /// Compare two schemes on a run (docs/JSON.md): Spearman ρ, sign disagreements by name, the
    /// steps where they differ most with their text, the groups they disagree on most.
    Compare(compare::Args),
    /// The signal budget per training step (docs/JSON.md): rollouts that teach nothing (zero-variance
    /// groups, truncated, uncredited) and where schemes A and B put their |credit|.
    Budget(budget::Args),
    /// Run A against run B on the same prompts, or two ranges of training steps of one run
    /// (docs/JSON.md): prompts learned, forgotten, unclear, still failing, still solved.
    Runs(runs::Args),
    /// Two rollouts aligned step by step (docs/JSON.md): where they part, with each step's credit.
    Diff(diff::Args),
    /// Baseline forensics (docs/FORENSICS.md): the rows that corrupted a group's baseline (failed
    /// rollouts, pad rows, partial groups, duplicates, filtered rows, advantage spikes, reward
    /// fallbacks), each with the credit they moved and whether the logged advantages include them.
    Forensics(forensics::Args),
    /// One step (docs/JSON.md): its text and fields, and its credit under every supported scheme
    /// (or those named) with the formula and terms behind each number.
    Step(step::Args),
    /// A Model Context Protocol server over stdio for coding agents (docs/JSON.md): the tools `check`,
    /// `compare`, `budget`, `runs`, `diff`, `step`, `health`, `forensics` and `open_app` on runs opened by path.
    Mcp,
    /// Run-health alarms (docs/HEALTH.md): print those that fire; exit 0 when none does, 1 when one
    /// does, 2 when a run cannot be read.
    Health {
        /// The runs.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print JSON (`{"vantage_health": 1, "runs": [...]}`).
        #[arg(long)]
        json: bool,
        /// A threshold, repeatable: `--set zero_variance=0.8` (docs/HEALTH.md names them).
        #[arg(long, value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// Watch a run that is still training: read it again every `--interval` seconds until an
        /// alarm fires (then exit 1).
        #[arg(long)]
        follow: bool,
        /// With --follow: seconds between two reads.
        #[arg(long, value_name = "SECS", default_value_t = 30.0, requires = "follow")]
        interval: f64,
    },
    /// Serve the web app and the runs under PATHs to a browser, read-only (docs/SERVE.md): open the
    /// printed link, through an SSH tunnel from a laptop.
    Serve(ServeArgs),
}

/// `vantage serve`'s arguments.
#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// Logs, folders of runs and v2 datasets to serve.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// The address to listen on; anything but a loopback address requires the token.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The port (0: any free one, printed).
    #[arg(long, default_value_t = 8765)]
    port: u16,
    /// Read the token clients must present from this file (one line, 16 characters or more);
    /// without it a token is made up when the address is not loopback.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Logs larger than this are converted once to a v2 dataset, read by the page in byte ranges.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "64M")]
    convert_above: u64,
    /// Where converted copies go (default: `.vantage/` beside each run when its folder can be
    /// written, else the user's cache directory).
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// Serve this web app (a `trunk build` output) instead of the binary's own.
    #[arg(long, value_name = "DIR")]
    web_dir: Option<PathBuf>,
    /// Connections open at once (past it: 503).
    #[arg(long, default_value_t = 512)]
    max_connections: usize,
    /// Seconds a client has to send a request's head (past it: 408 and the connection closed).
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    request_timeout: f64,
}

/// `vantage credit`'s arguments.
#[derive(Debug, clap::Args)]
struct CreditArgs {
    /// The rollout log.
    file: PathBuf,
    /// Scheme id (see `vantage schemes`); `expr:FORMULA` for a formula of your own
    /// (docs/EXPRESSIONS.md), `formula:NAME` for a built-in or saved formula.
    #[arg(long, required_unless_present = "scheme_file", conflicts_with = "scheme_file")]
    scheme: Option<String>,
    /// A file holding a formula (`my_scheme.vx`, docs/EXPRESSIONS.md).
    #[arg(long, value_name = "FILE")]
    scheme_file: Option<PathBuf>,
    /// Trainer preset: verl, trl, openrlhf (see `vantage schemes`).
    #[arg(long)]
    preset: Option<String>,
    /// Parameter value, repeatable: `--set gamma=0.99` (for a formula, its `$gamma`).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Write per-token rows instead of per-step rows.
    #[arg(long)]
    tokens: bool,
    /// Output file (`.jsonl`, `.csv` or `.parquet`); standard output as JSONL when absent. For a
    /// v2 dataset, a directory: one `train_step=K/credit.parquet` per partition.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Read as this format instead of detecting it.
    #[arg(long)]
    format: Option<String>,
    /// v2 dataset: compute this partition only (`train_step=K`), for one process per partition.
    #[arg(long, value_name = "train_step=K")]
    partition: Option<String>,
    /// v2 dataset, for a scheme that normalizes over the batch: `step` (each training step is
    /// a batch, as in training; one partition at a time) or `run` (the whole run is one batch,
    /// as `vantage credit LOG` computes it; reads every partition selected).
    #[arg(long, value_enum)]
    batch_scope: Option<BatchScope>,
}

/// What one batch is when credit normalizes over the batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BatchScope {
    /// One training step (a partition).
    Step,
    /// The whole run (every partition selected).
    Run,
}

/// A training-step range: `17`, `10..20`, `train_step=17`.
fn parse_steps(text: &str) -> Result<(i64, i64), String> {
    crate::load::formats::vantage_v2::manifest::parse_range(text)
}

/// A piece size of at least 4 kB.
fn parse_piece(text: &str) -> Result<usize, String> {
    match crate::load::budget::parse_size(text) {
        Some(bytes) if bytes >= 4096 => usize::try_from(bytes).map_err(|e| e.to_string()),
        _ => Err(format!("{text:?} is not a size of at least 4k (e.g. 256M)")),
    }
}

/// A size in bytes (`64M`, `4k`, `1.5G`).
fn parse_size(text: &str) -> Result<u64, String> {
    crate::load::budget::parse_size(text).ok_or_else(|| format!("{text:?} is not a size (e.g. 64M)"))
}

/// `1280x720` as `[1280.0, 720.0]`; each side from 200 to 16384.
fn parse_window_size(text: &str) -> Result<[f32; 2], String> {
    let side = |s: Option<&str>| {
        s.and_then(|s| s.trim().parse::<u32>().ok()).filter(|v| (200..=16384).contains(v)).map(|v| v as f32)
    };
    let mut parts = text.split(['x', 'X']);
    match (side(parts.next()), side(parts.next()), parts.next()) {
        (Some(w), Some(h), None) => Ok([w, h]),
        _ => Err(format!("{text:?} is not WIDTHxHEIGHT, each from 200 to 16384 (e.g. 1280x720)")),
    }
}

/// The formulas saved in the formulas folder, as the app holds them.
fn saved_formulas() -> Vec<crate::app::SavedFormula> {
    crate::source::disk::saved_formulas()
        .into_iter()
        .map(|(name, text)| crate::app::SavedFormula { name, text })
        .collect()
}

/// The scheme `name` names for the app (an id, `expr:…`, `formula:NAME` of the built-ins or of
/// `saved`), or why none.
fn scheme_choice(name: &str, saved: &[crate::app::SavedFormula]) -> Result<crate::app::SchemeChoice, String> {
    crate::app::SchemeChoice::from_name(name, saved)
        .ok_or_else(|| format!("{name}: not a scheme (see `vantage schemes`)"))
}

/// The app's view named `name`, or why none.
fn view(name: &str) -> Result<crate::app::Tab, String> {
    crate::app::Tab::from_name(name).ok_or_else(|| format!("{name}: not a view; one of {}", crate::app::Tab::names()))
}

/// Parses the command line and runs it.
pub fn main() -> ExitCode {
    std::sync::LazyLock::force(&crate::cli::desktop::STARTED);
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let mut cli = Cli::parse();
    let mut outcomes = match crate::source::joined::read_outcome_files(&cli.outcomes) {
        Ok(outcomes) => outcomes,
        Err(err) => {
            eprintln!("vantage: --outcomes: {}", err.located());
            return ExitCode::from(2);
        }
    };
    // Results files named among the files opened are read as `--outcomes` are.
    let (files, named) = crate::source::joined::take_results_files(std::mem::take(&mut cli.files));
    outcomes.extend(named);
    let check_files = match &mut cli.command {
        Some(Command::Check { files, .. }) => {
            let (rest, named) = crate::source::joined::take_results_files(std::mem::take(files));
            outcomes.extend(named);
            rest
        }
        _ => Vec::new(),
    };
    let options = OpenOptions {
        steps: cli.steps,
        outcomes: outcomes.into(),
        memory_budget: crate::source::disk::memory_budget(),
        follow: false,
        lazy: false,
    };
    match cli.command {
        None => {
            // A view or scheme that does not exist is an error before any window opens.
            if let Some(Err(err)) = cli.view.as_deref().map(view) {
                eprintln!("vantage: --view {err}");
                return ExitCode::from(2);
            }
            let saved = saved_formulas();
            for (flag, id) in [("--scheme-a", &cli.scheme_a), ("--scheme-b", &cli.scheme_b)] {
                if let Some(Err(err)) = id.as_deref().map(|id| scheme_choice(id, &saved)) {
                    eprintln!("vantage: {flag} {err}");
                    return ExitCode::from(2);
                }
            }
            let start = crate::app::StartOptions {
                tab: cli.view,
                scheme_a: cli.scheme_a,
                scheme_b: cli.scheme_b,
                meeting: cli.meeting,
                link: cli.link,
                exit_after_first_view: cli.exit_after_first_view.then(|| *crate::cli::desktop::STARTED),
                window_size: cli.window_size,
            };
            desktop::run_app(files, cli.follow, options, start, cli.window_size)
        }
        Some(Command::Check { format, json: true, .. }) => check_json::main(&check_files, &options, format.as_deref()),
        Some(Command::Check { format, .. }) => check(&check_files, &options, format.as_deref()),
        Some(Command::Schemes { markdown }) => {
            print!("{}", if markdown { credit::listing::markdown() } else { credit::listing::text() });
            if !markdown {
                print!("{}", formulas::listing());
            }
            ExitCode::SUCCESS
        }
        Some(Command::Convert { file, out, format, piece, follow, until_idle }) => match if follow {
            follow_convert(&file, &out, &options, format.as_deref(), piece, until_idle)
        } else {
            convert(&file, &out, &options, format.as_deref(), piece)
        } {
            Ok(summary) => {
                println!("{summary}");
                ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("vantage convert: {err:#}");
                ExitCode::from(2)
            }
        },
        Some(Command::Formats) => {
            for loader in LOADERS {
                println!("{:<14} {}", loader.name(), loader.description());
            }
            #[cfg(feature = "parquet")]
            println!(
                "{:<14} vantage Parquet v2: a directory partitioned by training step, with a manifest.json (docs/FORMAT.md); native only",
                "vantage_v2"
            );
            ExitCode::SUCCESS
        }
        Some(Command::Credit(args)) => credit_main(args, &options),
        Some(Command::Compare(args)) => json_command::main(&args, &options),
        Some(Command::Budget(args)) => json_command::main(&args, &options),
        Some(Command::Runs(args)) => json_command::main(&args, &options),
        Some(Command::Diff(args)) => json_command::main(&args, &options),
        Some(Command::Forensics(args)) => json_command::main(&args, &options),
        Some(Command::Step(args)) => json_command::main(&args, &options),
        Some(Command::Mcp) => mcp::main(&options),
        Some(Command::Health { files, json, set, follow, interval }) => {
            health(&files, json, &set, follow.then_some(interval), &options)
        }
        Some(Command::Serve(args)) => serve_main(args),
    }
}

/// `vantage serve`: serves until stopped; 2 when it cannot start.
fn serve_main(args: ServeArgs) -> ExitCode {
    match serve_config(args).and_then(crate::serve::run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("vantage serve: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// `vantage health`: the alarms of each run; 1 when one fires, 2 when a run cannot be read.
fn health(files: &[PathBuf], json: bool, sets: &[String], follow: Option<f64>, options: &OpenOptions) -> ExitCode {
    let mut thresholds = crate::analysis::health::Thresholds::default();
    for set in sets {
        let parsed = set.split_once('=').ok_or_else(|| format!("--set {set}: say NAME=VALUE")).and_then(|(n, v)| {
            let value = v.trim().parse::<f64>().map_err(|e| format!("--set {set}: {e}"))?;
            thresholds.set(n.trim(), value)
        });
        if let Err(err) = parsed {
            eprintln!("vantage health: {err}");
            return ExitCode::from(2);
        }
    }
    let (mut report, mut fired, mut failed) = health_report(files, &thresholds, options);
    // Following a run: read it again until an alarm fires (a run that cannot be read yet, such as
    // a log not written so far, is tried again too).
    if let Some(interval) = follow {
        let pause = std::time::Duration::from_secs_f64(interval.clamp(0.1, 86_400.0));
        while !fired {
            eprintln!("vantage health: no alarm yet; looking again in {:.1} s", pause.as_secs_f64());
            std::thread::sleep(pause);
            (report, fired, _) = health_report(files, &thresholds, options);
        }
        // It ends on an alarm: that is the answer, whatever else could not be read.
        failed = false;
    }
    if json {
        println!("{report}");
    } else {
        for run in report["runs"].as_array().into_iter().flatten() {
            let name = run["run"].as_str().unwrap_or_default();
            let alarms = run["alarms"].as_array().cloned().unwrap_or_default();
            if alarms.is_empty() {
                println!("{name}: no alarm");
                continue;
            }
            println!("{name}: {} alarm(s)", alarms.len());
            for alarm in &alarms {
                let groups: Vec<&str> =
                    alarm["groups"].as_array().into_iter().flatten().filter_map(|g| g.as_str()).collect();
                let more = if groups.len() > 5 { ", …" } else { "" };
                let shown = groups.iter().take(5).copied().collect::<Vec<_>>().join(", ");
                let behind = if groups.is_empty() { String::new() } else { format!(" (groups {shown}{more})") };
                println!(
                    "  [{}] {}{behind}",
                    alarm["name"].as_str().unwrap_or_default(),
                    alarm["message"].as_str().unwrap_or_default()
                );
            }
        }
    }
    if failed {
        ExitCode::from(2)
    } else if fired {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// docs/JSON.md's health object for `files` (each log of a folder a run), whether an alarm fired,
/// and whether a run could not be read (errors go to stderr); also `vantage mcp`'s `health` tool.
pub(crate) fn health_report(
    files: &[PathBuf],
    thresholds: &crate::analysis::health::Thresholds,
    options: &OpenOptions,
) -> (serde_json::Value, bool, bool) {
    let (mut fired, mut failed, mut runs) = (false, false, Vec::new());
    let opened = files.iter().flat_map(|path| {
        let template = options.report(&path.display().to_string());
        crate::source::path::open_all(path, options, None, &template, None)
    });
    for one in opened {
        let run = match one.result {
            Ok(run) => run,
            Err(err) => {
                eprintln!("vantage health: {}", err.located());
                failed = true;
                continue;
            }
        };
        let alarms = crate::analysis::health::alarms(&run, thresholds);
        fired |= !alarms.is_empty();
        let alarms: Vec<serde_json::Value> = alarms
            .iter()
            .map(|a| {
                serde_json::json!({
                    "name": a.name,
                    "train_step": a.train_step,
                    "value": a.value,
                    "threshold": a.threshold,
                    "groups": a.groups.iter().map(|&g| run.group_key(g)).collect::<Vec<_>>(),
                    "message": a.message,
                })
            })
            .collect();
        runs.push(serde_json::json!({ "run": one.path.display().to_string(), "alarms": alarms }));
    }
    (serde_json::json!({ "vantage_health": 1, "runs": runs }), fired, failed)
}

/// The server's configuration from its arguments.
fn serve_config(args: ServeArgs) -> anyhow::Result<crate::serve::Config> {
    let token = match &args.token_file {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("--token-file {}: {e}", path.display()))?;
            let token = text.trim().to_owned();
            if token.len() < 16 || token.contains(char::is_whitespace) {
                anyhow::bail!("--token-file {}: the token must be one word of 16 characters or more", path.display());
            }
            Some(token)
        }
        None => None,
    };
    let cache = args.cache.clone().unwrap_or_else(crate::source::disk::cache_dir);
    Ok(crate::serve::Config {
        paths: args.paths,
        host: args.host,
        port: args.port,
        token,
        catalog: crate::serve::runs::CatalogOptions {
            convert_above: args.convert_above,
            cache,
            beside: args.cache.is_none(),
            max_runs: 10_000,
        },
        limits: crate::serve::http::Limits {
            connections: args.max_connections.max(1),
            head_deadline: std::time::Duration::from_secs_f64(args.request_timeout.clamp(0.1, 3600.0)),
            ..Default::default()
        },
        web_dir: args.web_dir,
    })
}

/// `vantage credit`: the scheme named or read from `--scheme-file`, computed and written.
fn credit_main(args: CreditArgs, options: &OpenOptions) -> ExitCode {
    let CreditArgs { file, scheme, scheme_file, preset, set, tokens, out, format, partition, batch_scope } = args;
    let scheme = match (scheme, scheme_file) {
        (Some(id), _) => id,
        (None, Some(path)) => match std::fs::read_to_string(&path) {
            Ok(text) => format!("{}{text}", crate::credit::expr::EXPR_PREFIX),
            Err(err) => {
                eprintln!("vantage credit: --scheme-file {}: {err}", path.display());
                return ExitCode::from(2);
            }
        },
        (None, None) => {
            eprintln!("vantage credit: say --scheme ID or --scheme-file FILE");
            return ExitCode::from(2);
        }
    };
    let request = CreditRequest {
        scheme_id: &scheme,
        preset: preset.as_deref(),
        sets: &set,
        tokens,
        partition: partition.as_deref(),
        batch_scope,
    };
    match credit_command(&file, &request, options, out.as_deref(), format.as_deref()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("vantage credit: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// An error when `out` is the input `file` (through any link) or inside an input directory.
fn refuse_input(file: &Path, out: &Path) -> anyhow::Result<()> {
    let target = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).canonicalize();
    let target = target.map(|dir| dir.join(out.file_name().unwrap_or_default()));
    if let (Ok(input), Ok(target)) = (file.canonicalize(), target)
        && (target == input || target.starts_with(&input))
    {
        anyhow::bail!("--out {} is (inside) the input; vantage never writes to an input", out.display());
    }
    Ok(())
}

/// Reads `file` and writes it to `out` as its name says (see `Command::Convert`); one line saying
/// what was written.
fn convert(
    file: &Path,
    out: &Path,
    options: &OpenOptions,
    format: Option<&str>,
    piece: Option<usize>,
) -> anyhow::Result<String> {
    refuse_input(file, out)?;
    let extension = out.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    if !matches!(extension.as_deref(), Some("parquet" | "jsonl" | "json")) {
        return convert_to_dataset(file, out, options, format, piece);
    }
    let parquet = extension.as_deref() == Some("parquet");
    let mut report = LoadReport::new(&file.display().to_string());
    let run = load_path(file, options, format, &mut report).map_err(|e| anyhow::anyhow!("{}", e.located()))?;
    for warning in report.located() {
        eprintln!("{warning}");
    }
    let mut run = run;
    // Keep where it came from and how it was read: the header's metadata carries it.
    crate::source::joined::mark_converted(&mut run);
    let bytes = if parquet {
        parquet_bytes(&run)?
    } else {
        crate::load::formats::vantage_jsonl::write::to_jsonl(&run).into_bytes()
    };
    crate::source::disk::write_atomically(out, &bytes)
        .map_err(|e| anyhow::anyhow!("could not write {}: {e}", out.display()))?;
    Ok(format!(
        "{} ({}): {} groups, {} trajectories, {} steps -> {}",
        file.display(),
        run.meta.format,
        run.groups.len(),
        run.trajectories.len(),
        run.num_path_steps(),
        out.display()
    ))
}

/// What a conversion to a v2 dataset gives: its warnings printed, a load error located.
#[cfg(feature = "parquet")]
fn reported<T>(result: anyhow::Result<T>, report: &LoadReport) -> anyhow::Result<T> {
    for warning in report.located() {
        eprintln!("{warning}");
    }
    result.map_err(|e| match e.downcast_ref::<crate::load::LoadError>() {
        Some(load) => anyhow::anyhow!("{}", load.located()),
        None => e,
    })
}

/// `vantage convert LOG RUN_DIR/`: a v2 dataset, written as a stream.
#[cfg(feature = "parquet")]
fn convert_to_dataset(
    file: &Path,
    out: &Path,
    options: &OpenOptions,
    format: Option<&str>,
    piece: Option<usize>,
) -> anyhow::Result<String> {
    let mut report = LoadReport::new(&file.display().to_string());
    let piece = piece.unwrap_or(crate::source::dataset::DEFAULT_PIECE);
    let converted = crate::source::convert::convert(file, out, options, format, piece, &mut report);
    let converted = reported(converted, &report)?;
    let m = &converted.manifest;
    Ok(format!(
        "{} ({}): {} training-step partitions, {} groups, {} trajectories, {} step rows, read in {} piece(s) -> {}/",
        file.display(),
        converted.format,
        m.partitions.len(),
        m.total(|p| p.groups),
        m.total(|p| p.trajectories),
        m.total(|p| p.steps),
        converted.pieces,
        out.display()
    ))
}

/// `vantage convert LOG RUN_DIR/ --follow`.
#[cfg(feature = "parquet")]
fn follow_convert(
    file: &Path,
    out: &Path,
    options: &OpenOptions,
    format: Option<&str>,
    piece: Option<usize>,
    until_idle: Option<f64>,
) -> anyhow::Result<String> {
    refuse_input(file, out)?;
    let mut report = LoadReport::new(&file.display().to_string());
    let idle = until_idle.map(|s| std::time::Duration::from_secs_f64(s.max(0.0)));
    let piece = piece.unwrap_or(crate::source::dataset::DEFAULT_PIECE);
    let manifest = crate::source::convert::follow(file, out, options, format, piece, idle, &mut report);
    let m = reported(manifest, &report)?;
    Ok(format!(
        "{}: followed until idle; {} training-step partitions, {} trajectories -> {}/",
        file.display(),
        m.partitions.len(),
        m.total(|p| p.trajectories),
        out.display()
    ))
}

#[cfg(not(feature = "parquet"))]
fn follow_convert(
    _: &Path,
    out: &Path,
    options: &OpenOptions,
    _: Option<&str>,
    _: Option<usize>,
    _: Option<f64>,
) -> anyhow::Result<String> {
    convert_to_dataset(Path::new(""), out, options, None, None)
}

#[cfg(not(feature = "parquet"))]
fn convert_to_dataset(
    _: &Path,
    out: &Path,
    _: &OpenOptions,
    _: Option<&str>,
    _: Option<usize>,
) -> anyhow::Result<String> {
    anyhow::bail!(
        "{}: a vantage Parquet v2 dataset needs the `parquet` feature; name a .jsonl file to write vantage JSONL",
        out.display()
    )
}

/// The run as vantage Parquet (needs the `parquet` feature).
fn parquet_bytes(run: &Run) -> anyhow::Result<Vec<u8>> {
    #[cfg(feature = "parquet")]
    return crate::load::formats::vantage_parquet::to_parquet(run).map_err(|e| anyhow::anyhow!("Parquet: {e}"));
    #[cfg(not(feature = "parquet"))]
    {
        let _: &Run = run;
        anyhow::bail!("this build has no Parquet support (build with the `parquet` feature)")
    }
}

/// Loads and reports each path (each log of a folder: `source::path::open_all`). The exit code
/// is the worst over the paths: 0 when every run loaded without a warning, 1 with warnings, 2 when
/// nothing loaded from a path. A folder in which some logs loaded and others failed is 1: what
/// loaded is there, and the failures are named.
fn check(files: &[PathBuf], options: &OpenOptions, format: Option<&str>) -> ExitCode {
    let mut worst = 0u8;
    let mut stdout = std::io::stdout().lock();
    for path in files {
        let template = options.report(&path.display().to_string());
        let opened = crate::source::path::open_all(path, options, format, &template, None);
        let any_loaded = opened.iter().any(|o| o.result.is_ok());
        for one in opened {
            let shown = one.path.display();
            let code = match &one.result {
                Ok(run) => {
                    let _ = writeln!(stdout, "{shown}: {}", run.meta.format);
                    for line in RunSummary::of(run).lines() {
                        let _ = writeln!(stdout, "  {line}");
                    }
                    for note in &run.meta.notes {
                        let _ = writeln!(stdout, "  note: {note}");
                    }
                    print_schemes_support(&mut stdout, run);
                    if let Some(audit) = crate::analysis::audit::audit(run) {
                        let _ =
                            writeln!(stdout, "  audit: {}", crate::analysis::forensics::describe_audit(run, &audit));
                    }
                    u8::from(!one.report.warnings.is_empty())
                }
                Err(err) => {
                    let _ = writeln!(stdout, "{shown}: nothing loaded");
                    let _ = writeln!(stdout, "  {}", err.located());
                    if any_loaded { 1 } else { 2 }
                }
            };
            let skipped = one.report.num_skipped();
            let _ = writeln!(stdout, "  warnings: {} ({skipped} skipped)", one.report.num_warnings());
            for line in one.report.located() {
                let _ = writeln!(stdout, "  {line}");
            }
            worst = worst.max(code);
        }
    }
    ExitCode::from(worst)
}

fn print_schemes_support(out: &mut impl std::io::Write, run: &Run) {
    let table = credit::support_table(run);
    if table.is_empty() {
        let _ = writeln!(out, "  schemes: none registered in this build");
        return;
    }
    let supported: Vec<&str> = table.iter().filter(|(_, s)| *s == Support::Yes).map(|(i, _)| i.id).collect();
    let _ = writeln!(out, "  schemes supported ({}): {}", supported.len(), supported.join(", "));
    for (info, support) in &table {
        if let Support::No(reason) = support {
            let _ = writeln!(out, "  scheme {} unavailable: {reason}", info.id);
        }
    }
}

/// What `vantage credit` was asked for.
struct CreditRequest<'a> {
    scheme_id: &'a str,
    preset: Option<&'a str>,
    sets: &'a [String],
    tokens: bool,
    partition: Option<&'a str>,
    batch_scope: Option<BatchScope>,
}

impl CreditRequest<'_> {
    /// The rows asked for (per token with `--tokens`, else per step) of `trajectories`; the
    /// `node` column is `node_ids[node]` where given (a v2 dataset's ids).
    fn table(
        &self,
        run: &Run,
        credit: &credit::Credit,
        trajectories: impl Iterator<Item = crate::model::TrajectoryId>,
        node_ids: Option<&[u64]>,
    ) -> anyhow::Result<CreditTable> {
        if !self.tokens {
            return Ok(CreditTable::steps(run, &credit.step, trajectories, node_ids));
        }
        let Some(token_credit) = credit.token.as_deref() else {
            anyhow::bail!("scheme {} gives step-level credit only; drop --tokens", self.scheme_id);
        };
        Ok(CreditTable::tokens(run, token_credit, trajectories))
    }
}

fn credit_command(
    file: &Path,
    request: &CreditRequest<'_>,
    options: &OpenOptions,
    out: Option<&Path>,
    format: Option<&str>,
) -> anyhow::Result<()> {
    let mut sets = Vec::new();
    for set in request.sets {
        let Some((name, value)) = set.split_once('=') else {
            anyhow::bail!("--set {set:?}: expected NAME=VALUE");
        };
        sets.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    // Check the scheme, its parameters and the output before reading the file, so a typo fails fast.
    let computation = formulas::Computation::resolve(request.scheme_id, request.preset, sets)?;
    if let Some(out) = out {
        refuse_input(file, out)?;
    }
    #[cfg(feature = "parquet")]
    if let Some(out) = out.filter(|o| o.extension().is_none() && crate::source::listing::is_v2_dataset(file)) {
        return partitions::run(file, &computation, request, options, out);
    }
    if request.partition.is_some() || request.batch_scope.is_some() {
        anyhow::bail!(
            "--partition and --batch-scope are for a vantage Parquet v2 dataset written to --out OUT_DIR/ \
             (make one with `vantage convert LOG RUN_DIR/`)"
        );
    }
    let mut report = LoadReport::new(&file.display().to_string());
    let run = load_path(file, options, format, &mut report)?;
    for line in report.located() {
        eprintln!("warning: {line}");
    }
    let credit = computation.compute(&run)?;
    request.table(&run, &credit, run.trajectories.ids(), None)?.write(out)
}

/// The names of the formats this build reads, for help texts.
pub fn format_names() -> Vec<&'static str> {
    LOADERS.iter().map(|l| l.name()).collect()
}
