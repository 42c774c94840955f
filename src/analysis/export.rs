//! The credit table a user exports from the app: one row per step, credit under A and B.

use crate::model::Run;

/// CSV with `trajectory_id, group_id, step_index, node_id, role, credit_a, credit_b` (empty where
/// a scheme gives no value), then a `label.NAME` column per label of the run (docs/LABELS.md: the
/// step's value of it, its own or its rollout's, `true` for a flag; empty where it has none); `a`
/// and `b` are step credit per path position.
pub fn credit_csv(run: &Run, a: Option<&[f32]>, b: Option<&[f32]>, names: (&str, &str)) -> String {
    let tr = &run.trajectories;
    let labels = &run.meta.labels.names;
    let mut out = format!(
        "trajectory_id,group_id,step_index,node_id,role,credit_a ({}),credit_b ({})",
        names.0.replace(',', ";"),
        names.1.replace(',', ";")
    );
    for named in labels {
        out.push(',');
        out.push_str(&csv_field(&format!("label.{}", named.name)));
    }
    out.push('\n');
    let cell = |v: Option<&[f32]>, p: usize| match v.and_then(|v| v.get(p)) {
        Some(x) if x.is_finite() => x.to_string(),
        _ => String::new(),
    };
    for t in tr.ids() {
        for (k, p) in tr.path_range(t).enumerate() {
            let node = tr.path_nodes[p];
            out.push_str(&format!(
                "{},{},{},{},{},{},{}\n",
                csv_field(run.trajectory_key(t)),
                csv_field(run.group_key(tr.group[t.index()])),
                k,
                node.0,
                csv_field(run.label(run.nodes.role[node.index()])),
                cell(a, p),
                cell(b, p)
            ));
            if !labels.is_empty() {
                // Each label's column, before the row's line break.
                out.pop();
                for named in labels {
                    out.push(',');
                    if let Some(value) = named.at(t, p) {
                        out.push_str(&csv_field(&value.cell()));
                    }
                }
                out.push('\n');
            }
        }
    }
    out
}

/// A CSV field (RFC 4180): quoted, its quotes doubled, when it holds a comma, a quote or a line
/// break; as it is otherwise. The one quoting every CSV vantage writes uses.
pub fn csv_field(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains([',', '"', '\n', '\r']) {
        std::borrow::Cow::Owned(format!("\"{}\"", s.replace('"', "\"\"")))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

#[cfg(test)]
mod tests {
    use super::csv_field;

    #[test]
    fn a_field_is_quoted_when_it_holds_a_comma_a_quote_or_a_line_break() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("one\ntwo"), "\"one\ntwo\"");
        assert_eq!(csv_field("one\rtwo"), "\"one\rtwo\"");
    }
}
