//! Opening a vantage Parquet v2 dataset as the app does, and then groups from its run browser
//! (docs/PERFORMANCE.md, "A run bigger than memory"):
//!
//! ```text
//! cargo run --release --features examples --example v2_open -- RUN_DIR [GROUPS]
//! ```
//!
//! prints the time to open the default window (the latest training steps whose files hold about
//! 80 MB), then, for GROUPS groups spread over it (default 20), the time to open each as the
//! group view does: its rollout tree merged by prefix (which reads the texts of every step of the
//! group: a column of its partition's file per text field, unless one read before is kept) and
//! every step's texts, and which files that read. Native, `parquet` feature.

use std::time::Instant;

use vantage::analysis::tree_layout::{GroupTree, TreeMerge};
use vantage::load::LoadReport;
use vantage::model::GroupId;
use vantage::source::dataset::Dataset;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: v2_open RUN_DIR [GROUPS]");
        std::process::exit(2);
    };
    let groups: usize = args.next().and_then(|g| g.parse().ok()).unwrap_or(20);
    let started = Instant::now();
    let dataset = Dataset::open(std::path::Path::new(&dir)).unwrap_or_else(|e| panic!("{}", e.located()));
    let range = dataset.fitting_range(vantage::source::dataset::DEFAULT_WINDOW);
    let mut report = LoadReport::new(&dir);
    let run = dataset.load(range, &mut report).unwrap_or_else(|e| panic!("{}", e.located()));
    println!(
        "opened {} groups, {} steps of training steps {range:?} in {:.3} s",
        run.groups.len(),
        run.num_path_steps(),
        started.elapsed().as_secs_f64()
    );
    let mut times = Vec::new();
    for k in 0..groups {
        let group = GroupId::from_index(k * run.groups.len() / groups.max(1));
        let before = dataset.files_read().len();
        let opened = Instant::now();
        let tree = GroupTree::build(&run, group, TreeMerge::Prefix);
        let mut bytes = 0;
        for &t in run.groups.members(group) {
            for node in run.trajectories.path(t) {
                let n = node.index();
                for id in [run.nodes.thought[n], run.nodes.action[n], run.nodes.observation[n]] {
                    bytes += run.text(id).len();
                }
            }
        }
        let seconds = opened.elapsed().as_secs_f64();
        times.push(seconds);
        let read = &dataset.files_read()[before..];
        println!(
            "group {} (step {:?}): {:.1} ms, {} tree nodes, {bytes} bytes of text, read {read:?}",
            run.group_key(group),
            run.groups.train_step[group.index()],
            seconds * 1e3,
            tree.nodes.len(),
        );
    }
    times.sort_by(f64::total_cmp);
    if let (Some(median), Some(max)) = (times.get(times.len() / 2), times.last()) {
        println!("group opened: median {:.1} ms, largest {:.1} ms", median * 1e3, max * 1e3);
    }
}
