//! The app driven through its accessibility tree with `egui_kittest` (no GPU): open each sample run,
//! select a group, click a tree node, move a slider, read the comparison, toggle meeting mode.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use vantage::VantageApp;
use vantage::analysis::tree_layout::{GroupTree, TreeMerge};
use vantage::app::state::Tab;
use vantage::load::{LoadReport, load_bytes};

use crate::common;

pub fn app_with(name: &str, bytes: &[u8]) -> VantageApp {
    app_started(name, bytes, vantage::app::StartOptions::default())
}

/// The app started with `start` (the command line's options), then given the run, as a run
/// loads after the window opens.
fn app_started(name: &str, bytes: &[u8], start: vantage::app::StartOptions) -> VantageApp {
    let mut report = LoadReport::new(name);
    let run = load_bytes(name, bytes, &mut report).unwrap();
    let mut app = VantageApp::default().with_start(start);
    app.open_loaded(run, report);
    app
}

pub fn harness(app: VantageApp) -> Harness<'static, VantageApp> {
    harness_sized(app, 1000.0)
}

fn harness_sized(app: VantageApp, height: f32) -> Harness<'static, VantageApp> {
    harness_window(app, [1600.0, height])
}

/// The app in a window of `size` points, run until it settles.
fn harness_window(app: VantageApp, size: [f32; 2]) -> Harness<'static, VantageApp> {
    let mut harness = Harness::builder().with_size(size).with_max_steps(16).build_ui_state(
        |ui, app: &mut VantageApp| {
            app.logic(ui.ctx());
            vantage::ui::app_ui(app, ui);
        },
        app,
    );
    harness.run_ok();
    // The pass that takes in the app's zoom (meeting mode's) rescales the window it was given
    // (egui's guard against jitter), and the harness sends no size after its first pass: give
    // it again.
    harness.set_size(size.into());
    harness.run_ok();
    harness
}

pub fn sample(name: &str) -> Vec<u8> {
    std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_runs").join(name)).unwrap()
}

