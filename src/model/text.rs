//! The text arena: every text of a run (thoughts, actions, observations, prompts, token strings)
//! in one `String`, addressed by [`TextId`] through an offsets array (Arrow's layout).

use super::TextId;

/// One string holding all texts, and the end offset of each.
#[derive(Clone, Debug, Default)]
pub struct TextArena {
    bytes: String,
    ends: Vec<u64>,
}

impl TextArena {
    /// Stores `text`; the empty string is not stored and gets [`TextId::NONE`].
    pub fn push(&mut self, text: &str) -> TextId {
        if text.is_empty() {
            return TextId::NONE;
        }
        self.bytes.push_str(text);
        self.ends.push(self.bytes.len() as u64);
        TextId::from_index(self.ends.len() - 1)
    }

    /// Stores `text` if present.
    pub fn push_opt(&mut self, text: Option<&str>) -> TextId {
        text.map_or(TextId::NONE, |t| self.push(t))
    }

    /// The text of `id`, `""` for [`TextId::NONE`].
    pub fn get(&self, id: TextId) -> &str {
        let Some(&end) = self.ends.get(id.index()) else {
            return "";
        };
        let start = if id.0 == 0 { 0 } else { self.ends[id.index() - 1] };
        self.bytes.get(start as usize..end as usize).unwrap_or("")
    }

    /// Releases spare capacity.
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.ends.shrink_to_fit();
    }

    /// Number of stored texts.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Total bytes of text.
    pub fn text_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Heap bytes used.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.ends.capacity() * 8
    }
}
