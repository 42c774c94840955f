//! vantage Parquet v2: the dataset round-trips (log → v2 → run, v2 → JSONL → v2), a stream
//! converted in many pieces gives the same run as in one, polars reads it with the documented
//! types and counts, opening a range of training steps reads only its partitions, and credit
//! computed one partition at a time equals credit on the whole run for every scheme that says its
//! groups are all it needs (and `vantage credit RUN_DIR` writes exactly that).
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use vantage::credit::{self, Params, SCHEMES, Support};
use vantage::load::LoadReport;
use vantage::load::formats::vantage_jsonl::write::to_jsonl;
use vantage::model::Run;
use vantage::source::convert;
use vantage::source::dataset::{self, Dataset};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh directory for one test of this file.
fn scratch(what: &str) -> PathBuf {
    crate::common::scratch(&format!("v2-{what}"))
}

/// The logs every round trip is checked on: the samples and the importers' fixtures.
fn logs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["sample_runs", "tests/fixtures/formats", "tests/fixtures/agents"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            out.push(entry.unwrap().path());
        }
    }
    out.push(root().join("tests/fixtures/verl_dump"));
    out.push(root().join("tests/fixtures/trackio/grpo-demo.db"));
    out.sort();
    out
}

/// A scratch directory for `what` with the math sample converted into its `run/`.
fn math_dataset(what: &str) -> (PathBuf, PathBuf) {
    let dir = scratch(what);
    let out = dir.join("run");
    convert(&root().join("sample_runs/math_grpo_prm.jsonl"), &out, dataset::DEFAULT_PIECE);
    (dir, out)
}

fn convert(log: &Path, out: &Path, piece: usize) -> convert::Converted {
    let mut report = LoadReport::new("log");
    convert::convert(log, out, &Default::default(), None, piece, &mut report)
        .unwrap_or_else(|e| panic!("{}: {e:#}", log.display()))
}

fn load(dir: &Path, range: Option<(i64, i64)>) -> Run {
    let mut report = LoadReport::new("dataset");
    let run = Dataset::open(dir).unwrap().load(range, &mut report).unwrap();
    assert!(report.warnings.is_empty(), "{}: {:?}", dir.display(), report.located().collect::<Vec<_>>());
    run
}

fn load_log(path: &Path) -> Run {
    let mut report = LoadReport::new("log");
    vantage::source::path::load_path(path, None, &mut report).unwrap()
}

/// The run's content as sorted vantage JSONL records, each trajectory written as a chain (so
/// tree nodes are compared by what they hold, not by their place in the arena), groups with
/// their attributes, and the header.
fn content(run: &Run) -> Vec<String> {
    let mut lines: Vec<String> =
        run.trajectories.ids().map(|t| vantage::load::formats::vantage_jsonl::write::trajectory_json(run, t)).collect();
    let jsonl = to_jsonl(run);
    lines.extend(
        jsonl
            .lines()
            .filter(|l| l.starts_with("{\"type\":\"group\"") || l.starts_with("{\"vantage\""))
            .map(str::to_owned),
    );
    lines.sort();
    lines
}