fn click_at(harness: &Harness<'_, VantageApp>, pos: egui::Pos2) {
    harness.hover_at(pos);
    for pressed in [true, false] {
        harness.event(egui::Event::PointerButton {
            pos,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
    }
}

#[test]
fn every_sample_opens_and_every_tab_draws() {
    let names = sample_names();
    assert!(names.len() >= 5, "{names:?}");
    for name in names {
        let mut h = harness(app_with(&name, &sample(&name)));
        for tab in Tab::ALL {
            h.state_mut().state.tab = tab;
            h.run_ok();
        }
        let open = h.state().current().unwrap();
        assert!(open.credit[0].credit().is_some(), "{name}: scheme A computes ({:?})", open.credit[0].error());
        assert!(open.credit[1].credit().is_some(), "{name}: scheme B computes ({:?})", open.credit[1].error());
    }
}

fn sample_names() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_runs");
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// The first line (at most 40 characters) of a step's text: thought, else action, else observation.
fn step_text(run: &vantage::model::Run, node: vantage::model::NodeId) -> String {
    let n = node.index();
    let texts = [run.nodes.thought[n], run.nodes.action[n], run.nodes.observation[n]];
    let text = texts.iter().map(|&t| run.text(t)).find(|t| !t.trim().is_empty()).unwrap_or_default();
    text.lines().next().unwrap_or("").chars().take(40).collect()
}

#[test]
fn on_every_sample_search_selects_a_group_its_tree_shows_and_a_clicked_node_is_inspected() {
    for name in sample_names() {
        let mut h = harness(app_with(&name, &sample(&name)));
        let (group, key, tree) = {
            let open = h.state().current().unwrap();
            let run = &open.run;
            let t = run.trajectories.ids().nth(run.trajectories.len() / 2).unwrap();
            let g = run.trajectories.group[t.index()];
            (g, run.trajectory_key(t).to_owned(), GroupTree::build(run, g, TreeMerge::Logged))
        };
        // Search for the rollout in the browser and click it: its group's tree shows, with its size.
        let search = h.get_by_role(egui::accesskit::Role::TextInput);
        search.focus();
        search.type_text(&key);
        h.run_ok();
        h.get_by_label_contains(&format!("{key}  ·")).click();
        h.run_ok();
        assert_eq!(h.state().current().unwrap().selection.group, Some(group), "{name}");
        h.get_by_label(&format!("{} nodes · {} leaves", tree.nodes.len(), tree.num_rows));
        // Click the deepest node of the tree: the inspector shows that step's text.
        let (i, node) = tree.nodes.iter().enumerate().max_by_key(|(_, n)| n.depth).unwrap();
        let rect = h.get_by_label("rollout tree").rect();
        let (offset, scale) = vantage::ui::views::tree::fit_view(rect, &tree);
        click_at(&h, vantage::ui::views::tree::screen_from_layout(rect, offset, scale, node));
        h.run_ok();
        let open = h.state().current().unwrap();
        let selected = open.selection.position.unwrap();
        assert!(tree.positions_of(i).contains(&(selected as u32)), "{name}");
        let text = step_text(&open.run, node.node);
        assert!(!text.is_empty(), "{name}: the step has text");
        h.get_by_label_contains(&text);
    }
}

#[test]
fn on_every_sample_the_epsilon_slider_moves_the_selected_cell_to_the_recomputed_value() {
    for name in sample_names() {
        // A run that logs its trainer's advantages opens on them (the audit); the slider is GRPO's.
        let mut h = harness(app_started(
            &name,
            &sample(&name),
            vantage::app::StartOptions { scheme_a: Some("grpo".to_owned()), ..Default::default() },
        ));
        assert_eq!(h.state().state.scheme_a.scheme_id, "grpo", "{name}");
        let sliders = h.get_all_by_label("epsilon").collect::<Vec<_>>();
        sliders[0].set_value_accesskit(0.5);
        h.run_ok();
        let open = h.state().current().unwrap();
        let p = open.selection.position.unwrap();
        let grpo = vantage::credit::scheme("grpo").unwrap();
        let sets = vec![("epsilon".to_owned(), "0.5".to_owned())];
        let expected = vantage::credit::compute(grpo, &open.run, None, &sets).unwrap().step[p];
        let default = vantage::credit::compute(grpo, &open.run, None, &Vec::new()).unwrap().step[p];
        let shown = format!("credit A = {}", vantage::ui::widgets::format_value(expected));
        h.get_by_label_contains(&shown);
        assert!(expected != default || default == 0.0, "{name}: ε changes the selected cell");
    }
}

/// Two rollouts, rewards 1 and 0; step scores that call the winner's second step wrong.
pub const TINY: &str = r#"{"vantage": 1}
{"type": "trajectory", "id": "win", "group": "g", "outcome": {"reward": 1, "success": true}, "steps": [{"thought": "s1", "scores": {"prm": 0.9}}, {"thought": "s2", "scores": {"prm": 0.1}}, {"thought": "s3", "scores": {"prm": 0.9}}]}
{"type": "trajectory", "id": "lose", "group": "g", "outcome": {"reward": 0, "success": false}, "steps": [{"thought": "t1", "scores": {"prm": 0.8}}, {"thought": "t2", "scores": {"prm": 0.2}}]}
"#;

#[test]
fn moving_the_epsilon_slider_changes_the_selected_cell_to_the_expected_value() {
    let mut h = harness(app_with("tiny.jsonl", TINY.as_bytes()));
    // GRPO on rewards [1, 0]: std = 0.7071, A = 0.5 / (0.7071 + ε).
    h.get_by_label_contains("credit A = 0.7071");
    let sliders = h.get_all_by_label("epsilon").collect::<Vec<_>>();
    sliders[0].set_value_accesskit(1.0 - std::f64::consts::FRAC_1_SQRT_2);
    h.run_ok();
    assert!(h.state().state.scheme_a.values.iter().any(|(k, _)| k == "epsilon"));
    h.get_by_label_contains("credit A = 0.5000");
}

#[test]
fn the_compare_view_names_a_known_disagreement() {
    // Tall enough that the disagreement tables below the plots are on screen.
    let mut h = harness_sized(app_with("tiny.jsonl", TINY.as_bytes()), 2400.0);
    assert_eq!(h.state().state.scheme_b.scheme_id, "prm_process");
    h.get_by_label("Compare").click();
    h.run_ok();
    // GRPO credits every step of the winner; the PRM form punishes its flawed second step.
    h.get_by_label_contains("rewarded lucky step in a flawed solution (1)");
    h.get_by_label_contains("win · step 2").click();
    h.run_ok();
    let open = h.state().current().unwrap();
    assert_eq!(open.selected_step_index(), Some(1));
}

#[test]
fn meeting_mode_hides_the_side_panels_and_arrow_keys_walk_steps() {
    let mut h = harness(app_with("tiny.jsonl", TINY.as_bytes()));
    assert!(h.query_by_label("Credit schemes").is_some());
    assert!(h.query_by_label("Rollouts").is_some());
    h.key_press(egui::Key::F2);
    h.run_ok();
    assert!(h.state().state.meeting_mode);
    assert!(h.query_by_label("Credit schemes").is_none());
    assert!(h.query_by_label("Rollouts").is_none());
    h.key_press(egui::Key::ArrowRight);
    h.run_ok();
    assert_eq!(h.state().current().unwrap().selected_step_index(), Some(1));
    // The step under discussion stays in view: its text and both credits.
    h.get_by_label_contains("Step strip · win · step 2 of 3");
    h.get_by_label_contains("thought: s2");
    assert!(h.query_all_by_label_contains("A: grpo").count() >= 1);
    h.key_press(egui::Key::B);
    h.run_ok();
    assert_eq!(h.state().state.bookmarks.len(), 1);
    h.key_press(egui::Key::ArrowDown);
    h.run_ok();
    h.key_press(egui::Key::PageDown);
    h.run_ok();
    let open = h.state().current().unwrap();
    assert_eq!(open.run.trajectory_key(open.selection.trajectory.unwrap()), "win");
    assert_eq!(open.selected_step_index(), Some(1));
}

#[test]
fn the_compare_view_shows_the_role_constants_each_scheme_implies() {
    let name = "alfworld_roles.jsonl";
    // Tall enough that the tables below the plots are on screen.
    let mut h = harness_sized(app_with(name, &sample(name)), 2400.0);
    assert_eq!(h.state().state.scheme_b.scheme_id, "triage");
    h.get_by_label("Compare").click();
    h.run_ok();
    h.get_by_label("Mean credit per role");
    h.get_by_label("Credit against length");
    h.get_by_label_contains("Spearman ρ with length");
    h.get_by_label("Role constants each scheme implies (TRIAGE fit)");
    for role in ["progress", "exploration", "infrastructure", "regression"] {
        assert!(h.query_all_by_label(role).count() >= 2, "{role} in the per-role and fit tables");
    }
}

#[test]
fn a_deep_link_opens_its_step_and_copy_link_reproduces_it() {
    let name = "alfworld_roles.jsonl";
    let mut app = VantageApp::default().with_start(vantage::app::StartOptions {
        link: Some("#traj=s1-task3-r2&step=5&a=grpo&b=gigpo&view=compare".to_owned()),
        ..Default::default()
    });
    let mut report = LoadReport::new(name);
    let run = load_bytes(name, &sample(name), &mut report).unwrap();
    app.open_loaded(run, report);
    let mut h = harness(app);
    let open = h.state().current().unwrap();
    assert_eq!(open.run.trajectory_key(open.selection.trajectory.unwrap()), "s1-task3-r2");
    assert_eq!(open.selected_step_index(), Some(4));
    assert_eq!(h.state().state.scheme_b.scheme_id, "gigpo");
    assert_eq!(h.state().state.tab, Tab::Compare);
    assert_eq!(h.state().title(), "vantage — s1-task3-r2 · step 5");
    // The link of the current view names the same step and schemes.
    let link = h.state().link_here(None);
    let again = vantage::app::deeplink::DeepLink::parse(&link.to_fragment());
    assert_eq!((again.trajectory.as_deref(), again.step), (Some("s1-task3-r2"), Some(4)));
    h.get_by_label("Export").click();
    h.run_ok();
    h.get_by_label("Copy link").click();
    h.run_ok();
    assert!(h.state().notifications.iter().any(|n| n.contains("copied")));
}

#[test]
fn the_summary_says_how_a_log_was_read() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/verl_dump");
    let mut report = LoadReport::new("verl_dump");
    let run = vantage::source::path::load_path(&dir, None, &mut report).unwrap();
    let mut app = VantageApp::default();
    app.open_loaded(run, report);
    app.state.tab = Tab::Summary;
    let h = harness(app);
    let note = h
        .state()
        .current()
        .unwrap()
        .run
        .meta
        .notes
        .iter()
        .find(|n| n.contains("groups rebuilt from identical `input`"))
        .cloned();
    h.get_by_label(&note.unwrap());
}

#[test]
fn an_inspect_eval_shows_its_summaries_first_and_reads_the_selected_sample_first() {
    let mut app = VantageApp::default().with_start(vantage::app::StartOptions {
        link: Some("#traj=2/epoch1&step=2".to_owned()),
        ..Default::default()
    });
    let source =
        vantage::source::open::LoadSource::Bytes { name: "lazy.eval".to_owned(), bytes: common::lazy_eval().into() };
    app.loads.start(source, || {});
    let outcomes = app.loads.wait_all();
    app.accept(outcomes, || {});
    // Opened from the summaries: one `summary` step per sample, samples still to read.
    let open = app.current().unwrap();
    assert_eq!(open.run.trajectories.len(), 5);
    assert_eq!(open.run.num_path_steps(), 5);
    assert_eq!(open.lazy.as_ref().unwrap().progress(), (0, 4));
    // With no time to spare, a frame reads just the selected sample, and swaps it in at once.
    let open = app.current_mut().unwrap();
    let ten = open.run.trajectory_by_key("10/epoch1").unwrap();
    open.select_trajectory(ten);
    assert!(open.read_lazily(0.0, std::time::Duration::ZERO), "samples remain");
    assert_eq!(open.lazy.as_ref().unwrap().progress(), (1, 4));
    assert_eq!(open.run.num_path_steps(), 2 + 4);
    assert_eq!(open.run.trajectory_key(open.selection.trajectory.unwrap()), "10/epoch1");
    // The first frame reads the linked sample first and swaps the run in; the link's second step
    // (which the summary did not have) is then selected.
    let mut h = harness(app);
    let open = h.state().current().unwrap();
    assert!(open.lazy.is_none(), "a small eval is read within a few frames");
    assert_eq!(open.run.num_path_steps(), 2 + 2 + 2 + 1 + 2);
    assert_eq!(open.run.trajectory_key(open.selection.trajectory.unwrap()), "2/epoch1");
    assert_eq!(open.selected_step_index(), Some(1));
    let node = open.run.trajectories.path_nodes[open.selection.position.unwrap()];
    assert_eq!(open.run.text(open.run.nodes.action[node.index()]), "The answer is forty-two");
    assert!(open.run.meta.revision > 0);
    // Credit was recomputed for the rebuilt run.
    assert_eq!(open.credit[0].step().map(<[f32]>::len), Some(open.run.num_path_steps()));
    h.run_ok();
    assert_eq!(h.state().title(), "vantage — 2/epoch1 · step 2");
}

#[test]
fn a_followed_run_gains_a_training_step_and_the_overview_shows_it() {
    let dir = std::env::temp_dir().join(format!("vantage-ui-follow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.jsonl");
    let line = |step: i64, r: usize| {
        format!(
            "{{\"type\": \"trajectory\", \"id\": \"s{step}/r{r}\", \"group\": \"s{step}\", \"train_step\": {step}, \"outcome\": {{\"reward\": {r}}}, \"steps\": [{{\"kind\": \"think\", \"thought\": \"step {step} rollout {r}\"}}]}}\n"
        )
    };
    std::fs::write(&path, format!("{{\"vantage\": 1}}\n{}{}", line(0, 0), line(0, 1))).unwrap();
    let mut app = VantageApp::default();
    let follow = vantage::source::OpenOptions { follow: true, ..Default::default() };
    app.loads.start_with(vantage::source::open::LoadSource::Path(path.clone()), follow, || {});
    let messages = app.loads.wait_all();
    app.accept(messages, || {});
    assert!(app.current().unwrap().follower.is_some(), "followed");
    app.state.tab = Tab::Overview;
    let mut h = harness(app);
    h.get_by_label("1 training step");
    h.get_by_label_contains("following · last data");
    let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    std::io::Write::write_all(&mut file, format!("{}{}", line(1, 0), line(1, 1)).as_bytes()).unwrap();
    let selected = h.state().current().unwrap().selection;
    let started = std::time::Instant::now();
    // Until they arrive; the 30 s only guard against a follower that never delivers them (how soon
    // they arrive is examples/follow_latency's to measure, docs/PERFORMANCE.md).
    while h.state().current().unwrap().run.trajectories.len() < 4 {
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "the appended records did not arrive");
        std::thread::sleep(std::time::Duration::from_millis(100));
        h.step();
    }
    h.run_ok();
    h.get_by_label("2 training steps");
    assert_eq!(h.state().current().unwrap().selection, selected, "the selection is kept");
    // The Follow toggle stops following.
    h.get_by_label("Follow").click();
    h.run_ok();
    assert!(h.state().current().unwrap().follower.is_none());
}

#[test]
fn a_large_log_opens_in_parts_and_a_link_waits_for_its_trajectory() {
    let dir = std::env::temp_dir().join(format!("vantage-ui-progressive-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.jsonl");
    let mut text = "{\"vantage\": 1}\n".to_owned();
    let mut n = 0;
    // Past the first piece the reader shows on its own (2 MiB).
    while text.len() < 5 << 20 {
        let thought = "a long thought ".repeat(20);
        text.push_str(&format!(
            "{{\"type\": \"trajectory\", \"id\": \"t{n}\", \"group\": \"g{}\", \"outcome\": {{\"reward\": {}}}, \"steps\": [{{\"thought\": \"{thought}\"}}, {{\"action\": \"answer {n}\"}}]}}\n",
            n / 8,
            n % 2
        ));
        n += 1;
    }
    std::fs::write(&path, &text).unwrap();
    let last = format!("t{}", n - 1);
    let mut app = VantageApp::default()
        .with_start(vantage::app::StartOptions { link: Some(format!("#traj={last}&step=2")), ..Default::default() });
    app.loads.start(vantage::source::open::LoadSource::Path(path), || {});
    let messages = app.loads.wait_all();
    let partial = messages.iter().filter(|(_, m)| matches!(m, vantage::app::LoadMessage::Partial(..))).count();
    assert!(partial >= 1, "the run was shown while it was read");
    app.accept(messages, || {});
    assert_eq!(app.runs.len(), 1, "one run, grown in place");
    let open = app.current().unwrap();
    assert_eq!(open.run.trajectories.len(), n);
    assert_eq!(open.run.trajectory_key(open.selection.trajectory.unwrap()), last);
    assert_eq!(open.selected_step_index(), Some(1));
    assert!(app.notifications.iter().all(|n| !n.contains("not in this run")), "{:?}", app.notifications);
    let h = harness(app);
    h.get_by_label_contains(&format!("answer {}", n - 1));
}

#[test]
fn a_bookmark_shows_its_place_takes_a_note_and_can_be_deleted() {
    let mut h = harness(app_with("tiny.jsonl", TINY.as_bytes()));
    h.key_press(egui::Key::ArrowRight);
    h.run_ok();
    h.key_press(egui::Key::B);
    h.run_ok();
    h.get_by_label("Bookmarks (1)").click();
    h.run_ok();
    h.get_by_label_contains("1 of 1: win · step 2");
    h.get_by_label("bookmark 1 note").focus();
    h.run_ok();
    h.get_by_label("bookmark 1 note").type_text("the lucky step");
    h.run_ok();
    assert_eq!(h.state().state.bookmarks[0].note, "the lucky step");
    h.get_by_label("delete").click();
    h.run_ok();
    assert!(h.state().state.bookmarks.is_empty());
}

#[test]
fn a_run_of_single_rollout_groups_is_said_on_opening_and_in_the_summary() {
    let log = "{\"vantage\": 1}\n{\"type\": \"trajectory\", \"id\": \"a\", \"group\": \"g1\", \"outcome\": {\"reward\": 1}, \"steps\": [{\"thought\": \"x\"}]}\n{\"type\": \"trajectory\", \"id\": \"b\", \"group\": \"g2\", \"outcome\": {\"reward\": 0}, \"steps\": [{\"thought\": \"y\"}]}\n";
    let mut app = app_with("singletons.jsonl", log.as_bytes());
    assert!(app.notifications.iter().any(|n| n.contains("single rollout")), "{:?}", app.notifications);
    app.state.tab = Tab::Summary;
    let h = harness(app);
    h.get_by_label_contains("caution: every group has a single rollout");
}

#[test]
fn the_mixed_outcome_filter_keeps_only_groups_grpo_learns_from_and_group_sort_keeps_them_together() {
    let name = "tree_rollouts.jsonl";
    let mut h = harness(app_with(name, &sample(name)));
    assert!(h.query_all_by_label_contains("zero variance").count() > 0);
    h.get_by_label("mixed-outcome groups").click();
    h.run_ok();
    assert!(h.state().state.browser.mixed_only);
    assert_eq!(h.query_all_by_label_contains("zero variance").count(), 0);
    let open = h.state().current().unwrap();
    let rows = vantage::ui::views::run_browser::filtered(&open.run, &h.state().state.browser);
    assert!(!rows.is_empty());
    for &t in &rows {
        let g = open.run.trajectories.group[t.index()];
        assert!(!vantage::analysis::is_zero_variance(&open.run, g));
    }
    // The two filters exclude each other.
    h.get_by_label("zero-variance groups").click();
    h.run_ok();
    assert!(h.state().state.browser.zero_variance_only && !h.state().state.browser.mixed_only);
    // Sorted by group, a group's rollouts are side by side.
    h.get_by_label("zero-variance groups").click();
    h.get_by_label("group").click();
    h.run_ok();
    let open = h.state().current().unwrap();
    let rows = vantage::ui::views::run_browser::filtered(&open.run, &h.state().state.browser);
    let groups: Vec<usize> = rows.iter().map(|t| open.run.trajectories.group[t.index()].index()).collect();
    assert!(groups.windows(2).all(|w| w[0] <= w[1]), "{groups:?}");
}

#[test]
fn the_token_view_colors_by_either_scheme_or_their_difference() {
    let name = "verl_token_batch.jsonl";
    let mut app = app_with(name, &sample(name));
    app.state.tab = Tab::Tokens;
    let mut h = harness(app);
    for label in ["credit A", "credit B", "A − B"] {
        h.get_by_label(label).click();
        h.run_ok();
        assert!(h.query_by_label_contains("No credit on these tokens").is_none(), "{label}");
        h.get_by_label_contains("tokens · ");
    }
    assert_eq!(h.state().state.token_color, vantage::app::state::TokenColor::Difference);
}

#[test]
fn the_compare_view_names_rounding_noise_of_a_zero_variance_group_as_such() {
    // slime's own advantage on sixteen rewards of 0.9 is −0.0596 (its float32 mean missed the
    // reward by an ulp); GRPO's defaults give these rows another noise. A mixed group beside it
    // differs for real.
    let mut log = String::from("{\"vantage\": 1}\n");
    for i in 0..16 {
        log.push_str(&format!(
            "{{\"type\": \"trajectory\", \"id\": \"e{i}\", \"group\": \"equal\", \"outcome\": {{\"reward\": 0.9}}, \"steps\": [{{\"thought\": \"t\", \"scores\": {{\"logged_advantage\": -0.0596}}}}]}}\n"
        ));
    }
    for (id, reward, logged) in [("m0", 1, 0.2), ("m1", 0, 0.0)] {
        log.push_str(&format!(
            "{{\"type\": \"trajectory\", \"id\": \"{id}\", \"group\": \"mixed\", \"outcome\": {{\"reward\": {reward}}}, \"steps\": [{{\"thought\": \"t\", \"scores\": {{\"logged_advantage\": {logged}}}}}]}}\n"
        ));
    }
    let mut app = app_started(
        "noise.jsonl",
        log.as_bytes(),
        vantage::app::StartOptions { scheme_b: Some("logged".to_owned()), ..Default::default() },
    );
    app.state.tab = Tab::Compare;
    let h = harness_sized(app, 2400.0);
    h.get_by_label("Logged vs recomputed: where they differ");
    h.get_by_label_contains("16 step(s) differ only by the rounding noise of a zero-variance group");
    h.get_by_label_contains("2 of 18 steps differ by more than");
    assert!(h.query_by_label("e3").is_none(), "noise rows are not in the table");
}

#[test]
fn the_compare_view_puts_the_logged_advantage_beside_the_recomputed_one() {
    // The trainer's logged advantage for `b` is not what GRPO gives it (say a filter leaked).
    let log = r#"{"vantage": 1}
{"type": "trajectory", "id": "a", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "x", "scores": {"logged_advantage": 0.7071}}]}
{"type": "trajectory", "id": "b", "group": "g", "outcome": {"reward": 0}, "steps": [{"thought": "y", "scores": {"logged_advantage": 0.0}}]}
"#;
    let mut app = app_started(
        "logged.jsonl",
        log.as_bytes(),
        vantage::app::StartOptions { scheme_b: Some("logged".to_owned()), ..Default::default() },
    );
    app.state.tab = Tab::Compare;
    let h = harness_sized(app, 2400.0);
    h.get_by_label("Logged vs recomputed: where they differ");
    h.get_by_label_contains("1 of 2 steps differ by more than");
    assert!(h.query_all_by_label("b").count() >= 1);
    // The scatter's key sits above it (not over the points), each series with its count.
    h.get_by_label("— success (1)");
    h.get_by_label("— failure (1)");
}

