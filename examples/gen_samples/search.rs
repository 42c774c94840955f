//! Agentic RAG: search / read / answer steps with retrieved document ids and F1 + format outcomes.

use vantage::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder};

use super::rng::Rng;

struct Question {
    text: &'static str,
    answer: &'static str,
    wrong: &'static [&'static str],
    hops: [&'static str; 2],
    queries: [&'static str; 2],
}

const QUESTIONS: &[Question] = &[
    Question {
        text: "Which river flows through the capital of the country where the Nobel Peace Prize is awarded?",
        answer: "Akerselva",
        wrong: &["Glomma", "Thames"],
        hops: ["Nobel Peace Prize", "Oslo"],
        queries: ["where is the Nobel Peace Prize awarded", "river through Oslo"],
    },
    Question {
        text: "Who composed the opera that premiered at La Fenice in 1853?",
        answer: "Giuseppe Verdi",
        wrong: &["Gioachino Rossini", "Verdi's teacher"],
        hops: ["La Fenice", "La traviata"],
        queries: ["La Fenice premiere 1853", "La traviata composer"],
    },
    Question {
        text: "What is the birth year of the director of the film that won the first Palme d'Or?",
        answer: "1901",
        wrong: &["1899", "1946"],
        hops: ["Palme d'Or", "Marcel Camus"],
        queries: ["first Palme d'Or winner film", "director birth year"],
    },
    Question {
        text: "In which city was the founder of the company that makes the Model T born?",
        answer: "Springwells Township",
        wrong: &["Detroit", "Dearborn"],
        hops: ["Ford Model T", "Henry Ford"],
        queries: ["company that made Model T", "Henry Ford birthplace"],
    },
    Question {
        text: "Which element was discovered by the scientist after whom the unit of radioactivity curie is named?",
        answer: "polonium",
        wrong: &["radium", "uranium"],
        hops: ["curie (unit)", "Marie Curie"],
        queries: ["curie unit named after", "elements discovered by Marie Curie"],
    },
    Question {
        text: "What language is primarily spoken in the country whose capital is Windhoek?",
        answer: "English",
        wrong: &["Afrikaans", "German"],
        hops: ["Windhoek", "Namibia"],
        queries: ["Windhoek capital of", "official language of Namibia"],
    },
    Question {
        text: "How many moons does the planet named after the Roman god of war have?",
        answer: "2",
        wrong: &["1", "4"],
        hops: ["Mars (mythology)", "Mars"],
        queries: ["planet named after Roman god of war", "moons of Mars"],
    },
    Question {
        text: "Which university did the author of 'The Structure of Scientific Revolutions' earn his PhD from?",
        answer: "Harvard University",
        wrong: &["MIT", "Princeton University"],
        hops: ["The Structure of Scientific Revolutions", "Thomas Kuhn"],
        queries: ["Structure of Scientific Revolutions author", "Thomas Kuhn PhD"],
    },
    Question {
        text: "What is the highest mountain in the mountain range that contains Mont Blanc's neighbour the Matterhorn?",
        answer: "Mont Blanc",
        wrong: &["Monte Rosa", "Dom"],
        hops: ["Matterhorn", "Alps"],
        queries: ["Matterhorn mountain range", "highest mountain in the Alps"],
    },
    Question {
        text: "Which ocean borders the state where the Golden Gate Bridge is located?",
        answer: "Pacific Ocean",
        wrong: &["Atlantic Ocean", "San Francisco Bay"],
        hops: ["Golden Gate Bridge", "California"],
        queries: ["Golden Gate Bridge location", "California coastline ocean"],
    },
];

/// (thought, action, observation, kind, retrieved docs, retrieval score)
type Step = (String, String, String, &'static str, Vec<String>, f32);

fn f1(prediction: &str, gold: &str) -> f32 {
    let p: Vec<String> = prediction.to_lowercase().split_whitespace().map(str::to_owned).collect();
    let g: Vec<String> = gold.to_lowercase().split_whitespace().map(str::to_owned).collect();
    let common = p.iter().filter(|w| g.contains(w)).count() as f32;
    if common == 0.0 {
        return 0.0;
    }
    let precision = common / p.len() as f32;
    let recall = common / g.len() as f32;
    2.0 * precision * recall / (precision + recall)
}

/// Each step's `gold_logprob`: the policy's mean log-probability of the gold answer's tokens given
/// the context before the step (IGPO's and TRACE's probe). It rises with each passage on a hop's
/// subject read before the step; a small fixed jitter per rollout and step (no draw from the rng,
/// so the rest of the sample is as it was).
fn gold_logprobs(steps: &[Step], hops: &[&str], (q, r, train_step): (usize, usize, i64)) -> Vec<f32> {
    let mut read = 0.0f32;
    steps
        .iter()
        .enumerate()
        .map(|(k, (_, _, observation, kind, _, _))| {
            let jitter = ((q * 7 + r * 3 + k * 5 + train_step as usize) % 5) as f32 * 0.07;
            let before = Rng::round3(-(2.6 - 0.95 * read) - jitter);
            if *kind == "read" && hops.iter().any(|h| observation.contains(h)) {
                read += 1.0;
            }
            before
        })
        .collect()
}

/// The run's metadata: what it is, its reward, and its step scores.
fn describe(b: &mut RunBuilder, seed: u64) {
    let meta = &mut b.meta_mut().metadata;
    meta.insert("name".into(), "multi-hop QA with a search tool (Search-R1 style)".into());
    meta.insert("reward".into(), "0.9 × F1 + 0.1 × format".into());
    meta.insert("retrieval".into(), "step score `retrieval` = share of gold documents retrieved so far".into());
    meta.insert(
        "gold_logprob".into(),
        "step score `gold_logprob` = the policy's mean log-probability of the gold answer given the context before the step (IGPO, TRACE)".into(),
    );
    meta.insert("generator".into(), format!("examples/gen_samples, seed {seed:#x}").into());
}

pub fn run(seed: u64) -> Run {
    let mut rng = Rng::new(seed);
    let mut b = RunBuilder::new("search_qa_rag", "vantage JSONL v1");
    describe(&mut b, seed);
    for train_step in 0..2i64 {
        for (q, question) in QUESTIONS.iter().enumerate() {
            let group_key = format!("s{train_step}-q{q}");
            let (group, _) = b.add_group(&NewGroup {
                key: &group_key,
                task: Some(&format!("hotpot-{q}")),
                train_step: Some(train_step),
                prompt: Some(question.text),
                gold: Some(question.answer),
                ..NewGroup::default()
            });
            let gold_docs = [format!("wiki:{}", 1000 + q * 7), format!("wiki:{}", 2000 + q * 11)];
            let skill = rng.range_f32(0.4, 0.8) + 0.1 * train_step as f32;
            for r in 0..5 {
                let mut steps: Vec<Step> = Vec::new();
                let mut found = [false, false];
                for hop in 0..2 {
                    let good = rng.chance(skill);
                    let query =
                        if good { question.queries[hop].to_owned() } else { format!("{} facts", question.hops[0]) };
                    let mut docs =
                        vec![format!("wiki:{}", rng.int(3000, 9999)), format!("wiki:{}", rng.int(3000, 9999))];
                    if good {
                        docs.insert(rng.int(0, 2) as usize, gold_docs[hop].clone());
                        found[hop] = true;
                    }
                    let retrieval = found.iter().filter(|f| **f).count() as f32 / 2.0;
                    steps.push((
                        format!("I need to find {}.", question.hops[hop]),
                        format!("<search>{query}</search>"),
                        format!("Top results: {}", docs.join(", ")),
                        "search",
                        docs,
                        retrieval,
                    ));
                    let read = if good {
                        gold_docs[hop].clone()
                    } else {
                        steps.last().map(|s| s.4[0].clone()).unwrap_or_default()
                    };
                    steps.push((
                        format!("Read {read}."),
                        format!("<read>{read}</read>"),
                        if good {
                            format!("{}: … the passage mentions {} …", read, question.hops[hop])
                        } else {
                            format!("{read}: … an unrelated passage about local history …")
                        },
                        "read",
                        Vec::new(),
                        retrieval,
                    ));
                }
                let knows = found.iter().all(|f| *f);
                let answer = if knows && rng.chance(0.9) { question.answer } else { *rng.pick(question.wrong) };
                let format_ok = rng.chance(0.92);
                let action =
                    if format_ok { format!("<answer>{answer}</answer>") } else { format!("The answer is {answer}") };
                let retrieval = found.iter().filter(|f| **f).count() as f32 / 2.0;
                steps.push(("Answer.".to_owned(), action, String::new(), "answer", Vec::new(), retrieval));
                let gold = gold_logprobs(&steps, &question.hops, (q, r, train_step));
                let new_steps: Vec<NewStep<'_>> = steps
                    .iter()
                    .zip(&gold)
                    .map(|((thought, action, observation, kind, docs, retrieval), gold)| NewStep {
                        kind: Some(kind),
                        thought: Some(thought),
                        action: Some(action),
                        observation: (!observation.is_empty()).then_some(observation.as_str()),
                        docs: docs.iter().map(String::as_str).collect(),
                        scores: vec![("retrieval", *retrieval), ("gold_logprob", *gold)],
                        ..NewStep::default()
                    })
                    .collect();
                let f1_score = Rng::round3(if format_ok { f1(answer, question.answer) } else { 0.0 });
                let format_score = f32::from(u8::from(format_ok));
                let outcome = Outcome {
                    reward: Some(Rng::round3(0.9 * f1_score + 0.1 * format_score)),
                    success: Some(f1_score >= 0.999),
                    components: vec![("f1", f1_score), ("format", format_score)],
                    finish: Some("stop"),
                };
                b.add_chain_trajectory(
                    &format!("{group_key}-r{r}"),
                    group,
                    &new_steps,
                    &outcome,
                    &NewTokens::default(),
                );
            }
        }
    }
    b.finish()
}
