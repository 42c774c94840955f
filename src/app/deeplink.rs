//! Deep links: the view a colleague should see, as a URL fragment (`#run=…&traj=…&step=…`): the
//! run's URL, the group, trajectory and step, schemes A and B with their preset and non-default
//! parameters, and the view. The web build reads it from the page's hash; the desktop app takes the
//! same text with `--link`; "Copy link to this step" writes it.

use super::state::{SchemeChoice, Tab};

/// A parsed deep link; every part is optional.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeepLink {
    /// URL of the run to open (web: fetched over HTTP).
    pub run_url: Option<String>,
    /// Group key.
    pub group: Option<String>,
    /// Trajectory key.
    pub trajectory: Option<String>,
    /// Step index along the trajectory (0-based); the link's `step=K` counts from 1, as the app
    /// shows steps (`step=0`, which links written before counted from, opens the first step).
    pub step: Option<usize>,
    /// Scheme A.
    pub scheme_a: Option<SchemeChoice>,
    /// Scheme B.
    pub scheme_b: Option<SchemeChoice>,
    /// The view.
    pub tab: Option<Tab>,
    /// The Group view with its behaviour graph rather than its tree (`view=graph`).
    pub graph: bool,
}

/// Percent-encodes everything but unreserved characters.
fn encode(text: &str) -> String {
    /// Kept as they are: letters, digits and `-_.~/:`.
    const ESCAPED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~')
        .remove(b'/')
        .remove(b':');
    percent_encoding::utf8_percent_encode(text, ESCAPED).to_string()
}

/// Decodes `%XX` escapes (and `+` as a space); malformed escapes stay as they are.
fn decode(text: &str) -> String {
    percent_encoding::percent_decode_str(&text.replace('+', " ")).decode_utf8_lossy().into_owned()
}

impl DeepLink {
    /// Parses a fragment or query (`#…`, `?…` or bare `k=v&…`); unknown keys are ignored.
    pub fn parse(text: &str) -> Self {
        let text = text.trim_start_matches(['#', '?']);
        let mut link = Self::default();
        let mut params: [Vec<(String, String)>; 2] = [Vec::new(), Vec::new()];
        let mut presets: [Option<String>; 2] = [None, None];
        let mut schemes: [Option<String>; 2] = [None, None];
        for pair in text.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let (key, value) = (decode(key), decode(value));
            match key.as_str() {
                "run" | "url" => link.run_url = Some(value),
                "group" => link.group = Some(value),
                "traj" => link.trajectory = Some(value),
                "step" => link.step = value.parse::<usize>().ok().map(|k| k.saturating_sub(1)),
                // `graph`: the Group view, showing its behaviour graph.
                "view" if value.eq_ignore_ascii_case("graph") => {
                    link.tab = Some(Tab::Group);
                    link.graph = true;
                }
                "view" => link.tab = Tab::ALL.into_iter().find(|t| t.label().eq_ignore_ascii_case(&value)),
                "a" => schemes[0] = Some(value),
                "b" => schemes[1] = Some(value),
                "a.preset" => presets[0] = Some(value),
                "b.preset" => presets[1] = Some(value),
                other => {
                    if let Some(name) = other.strip_prefix("a.") {
                        params[0].push((name.to_owned(), value));
                    } else if let Some(name) = other.strip_prefix("b.") {
                        params[1].push((name.to_owned(), value));
                    }
                }
            }
        }
        for slot in 0..2 {
            if let Some(id) = schemes[slot].take() {
                let choice = SchemeChoice {
                    scheme_id: id,
                    preset: presets[slot].take(),
                    values: std::mem::take(&mut params[slot]),
                };
                if slot == 0 {
                    link.scheme_a = Some(choice);
                } else {
                    link.scheme_b = Some(choice);
                }
            }
        }
        link
    }

    /// The fragment text (without `#`).
    pub fn to_fragment(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut push = |k: &str, v: &str| parts.push(format!("{}={}", encode(k), encode(v)));
        if let Some(url) = &self.run_url {
            push("run", url);
        }
        if let Some(tab) = self.tab {
            let view = if self.graph && tab == Tab::Group { "graph".to_owned() } else { tab.label().to_lowercase() };
            push("view", &view);
        }
        if let Some(group) = &self.group {
            push("group", group);
        }
        if let Some(t) = &self.trajectory {
            push("traj", t);
        }
        if let Some(step) = self.step {
            push("step", &(step + 1).to_string());
        }
        for (name, choice) in [("a", &self.scheme_a), ("b", &self.scheme_b)] {
            let Some(choice) = choice else { continue };
            push(name, &choice.scheme_id);
            if let Some(preset) = &choice.preset {
                push(&format!("{name}.preset"), preset);
            }
            for (k, v) in &choice.values {
                push(&format!("{name}.{k}"), v);
            }
        }
        parts.join("&")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_round_trip_through_percent_encoding() {
        for text in ["a b+c", "100%", "s0/g1:r2~x", "ünï & = # ?", "%ZZ", ""] {
            assert_eq!(decode(&encode(text)), text, "{text}");
        }
        // A literal `+` is a space (form encoding); `%2B` is a plus; a bad escape stays.
        assert_eq!(decode("a+b%2Bc%G1%4"), "a b+c%G1%4");
    }

    #[test]
    fn links_round_trip_and_tolerate_junk() {
        let mut a = SchemeChoice::new("grpo");
        a.preset = Some("trl".to_owned());
        a.set("epsilon", "0.5".to_owned());
        let link = DeepLink {
            run_url: Some("https://example.org/runs/a b.jsonl".to_owned()),
            group: Some("s0-q0".to_owned()),
            trajectory: Some("s0-q0-r3&x".to_owned()),
            step: Some(4),
            scheme_a: Some(a),
            scheme_b: Some(SchemeChoice::new("triage")),
            tab: Some(Tab::Compare),
            graph: false,
        };
        let fragment = link.to_fragment();
        assert!(fragment.contains("traj=s0-q0-r3%26x"), "{fragment}");
        // Step 5 as the app shows it: index 4.
        assert!(fragment.contains("&step=5"), "{fragment}");
        assert_eq!(DeepLink::parse("#step=1").step, Some(0));
        assert_eq!(DeepLink::parse("#step=0").step, Some(0), "an older link's first step");
        assert_eq!(DeepLink::parse(&format!("#{fragment}")), link);
        // The Group view's graph: `view=graph`, and back.
        let graph = DeepLink::parse("#view=graph&group=g1");
        assert_eq!((graph.tab, graph.graph), (Some(Tab::Group), true));
        assert!(graph.to_fragment().contains("view=graph"), "{}", graph.to_fragment());
        assert!(!DeepLink::parse("#view=group").graph);
        let junk = DeepLink::parse("#step=x&%zz=1&traj=%E2%9C%93&unknown=3");
        assert_eq!(junk.step, None);
        assert_eq!(junk.trajectory.as_deref(), Some("✓"));
        assert_eq!(DeepLink::parse(""), DeepLink::default());
    }
}