#[test]
fn the_overview_shows_the_signal_budget_per_training_step() {
    let name = "math_grpo_prm.jsonl";
    let mut app = app_with(name, &sample(name));
    app.state.tab = Tab::Overview;
    let h = harness_sized(app, 2400.0);
    h.get_by_label("Signal budget: rollouts that teach nothing");
    h.get_by_label_contains("Where each scheme's |credit| goes");
    let open = h.state().current().unwrap();
    let stats = vantage::analysis::overview::per_train_step(&open.run, [open.credit[0].step(), open.credit[1].step()]);
    assert!(stats.iter().all(|s| (0.0..=1.0).contains(&s.zero_variance_rollouts)));
    let shares: f64 = stats[0].credit_share[0].iter().filter(|(k, _)| k.ends_with("rollouts")).map(|(_, v)| v).sum();
    assert!((shares - 1.0).abs() < 1e-9, "successful + failed = all of A's |credit|: {shares}");
}

#[test]
fn the_diff_view_aligns_two_rollouts_and_says_where_they_part() {
    let log = r#"{"vantage": 1}
{"type": "trajectory", "id": "win", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "read the task"}, {"thought": "search docs"}, {"thought": "open result 2"}, {"thought": "answer 42"}]}
{"type": "trajectory", "id": "lose", "group": "g", "outcome": {"reward": 0}, "steps": [{"thought": "read the task"}, {"thought": "search docs"}, {"thought": "open result 5"}, {"thought": "answer 41"}, {"thought": "give up"}]}
"#;
    // Tall enough for the inspector's buttons under both schemes' parameters.
    let mut h = harness_sized(app_with("diff.jsonl", log.as_bytes()), 1400.0);
    h.get_by_label_contains("win  ·  R 1").click();
    h.run_ok();
    h.get_by_label_contains("Compare with…").click();
    h.run_ok();
    assert_eq!(h.state().state.tab, Tab::Diff);
    h.get_by_label_contains("win (R 1)");
    h.get_by_label_contains("2 matching steps; they part at row 3 (left step 3, right step —)");
    h.get_by_label_contains("− parts here");
    // A step of the other rollout is one click away.
    h.get_by_label_contains("5. give up").click();
    h.run_ok();
    let open = h.state().current().unwrap();
    assert_eq!(open.run.trajectory_key(open.selection.trajectory.unwrap()), "lose");
    assert_eq!(open.selected_step_index(), Some(4));
}

/// A run of four prompts at training steps 1 and 5: p1 learned, p2 forgotten, p3 still failing.
fn checkpoints_log() -> String {
    let line = |id: &str, task: &str, step: i64, reward: u8| {
        format!(
            r#"{{"type": "trajectory", "id": "{id}", "group": "{task}-{step}", "task": "{task}", "train_step": {step}, "outcome": {{"reward": {reward}}}, "steps": [{{"thought": "x"}}]}}"#
        )
    };
    let lines = [
        line("p1a", "p1", 1, 0),
        line("p1b", "p1", 1, 0),
        line("p1c", "p1", 5, 1),
        line("p1d", "p1", 5, 1),
        line("p2a", "p2", 1, 1),
        line("p2b", "p2", 5, 0),
        line("p3a", "p3", 1, 0),
        line("p3b", "p3", 5, 0),
    ];
    format!("{{\"vantage\": 1}}\n{}\n", lines.join("\n"))
}

#[test]
fn the_runs_view_compares_checkpoints_of_one_run_and_two_open_runs() {
    let mut app = app_with("checkpoints.jsonl", checkpoints_log().as_bytes());
    app.state.tab = Tab::Runs;
    let mut h = harness(app);
    h.get_by_label_contains("learned 0 · forgotten 0 · unclear 2 · still failing 1 · still solved 0");
    h.get_by_label("task p1").click();
    h.run_ok();
    h.get_by_label_contains("task p1 in A and in B");
    // Each side's group of that prompt as a small tree, its rollouts listed below when opened.
    assert_eq!(h.query_all_by_label("group tree").count(), 2);
    for n in 1..=4 {
        let label = format!("{n} rollouts");
        for i in 0..h.query_all_by_label(&label).count() {
            h.query_all_by_label(&label).nth(i).unwrap().click();
            h.run_ok();
        }
    }
    h.get_by_label_contains("fail p1a");
    h.get_by_label_contains("pass p1c");
    // A second run open: B is that run, prompts matched by task.
    let other =
        checkpoints_log().replace("\"reward\": 0}", "\"reward\": 2}").replace("\"reward\": 1}", "\"reward\": 0}");
    let mut app = app_with("checkpoints.jsonl", checkpoints_log().as_bytes());
    let mut report = LoadReport::new("later.jsonl");
    let later = load_bytes("later.jsonl", other.as_bytes(), &mut report).unwrap();
    app.open_loaded(later, report);
    app.commands.push(vantage::app::Command::SelectRun(0));
    app.state.tab = Tab::Runs;
    let h = harness(app);
    h.get_by_label_contains("A = checkpoints.jsonl, B = later.jsonl · 3 prompts");
}

