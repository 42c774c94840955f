//! Index newtypes for the node arena, trajectories, groups, trees, interned labels and text.
//!
//! Every index is a `u32`; `NONE` (`u32::MAX`) marks an absent reference, so columns stay plain
//! arrays of four-byte values instead of `Option`s.

macro_rules! index_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);

        impl $name {
            /// The absent value.
            pub const NONE: Self = Self(u32::MAX);

            /// Whether this is the absent value.
            #[inline]
            pub fn is_none(self) -> bool {
                self.0 == u32::MAX
            }

            /// Whether this refers to something.
            #[inline]
            pub fn is_some(self) -> bool {
                self.0 != u32::MAX
            }

            /// The index as `usize`, for indexing columns.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }

            /// `None` for the absent value.
            #[inline]
            pub fn get(self) -> Option<Self> {
                self.is_some().then_some(self)
            }

            /// From a column position. Positions never reach `u32::MAX` because builders refuse to grow past it.
            #[inline]
            pub fn from_index(index: usize) -> Self {
                debug_assert!(index < u32::MAX as usize, "index overflow");
                Self(index as u32)
            }
        }
    };
}

index_type!(
    /// A node (one step) in the run's node arena.
    NodeId
);
index_type!(
    /// A trajectory: one root-to-leaf path with an outcome.
    TrajectoryId
);
index_type!(
    /// A group: trajectories sharing one prompt at one training step.
    GroupId
);
index_type!(
    /// A tree record: trajectories whose paths share prefix nodes.
    TreeId
);
index_type!(
    /// An interned label (kind, role, state key, document id, finish reason, external id, …).
    Sym
);
index_type!(
    /// A string in the run's text arena.
    TextId
);
