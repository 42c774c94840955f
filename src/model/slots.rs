//! Group-local state slots: each path step's state key as a one-byte slot within its trajectory's
//! group, derived from a run on first use ([`Run::state_slots`](super::Run::state_slots)).

use super::{Run, Sym};

/// Each path step's state key as a slot within its trajectory's group, one byte per path step.
/// A group's distinct keys get slots 1, 2, … in the order they are first seen (its members in
/// group order, each path root first); a step without a key gets 0. A scheme that groups a
/// group's steps by state (GiGPO's anchor states) then reads a byte in path order and indexes a
/// table of 256, instead of looking each four-byte key up. A group with more than
/// [`StateSlots::MAX`] distinct keys is not coded (read `nodes.state_key` for it), nor are the steps
/// of a trajectory outside every group. Empty when no step has a key.
#[derive(Clone, Debug, Default)]
pub struct StateSlots {
    /// One slot per path step (aligned with `Trajectories::path_nodes`), or none.
    pub codes: Vec<u8>,
    /// Per group, its number of distinct keys; its codes hold only where this is at most
    /// [`StateSlots::MAX`].
    pub distinct: Vec<u32>,
    /// The steps of each slot of the coded groups, slots 1.. of a group one after another (group
    /// g's at `count_starts[g]..count_starts[g + 1]`; none for a group not coded): they depend only
    /// on the codes, so a scheme need not count them each time.
    pub counts: Vec<u32>,
    /// Where each group's counts start in `counts`, and where the last ends.
    pub count_starts: Vec<u32>,
}

impl StateSlots {
    /// The most distinct keys a coded group has.
    pub const MAX: u32 = 255;

    /// The slots of `run`'s path steps (see the type).
    pub fn derive(run: &Run) -> Self {
        let keys = &run.nodes.state_key;
        if !keys.iter().any(|k| k.is_some()) {
            return Self::default();
        }
        let tr = &run.trajectories;
        let mut codes = vec![0u8; tr.path_nodes.len()];
        let mut distinct = Vec::with_capacity(run.groups.len());
        // A key's slot in the current group by symbol index (0: not seen yet); the last entry
        // takes `NONE` and any key past the table, and stays 0.
        let mut slot_of = vec![0u32; run.labels.len() + 1];
        let last = slot_of.len() - 1;
        let mut seen: Vec<usize> = Vec::new();
        let (mut counts, mut count_starts) = (Vec::new(), Vec::with_capacity(run.groups.len() + 1));
        for g in run.groups.ids() {
            // Each slot's steps, counted as they are coded (slot s at `start + s − 1`).
            let start = counts.len();
            count_starts.push(start as u32);
            'members: for &t in run.groups.members(g) {
                let (range, path) = (tr.path_range(t), tr.path(t));
                for (code, node) in codes[range].iter_mut().zip(path) {
                    let key = keys.get(node.index()).copied().unwrap_or(Sym::NONE);
                    let index = key.index().min(last);
                    if index == last {
                        continue;
                    }
                    let entry = &mut slot_of[index];
                    if *entry == 0 {
                        seen.push(index);
                        *entry = seen.len() as u32;
                        counts.push(0);
                    }
                    if *entry > Self::MAX {
                        // Too many keys for a byte: the group is read from the keys instead.
                        counts.truncate(start);
                        break 'members;
                    }
                    *code = *entry as u8;
                    counts[start + *entry as usize - 1] += 1;
                }
            }
            distinct.push(seen.len() as u32);
            for &index in &seen {
                slot_of[index] = 0;
            }
            seen.clear();
        }
        count_starts.push(counts.len() as u32);
        Self { codes, distinct, counts, count_starts }
    }

    /// The codes of a group's path steps are valid.
    pub fn coded(&self, group: super::GroupId) -> bool {
        !self.codes.is_empty() && self.distinct.get(group.index()).is_some_and(|&n| n <= Self::MAX)
    }

    /// The steps of each slot of a coded group, slot 1 first (empty for a group not coded).
    pub fn counts(&self, group: super::GroupId) -> &[u32] {
        let g = group.index();
        match (self.count_starts.get(g), self.count_starts.get(g + 1)) {
            (Some(&start), Some(&end)) => self.counts.get(start as usize..end as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Approximate heap bytes.
    pub fn heap_bytes(&self) -> usize {
        self.codes.capacity() + (self.distinct.capacity() + self.counts.capacity() + self.count_starts.capacity()) * 4
    }
}