#[test]
fn diff_and_runs_work_on_a_real_tau_bench_log() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/tau-bench-airline-gpt4o/gpt-4o-airline.json");
    if !path.exists() {
        crate::common::skipped("the real tau-bench log: ../shared/data is absent");
        return;
    }
    let load = || {
        let mut report = LoadReport::new("gpt-4o-airline.json");
        (vantage::source::path::load_path(&path, None, &mut report).unwrap(), report)
    };
    let mut app = VantageApp::default();
    let (run, report) = load();
    app.open_loaded(run, report);
    app.state.tab = Tab::Diff;
    let h = harness(app);
    // The selected trial against another trial of its task, aligned.
    let summaries = h.query_all_by_label_contains("they part at row").count()
        + h.query_all_by_label_contains("all matching").count();
    assert_eq!(summaries, 1);
    // The same log opened twice: every task matched, nothing learned or forgotten.
    let mut app = VantageApp::default();
    for _ in 0..2 {
        let (run, report) = load();
        app.open_loaded(run, report);
    }
    app.commands.push(vantage::app::Command::SelectRun(0));
    app.state.tab = Tab::Runs;
    let h = harness(app);
    let open = h.state().current().unwrap();
    let tasks = open.run.groups.len();
    h.get_by_label_contains(&format!("· {tasks} prompts · learned 0 · forgotten 0"));
}

#[test]
fn two_runs_of_one_name_and_different_sizes_share_no_view_cache() {
    // Files dropped on the web carry only their names: two different runs can be called the same.
    let small = sample("verl_token_batch.jsonl");
    let large = sample("tree_rollouts.jsonl");
    let mut app = VantageApp::default();
    for bytes in [&small, &large] {
        let mut report = LoadReport::new("run.jsonl");
        let run = load_bytes("run.jsonl", bytes, &mut report).unwrap();
        app.open_loaded(run, report);
    }
    let mut h = harness(app);
    for _ in 0..2 {
        for selected in [0, 1] {
            h.state_mut().commands.push(vantage::app::Command::SelectRun(selected));
            for tab in Tab::ALL {
                h.state_mut().state.tab = tab;
                h.state_mut().state.heat_whole_run = tab == Tab::Compare;
                h.run_ok();
            }
        }
    }
    assert_eq!(h.state().runs.len(), 2);
}

#[test]
fn a_loader_or_scheme_that_panics_is_a_notice_and_the_app_goes_on() {
    use vantage::app::state::SchemeChoice;
    let mut app = app_with("faulty.jsonl", &sample("alfworld_roles.jsonl"));
    app.loads.faults.inject_panic("credit triage on faulty.jsonl");
    app.loads.faults.inject_panic("load crash-injected.jsonl");
    app.state.scheme_b = SchemeChoice::new("grpo_passk");
    app.state.tab = Tab::Compare;
    let mut h = harness(app);
    assert!(h.state().current().unwrap().credit[1].error().is_none());
    // The scheme panics: its error is shown, and the last good credit stays on screen, named.
    h.state_mut().state.scheme_b = SchemeChoice::new("triage");
    h.run_ok();
    h.get_by_label_contains("credit triage on faulty.jsonl stopped on an internal error (injected fault");
    // In the scheme panel and beside the inspector's credit line.
    assert_eq!(h.query_all_by_label("showing the last good credit: grpo_passk").count(), 2);
    h.get_by_label_contains("vs   B grpo_passk");
    let open = h.state().current().unwrap();
    assert_eq!(open.credit[1].step().map(<[f32]>::len), Some(open.run.num_path_steps()));
    // A scheme that works again replaces it.
    h.state_mut().state.scheme_b = SchemeChoice::new("grpo");
    h.run_ok();
    assert!(h.state().current().unwrap().credit[1].last_good.is_none());
    assert!(h.query_by_label("showing the last good credit: grpo_passk").is_none());
    // A loader that panics: a notice naming the file; the open run stays.
    let source = vantage::source::open::LoadSource::Bytes {
        name: "crash-injected.jsonl".to_owned(),
        bytes: sample("alfworld_roles.jsonl").into(),
    };
    let app = h.state_mut();
    app.loads.start(source, || {});
    let messages = app.loads.wait_all();
    app.accept(messages, || {});
    assert_eq!(app.runs.len(), 1);
    let notice = app.notifications.iter().find(|n| n.contains("crash-injected.jsonl")).expect("a notice");
    assert!(notice.contains("stopped on an internal error"), "{notice}");
    h.run_ok();
    h.get_by_label_contains("vs   B grpo");
}

#[cfg(feature = "parquet")]
#[test]
fn a_v2_dataset_opens_a_range_of_training_steps_and_the_summary_opens_others() {
    let dir = common::scratch("ui-v2");
    let run_dir = dir.join("run");
    let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_runs/math_grpo_prm.jsonl");
    let mut report = LoadReport::new("log");
    let options = vantage::source::OpenOptions::default();
    vantage::source::convert::convert(
        &log,
        &run_dir,
        &options,
        None,
        vantage::source::dataset::DEFAULT_PIECE,
        &mut report,
    )
    .unwrap();
    let mut app = VantageApp::default();
    let steps = vantage::source::OpenOptions { steps: Some((2, 2)), ..options };
    app.loads.start_with(vantage::source::open::LoadSource::Path(run_dir.clone()), steps, || {});
    let messages = app.loads.wait_all();
    app.accept(messages, || {});
    let open = app.current().unwrap();
    assert_eq!(open.run.groups.len(), 12);
    assert_eq!(open.run.meta.step_window.unwrap().open, (2, 2));
    app.state.tab = Tab::Summary;
    let mut h = harness(app);
    h.get_by_label_contains("Training steps 2–2 open (1 of 3 partitions; the run has 0–2)");
    h.state_mut().state.tab = Tab::Overview;
    h.run_ok();
    h.get_by_label_contains("Whole run: 3 training steps, from the dataset's manifest");
    let steps = &h.state().current().unwrap().run.meta.all_steps;
    assert_eq!(steps.iter().map(|s| s.trajectories).sum::<u64>(), 288);
    assert!((steps[0].mean_reward - 0.645_833).abs() < 1e-5, "{:?}", steps[0]);
    h.state_mut().state.tab = Tab::Summary;
    h.run_ok();
    h.get_by_label("from step").set_value_accesskit(0.0);
    h.run_ok();
    h.get_by_label("to step").set_value_accesskit(1.0);
    h.run_ok();
    h.get_by_label("Open steps").click();
    h.run_ok();
    let app = h.state_mut();
    let messages = app.loads.wait_all();
    app.accept(messages, || {});
    assert_eq!(app.runs.len(), 2, "the other steps open as another run");
    let other = &app.runs[1].run;
    assert_eq!(other.meta.step_window.unwrap().open, (0, 1));
    assert_eq!(other.groups.len(), 24);
    assert!(other.groups.train_step.iter().all(|&s| s == Some(0) || s == Some(1)));
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_typed_formula_and_its_slider_set_the_heatmap_cell_and_travel_in_a_link() {
    let dir = common::scratch("ui-formulas");
    let mut app = app_with("tiny.jsonl", TINY.as_bytes());
    app.formulas_dir = Some(dir.clone());
    let mut h = harness(app);
    h.get_by_label("scheme A").click();
    h.run_ok();
    h.get_by_label("Custom formula").scroll_to_me();
    h.run_ok();
    h.get_by_label("Custom formula").click();
    h.run_ok();
    // It starts as the GRPO formula: the same cell as GRPO.
    assert_eq!(h.state().state.scheme_a.formula(), Some(vantage::credit::expr::builtins::GRPO));
    h.get_by_label_contains("credit A = 0.7071");
    // A formula with a mistake: underlined, the error shown, the last good credit kept.
    h.get_by_label("formula A").focus();
    h.run_ok();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.get_by_label("formula A").type_text("$w = 0.5 in [0, 1]\nR * $w + judge");
    h.run_ok();
    h.get_by_label_contains("`judge` at 2:10: this run has no step score named judge; it has prm");
    h.get_by_label_contains("credit A = 0.7071");
    // Fixed: the selected cell (win, step 1: R = 1, prm = 0.9) is 1 · 0.5 + 0.9.
    h.get_by_label("formula A").focus();
    h.run_ok();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.get_by_label("formula A").type_text("$w = 0.5 in [0, 1]\nlet bonus = prm\nR * $w + bonus");
    h.run_ok();
    h.get_by_label_contains("selected win step 1: credit A = 1.4000");
    // The inspector shows the formula and its named term at the step.
    h.get_by_label_contains("R * $w + bonus  with  bonus = 0.9000");
    // The slider of $w rewrites the formula and the cell follows: 1 · 0.8 + 0.9.
    h.get_by_role_and_label(egui::accesskit::Role::Slider, "$w").set_value_accesskit(0.8);
    h.run_ok();
    assert_eq!(h.state().state.scheme_a.formula(), Some("$w = 0.8 in [0, 1]\nlet bonus = prm\nR * $w + bonus"));
    h.get_by_label_contains("selected win step 1: credit A = 1.7000");
    // The link of this view carries the formula, and opens it again.
    let link = h.state().link_here(None).to_fragment();
    let again = vantage::app::deeplink::DeepLink::parse(&link);
    assert_eq!(again.scheme_a.unwrap().formula(), Some("$w = 0.8 in [0, 1]\nlet bonus = prm\nR * $w + bonus"));
    // Saved, it is listed with the built-ins.
    h.get_by_label("formula name A").focus();
    h.get_by_label("formula name A").type_text("mine");
    h.run_ok();
    h.get_by_label("Save formula").click();
    h.run_ok();
    assert_eq!(h.state().state.formulas.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["mine"]);
    let file = std::fs::read_to_string(dir.join("mine.vx")).unwrap();
    assert_eq!(file, "$w = 0.8 in [0, 1]\nlet bonus = prm\nR * $w + bonus");
    h.get_by_label("scheme A").click();
    h.run_ok();
    h.get_by_label("formula: mine");
    // Forgotten, it leaves the list and its file.
    h.key_press(egui::Key::Escape);
    h.run_ok();
    h.get_by_label("Forget").click();
    h.run_ok();
    assert!(h.state().state.formulas.is_empty());
    assert!(!dir.join("mine.vx").exists());
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_wheel_over_an_overview_chart_scrolls_the_page_and_only_ctrl_with_it_zooms() {
    let mut app = app_with("math_grpo_prm.jsonl", &sample("math_grpo_prm.jsonl"));
    app.state.tab = Tab::Overview;
    let mut h = harness_window(app, [1280.0, 720.0]);
    let id = vantage::ui::widgets::plot_id("overview_outcomes", h.state().current().unwrap().instance);
    let memory = || egui_plot::PlotMemory::load(&h.ctx, id).expect("the outcomes chart is drawn");
    let (before, frame) = (*memory().bounds(), *memory().transform().frame());
    let wheel = |h: &mut Harness<'_, VantageApp>, at: egui::Pos2, modifiers: egui::Modifiers| {
        h.hover_at(at);
        h.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: egui::vec2(0.0, -120.0),
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Wheel,
            modifiers,
        });
        // Smooth scrolling and zooming take a few frames to settle.
        for _ in 0..40 {
            h.step();
        }
    };
    wheel(&mut h, frame.center(), egui::Modifiers::NONE);
    let after = egui_plot::PlotMemory::load(&h.ctx, id).unwrap();
    assert_eq!(after.bounds(), &before, "the wheel panned the chart");
    // The page scrolled instead: the chart moved up the window.
    assert!(after.transform().frame().top() < frame.top(), "{:?} -> {:?}", frame, after.transform().frame());
    let frame = *after.transform().frame();
    wheel(&mut h, frame.center(), egui::Modifiers::COMMAND);
    let zoomed = egui_plot::PlotMemory::load(&h.ctx, id).unwrap();
    assert_ne!(zoomed.bounds(), &before, "Ctrl with the wheel did not zoom");
    // (Its axis labels may widen as it zooms; its place on the page stays.)
    assert_eq!(zoomed.transform().frame().top(), frame.top(), "Ctrl with the wheel scrolled the page");
}

