//! The command line: `vantage [FILES…]` opens the app; the subcommands run headless. The commands
//! that `vantage mcp` and the Python package share are declared in `api/`, which this launcher
//! flattens into its subcommands and runs; what is the terminal's only (printing, exit codes,
//! `serve`, writing credit files) is here.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod desktop;
#[cfg(feature = "parquet")]
mod partitions;

use crate::analysis::RunSummary;
use crate::api::table::CreditTable;
use crate::api::{self, Analysis, load_path};
use crate::credit::{self, Support};
use crate::load::{LOADERS, LoadReport};
use crate::model::Run;
use crate::source::OpenOptions;

/// See where outcome-only and process credit agree and disagree on the same RL rollouts.
#[derive(Debug, Parser)]
#[command(name = "vantage", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Rollout logs to open in the app (none: the bundled sample run).
    files: Vec<PathBuf>,
    /// `--view`, `--scheme-a`, `--scheme-b`: what the app opens on.
    #[command(flatten)]
    show: api::Show,
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
    /// `--steps` and `--outcomes`, which every command takes.
    #[command(flatten)]
    open: api::OpenArgs,
}

/// The subcommands; each one's help is its declaration's doc comment.
#[derive(Debug, Subcommand)]
enum Command {
    Check(api::check::Args),
    /// List every credit scheme with its parameters, requirements and citation.
    Schemes {
        /// Print Markdown (docs/SCHEMES.md is generated this way).
        #[arg(long)]
        markdown: bool,
    },
    Convert(api::convert::Args),
    /// List the log formats vantage reads, with the name `--format` takes.
    Formats,
    Credit(api::credit::Args),
    Compare(api::compare::Args),
    Label(api::label::Args),
    Budget(api::budget::Args),
    Runs(api::runs::Args),
    Diff(api::diff::Args),
    Graph(api::graph::Args),
    Forensics(api::forensics::Args),
    Step(api::step::Args),
    /// A Model Context Protocol server over stdio for coding agents (docs/JSON.md): the tools `check`,
    /// `compare`, `budget`, `runs`, `diff`, `graph`, `step`, `health`, `forensics`, `label` and `open_app` on
    /// runs opened by path.
    Mcp,
    Health(api::health::Args),
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
    /// Where converted copies go (default: the user's cache directory, `$XDG_CACHE_HOME/vantage`
    /// or `~/.cache/vantage`): the served folders are left as they are.
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// Write converted copies beside each run instead (`.vantage/` in its folder, where the folder
    /// can be written): they outlive the cache and travel with the runs.
    #[arg(long, conflicts_with = "cache")]
    convert_beside: bool,
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

/// Parses the command line and runs it.
pub fn main() -> ExitCode {
    std::sync::LazyLock::force(&crate::cli::desktop::STARTED);
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let mut cli = Cli::parse();
    let mut outcomes = match crate::source::joined::read_outcome_files(&cli.open.outcomes) {
        Ok(outcomes) => outcomes,
        Err(err) => {
            eprintln!("vantage: --outcomes: {}", err.located());
            return ExitCode::from(2);
        }
    };
    // Results files named among the files opened are read as `--outcomes` are.
    let (files, named) = crate::source::joined::take_results_files(std::mem::take(&mut cli.files));
    outcomes.extend(named);
    if let Some(Command::Check(args)) = &mut cli.command {
        let (rest, named) = crate::source::joined::take_results_files(std::mem::take(&mut args.files));
        outcomes.extend(named);
        args.files = rest;
    }
    let options = OpenOptions {
        steps: cli.open.steps,
        outcomes: outcomes.into(),
        memory_budget: crate::source::disk::memory_budget(),
        follow: false,
        lazy: false,
    };
    match cli.command {
        None => {
            let api::Show { view, scheme_a, scheme_b } = cli.show;
            // A view or scheme that does not exist is an error before any window opens.
            if let Some(Err(err)) = view.as_deref().map(api::view) {
                eprintln!("vantage: --view {err}");
                return ExitCode::from(2);
            }
            let saved = api::saved_formulas();
            for (flag, id) in [("--scheme-a", &scheme_a), ("--scheme-b", &scheme_b)] {
                if let Some(Err(err)) = id.as_deref().map(|id| api::scheme_choice(id, &saved)) {
                    eprintln!("vantage: {flag} {err}");
                    return ExitCode::from(2);
                }
            }
            let start = crate::app::StartOptions {
                tab: view,
                scheme_a,
                scheme_b,
                meeting: cli.meeting,
                link: cli.link,
                exit_after_first_view: cli.exit_after_first_view.then(|| *crate::cli::desktop::STARTED),
                window_size: cli.window_size,
            };
            desktop::run_app(files, cli.follow, options, start, cli.window_size)
        }
        Some(Command::Check(args)) if args.json => {
            let (json, worst) = api::check::report(&args.files, &options, args.format.as_deref());
            println!("{json}");
            ExitCode::from(worst)
        }
        Some(Command::Check(args)) => check(&args.files, &options, args.format.as_deref()),
        Some(Command::Schemes { markdown }) => {
            print!("{}", if markdown { credit::listing::markdown() } else { credit::listing::text() });
            if !markdown {
                print!("{}", api::formulas::listing());
            }
            ExitCode::SUCCESS
        }
        Some(Command::Convert(args)) => match args.run(&options) {
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
        Some(Command::Compare(args)) => analysis(&args, &options),
        Some(Command::Budget(args)) => analysis(&args, &options),
        Some(Command::Runs(args)) => analysis(&args, &options),
        Some(Command::Diff(args)) => analysis(&args, &options),
        Some(Command::Graph(args)) => analysis(&args, &options),
        Some(Command::Forensics(args)) => analysis(&args, &options),
        Some(Command::Step(args)) => analysis(&args, &options),
        Some(Command::Label(args)) => analysis(&args, &options),
        Some(Command::Mcp) => api::mcp::main(&options),
        Some(Command::Health(args)) => health(&args, &options),
        Some(Command::Serve(args)) => serve_main(args),
    }
}

/// Runs an analysis: its words or its JSON printed, or its error (as JSON too with `--json`) and
/// exit 2.
fn analysis<C: Analysis>(args: &C, options: &OpenOptions) -> ExitCode {
    match api::Tool::answer(args, options) {
        Ok(json) => {
            let out = if args.wants_json() { json.to_string() } else { args.text(&json) };
            // A reader that stops early (`| head`) is not an error.
            let _ = writeln!(std::io::stdout().lock(), "{out}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            if args.wants_json() {
                println!("{}", serde_json::json!({ format!("vantage_{}", C::NAME): 1, "error": format!("{err:#}") }));
            }
            eprintln!("vantage {}: {err:#}", C::NAME);
            ExitCode::from(2)
        }
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
fn health(args: &api::health::Args, options: &OpenOptions) -> ExitCode {
    let thresholds = match args.thresholds() {
        Ok(thresholds) => thresholds,
        Err(err) => {
            eprintln!("vantage health: {err}");
            return ExitCode::from(2);
        }
    };
    let (mut report, mut fired, mut failed) = api::health::report(&args.files, &thresholds, options);
    // Following a run: read it again until an alarm fires (a run that cannot be read yet, such as
    // a log not written so far, is tried again too).
    if args.follow {
        let pause = std::time::Duration::from_secs_f64(args.interval.clamp(0.1, 86_400.0));
        while !fired {
            eprintln!("vantage health: no alarm yet; looking again in {:.1} s", pause.as_secs_f64());
            std::thread::sleep(pause);
            (report, fired, _) = api::health::report(&args.files, &thresholds, options);
        }
        // It ends on an alarm: that is the answer, whatever else could not be read.
        failed = false;
    }
    let out = if args.json { report.to_string() } else { api::health::text(&report) };
    if !out.is_empty() {
        println!("{out}");
    }
    if failed {
        ExitCode::from(2)
    } else if fired {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
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
            beside: args.convert_beside,
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
fn credit_main(args: api::credit::Args, options: &OpenOptions) -> ExitCode {
    let api::credit::Args { file, scheme, scheme_file, preset, set, tokens, out, format, partition, batch_scope } =
        args;
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
    batch_scope: Option<api::credit::BatchScope>,
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
    let computation = api::formulas::Computation::resolve(request.scheme_id, request.preset, sets)?;
    if let Some(out) = out {
        api::convert::refuse_input(file, out)?;
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
