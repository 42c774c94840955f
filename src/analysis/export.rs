//! The credit table a user exports from the app: one row per step, credit under A and B.

use crate::model::Run;

/// CSV with `trajectory_id, group_id, step_index, node_id, role, credit_a, credit_b` (empty where
/// a scheme gives no value); `a` and `b` are step credit per path position.
pub fn credit_csv(run: &Run, a: Option<&[f32]>, b: Option<&[f32]>, names: (&str, &str)) -> String {
    let tr = &run.trajectories;
    let mut out = format!(
        "trajectory_id,group_id,step_index,node_id,role,credit_a ({}),credit_b ({})\n",
        names.0.replace(',', ";"),
        names.1.replace(',', ";")
    );
    let cell = |v: Option<&[f32]>, p: usize| match v.and_then(|v| v.get(p)) {
        Some(x) if x.is_finite() => x.to_string(),
        _ => String::new(),
    };
    for t in tr.ids() {
        for (k, p) in tr.path_range(t).enumerate() {
            let node = tr.path_nodes[p];
            out.push_str(&format!(
                "{},{},{},{},{},{},{}\n",
                quote(run.trajectory_key(t)),
                quote(run.group_key(tr.group[t.index()])),
                k,
                node.0,
                quote(run.label(run.nodes.role[node.index()])),
                cell(a, p),
                cell(b, p)
            ));
        }
    }
    out
}

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_owned() }
}