#[test]
fn the_compare_scatter_rings_the_selected_step_and_says_its_credit() {
    let mut app = app_with("alfworld_roles.jsonl", &sample("alfworld_roles.jsonl"));
    app.state.tab = Tab::Compare;
    let mut h = harness(app);
    let open = h.state().current().unwrap();
    let p = open.selection.position.expect("a step is selected when a run opens");
    let (a, b) = (open.credit[0].step().unwrap()[p], open.credit[1].step().unwrap()[p]);
    let text = format!(
        "selected step (ringed): A {} · B {}",
        vantage::ui::widgets::format_value(a),
        vantage::ui::widgets::format_value(b)
    );
    h.get_by_label(&text);
    // Another step: the mark follows it.
    h.state_mut().commands.push(vantage::app::Command::StepBy(1));
    h.run_ok();
    let open = h.state().current().unwrap();
    let q = open.selection.position.unwrap();
    assert_ne!(p, q);
    let text = format!(
        "selected step (ringed): A {} · B {}",
        vantage::ui::widgets::format_value(open.credit[0].step().unwrap()[q]),
        vantage::ui::widgets::format_value(open.credit[1].step().unwrap()[q])
    );
    h.get_by_label(&text);
}

#[test]
fn a_filter_kept_from_an_earlier_session_is_announced_with_a_way_to_clear_it() {
    let mut app = app_with("alfworld_roles.jsonl", &sample("alfworld_roles.jsonl"));
    // As a saved state brings it back: a search from another run.
    app.state.browser.search = "a prompt of another run".to_owned();
    app.state.browser.sort = vantage::app::state::SortBy::Length;
    let mut h = harness(app);
    h.get_by_label("Filters on: 0 of 96 rollouts shown");
    h.get_by_label("Clear filters").click();
    h.run_ok();
    h.get_by_label("96 of 96 rollouts");
    assert!(h.query_by_label("Clear filters").is_none());
    let browser = &h.state().state.browser;
    assert!(browser.search.is_empty() && browser.sort == vantage::app::state::SortBy::Length, "the sort stays");
}

#[test]
fn a_credit_that_is_zero_everywhere_says_so_instead_of_a_legend_of_noise() {
    // Every rollout of the group succeeds: GRPO gives 0 on every step.
    let mut log = String::from("{\"vantage\": 1}\n");
    for r in 0..4 {
        log.push_str(&format!(
            "{{\"type\": \"trajectory\", \"id\": \"r{r}\", \"group\": \"g\", \"outcome\": {{\"reward\": 1}}, \"steps\": [{{\"kind\": \"think\", \"thought\": \"step {r}\"}}, {{\"kind\": \"answer\", \"action\": \"42\"}}]}}\n"
        ));
    }
    let mut app = app_with("flat.jsonl", log.as_bytes());
    app.state.scheme_a = vantage::app::state::SchemeChoice::new("grpo");
    let h = harness(app);
    assert!(h.state().current().unwrap().credit[0].step().unwrap().iter().all(|c| *c == 0.0));
    assert!(h.query_all_by_label("0 everywhere (no credit to color)").count() >= 1);
    assert!(h.query_by_label("-1.000e-6").is_none(), "a range of rounding noise is shown");
}

#[test]
fn meeting_mode_compare_at_1280_by_720_shows_both_plots_whole_above_the_step_strip() {
    let mut app = app_with("alfworld_roles.jsonl", &sample("alfworld_roles.jsonl"));
    app.state.tab = Tab::Compare;
    app.state.meeting_mode = true;
    // Meeting mode zooms by 1.5: a 1280×720 window holds 853×480 points.
    let size = [1280.0 / vantage::ui::theme::MEETING_ZOOM, 720.0 / vantage::ui::theme::MEETING_ZOOM];
    let h = harness_window(app, size);
    let strip = h.get_by_label_contains("Step strip ·").rect();
    for name in ["scatter_ab", "histograms_ab"] {
        let id = vantage::ui::widgets::plot_id(name, h.state().current().unwrap().instance);
        let memory = egui_plot::PlotMemory::load(&h.ctx, id).expect(name);
        let frame = *memory.transform().frame();
        // The x axis and its label lie below the frame: about 30 points.
        assert!(frame.bottom() + 30.0 <= strip.top(), "{name}: {frame:?} runs under the strip at {}", strip.top());
        assert!(frame.height() >= 60.0, "{name} is {} points high", frame.height());
    }
}

#[test]
fn the_scheme_picker_searches_its_schemes() {
    let app = app_with("alfworld_roles.jsonl", &sample("alfworld_roles.jsonl"));
    let mut h = harness(app);
    h.get_by_label("scheme B").click();
    h.run_ok();
    assert!(h.query_by_label("RLOO").is_some(), "every scheme is listed before a search");
    let search = h.get_by_label("search schemes");
    search.focus();
    search.type_text("tree");
    h.run_ok();
    // Only the tree schemes (and those whose citation says tree) are left.
    assert!(h.query_by_label("TreeRL (EPTree values)").is_some());
    assert!(h.query_by_label("RLOO").is_none());
    let search = h.get_by_label("search schemes");
    search.type_text(" nothing-like-this");
    h.run_ok();
    h.get_by_label("no scheme matches");
}

/// The scheme picker as a person uses it: the list opens with its search box focused, typing
/// filters it, clicking the box keeps the list open, a click on a scheme chooses it and closes the
/// list; "Custom formula" is at the top.
#[test]
fn the_scheme_picker_search_takes_clicks_and_keys() {
    let mut h = harness(app_with("alfworld_roles.jsonl", &sample("alfworld_roles.jsonl")));
    h.get_by_label("scheme A").click();
    h.run_ok();
    // Keys reach the search box at once: no click on it first.
    h.event(egui::Event::Text("rloo".to_owned()));
    h.run_ok();
    assert!(h.query_by_label("GRPO").is_none() && h.query_by_label("RLOO").is_some(), "filtered by the typed words");
    // Clicking into the box keeps the list open.
    h.get_by_label("search schemes").click();
    h.run_ok();
    assert!(h.query_by_label("search schemes").is_some(), "the list stays open");
    h.get_by_label("Custom formula");
    h.get_by_label("RLOO").click();
    h.run_ok();
    assert_eq!(h.state().state.scheme_a.scheme_id, "rloo");
    assert!(h.query_by_label("search schemes").is_none(), "choosing closes the list");
}

