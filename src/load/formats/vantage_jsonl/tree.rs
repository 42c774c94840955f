//! Tree records: nodes with explicit parent ids; every leaf ends a trajectory.

use std::collections::HashMap;

use crate::load::LoadReport;
use crate::model::{GroupId, NodeId, RunBuilder, TreeId, Warning};

use super::convert::{TokenColumns, check_spans, new_step, outcome};
use super::records::{RawRecord, RawStep};
use super::{add_group, new_group, required_id};

/// Where a node stands while the tree is resolved.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fate {
    Pending,
    Placed,
    Dropped,
}

/// The resolved shape of a tree record: parent of each node (input indices) and the order in which
/// to add the placeable nodes (parents first, otherwise input order).
struct Shape {
    parent: Vec<Option<usize>>,
    order: Vec<usize>,
}

/// Loads one tree record. Nodes with a missing parent, a duplicate id or a parent cycle (and their
/// descendants) are skipped with a warning each; the rest of the tree loads.
pub fn tree(ctx: (&mut RunBuilder, &mut LoadReport), line: u64, record: &RawRecord<'_>) -> Result<(), Warning> {
    let (builder, report) = ctx;
    let tree_key = required_id(record.id.as_ref(), "id", line)?;
    if builder.has_tree(tree_key) {
        return Err(Warning::skipped(line, "id", format!("duplicate tree id {tree_key:?}")));
    }
    let group_key = required_id(record.group.as_ref(), "group", line)?;
    let Some(nodes) = record.nodes.as_ref().filter(|n| !n.is_empty()) else {
        return Err(Warning::skipped(line, "nodes", "missing or empty; a tree needs at least one node"));
    };
    if record.steps.is_some() {
        return Err(Warning::skipped(
            line,
            "steps",
            "a tree record has nodes, not steps (use \"type\": \"trajectory\")",
        ));
    }
    let mut warnings = Vec::new();
    let shape = resolve(nodes, tree_key, line, &mut warnings);
    if shape.order.is_empty() {
        for w in warnings {
            report.warn(w);
        }
        return Err(Warning::skipped(line, "nodes", "no node could be placed"));
    }
    let group = add_group(builder, report, line, &new_group(group_key, record));
    let Some(tree_id) = builder.add_tree(tree_key, group) else {
        return Err(Warning::skipped(line, "id", format!("duplicate tree id {tree_key:?}")));
    };
    let mut node_ids = vec![NodeId::NONE; nodes.len()];
    for &i in &shape.order {
        let parent_node = shape.parent[i].map_or(NodeId::NONE, |p| node_ids[p]);
        node_ids[i] = builder.add_node(group, parent_node, &new_step(&nodes[i]));
    }
    let target = Target { tree_key, group, tree_id, node_ids: &node_ids };
    add_leaves(builder, nodes, &shape, &target, line, &mut warnings);
    for w in warnings {
        report.warn(w);
    }
    Ok(())
}

/// Checks ids and parents and finds the placement order; unplaceable nodes get a warning each.
fn resolve(nodes: &[RawStep<'_>], tree_key: &str, line: u64, warnings: &mut Vec<Warning>) -> Shape {
    let num = nodes.len();
    let mut fate = vec![Fate::Pending; num];
    let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(num);
    for (i, node) in nodes.iter().enumerate() {
        match node.id.as_ref().map(|id| id.0.as_str()) {
            None | Some("") => {
                warnings.push(Warning::skipped(line, format!("nodes[{i}].id"), "missing; tree nodes need ids"));
                fate[i] = Fate::Dropped;
            }
            Some(id) => {
                if let Some(&first) = by_id.get(id) {
                    let reason = format!("duplicate node id {id:?} (first at nodes[{first}])");
                    warnings.push(Warning::skipped(line, format!("nodes[{i}].id"), reason));
                    fate[i] = Fate::Dropped;
                } else {
                    by_id.insert(id, i);
                }
            }
        }
    }
    let mut parent: Vec<Option<usize>> = vec![None; num];
    for (i, node) in nodes.iter().enumerate() {
        let Some(parent_id) = node.parent.as_ref() else { continue };
        if fate[i] == Fate::Dropped {
            continue;
        }
        let field = format!("nodes[{i}].parent");
        match by_id.get(parent_id.0.as_str()) {
            Some(&p) if p == i => {
                warnings.push(Warning::skipped(line, field, "a node cannot be its own parent"));
                fate[i] = Fate::Dropped;
            }
            Some(&p) => parent[i] = Some(p),
            None => {
                warnings.push(Warning::skipped(line, field, format!("no node {:?} in tree {tree_key:?}", parent_id.0)));
                fate[i] = Fate::Dropped;
            }
        }
    }
    let order = placement_order(&parent, &mut fate);
    // Classify every unplaced node before marking any, so cycle members all say "cycle".
    let unplaced: Vec<(usize, Option<usize>)> =
        (0..num).filter(|&i| fate[i] == Fate::Pending).map(|i| (i, cycle_or_orphan(i, &parent, &fate))).collect();
    for (i, blocked_by) in unplaced {
        let reason = match blocked_by {
            Some(ancestor) => format!("ancestor nodes[{ancestor}] was skipped"),
            None => "parent links form a cycle".to_owned(),
        };
        warnings.push(Warning::skipped(line, format!("nodes[{i}].parent"), reason));
        fate[i] = Fate::Dropped;
    }
    Shape { parent, order }
}

/// Where the tree's trajectories go.
struct Target<'a> {
    tree_key: &'a str,
    group: GroupId,
    tree_id: TreeId,
    node_ids: &'a [NodeId],
}

