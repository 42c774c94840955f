//! Run A against run B on the same prompts: two open runs, or two ranges of training steps of one
//! run. Prompts are matched by task id, else by the text that tells them apart (the last user
//! turn), whatever each log's format; each prompt's pass rate in A and in B puts it among the
//! learned, forgotten (only when the rates' 95 % Wilson intervals are apart), unclear (passing on
//! one side but not clearly so), still failing and still solved, or seen by one side only.

use std::collections::BTreeMap;

use crate::model::{GroupId, Run};

/// Which groups of a run one side takes: all, or those whose training step is in a range.
#[derive(Clone, Copy, Debug)]
pub struct Side<'a> {
    /// The run.
    pub run: &'a Run,
    /// Training steps taken (inclusive); `None` takes every group.
    pub steps: Option<(i64, i64)>,
}

/// One prompt's rollouts on one side.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PromptStats {
    /// Its groups (one per training step it was sampled at).
    pub groups: Vec<GroupId>,
    /// Rollouts with an outcome.
    pub rollouts: usize,
    /// Successes among them.
    pub successes: usize,
}

impl PromptStats {
    /// Share of successes (`NaN` without a rollout).
    pub fn pass_rate(&self) -> f64 {
        if self.rollouts == 0 { f64::NAN } else { self.successes as f64 / self.rollouts as f64 }
    }

    /// The 95 % Wilson score interval of the pass rate (`(0, 1)` without a rollout): how sure
    /// the rate is, given how few rollouts it comes from.
    pub fn interval(&self) -> (f64, f64) {
        if self.rollouts == 0 {
            return (0.0, 1.0);
        }
        let (n, p, z2) = (self.rollouts as f64, self.pass_rate(), Z95 * Z95);
        let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
        let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
        ((centre - half).max(0.0), (centre + half).min(1.0))
    }
}

/// The normal quantile of a two-sided 95 % interval.
const Z95: f64 = 1.959_963_984_540_054;

/// What became of a prompt from A to B.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Change {
    /// Failing in A (pass rate under one half), passing in B, the two rates' intervals apart.
    Learned,
    /// Passing in A, failing in B, the two rates' intervals apart.
    Forgotten,
    /// Passing on one side and failing on the other, but the rates' intervals overlap: too few
    /// rollouts to call it learned or forgotten.
    Unclear,
    /// Failing in both.
    StillFailing,
    /// Passing in both.
    StillSolved,
    /// Only A has it.
    OnlyInA,
    /// Only B has it.
    OnlyInB,
}

impl Change {
    /// Every change, in the order of the table.
    pub const ALL: [Self; 7] = [
        Self::Learned,
        Self::Forgotten,
        Self::Unclear,
        Self::StillFailing,
        Self::StillSolved,
        Self::OnlyInA,
        Self::OnlyInB,
    ];

    /// Label.
    pub fn label(self) -> &'static str {
        match self {
            Self::Learned => "learned (failing in A, passing in B)",
            Self::Forgotten => "forgotten (passing in A, failing in B)",
            Self::Unclear => "unclear (passing on one side, but too few rollouts to tell)",
            Self::StillFailing => "still failing",
            Self::StillSolved => "still solved",
            Self::OnlyInA => "only in A",
            Self::OnlyInB => "only in B",
        }
    }
}

/// A prompt passes when at least half its rollouts succeed.
pub const PASSING: f64 = 0.5;

/// One prompt in both.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptRow {
    /// How it is matched: `task X` or the prompt's text.
    pub key: String,
    /// In A.
    pub a: PromptStats,
    /// In B.
    pub b: PromptStats,
    /// What became of it.
    pub change: Change,
}