#[test]
fn the_transcript_shows_a_whole_rollout_with_both_credits_and_selects_a_clicked_step() {
    let mut app = app_with("alfworld_roles.jsonl", &sample("alfworld_roles.jsonl"));
    app.state.tab = Tab::Transcript;
    let mut h = harness(app);
    let open = h.state().current().unwrap();
    let t = open.selection.trajectory.unwrap();
    let run = &open.run;
    let range = run.trajectories.path_range(t);
    h.get_by_label(&format!("Transcript · {} · {} steps", run.trajectory_key(t), range.len()));
    // The task and the prompt it started from above, how it ended below, numbers alike.
    let g = run.trajectories.group[t.index()].index();
    h.get_by_label(&format!("task: {}", run.label(run.groups.task[g])));
    h.get_by_label_contains("You are in the middle of a room.");
    let finish = run.label(run.trajectories.finish[t.index()]);
    h.get_by_label_contains(&format!("outcome: reward {:+.4} · ", run.trajectories.reward[t.index()]));
    h.get_by_label_contains(&format!("finish: {finish}"));
    // Every step is there with its texts and both credits.
    let (a, b) = (open.credit[0].step().unwrap(), open.credit[1].step().unwrap());
    let (la, lb) = (open.credit[0].largest(), open.credit[1].largest());
    let last = range.end - 1;
    let node = run.trajectories.path_nodes[last].index();
    let action = run.text(run.nodes.action[node]).trim().to_owned();
    let alike = |v: f32, largest: f32| {
        let v = if vantage::ui::widgets::format_credit(v, largest) == "0" { 0.0 } else { v };
        format!("{v:+.4}")
    };
    let (credit_a, credit_b) = (format!("A {}", alike(a[last], la)), format!("B {}", alike(b[last], lb)));
    for k in 1..=range.len() {
        assert!(h.query_all_by_label_contains(&format!("step {k} · ")).count() >= 1, "step {k}");
    }
    h.get_all_by_label(&action).next().expect("the last step's action");
    assert!(h.query_all_by_label(&credit_a).count() >= 1 && h.query_all_by_label(&credit_b).count() >= 1);
    // Click the last step's heading: it becomes the selected step.
    let heading = format!("step {} · ", range.len());
    h.get_by_label_contains(&heading).scroll_to_me();
    h.run_ok();
    h.get_by_label_contains(&heading).click();
    h.run_ok();
    assert_eq!(h.state().current().unwrap().selection.position, Some(last));
}

/// A run of `steps` training steps, one group of two rollouts each.
fn steps_log(steps: std::ops::RangeInclusive<i64>) -> String {
    let mut log = String::from("{\"vantage\": 1}\n");
    for s in steps {
        for (r, reward) in [(0, 0), (1, 1)] {
            log.push_str(&format!(
                "{{\"type\": \"trajectory\", \"id\": \"s{s}r{r}\", \"group\": \"g{s}\", \"train_step\": {s}, \"outcome\": {{\"reward\": {reward}}}, \"steps\": [{{\"thought\": \"x\"}}]}}\n"
            ));
        }
    }
    log
}

/// Zooms the open run's Overview outcomes chart out (Ctrl with the wheel): its bounds are the user's.
fn zoom_out_overview(h: &mut egui_kittest::Harness<'_, VantageApp>) {
    let first = vantage::ui::widgets::plot_id("overview_outcomes", h.state().current().unwrap().instance);
    let frame = *egui_plot::PlotMemory::load(&h.ctx, first).unwrap().transform().frame();
    h.hover_at(frame.center());
    h.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: egui::vec2(0.0, 240.0),
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Wheel,
        modifiers: egui::Modifiers::COMMAND,
    });
    for _ in 0..40 {
        h.step();
    }
    assert!(!egui_plot::PlotMemory::load(&h.ctx, first).unwrap().auto_bounds.any(), "the chart was zoomed");
}

#[test]
fn a_run_opened_after_another_was_zoomed_fits_its_own_training_steps() {
    let mut app = app_with("long.jsonl", steps_log(0..=900).as_bytes());
    app.state.tab = Tab::Overview;
    let mut h = harness_window(app, [1280.0, 720.0]);
    zoom_out_overview(&mut h);
    // A run of 30 steps opened next spreads them over its chart, not a comb of 30 points.
    let mut report = LoadReport::new("short.jsonl");
    let run = load_bytes("short.jsonl", steps_log(1..=30).as_bytes(), &mut report).unwrap();
    h.state_mut().open_loaded(run, report);
    h.run_ok();
    let second = vantage::ui::widgets::plot_id("overview_outcomes", h.state().current().unwrap().instance);
    let memory = egui_plot::PlotMemory::load(&h.ctx, second).unwrap();
    let bounds = memory.bounds();
    assert!(bounds.min()[0] <= 1.0 && bounds.max()[0] >= 30.0, "{bounds:?}");
    assert!(bounds.width() < 40.0, "steps 1–30 squeezed into a chart {} steps wide", bounds.width());
}

/// A TRL run (its `completions/` directory as `GRPOTrainer` writes it: steps 10 to 120, 10 apart),
/// opened fresh and after a longer run's chart was zoomed out: every Overview chart spans its own
/// training steps, never a comb at the left of a wider axis.
#[test]
fn a_trl_run_s_overview_charts_span_its_training_steps() {
    let dir = std::path::Path::new("tests/fixtures/runs/trl_completions/completions");
    let open_trl = || {
        let mut report = LoadReport::new("completions");
        let options = vantage::source::OpenOptions::default();
        (vantage::source::path::open(dir, &options, None, &mut report, None).unwrap(), report)
    };
    let charts = ["overview_outcomes", "overview_credit", "overview_budget", "overview_credit_share"];
    let check = |h: &mut egui_kittest::Harness<'_, VantageApp>, when: &str| {
        // The page scrolls to the charts below the first two.
        h.get_by_label_contains("Where each scheme").scroll_to_me();
        h.run_ok();
        let instance = h.state().current().unwrap().instance;
        for chart in charts {
            let memory = egui_plot::PlotMemory::load(&h.ctx, vantage::ui::widgets::plot_id(chart, instance));
            let memory = memory.unwrap_or_else(|| panic!("{when}: {chart} drawn"));
            let bounds = memory.bounds();
            // Steps 10..120 with the chart's margins (5 % of the span either side, and the plot's own).
            assert!(bounds.min()[0] <= 10.0 && bounds.max()[0] >= 120.0, "{when}: {chart}: {bounds:?}");
            assert!(bounds.width() < 110.0 * 1.3, "{when}: {chart} wider than the run: {bounds:?}");
        }
    };
    let (run, report) = open_trl();
    let mut app = VantageApp::default();
    app.open_loaded(run, report);
    app.state.tab = Tab::Overview;
    let mut h = harness_window(app, [1280.0, 720.0]);
    h.run_ok();
    check(&mut h, "opened first");
    // A 300-step run, its chart zoomed out, then the TRL run again.
    let mut report = LoadReport::new("long.jsonl");
    let long = load_bytes("long.jsonl", steps_log(0..=300).as_bytes(), &mut report).unwrap();
    h.state_mut().open_loaded(long, report);
    h.run_ok();
    zoom_out_overview(&mut h);
    let (run, report) = open_trl();
    h.state_mut().open_loaded(run, report);
    h.run_ok();
    check(&mut h, "opened after a zoomed 300-step run");
}

/// The folder rule in the app: a run folder opened (Open folder, drop, recent) is the same run
/// with the same note naming its sidecars as `vantage check` shows, and its Summary shows the note.
#[test]
fn a_run_folder_opens_as_one_run_with_the_note_naming_its_sidecars() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/sidecars");
    let mut app = VantageApp::default();
    app.loads.start(vantage::source::open::LoadSource::Path(dir), || {});
    let messages = app.loads.wait_all();
    app.accept(messages, || {});
    assert_eq!(app.runs.len(), 1, "{:?}", app.notifications);
    let open = app.current().unwrap();
    assert_eq!(open.run.meta.format, "vantage JSONL v1");
    let note = open.run.meta.notes.iter().find(|n| n.starts_with("skipped 10 file(s)")).cloned();
    let note = note.unwrap_or_else(|| panic!("{:?}", open.run.meta.notes));
    assert!(
        note.contains("1 checkpoints (checkpoint-100/)") && note.contains("1 no loader recognises it (notes.json)")
    );
    // Among the notices too, not only in the Summary.
    assert!(
        app.notifications.iter().any(|n| n.contains(": skipped 10 file(s) in sidecars/")),
        "{:?}",
        app.notifications
    );
    assert!(app.notifications.iter().all(|n| !n.contains("nothing loaded")), "{:?}", app.notifications);
    app.state.tab = Tab::Summary;
    let h = harness(app);
    // The Summary's line is the note itself (the status bar's notice names the run before it).
    h.get_by_label(&note);
}

/// A folder of several logs opens each as a run, the note on the first.
#[test]
fn a_folder_of_logs_opens_each_as_a_run() {
    let dir = common::scratch("ui-folder-of-logs");
    for name in ["tree_rollouts.jsonl", "alfworld_roles.jsonl"] {
        std::fs::copy(std::path::Path::new("sample_runs").join(name), dir.join(name)).unwrap();
    }
    std::fs::write(dir.join("README.md"), "two runs\n").unwrap();
    let mut app = VantageApp::default();
    app.loads.start(vantage::source::open::LoadSource::Path(dir.clone()), || {});
    let messages = app.loads.wait_all();
    app.accept(messages, || {});
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(app.runs.len(), 2, "{:?}", app.notifications);
    let notes: Vec<usize> = app
        .runs
        .iter()
        .map(|r| r.run.meta.notes.iter().filter(|n| n.contains("1 readme (README.md)")).count())
        .collect();
    assert_eq!(notes, [1, 0], "said once, on the first run");
    assert_eq!(app.selected, 0, "the first run, with the note, is shown");
    assert!(app.runs.iter().all(|r| r.source_path.is_some()), "each run knows its file (Follow, Open steps)");
}