#[test]
fn every_log_round_trips_through_v2_and_back() {
    let dir = scratch("roundtrip");
    for (i, log) in logs().iter().enumerate() {
        let mut original = load_log(log);
        vantage::source::joined::mark_converted(&mut original);
        let first = dir.join(format!("{i}-a"));
        convert(log, &first, dataset::DEFAULT_PIECE);
        let from_v2 = load(&first, None);
        assert_eq!(content(&from_v2), content(&original), "{}: v2 holds another run", log.display());
        // v2 → JSONL → v2: the same content again, byte for byte in vantage JSONL.
        let jsonl = dir.join(format!("{i}.jsonl"));
        std::fs::write(&jsonl, to_jsonl(&from_v2)).unwrap();
        let second = dir.join(format!("{i}-b"));
        convert(&jsonl, &second, dataset::DEFAULT_PIECE);
        let again = load(&second, None);
        assert!(to_jsonl(&again) == to_jsonl(&from_v2), "{}: v2 → JSONL → v2 changed it", log.display());
        // v2 → v2 (partition by partition) too.
        let third = dir.join(format!("{i}-c"));
        convert(&first, &third, dataset::DEFAULT_PIECE);
        assert!(to_jsonl(&load(&third, None)) == to_jsonl(&from_v2), "{}: v2 → v2 changed it", log.display());
    }
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_stream_in_many_pieces_is_the_run_in_one() {
    let dir = scratch("pieces");
    for name in ["math_grpo_prm", "tree_rollouts", "verl_token_batch", "alfworld_roles"] {
        let log = root().join(format!("sample_runs/{name}.jsonl"));
        let whole = dir.join(format!("{name}-whole"));
        let pieces = dir.join(format!("{name}-pieces"));
        assert_eq!(convert(&log, &whole, dataset::DEFAULT_PIECE).pieces, 1);
        let converted = convert(&log, &pieces, 4096);
        assert!(converted.pieces > 3, "{name}: {} pieces", converted.pieces);
        assert!(converted.manifest.partitions.iter().any(|p| p.parts > 1), "{name}: no partition in parts");
        let (a, b) = (Dataset::open(&whole).unwrap().manifest, converted.manifest);
        let counts = |m: &vantage::load::formats::vantage_v2::Manifest| {
            m.partitions
                .iter()
                .map(|p| (p.dir.clone(), p.groups, p.trajectories, p.steps, p.tokens))
                .collect::<Vec<_>>()
        };
        assert_eq!(counts(&a), counts(&b), "{name}");
        assert!(to_jsonl(&load(&pieces, None)) == to_jsonl(&load(&whole, None)), "{name}: the pieces hold another run");
    }
    // A verl directory, file by file and piece by piece.
    let verl = root().join("tests/fixtures/verl_dump");
    let (whole, pieces) = (dir.join("verl-whole"), dir.join("verl-pieces"));
    convert(&verl, &whole, dataset::DEFAULT_PIECE);
    assert!(convert(&verl, &pieces, 1).pieces > 1);
    assert!(to_jsonl(&load(&pieces, None)) == to_jsonl(&load(&whole, None)), "verl: the pieces hold another run");
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
}

#[test]
fn polars_reads_the_tables_with_their_types_and_counts() {
    use polars::prelude::{DataType, ParquetReader, SerReader as _};
    let dir = scratch("polars");
    let out = dir.join("run");
    let manifest = convert(&root().join("sample_runs/verl_token_batch.jsonl"), &out, dataset::DEFAULT_PIECE).manifest;
    let partition = &manifest.partitions[0];
    let read = |table: &str| {
        let file = std::fs::File::open(out.join(partition.file(table, 0))).unwrap();
        ParquetReader::new(file).finish().unwrap()
    };
    let steps = read("steps");
    assert_eq!(steps.height() as u64, partition.steps);
    for (column, dtype) in [
        ("node", DataType::UInt64),
        ("parent", DataType::UInt64),
        ("step", DataType::UInt32),
        ("group", DataType::String),
        ("kind", DataType::String),
        ("thought", DataType::String),
        ("env_reward", DataType::Float32),
        ("first_error", DataType::Boolean),
        ("token_start", DataType::UInt32),
    ] {
        assert_eq!(steps.column(column).unwrap().dtype(), &dtype, "steps.{column}");
    }
    let trajectories = read("trajectories");
    assert_eq!(trajectories.height() as u64, partition.trajectories);
    assert_eq!(trajectories.column("reward").unwrap().dtype(), &DataType::Float32);
    assert_eq!(trajectories.column("success").unwrap().dtype(), &DataType::Boolean);
    let tokens = read("tokens");
    assert_eq!(tokens.column("logprob").unwrap().dtype(), &DataType::List(Box::new(DataType::Float32)));
    assert_eq!(tokens.column("mask").unwrap().dtype(), &DataType::List(Box::new(DataType::Boolean)));
    let list = tokens.column("logprob").unwrap().list().unwrap().clone();
    let lengths: usize = (0..list.len()).map(|row| list.get_as_series(row).map_or(0, |s| s.len())).sum();
    assert_eq!(lengths as u64, partition.tokens);
    assert_eq!(read("groups").height() as u64, partition.groups);
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_range_of_training_steps_reads_only_its_partitions() {
    let (dir, out) = math_dataset("range");
    let dataset = Dataset::open(&out).unwrap();
    assert_eq!(dataset.files_read(), Vec::<String>::new(), "opening reads the manifest only");
    let mut report = LoadReport::new("range");
    let run = dataset.load(Some((1, 1)), &mut report).unwrap();
    let read = dataset.files_read();
    assert_eq!(read.len(), 3, "{read:?}");
    assert!(read.iter().all(|f| f.starts_with("train_step=1/")), "{read:?}");
    assert!(run.groups.train_step.iter().all(|&s| s == Some(1)));
    // The texts stayed in the files: a step's thought is read when asked, by reading its column.
    assert!(run.text.text_bytes() == 0, "no text was copied into the run");
    let node = run.trajectories.path(vantage::model::TrajectoryId::from_index(5))[0];
    let thought = run.text(run.nodes.thought[node.index()]).into_owned();
    let eager =
        Dataset::open(&out).unwrap().load_texts_left(Some((1, 1)), false, &mut LoadReport::new("eager")).unwrap();
    assert_eq!(thought, eager.text(eager.nodes.thought[node.index()]));
    assert!(!thought.is_empty());
    assert_eq!(dataset.files_read()[3..], ["train_step=1/steps-00000.parquet#thought".to_owned()]);
    let _: std::borrow::Cow<'_, str> = run.text(run.nodes.thought[node.index() + 1]);
    assert_eq!(dataset.files_read().len(), 4, "the column read is kept");
    assert!(run.meta.notes.iter().any(|n| n.contains("1 of the 3 training-step partitions")), "{:?}", run.meta.notes);
    // Opening a group (its rollout tree, merged by prefix: every step's texts) reads its partition only.
    let mut report = LoadReport::new("two steps");
    let two = Dataset::open(&out).unwrap();
    let two_run = two.load(Some((1, 2)), &mut report).unwrap();
    let group = two_run.groups.ids().find(|g| two_run.groups.train_step[g.index()] == Some(2)).unwrap();
    let before = two.files_read().len();
    let tree = vantage::analysis::tree_layout::GroupTree::build(
        &two_run,
        group,
        vantage::analysis::tree_layout::TreeMerge::Prefix,
    );
    assert!(!tree.nodes.is_empty());
    let read = &two.files_read()[before..];
    assert!(!read.is_empty() && read.iter().all(|f| f.starts_with("train_step=2/steps-")), "{read:?}");
    let whole = load(&out, None);
    let step_one = |r: &Run| {
        r.trajectories.ids().filter(|t| r.groups.train_step[r.trajectories.group[t.index()].index()] == Some(1)).count()
    };
    assert_eq!(run.trajectories.len(), step_one(&whole));
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
}

/// Credit by trajectory key and step, so runs read in different orders compare.
fn by_key(run: &Run, step_credit: &[f32]) -> BTreeMap<(String, usize), u32> {
    let mut out = BTreeMap::new();
    for t in run.trajectories.ids() {
        let offset = run.trajectories.path_offsets[t.index()] as usize;
        for step in 0..run.trajectories.num_steps(t) {
            out.insert((run.trajectory_key(t).to_owned(), step), step_credit[offset + step].to_bits());
        }
    }
    out
}

#[test]
fn credit_partition_by_partition_equals_the_whole_run_where_schemes_say_so() {
    let dir = scratch("credit");
    let mut compared = 0;
    let mut wide_seen = BTreeMap::new();
    for name in ["math_grpo_prm", "tree_rollouts", "verl_token_batch", "alfworld_roles", "search_qa_rag"] {
        let out = dir.join(name);
        convert(&root().join(format!("sample_runs/{name}.jsonl")), &out, dataset::DEFAULT_PIECE);
        let dataset = Dataset::open(&out).unwrap();
        let whole = load(&out, None);
        let parts: Vec<Run> =
            dataset.manifest.partitions.iter().map(|p| load(&out, p.train_step.map(|s| (s, s)))).collect();
        for scheme in SCHEMES {
            if scheme.supports(&whole) != Support::Yes {
                continue;
            }
            let params = Params::resolve(*scheme, None, &Vec::new()).unwrap();
            let all = by_key(&whole, &credit::compute(*scheme, &whole, None, &Vec::new()).unwrap().step);
            let mut pieced = BTreeMap::new();
            for part in &parts {
                if scheme.supports(part) != Support::Yes {
                    continue;
                }
                pieced.extend(by_key(part, &credit::compute(*scheme, part, None, &Vec::new()).unwrap().step));
            }
            let id = scheme.info().id;
            match scheme.batch_wide(&params) {
                None => {
                    assert!(pieced == all, "{name}: {id} says its groups are all it needs, but partitions differ");
                    compared += 1;
                }
                Some(_) if parts.len() > 1 && pieced != all => {
                    wide_seen.insert(id, true);
                }
                Some(_) => {
                    wide_seen.entry(id).or_insert(false);
                }
            }
        }
    }
    assert!(compared > 60, "{compared}");
    // Every scheme that says it is batch-wide is seen to be on some sample (else it should not say so).
    for (id, seen) in wide_seen {
        assert!(seen, "{id} says it depends on the whole batch, but no sample shows it");
    }
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
}

fn vantage(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_vantage")).args(args).current_dir(root()).output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Reads every `train_step=K/credit.parquet` under `out` as (trajectory, step) → credit bits.
fn read_credit(out: &Path) -> BTreeMap<(String, usize), u32> {
    use polars::prelude::{ParquetReader, SerReader as _};
    let mut credit = BTreeMap::new();
    for entry in std::fs::read_dir(out).unwrap() {
        let path = entry.unwrap().path().join("credit.parquet");
        let frame = ParquetReader::new(std::fs::File::open(&path).unwrap()).finish().unwrap();
        let (t, s, c) = (
            frame.column("trajectory").unwrap().str().unwrap().clone(),
            frame.column("step").unwrap().u32().unwrap().clone(),
            frame.column("credit").unwrap().f32().unwrap().clone(),
        );
        for i in 0..frame.height() {
            credit.insert(
                (t.get(i).unwrap().to_owned(), s.get(i).unwrap() as usize),
                c.get(i).unwrap_or(f32::NAN).to_bits(),
            );
        }
    }
    credit
}

#[test]
fn vantage_credit_on_a_dataset_writes_partitioned_output_equal_to_the_whole_run() {
    let dir = scratch("cli-credit");
    let run_dir = dir.join("run");
    let run_arg = run_dir.display().to_string();
    let log = root().join("sample_runs/math_grpo_prm.jsonl");
    let (code, stdout, stderr) = vantage(&["convert", &log.display().to_string(), &run_arg]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("3 training-step partitions, 36 groups, 288 trajectories"), "{stdout}");
    let whole = load(&run_dir, None);
    for scheme in ["grpo", "prm_process", "triage"] {
        let out = dir.join(format!("credit-{scheme}"));
        let (code, _, stderr) = vantage(&["credit", &run_arg, "--scheme", scheme, "--out", &out.display().to_string()]);
        if scheme == "triage" && code != Some(0) {
            // TRIAGE needs roles; the math sample has none.
            assert!(stderr.contains("triage"), "{stderr}");
            continue;
        }
        assert_eq!(code, Some(0), "{scheme}: {stderr}");
        let expected =
            by_key(&whole, &credit::compute(credit::scheme(scheme).unwrap(), &whole, None, &Vec::new()).unwrap().step);
        assert_eq!(read_credit(&out), expected, "{scheme}");
    }
    // One process per partition, into one output directory: the same dataset.
    let out = dir.join("credit-per-process");
    let out_arg = out.display().to_string();
    let grpo_partition = |partition: &str| {
        let (code, _, stderr) =
            vantage(&["credit", &run_arg, "--scheme", "grpo", "--partition", partition, "--out", &out_arg]);
        (code, stderr)
    };
    for step in 0..3 {
        let (code, stderr) = grpo_partition(&format!("train_step={step}"));
        assert_eq!(code, Some(0), "{stderr}");
    }
    assert_eq!(read_credit(&out), read_credit(&dir.join("credit-grpo")));
    // A scheme that normalizes over the batch asks which batch; each answer is what it says.
    let wide = dir.join("credit-wide");
    let wide_arg = wide.display().to_string();
    let (code, _, stderr) = vantage(&["credit", &run_arg, "--scheme", "reinforce_plus_plus", "--out", &wide_arg]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("whitens the advantages") && stderr.contains("--batch-scope"), "{stderr}");
    let rpp = credit::scheme("reinforce_plus_plus").unwrap();
    let (code, _, stderr) =
        vantage(&["credit", &run_arg, "--scheme", "reinforce_plus_plus", "--batch-scope", "run", "--out", &wide_arg]);
    assert_eq!(code, Some(0), "{stderr}");
    let whole_batch = by_key(&whole, &credit::compute(rpp, &whole, None, &Vec::new()).unwrap().step);
    assert_eq!(read_credit(&wide), whole_batch);
    let _: std::io::Result<()> = std::fs::remove_dir_all(&wide);
    let (code, _, stderr) =
        vantage(&["credit", &run_arg, "--scheme", "reinforce_plus_plus", "--batch-scope", "step", "--out", &wide_arg]);
    assert_eq!(code, Some(0), "{stderr}");
    let mut per_step = BTreeMap::new();
    for step in 0..3 {
        let part = load(&run_dir, Some((step, step)));
        per_step.extend(by_key(&part, &credit::compute(rpp, &part, None, &Vec::new()).unwrap().step));
    }
    assert_eq!(read_credit(&wide), per_step);
    assert_ne!(per_step, whole_batch, "the two batch scopes are different credit");
    let (code, stderr) = grpo_partition("train_step=9");
    assert_eq!(code, Some(2));
    assert!(stderr.contains("no such partition"), "{stderr}");
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_damaged_part_names_its_file_and_a_newer_version_says_so() {
    let (dir, out) = math_dataset("damaged");
    let steps = out.join("train_step=1/steps-00000.parquet");
    let bytes = std::fs::read(&steps).unwrap();
    std::fs::write(&steps, &bytes[..bytes.len() / 2]).unwrap();
    let mut report = LoadReport::new("damaged");
    let err = Dataset::open(&out).unwrap().load(None, &mut report).unwrap_err().located();
    assert!(err.contains("train_step=1/steps-00000.parquet"), "{err}");
    // The other partitions still open on their own.
    assert_eq!(load(&out, Some((2, 2))).groups.len(), 12);
    let manifest = out.join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap().replace("\"version\": 2", "\"version\": 3");
    std::fs::write(&manifest, text).unwrap();
    let err = Dataset::open(&out).err().unwrap().located();
    assert!(err.contains("schema version 3"), "{err}");
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_followed_log_grows_its_dataset_and_ends_as_the_whole_log_converted() {
    let dir = scratch("follow");
    let log = dir.join("growing.jsonl");
    let text = std::fs::read_to_string(root().join("sample_runs/math_grpo_prm.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let half = lines.len() / 2;
    std::fs::write(&log, format!("{}\n", lines[..half].join("\n"))).unwrap();
    let out = dir.join("run");
    let child = Command::new(env!("CARGO_BIN_EXE_vantage"))
        .args(["convert", &log.display().to_string(), &out.display().to_string(), "--follow", "--until-idle", "3"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The first manifest lists the first half.
    let manifest = out.join("manifest.json");
    let started = std::time::Instant::now();
    while !manifest.is_file() && started.elapsed() < std::time::Duration::from_secs(30) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let first = Dataset::open(&out).unwrap().manifest.total(|p| p.trajectories);
    assert!(first > 0 && first < 288, "{first}");
    // The rest arrives, the last line without its end.
    let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    std::io::Write::write_all(&mut file, lines[half..].join("\n").as_bytes()).unwrap();
    drop(file);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let followed = load(&out, None);
    assert_eq!(followed.trajectories.len(), 288);
    let whole = dir.join("whole");
    convert(&root().join("sample_runs/math_grpo_prm.jsonl"), &whole, dataset::DEFAULT_PIECE);
    assert_eq!(content(&followed), content(&load(&whole, None)));
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
}

/// A dataset's directory read as the web build reads a URL or a dropped folder: in byte ranges
/// (or, like a server that ignores Range, whole files), each read recorded.
struct DirPieces {
    root: PathBuf,
    ranges: bool,
    served: std::cell::RefCell<Vec<(String, u64, u64)>>,
}

impl vantage::load::formats::vantage_v2::remote::PieceSource for DirPieces {
    async fn whole(&self, path: &str) -> Result<Vec<u8>, vantage::load::formats::vantage_v2::remote::PieceError> {
        std::fs::read(self.root.join(path))
            .map_err(|_e| vantage::load::formats::vantage_v2::remote::PieceError::Missing)
    }

    async fn piece(
        &self,
        path: &str,
        want: vantage::load::formats::vantage_v2::remote::Want,
    ) -> Result<vantage::load::formats::vantage_v2::remote::Piece, vantage::load::formats::vantage_v2::remote::PieceError>
    {
        use vantage::load::formats::vantage_v2::remote::{Piece, Want};
        let bytes = self.whole(path).await?;
        let file_len = bytes.len() as u64;
        let (offset, bytes) = match (self.ranges, want) {
            (false, _) => (0, bytes),
            (true, Want::Tail(n)) => {
                let start = file_len.saturating_sub(n);
                (start, bytes[start as usize..].to_vec())
            }
            (true, Want::Range(start, len)) => (start, bytes[start as usize..(start + len) as usize].to_vec()),
        };
        self.served.borrow_mut().push((path.to_owned(), offset, bytes.len() as u64));
        Ok(Piece { offset, bytes, file_len })
    }

    /// Small, so that the small files of the samples are read in pieces too.
    fn tail(&self) -> u64 {
        1024
    }
}

#[test]
fn a_dataset_read_in_byte_ranges_is_the_run_read_from_disk() {
    use vantage::load::formats::vantage_v2::remote;
    use vantage::load::pace::block_on;
    let dir = scratch("ranges");
    for (i, log) in logs().iter().enumerate() {
        let out = dir.join(format!("{i}"));
        convert(log, &out, dataset::DEFAULT_PIECE);
        let from_disk = content(&load(&out, None));
        let on_disk = walk_bytes(&out);
        for ranges in [false, true] {
            let source = DirPieces { root: out.clone(), ranges, served: std::cell::RefCell::new(Vec::new()) };
            let mut report = LoadReport::new("remote");
            let (run, texts) = block_on(remote::open(&source, "remote", None, &mut report)).unwrap();
            assert!(report.warnings.is_empty(), "{}: {:?}", log.display(), report.located().collect::<Vec<_>>());
            let served_at_open: u64 = source.served.borrow().iter().map(|(_, _, n)| n).sum();
            let mut first = content(&run);
            if ranges {
                // Texts were left unread: the first look shows placeholders and asks for them.
                while texts.pending() > 0 {
                    block_on(remote::fetch_wanted(&source, &texts)).unwrap();
                    first = content(&run);
                }
                let manifest_len = std::fs::metadata(out.join("manifest.json")).unwrap().len();
                assert!(served_at_open + manifest_len <= on_disk, "{}: read more than the files", log.display());
            } else {
                assert_eq!(texts.pending(), 0, "whole files hold every text");
            }
            assert_eq!(first, from_disk, "{} (ranges: {ranges}): another run", log.display());
        }
    }
    // On a run with texts, opening in ranges reads less than the files hold, and a range of
    // training steps reads only its partitions.
    let (mdir, math) = math_dataset("ranges-math");
    let source = DirPieces { root: math.clone(), ranges: true, served: std::cell::RefCell::new(Vec::new()) };
    let (run, _texts) = block_on(remote::open(&source, "math", Some((2, 2)), &mut LoadReport::new("m"))).unwrap();
    assert!(run.groups.train_step.iter().all(|&s| s == Some(2)));
    let served = source.served.borrow();
    assert!(served.iter().all(|(p, _, _)| p.starts_with("train_step=2/")), "{served:?}");
    // No byte of a text column's chunks was read.
    for (path, offset, len) in served.iter() {
        let bytes = std::fs::read(math.join(path)).unwrap();
        let meta = vantage::load::parquet_file::ParquetMeta::of_file(&bytes).unwrap();
        for (start, n) in vantage::load::formats::vantage_v2::read::column_ranges(
            &meta,
            &vantage::load::formats::vantage_v2::read::TEXT_COLUMNS,
        ) {
            assert!(
                offset + len <= start || start + n <= *offset,
                "{path}: read {offset}+{len}, a text column at {start}+{n}"
            );
        }
    }
    drop(served);
    let err = block_on(remote::open(&source, "math", Some((50, 60)), &mut LoadReport::new("m"))).unwrap_err();
    assert!(err.to_string().contains("no training step of the dataset is in --steps 50..60"), "{err}");
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
    let _: std::io::Result<()> = std::fs::remove_dir_all(&mdir);
}

#[test]
fn a_large_dataset_shows_its_latest_partition_first_then_the_whole_run() {
    use vantage::load::formats::vantage_v2::remote;
    use vantage::load::pace::block_on;
    let (mdir, math) = math_dataset("first-math");
    let manifest = Dataset::open(&math).unwrap().manifest;
    let latest = manifest.partitions.iter().filter_map(|p| p.train_step).max().unwrap();
    assert!(manifest.partitions.len() > 1, "the sample has several training steps");
    let source = DirPieces { root: math.clone(), ranges: true, served: std::cell::RefCell::new(Vec::new()) };
    let mut shown = Vec::new();
    let mut first = |run: Run, texts: std::sync::Arc<remote::RemoteTexts>, report: &LoadReport| {
        assert!(report.warnings.is_empty(), "{:?}", report.located().collect::<Vec<_>>());
        shown.push((run, texts, source.served.borrow().len()));
    };
    let mut report = LoadReport::new("math");
    let (run, texts) =
        block_on(remote::open_showing_first(&source, "math", None, &mut report, Some(&mut first))).unwrap();
    assert_eq!(shown.len(), 1, "one run shown first");
    let (first_run, first_texts, reads_then) = &shown[0];
    // The first run is the latest training step's partition, whole, read before the others.
    assert!(first_run.groups.train_step.iter().all(|&s| s == Some(latest)));
    let latest_on_disk = content(&load(&math, Some((latest, latest))));
    assert_eq!(content_with_texts(first_run, first_texts, &source), latest_on_disk);
    assert!(*reads_then < source.served.borrow().len(), "the other partitions are read after it");
    assert!(
        source.served.borrow()[..*reads_then].iter().all(|(p, _, _)| p.starts_with(&format!("train_step={latest}/")))
    );
    // The whole run is what the disk holds.
    assert_eq!(content_with_texts(&run, &texts, &source), content(&load(&math, None)));
    let _: std::io::Result<()> = std::fs::remove_dir_all(&mdir);
}

#[test]
fn a_paced_load_waits_for_the_first_view_to_be_drawn_before_asking_for_the_rest() {
    use std::future::Future as _;
    use std::task::{Context, Poll, Waker};
    use vantage::load::formats::vantage_v2::remote;
    use vantage::load::pace;
    let (mdir, math) = math_dataset("frame-math");
    let source = DirPieces { root: math.clone(), ranges: true, served: std::cell::RefCell::new(Vec::new()) };
    // The page's yielder, as the web entry installs it: a frame is a wait the page answers later
    // (here: the next poll). The budget is long enough that no other wait happens.
    pace::set_yielder(
        std::time::Duration::from_secs(3600),
        || Box::pin(std::future::ready(())),
        || {
            let mut polled = false;
            Box::pin(std::future::poll_fn(move |_| {
                if std::mem::replace(&mut polled, true) { Poll::Ready(()) } else { Poll::Pending }
            }))
        },
    );
    let mut reads_at_first = None;
    let mut reads_at_frames = Vec::new();
    let mut report = LoadReport::new("math");
    let opened = {
        let mut first = |_run: Run, _texts: std::sync::Arc<remote::RemoteTexts>, _report: &LoadReport| {
            reads_at_first = Some(source.served.borrow().len());
        };
        let mut load = std::pin::pin!(remote::open_showing_first(&source, "math", None, &mut report, Some(&mut first)));
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            match load.as_mut().poll(&mut cx) {
                Poll::Ready(opened) => break opened,
                // Only a frame wait leaves the load pending (the pieces are read at once).
                Poll::Pending => reads_at_frames.push(source.served.borrow().len()),
            }
        }
    };
    pace::clear_yielder();
    let (run, texts) = opened.unwrap();
    let reads_at_first = reads_at_first.expect("a first view was handed over");
    // One frame was waited for, right after the first view, before any other piece was asked for.
    assert_eq!(reads_at_frames, vec![reads_at_first]);
    assert!(source.served.borrow().len() > reads_at_first, "the other partitions were read after the frame");
    assert_eq!(content_with_texts(&run, &texts, &source), content(&load(&math, None)));
    // Unpaced (the CLI, the tests, the native app's loader threads), the load never waits.
    let plain = DirPieces { root: math.clone(), ranges: true, served: std::cell::RefCell::new(Vec::new()) };
    let mut shown = 0;
    let mut first = |_run: Run, _texts: std::sync::Arc<remote::RemoteTexts>, _report: &LoadReport| shown += 1;
    pace::block_on(remote::open_showing_first(&plain, "math", None, &mut LoadReport::new("m"), Some(&mut first)))
        .unwrap();
    assert_eq!(shown, 1);
    let _: std::io::Result<()> = std::fs::remove_dir_all(&mdir);
}

#[test]
fn a_pack_holds_every_piece_the_first_view_reads_and_the_rest_is_fetched() {
    use vantage::load::formats::vantage_v2::pack::{Packed, Recorder};
    use vantage::load::formats::vantage_v2::remote;
    use vantage::load::pace::block_on;
    let (mdir, math) = math_dataset("pack-math");
    let pieces = || DirPieces { root: math.clone(), ranges: true, served: std::cell::RefCell::new(Vec::new()) };
    // What the server sends: the pieces the first view reads, recorded.
    let recorder = Recorder::new(pieces(), u64::MAX);
    block_on(remote::read_first(&recorder, "math")).unwrap();
    let pack = recorder.pack();
    // The page opens through it: the first run needs no request at all.
    let packed = Packed::new(&pack, pieces()).unwrap();
    let mut requests_before_first = None;
    let mut first = |_run: Run, _texts: std::sync::Arc<remote::RemoteTexts>, _report: &LoadReport| {
        requests_before_first = Some(packed.inner().served.borrow().len());
    };
    let mut report = LoadReport::new("math");
    let (run, texts) =
        block_on(remote::open_showing_first(&packed, "math", None, &mut report, Some(&mut first))).unwrap();
    assert_eq!(requests_before_first, Some(0));
    assert_eq!(packed.unused(), 0, "every piece of the pack was used");
    assert!(!packed.inner().served.borrow().is_empty(), "the other partitions were fetched");
    // The run is the one read without a pack (its texts fetched from the source behind it).
    let plain = pieces();
    let (expected, expected_texts) = block_on(remote::open(&plain, "math", None, &mut LoadReport::new("m"))).unwrap();
    assert_eq!(content_with_texts(&run, &texts, &packed), content_with_texts(&expected, &expected_texts, &plain));
    // The pack held the first view's pieces and nothing more: the rest went to the source.
    let pack_pieces = std::str::from_utf8(&pack[..memchr_newline(&pack)]).unwrap().matches("\"path\"").count();
    let total = plain.served.borrow().len() + 1;
    assert!(pack_pieces < total, "{pack_pieces} of {total}");
    // A first view larger than the recorder's limit is no pack: the read fails, and says why.
    let small = Recorder::new(pieces(), 1000);
    assert!(block_on(remote::read_first(&small, "math")).is_err());
    assert!(small.over_limit());
    // Not a pack, a pack cut short, a newer pack: said, not read.
    for (bad, says) in [
        (b"hello".to_vec(), "no header line"),
        (pack[..pack.len() - 1].to_vec(), "cut short"),
        ([b"{\"vantage_pack\":9,\"pieces\":[]}\n".as_slice()].concat(), "version 9"),
        (
            b"{\"vantage_pack\":1,\"pieces\":[{\"path\":\"a\",\"offset\":5,\"len\":1,\"file_len\":3}]}\nx".to_vec(),
            "past",
        ),
    ] {
        let err = Packed::new(&bad, pieces()).err().unwrap();
        assert!(err.contains(says), "{err}");
    }
    let _: std::io::Result<()> = std::fs::remove_dir_all(&mdir);
}

fn memchr_newline(bytes: &[u8]) -> usize {
    bytes.iter().position(|&b| b == b'\n').unwrap()
}

/// The content of a run opened in pieces, once every text it shows has been fetched.
fn content_with_texts(
    run: &Run,
    texts: &vantage::load::formats::vantage_v2::remote::RemoteTexts,
    source: &impl vantage::load::formats::vantage_v2::remote::PieceSource,
) -> Vec<String> {
    let mut lines = content(run);
    while texts.pending() > 0 {
        vantage::load::pace::block_on(vantage::load::formats::vantage_v2::remote::fetch_wanted(source, texts)).unwrap();
        lines = content(run);
    }
    lines
}

/// The bytes of every file under `dir`.
fn walk_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        total += if path.is_dir() { walk_bytes(&path) } else { std::fs::metadata(&path).unwrap().len() };
    }
    total
}

#[test]
fn a_dataset_written_before_text_mask_and_partition_bytes_still_opens_the_same() {
    use polars::prelude::{ParquetReader, ParquetWriter, SerReader as _};
    use vantage::load::formats::vantage_v2::remote;
    use vantage::load::pace::block_on;
    let (dir, run_dir) = math_dataset("before-mask");
    let want = content(&load(&run_dir, None));
    // The groups and steps files without their text_mask column, and a manifest without bytes:
    // the dataset as the first v2 writer wrote it.
    let mut rewritten = 0;
    for partition in std::fs::read_dir(&run_dir).unwrap() {
        let partition = partition.unwrap().path();
        if !partition.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&partition).unwrap() {
            let file = file.unwrap().path();
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            if !(name.starts_with("groups-") || name.starts_with("steps-")) {
                continue;
            }
            let frame = ParquetReader::new(std::fs::File::open(&file).unwrap()).finish().unwrap();
            let mut frame = frame.drop(vantage::load::formats::vantage_v2::read::TEXT_MASK).unwrap();
            ParquetWriter::new(std::fs::File::create(&file).unwrap()).finish(&mut frame).unwrap();
            rewritten += 1;
        }
    }
    assert!(rewritten >= 6, "{rewritten} files rewritten");
    let manifest_path = run_dir.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    for partition in manifest["partitions"].as_array_mut().unwrap() {
        assert!(partition["bytes"].as_u64().unwrap() > 0);
        partition.as_object_mut().unwrap().remove("bytes");
    }
    std::fs::write(&manifest_path, serde_json::to_string(&manifest).unwrap()).unwrap();
    // From disk, texts left in the files.
    assert_eq!(content(&load(&run_dir, None)), want);
    // In byte ranges: the text columns are read with the rest (their nulls say which rows have a
    // text), so every text is there at once.
    let source = DirPieces { root: run_dir.clone(), ranges: true, served: std::cell::RefCell::new(Vec::new()) };
    let (run, texts) = block_on(remote::open(&source, "old", None, &mut LoadReport::new("old"))).unwrap();
    assert_eq!(content(&run), want);
    assert_eq!(texts.pending(), 0);
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_part_file_with_pages_vantage_does_not_decode_is_an_error_naming_the_file_and_the_codec() {
    use polars::prelude::{ParquetCompression, ParquetReader, ParquetWriter, SerReader as _};
    let (dir, run_dir) = math_dataset("lz4");
    let steps = run_dir.join("train_step=1/steps-00000.parquet");
    let mut frame = ParquetReader::new(std::fs::File::open(&steps).unwrap()).finish().unwrap();
    ParquetWriter::new(std::fs::File::create(&steps).unwrap())
        .with_compression(ParquetCompression::Lz4Raw)
        .finish(&mut frame)
        .unwrap();
    let err = Dataset::open(&run_dir).unwrap().load(None, &mut LoadReport::new("lz4")).unwrap_err().to_string();
    assert!(err.contains("train_step=1/steps-00000.parquet") && err.contains("LZ4_RAW"), "{err}");
    // The other partitions still open.
    let run = Dataset::open(&run_dir).unwrap().load(Some((2, 2)), &mut LoadReport::new("lz4")).unwrap();
    assert_ne!(run.trajectories.len(), 0);
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_formula_on_a_dataset_is_computed_partition_by_partition_and_asks_for_a_batch_scope_when_it_needs_one() {
    use vantage::credit::expr::Formula;
    let dir = scratch("cli-formula");
    let run_dir = dir.join("run");
    let run_arg = run_dir.display().to_string();
    let log = root().join("sample_runs/math_grpo_prm.jsonl");
    let (code, stdout, stderr) = vantage(&["convert", &log.display().to_string(), &run_arg]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let whole = load(&run_dir, None);
    // Within a group: partition by partition equals the whole run.
    let text = "(R - mean(R, group)) / (std(R, group) + 1e-6) + 0.3 * revcumsum(coalesce(prm, 0))";
    let out = dir.join("credit-formula");
    let scheme = format!("expr:{text}");
    let (code, _, stderr) = vantage(&["credit", &run_arg, "--scheme", &scheme, "--out", &out.display().to_string()]);
    assert_eq!(code, Some(0), "{stderr}");
    let expected = by_key(&whole, &Formula::parse(text).unwrap().credit(&whole).unwrap().step);
    assert_eq!(read_credit(&out), expected);
    // Over the batch: which batch must be said.
    let wide = "expr:R - mean(R, batch)".to_owned();
    let out = dir.join("credit-wide").display().to_string();
    let (code, _, stderr) = vantage(&["credit", &run_arg, "--scheme", &wide, "--out", &out]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("reduces over the batch (mean(…, batch))") && stderr.contains("--batch-scope"), "{stderr}");
    let (code, _, stderr) = vantage(&["credit", &run_arg, "--scheme", &wide, "--batch-scope", "step", "--out", &out]);
    assert_eq!(code, Some(0), "{stderr}");
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
}