/// Adds one trajectory per placed leaf; a bad leaf (duplicate id, bad tokens) loses only its trajectory.
fn add_leaves(
    builder: &mut RunBuilder,
    nodes: &[RawStep<'_>],
    shape: &Shape,
    target: &Target<'_>,
    line: u64,
    warnings: &mut Vec<Warning>,
) {
    let mut has_child = vec![false; nodes.len()];
    for &i in &shape.order {
        if let Some(p) = shape.parent[i] {
            has_child[p] = true;
        }
    }
    for &i in &shape.order {
        let node = &nodes[i];
        let field = format!("nodes[{i}]");
        if has_child[i] {
            for (name, present) in [
                ("outcome", node.outcome.is_some()),
                ("tokens", node.tokens.is_some()),
                ("trajectory", node.trajectory.is_some()),
            ] {
                if present {
                    warnings.push(Warning::kept(
                        line,
                        format!("{field}.{name}"),
                        "ignored: only leaves end trajectories",
                    ));
                }
            }
            continue;
        }
        let node_key = node.id.as_ref().map_or("", |id| id.0.as_str());
        let key = node.trajectory.as_ref().map_or_else(|| format!("{}/{node_key}", target.tree_key), |t| t.0.clone());
        if builder.has_trajectory(&key) {
            warnings.push(Warning::skipped(
                line,
                format!("{field}.trajectory"),
                format!("duplicate trajectory id {key:?}"),
            ));
            continue;
        }
        let tokens =
            TokenColumns::from_raw(node.tokens.as_deref(), &format!("{field}.tokens"), line).and_then(|(t, len)| {
                let mut path = Vec::new();
                let mut current = Some(i);
                while let Some(c) = current {
                    path.push((format!("nodes[{c}]"), nodes[c].token_span));
                    current = shape.parent[c];
                }
                check_spans(path.into_iter(), len, line).map(|()| t)
            });
        let tokens = match tokens {
            Ok(tokens) => tokens,
            Err(warning) => {
                warnings.push(warning);
                continue;
            }
        };
        let outcome = outcome(node.outcome.as_deref(), &format!("{field}.outcome"), line, warnings);
        let texts = tokens.texts();
        let leaf = target.node_ids[i];
        let new_tokens = tokens.borrow_with(texts.as_deref());
        builder.add_trajectory(&key, target.group, target.tree_id, leaf, &outcome, &new_tokens);
    }
}

/// Parents before children, otherwise in input order; marks placed nodes.
fn placement_order(parent: &[Option<usize>], fate: &mut [Fate]) -> Vec<usize> {
    let mut order = Vec::with_capacity(parent.len());
    let mut pending: Vec<usize> = (0..parent.len()).filter(|&i| fate[i] == Fate::Pending).collect();
    loop {
        let before = pending.len();
        pending.retain(|&i| {
            let ready = parent[i].is_none_or(|p| fate[p] == Fate::Placed);
            if ready {
                fate[i] = Fate::Placed;
                order.push(i);
            }
            !ready
        });
        if pending.is_empty() || pending.len() == before {
            return order;
        }
    }
}

/// For an unplaced node: the dropped ancestor that blocks it, or `None` if it is on or below a cycle.
fn cycle_or_orphan(start: usize, parent: &[Option<usize>], fate: &[Fate]) -> Option<usize> {
    let mut current = start;
    for _ in 0..parent.len() {
        let p = parent[current]?;
        if fate[p] == Fate::Dropped {
            return Some(p);
        }
        current = p;
    }
    None
}