/// One door: an Inspect `.eval` opened in the app with outcomes to join is read whole and joined
/// (a lazily opened one would lose them), and a followed path keeps its options' budget and
/// outcomes.
#[test]
fn an_eval_and_a_followed_path_keep_their_open_options() {
    let dir = common::scratch("ui-one-door");
    let eval = dir.join("arith.eval");
    std::fs::write(&eval, common::lazy_eval()).unwrap();
    // Every sample's id, resolved or not, as a SWE-agent results file names them.
    let results = br#"{"resolved": ["1", "10"], "applied": ["1", "2", "3", "10"]}"#;
    let outcomes = vantage::load::formats::outcomes::parse("results.json", results).unwrap();
    let options = vantage::source::OpenOptions {
        outcomes: std::sync::Arc::from(vec![outcomes]),
        lazy: true,
        ..Default::default()
    };
    let mut app = VantageApp::default();
    app.loads.start_with(vantage::source::open::LoadSource::Path(eval), options.clone(), || {});
    let messages = app.loads.wait_all();
    app.accept(messages, || {});
    let open = app.current().unwrap();
    assert!(open.lazy.is_none(), "read whole, to join its outcomes");
    assert!(
        open.run.meta.notes.iter().any(|n| n.contains("outcomes from results.json (SWE-agent results): 5 of 5")),
        "{:?}",
        open.run.meta.notes
    );
    // Followed: the outcomes are joined to the run, and the budget is the options' own.
    let log = dir.join("run.jsonl");
    std::fs::copy("sample_runs/tree_rollouts.jsonl", &log).unwrap();
    let follow = vantage::source::OpenOptions { follow: true, ..options.clone() };
    app.loads.start_with(vantage::source::open::LoadSource::Path(log.clone()), follow, || {});
    let messages = app.loads.wait_all();
    app.accept(messages, || {});
    let open = app.current().unwrap();
    assert!(open.follower.is_some());
    assert!(open.run.meta.notes.iter().any(|n| n.contains("outcomes from results.json")), "{:?}", open.run.meta.notes);
    let tiny = vantage::source::OpenOptions { follow: true, memory_budget: 4096, ..options };
    app.loads.start_with(vantage::source::open::LoadSource::Path(log), tiny, || {});
    let messages = app.loads.wait_all();
    let runs = app.runs.len();
    app.accept(messages, || {});
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(app.runs.len(), runs, "a 4 kB budget opens nothing");
    assert!(app.notifications.iter().any(|n| n.contains("memory")), "{:?}", app.notifications);
}

/// `--window-size` wins over the size an earlier session saved: eframe opens the window at the
/// saved size first, and the app's first frame asks for the size given.
#[test]
fn the_window_size_given_is_applied_on_the_first_frame() {
    let app = app_with("tiny.jsonl", TINY.as_bytes())
        .with_start(vantage::app::StartOptions { window_size: Some([1600.0, 1000.0]), ..Default::default() });
    // The window as a saved geometry would have opened it.
    let mut h = Harness::builder().with_size([1280.0, 800.0]).with_max_steps(16).build_ui_state(
        |ui, app: &mut VantageApp| {
            app.logic(ui.ctx());
            vantage::ui::app_ui(app, ui);
        },
        app,
    );
    h.run_ok();
    assert_eq!(h.ctx.content_rect().size(), egui::vec2(1600.0, 1000.0));
    assert!(h.state().window_size_sent, "asked for once");
}

/// A log that carries the trainer's advantages opens on them: A the logged advantages, B the
/// preset the audit found, and the compare view says so.
#[test]
fn a_run_with_logged_advantages_opens_on_them_beside_the_preset_that_reproduces_them() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trainers/nemo_rl");
    let mut app = VantageApp::default();
    app.loads.start(vantage::source::open::LoadSource::Path(dir), || {});
    let messages = app.loads.wait_all();
    app.accept(messages, || {});
    assert_eq!(app.state.scheme_a.scheme_id, "logged");
    assert_eq!(
        (app.state.scheme_b.scheme_id.as_str(), app.state.scheme_b.preset.as_deref()),
        ("grpo", Some("nemo_rl"))
    );
    assert!(app.notifications.iter().any(|n| n.contains("are grpo --preset nemo_rl's")), "{:?}", app.notifications);
    app.state.tab = Tab::Compare;
    let h = harness_sized(app, 2400.0);
    h.get_by_label_contains("Audit: the logged advantages are grpo --preset nemo_rl's");
    h.get_by_label_contains("0 of 11 steps differ by more than");
}

/// Views open at their top: the scroll offsets a saved session left in egui's memory are dropped
/// on the first frame (Compare reopened mid-table, the scheme panel past scheme A).
#[test]
fn saved_scroll_offsets_do_not_come_back() {
    let app = app_with("tiny.jsonl", TINY.as_bytes());
    let mut h = Harness::builder().with_size([1280.0, 720.0]).build_ui_state(
        |ui, app: &mut VantageApp| {
            app.logic(ui.ctx());
            vantage::ui::app_ui(app, ui);
        },
        app,
    );
    // As a restored session starts: egui's memory holds a scroll area's state, no frame has run.
    h.state_mut().started = false;
    let id = egui::Id::NULL.with("a scroll area of an earlier session");
    egui::containers::scroll_area::State::default().store(&h.ctx, id);
    assert!(egui::containers::scroll_area::State::load(&h.ctx, id).is_some());
    h.run_ok();
    assert!(egui::containers::scroll_area::State::load(&h.ctx, id).is_none(), "dropped on the first frame");
    assert!(h.state().started);
}

/// Saved state that does not apply to the run opened is not applied, and one line says so: another
/// trainer's preset, a formula that is an error on the run.
#[test]
fn saved_schemes_that_do_not_fit_the_run_are_not_applied() {
    let mut app = VantageApp::default();
    app.state.scheme_a = vantage::app::state::SchemeChoice {
        scheme_id: vantage::app::state::CUSTOM_ID.to_owned(),
        preset: None,
        values: vec![(vantage::app::state::FORMULA_KEY.to_owned(), "judge".to_owned())],
    };
    app.state.scheme_b = vantage::app::state::SchemeChoice {
        scheme_id: "grpo".to_owned(),
        preset: Some("prime_rl".to_owned()),
        values: Vec::new(),
    };
    let mut report = LoadReport::new("tiny.jsonl");
    let run = load_bytes("tiny.jsonl", TINY.as_bytes(), &mut report).unwrap();
    app.open_loaded(run, report);
    assert_eq!(app.state.scheme_a.scheme_id, "grpo", "the run has no `judge` score");
    // B without its preset would be A again: the first process scheme the run supports.
    assert_eq!((app.state.scheme_b.scheme_id.as_str(), app.state.scheme_b.preset.as_deref()), ("prm_process", None));
    let said = app.notifications.join("\n");
    assert!(said.contains("the saved formula of scheme A does not apply to this run"), "{said}");
    assert!(said.contains("the saved preset prime_rl is prime-rl's and this is a vantage JSONL v1 run"), "{said}");
    // On prime-rl's own run the preset stays.
    let mut app = VantageApp::default();
    app.state.scheme_b.scheme_id = "grpo".to_owned();
    app.state.scheme_b.preset = Some("prime_rl".to_owned());
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trainers/verifiers/episodes.jsonl");
    let mut report = LoadReport::new("episodes.jsonl");
    let run = vantage::source::path::load_path(&path, None, &mut report).unwrap();
    app.schemes_given = true;
    app.open_loaded(run, report);
    assert_eq!(app.state.scheme_b.preset.as_deref(), Some("prime_rl"));
}

/// Compare ranks the groups A and B disagree on most, and one click opens a group.
#[test]
fn compare_ranks_groups_by_disagreement_and_opens_one_with_a_click() {
    let mut app = app_with("alfworld_roles.jsonl", &sample("alfworld_roles.jsonl"));
    app.state.tab = Tab::Compare;
    let mut h = harness_sized(app, 4000.0);
    h.get_by_label("Groups where A and B disagree most");
    let (top, share) = {
        let open = h.state().current().unwrap();
        let c = vantage::analysis::compare::Comparison::of(
            &open.run,
            open.credit[0].step().unwrap(),
            open.credit[1].step().unwrap(),
        );
        // Ranked by disagreement, the groups one scheme gives no credit after all the others.
        let apart = |g: &vantage::analysis::compare::GroupAgreement| g.silent.iter().any(|&s| s);
        assert!(
            c.groups.windows(2).all(|w| (!apart(&w[0]) && apart(&w[1]))
                || (apart(&w[0]) == apart(&w[1]) && w[0].sign_disagreement >= w[1].sign_disagreement)),
            "ranked"
        );
        assert!(!apart(&c.groups[0]) && c.groups.iter().any(apart));
        (open.run.group_key(c.groups[0].group).to_owned(), c.groups[0].sign_disagreement)
    };
    assert!(share > 0.0, "GRPO and TRIAGE part on some steps of the top group");
    // Each group with its prompt's first words beside it (keys can be hashes).
    h.get_by_label("prompt");
    assert!(h.query_all_by_label_contains("You are in the middle of a room.").count() >= 1);
    // A group GRPO gives no credit says so instead of "100%".
    assert!(h.query_all_by_label("A gives no credit").count() >= 1);
    h.get_all_by_label(&top).last().unwrap().click();
    h.run_ok();
    assert_eq!(h.state().state.tab, Tab::Group);
    let open = h.state().current().unwrap();
    assert_eq!(open.run.group_key(open.selection.group.unwrap()), top);
}

/// A credit that is one value everywhere (GRPO on groups whose outcomes are all equal) is drawn
/// as a line in Compare's scatter, not jittered into a cloud, and the caption says so.
#[test]
fn a_constant_credit_is_not_jittered_into_a_cloud() {
    let log = r#"{"vantage": 1}
{"type": "trajectory", "id": "w1", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "a", "scores": {"prm": 0.9}}, {"thought": "b", "scores": {"prm": 0.2}}]}
{"type": "trajectory", "id": "w2", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "c", "scores": {"prm": 0.6}}, {"thought": "d", "scores": {"prm": 0.4}}]}
"#;
    let mut app = app_with("equal.jsonl", log.as_bytes());
    app.state.tab = Tab::Compare;
    let h = harness_sized(app, 2400.0);
    assert_eq!(h.state().state.scheme_a.scheme_id, "grpo");
    h.get_by_label_contains("4 steps, jittered by up to 0.6% of the B axis (every A value the same)");
}

/// A group whose key is a hash is named by its prompt's first words, the key's start after them,
/// in the step inspector, the Group view and the Runs view's group headings.
#[test]
fn a_hash_group_key_gets_its_prompt_beside_it() {
    let log = r#"{"vantage": 1}
{"type": "group", "id": "train/step-1/prompt-94a41ed12d627c37", "train_step": 1, "prompt": "What is six times seven?\nAnswer in a box."}
{"type": "trajectory", "id": "r0", "group": "train/step-1/prompt-94a41ed12d627c37", "outcome": {"reward": 1}, "steps": [{"thought": "6 x 7 = 42"}]}
{"type": "trajectory", "id": "r1", "group": "train/step-1/prompt-94a41ed12d627c37", "outcome": {"reward": 0}, "steps": [{"thought": "6 x 7 = 36"}]}
"#;
    let app = app_with("hash.jsonl", log.as_bytes());
    let h = harness(app);
    h.get_by_label_contains(
        "group \u{201c}What is six times seven? Answer in a box.\u{201d} (prompt-94a41ed12…) · outcome",
    );
    let mut app = app_with("hash.jsonl", log.as_bytes());
    app.state.tab = Tab::Group;
    let h = harness(app);
    h.get_by_label_contains("Group \u{201c}What is six times seven?");
    let mut app = app_with("hash.jsonl", log.as_bytes());
    app.state.tab = Tab::Runs;
    let h = harness(app);
    h.get_by_label_contains("group \u{201c}What is six times seven?");
}