/// The key a group's prompt is matched by.
pub fn prompt_key(run: &Run, g: GroupId) -> Option<String> {
    let task = run.label(run.groups.task[g.index()]);
    if !task.is_empty() {
        return Some(format!("task {task}"));
    }
    let prompt = run.text(run.groups.prompt[g.index()]);
    let headline = headline(&prompt);
    (!headline.is_empty()).then(|| headline.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The text that tells one prompt from another: the last user turn of a chat prompt, else all of
/// it (as the group view shows it).
pub fn headline(prompt: &str) -> &str {
    if let Some(at) = prompt.rfind("[user] ") {
        return prompt[at + "[user] ".len()..].trim();
    }
    if let Some(at) = prompt.rfind("<|im_start|>user") {
        let turn = &prompt[at + "<|im_start|>user".len()..];
        return turn.split("<|im_end|>").next().unwrap_or(turn).trim();
    }
    prompt.trim()
}

/// Each prompt of a side with its rollouts.
pub fn prompts(side: Side<'_>) -> BTreeMap<String, PromptStats> {
    let run = side.run;
    let mut out: BTreeMap<String, PromptStats> = BTreeMap::new();
    for g in run.groups.ids() {
        if let Some((lo, hi)) = side.steps {
            let step = run.groups.train_step[g.index()].unwrap_or(0);
            if step < lo || step > hi {
                continue;
            }
        }
        let Some(key) = prompt_key(run, g) else { continue };
        let stats = out.entry(key).or_default();
        stats.groups.push(g);
        for &t in run.groups.members(g) {
            let Some(passed) = super::compare::outcome(run, t) else { continue };
            stats.rollouts += 1;
            stats.successes += usize::from(passed);
        }
    }
    out
}

/// Every prompt of A or B with what became of it, by change, then key.
pub fn compare(a: Side<'_>, b: Side<'_>) -> Vec<PromptRow> {
    let (pa, mut pb) = (prompts(a), prompts(b));
    let mut rows = Vec::with_capacity(pa.len().max(pb.len()));
    let passing = |s: &PromptStats| s.pass_rate() >= PASSING;
    for (key, a) in pa {
        let b = pb.remove(&key);
        let change = match &b {
            None => Change::OnlyInA,
            Some(b) => match (passing(&a), passing(b)) {
                (false, true) if a.interval().1 < b.interval().0 => Change::Learned,
                (true, false) if b.interval().1 < a.interval().0 => Change::Forgotten,
                (false, true) | (true, false) => Change::Unclear,
                (false, false) => Change::StillFailing,
                (true, true) => Change::StillSolved,
            },
        };
        rows.push(PromptRow { key, a, b: b.unwrap_or_default(), change });
    }
    rows.extend(pb.into_iter().map(|(key, b)| PromptRow {
        key,
        a: PromptStats::default(),
        b,
        change: Change::OnlyInB,
    }));
    rows.sort_by(|l, r| (l.change, &l.key).cmp(&(r.change, &r.key)));
    rows
}

/// The smallest and largest training step of a run (`None` without any).
pub fn step_range(run: &Run) -> Option<(i64, i64)> {
    let steps: Vec<i64> = run.groups.train_step.iter().flatten().copied().collect();
    Some((*steps.iter().min()?, *steps.iter().max()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{LoadReport, load_bytes};

    fn trajectory(id: &str, task: &str, step: i64, reward: u8) -> String {
        format!(
            r#"{{"type": "trajectory", "id": "{id}", "group": "{task}-{step}", "task": "{task}", "train_step": {step}, "outcome": {{"reward": {reward}}}, "steps": [{{"thought": "x"}}]}}"#
        )
    }

    #[test]
    fn prompts_are_learned_forgotten_or_kept_between_two_ranges_of_steps() {
        // (task, successes at step 1 of 4 rollouts, successes at step 5 of 4).
        let mut lines = Vec::new();
        for (task, before, after) in [("p1", 0, 4), ("p2", 4, 0), ("p3", 0, 0), ("p5", 1, 3)] {
            for (step, passed) in [(1, before), (5, after)] {
                for r in 0..4 {
                    lines.push(trajectory(&format!("{task}-{step}-{r}"), task, step, u8::from(r < passed)));
                }
            }
        }
        lines.push(trajectory("p4a", "p4", 5, 1));
        let log = format!("{{\"vantage\": 1}}\n{}\n", lines.join("\n"));
        let run = load_bytes("r.jsonl", log.as_bytes(), &mut LoadReport::new("r.jsonl")).expect("loads");
        assert_eq!(step_range(&run), Some((1, 5)));
        let rows = compare(Side { run: &run, steps: Some((1, 1)) }, Side { run: &run, steps: Some((5, 5)) });
        let change = |key: &str| rows.iter().find(|r| r.key == key).map(|r| r.change);
        assert_eq!(change("task p1"), Some(Change::Learned));
        assert_eq!(change("task p2"), Some(Change::Forgotten));
        assert_eq!(change("task p3"), Some(Change::StillFailing));
        assert_eq!(change("task p4"), Some(Change::OnlyInB));
        // 1 of 4 to 3 of 4 crosses one half, but the rates' intervals overlap.
        assert_eq!(change("task p5"), Some(Change::Unclear));
        let p1 = rows.iter().find(|r| r.key == "task p1").unwrap();
        assert_eq!((p1.a.pass_rate(), p1.b.pass_rate()), (0.0, 1.0));
    }

    #[test]
    fn the_pass_rate_interval_is_wilsons() {
        // Wilson 95 % for 0 of 4: (0, 0.48989); 3 of 6: (0.18762, 0.81238) (the formula in floats).
        let (lo, hi) = PromptStats { groups: Vec::new(), rollouts: 4, successes: 0 }.interval();
        assert!(lo == 0.0 && (hi - 0.489_891).abs() < 1e-5, "{lo} {hi}");
        let (lo, hi) = PromptStats { groups: Vec::new(), rollouts: 6, successes: 3 }.interval();
        assert!((lo - 0.187_616).abs() < 1e-5 && (hi - 0.812_384).abs() < 1e-5, "{lo} {hi}");
        assert_eq!(PromptStats::default().interval(), (0.0, 1.0));
    }

    #[test]
    fn the_headline_skips_the_shared_system_prompt() {
        assert_eq!(
            headline("[system] You are a helpful agent.\n[user] Book a flight to Oslo"),
            "Book a flight to Oslo"
        );
        let template = "<|im_start|>system\nYou are Qwen.<|im_end|>\n<|im_start|>user\nWhat is 2 + 3?<|im_end|>\n<|im_start|>assistant\n";
        assert_eq!(headline(template), "What is 2 + 3?");
        assert_eq!(headline("  Evaluate 16 × 5.  "), "Evaluate 16 × 5.");
    }

    #[test]
    fn prompts_without_a_task_match_by_their_last_user_turn_across_formats() {
        let a = r#"{"vantage": 1}
{"type": "trajectory", "id": "x", "group": "g1", "prompt": "[system] You help.\n[user] What is 2 + 3?", "outcome": {"reward": 1}, "steps": [{"thought": "5"}]}
"#;
        let b = r#"{"vantage": 1}
{"type": "trajectory", "id": "y", "group": "h7", "prompt": "<|im_start|>system\nYou help.<|im_end|>\n<|im_start|>user\nWhat is  2 + 3?<|im_end|>\n", "outcome": {"reward": 0}, "steps": [{"thought": "6"}]}
"#;
        let ra = load_bytes("a.jsonl", a.as_bytes(), &mut LoadReport::new("a")).expect("loads");
        let rb = load_bytes("b.jsonl", b.as_bytes(), &mut LoadReport::new("b")).expect("loads");
        let rows = compare(Side { run: &ra, steps: None }, Side { run: &rb, steps: None });
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(rows[0].key, "What is 2 + 3?");
        // Passing in A, failing in B, one rollout each: too few to call it forgotten.
        assert_eq!(rows[0].change, Change::Unclear);
    }
}