/// The state file a real session wrote (tests/fixtures/state/SOURCE.md: the window's geometry,
/// egui's memory with its scroll offsets, scheme A a formula of a `judge` score, scheme B GRPO
/// with prime-rl's preset), brought back on another run: the scroll offsets are dropped on the
/// first frame, and neither the formula (no `judge` score here) nor the preset (not prime-rl's run)
/// is applied, each said in one line.
#[test]
fn a_state_file_an_earlier_run_wrote_brings_back_only_what_fits() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/state/app.ron");
    let saved: std::collections::HashMap<String, String> =
        ron::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(saved["window"].contains("inner_size_points"), "the file holds a window geometry");
    let (state, notice) = vantage::app::AppState::restore(saved.get(vantage::app::AppState::KEY).map(String::as_str));
    assert!(notice.is_none(), "{notice:?}");
    assert_eq!(state.scheme_a.scheme_id, vantage::app::state::CUSTOM_ID);
    assert_eq!(state.scheme_b.preset.as_deref(), Some("prime_rl"));
    let mut app = VantageApp { state, ..VantageApp::default() };
    let mut report = LoadReport::new("tiny.jsonl");
    let run = load_bytes("tiny.jsonl", TINY.as_bytes(), &mut report).unwrap();
    app.open_loaded(run, report);
    let mut h = Harness::builder().with_size([1280.0, 720.0]).build_ui_state(
        |ui, app: &mut VantageApp| {
            app.logic(ui.ctx());
            vantage::ui::app_ui(app, ui);
        },
        app,
    );
    // egui's memory as the session left it, before the first frame.
    let memory: egui::Memory = ron::from_str(&saved["egui"]).unwrap();
    h.ctx.memory_mut(|m| *m = memory);
    h.state_mut().started = false;
    let scrolls = || h.ctx.data(|d| d.count::<egui::containers::scroll_area::State>());
    assert!(scrolls() > 0, "the session saved scroll offsets");
    // The first frame's logic drops them before any view draws.
    let ctx = h.ctx.clone();
    h.state_mut().logic(&ctx);
    assert_eq!(ctx.data(|d| d.count::<egui::containers::scroll_area::State>()), 0, "dropped on the first frame");
    h.run_ok();
    let app = h.state();
    assert_eq!(app.state.scheme_a.scheme_id, "grpo", "the formula needs a `judge` score this run lacks");
    assert_eq!(app.state.scheme_b.preset, None);
    let said = app.notifications.join("\n");
    assert!(said.contains("the saved formula of scheme A does not apply to this run"), "{said}");
    assert!(said.contains("the saved preset prime_rl is prime-rl's"), "{said}");
}

/// The run list a page of `vantage serve` opens on: each run with its format, size, last change
/// and status; a click on a ready one opens it (natively the app says the page does), one still
/// converting is not a link.
#[test]
fn the_server_run_list_lists_the_runs_and_a_click_opens_one() {
    let mut list = vantage::app::server::ServerRuns::default();
    list.take(
        r#"{"vantage_serve": 1, "left_out": 0, "runs": [
            {"id": "grpo-7b/step_0042.jsonl", "url": "runs/grpo-7b/step_0042.jsonl", "format": "vantage", "size": 48213,
             "modified": 1796489420, "status": "ready", "detail": "", "follow": true},
            {"id": "grpo-7b/big.jsonl", "url": null, "format": "verl", "size": 3221225472,
             "modified": 1796489420, "status": "converting", "detail": "", "follow": false}]}"#,
    )
    .unwrap();
    let app = VantageApp { server: Some(list), ..VantageApp::default() };
    let mut h = harness(app);
    assert_eq!(h.state().title(), "vantage — 2 runs on this server");
    h.get_by_label("Runs on this server (2)");
    h.get_by_label("48.2 kB");
    h.get_by_label("3.22 GB");
    h.get_by_label("ready · followed");
    h.get_by_label("converting to v2…");
    assert_eq!(h.get_all_by_label("2026-12-05 16:50 UTC").count(), 2);
    assert!(h.query_by_label("grpo-7b/big.jsonl").is_some());
    h.get_by_label("grpo-7b/step_0042.jsonl").click();
    h.run_ok();
    let said = h.state().notifications.join("\n");
    assert!(
        said.contains("runs/grpo-7b/step_0042.jsonl: open it in the page vantage serve sends (follow: true)"),
        "{said}"
    );
}

/// The Overview shows the run-health alarms in one strip, a button per alarm; a click opens the
/// first group behind it in the Group view.
#[test]
fn the_overview_shows_the_health_alarms_and_a_click_opens_a_group() {
    let mut app = app_with("alfworld_roles.jsonl", &sample("alfworld_roles.jsonl"));
    app.state.tab = Tab::Overview;
    let mut h = harness(app);
    h.get_by_label("Health: 2 alarm(s)");
    let first = {
        let open = h.state().current().unwrap();
        let alarms = vantage::analysis::health::alarms(&open.run, &vantage::analysis::health::Thresholds::default());
        assert_eq!(alarms[0].name, "truncated");
        open.run.group_key(alarms[0].groups[0]).to_owned()
    };
    h.get_by_label("truncated · 2 steps · worst 40% (step 0)").click();
    h.run_ok();
    assert_eq!(h.state().state.tab, Tab::Group);
    let open = h.state().current().unwrap();
    assert_eq!(open.run.group_key(open.selection.group.unwrap()), first);
}

/// Compare marks a flagged rollout (baseline forensics, docs/FORENSICS.md): beside the trainer's
/// logged leave-one-out advantages, verl's GRPO differs on every row, and the failed rows and their
/// group say why their difference may be the row's and not the scheme's.
#[test]
fn compare_marks_the_rows_baseline_forensics_flags() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/forensics/failed_rollout.jsonl");
    let mut app = app_with("failed_rollout.jsonl", &std::fs::read(path).unwrap());
    app.state.scheme_a = vantage::app::SchemeChoice::new("logged");
    app.state.scheme_b = vantage::app::SchemeChoice::new("grpo");
    app.state.tab = Tab::Compare;
    let h = harness_sized(app, 2400.0);
    assert!(h.query_all_by_label("failed_rollout").count() >= 1, "a failed row is marked");
    assert!(h.query_all_by_label("in a group with failed_rollout").count() >= 1, "its group's other rows too");
}

/// A kind of sign disagreement with no steps is a line in Compare, not a header that opens on
/// nothing (a saved state used to leave two empty ones expanded).
#[test]
fn an_empty_kind_of_disagreement_is_a_line_that_opens_nothing() {
    let mut app = app_with("alfworld_roles.jsonl", &sample("alfworld_roles.jsonl"));
    app.state.tab = Tab::Compare;
    let mut h = harness_sized(app, 4000.0);
    let empty: Vec<vantage::analysis::compare::Disagreement> = {
        let open = h.state().current().unwrap();
        let c = vantage::analysis::compare::Comparison::of(
            &open.run,
            open.credit[0].step().unwrap(),
            open.credit[1].step().unwrap(),
        );
        vantage::analysis::compare::Disagreement::ALL
            .into_iter()
            .filter(|k| c.disagreements.get(k).is_none_or(Vec::is_empty))
            .collect()
    };
    assert!(!empty.is_empty(), "the sample has a kind no step shows");
    for kind in empty {
        let line = format!("{} (0)", kind.label());
        h.get_by_label(&line).click();
        h.run_ok();
        assert!(h.query_by_label(kind.explanation()).is_none(), "{line}: opened on nothing");
    }
}

/// A Harbor job with a trial its `nop` agent ran (no `agent/` folder): every tab draws with a
/// rollout of no step in the group; that rollout selected, the inspector says it has no step and
/// shows its outcome and verifier files; a step of the other trial shows its trial's files.
#[test]
fn a_rollout_of_no_step_draws_in_every_view_and_the_inspector_lists_its_trial_files() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trainers/atif/job_nop");
    let mut report = LoadReport::new("job_nop");
    let run = vantage::source::path::load_path(&dir, None, &mut report).unwrap();
    let nop = run.trajectories.ids().find(|&t| run.trajectories.num_steps(t) == 0).unwrap();
    let done = run.trajectories.ids().find(|&t| run.trajectories.num_steps(t) > 0).unwrap();
    let mut app = VantageApp::default();
    app.open_loaded(run, report);
    let mut h = harness(app);
    for trajectory in [nop, done] {
        for tab in Tab::ALL {
            {
                let open = h.state_mut().current_mut().unwrap();
                open.selection.trajectory = Some(trajectory);
                open.selection.position =
                    (trajectory == done).then(|| open.run.trajectories.path_range(trajectory).start);
            }
            h.state_mut().state.tab = tab;
            h.run_ok();
        }
    }
    h.state_mut().state.tab = Tab::Group;
    h.state_mut().current_mut().unwrap().selection.position = None;
    h.state_mut().current_mut().unwrap().selection.trajectory = Some(nop);
    h.run_ok();
    h.get_by_label_contains("hello-world__Nop4Kd2 · no steps: its outcome alone, 0");
    h.get_by_label_contains("trial files: verifier/ctrf.json: 0 of 2 tests passed, 2 failed");
    let start = h.state().current().unwrap().run.trajectories.path_range(done).start;
    h.state_mut().current_mut().unwrap().selection.trajectory = Some(done);
    h.state_mut().current_mut().unwrap().selection.position = Some(start);
    h.run_ok();
    h.get_by_label_contains("trial files: verifier/ctrf.json: 2 of 2 tests passed, 0 failed");
}
