//! Interned labels: each distinct string is stored once and referred to by a [`Sym`].

use std::collections::HashMap;

use super::Sym;

/// String interner. Symbols are dense and assigned in first-seen order, so they are deterministic.
#[derive(Clone, Default)]
pub struct Interner {
    strings: Vec<Box<str>>,
    index: HashMap<Box<str>, Sym, foldhash::fast::FixedState>,
}

impl std::fmt::Debug for Interner {
    /// The strings in symbol order (the lookup table is derived and its order is not deterministic).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.strings.iter()).finish()
    }
}

impl Interner {
    /// The symbol of `text`, adding it if new.
    pub fn intern(&mut self, text: &str) -> Sym {
        if let Some(&sym) = self.index.get(text) {
            return sym;
        }
        let sym = Sym::from_index(self.strings.len());
        self.strings.push(text.into());
        self.index.insert(text.into(), sym);
        sym
    }

    /// The symbol of `text`, or [`Sym::NONE`] for `None`.
    pub fn intern_opt(&mut self, text: Option<&str>) -> Sym {
        text.map_or(Sym::NONE, |t| self.intern(t))
    }

    /// The symbol of `text` if it was interned.
    pub fn lookup(&self, text: &str) -> Option<Sym> {
        self.index.get(text).copied()
    }

    /// The string of `sym`; `None` for [`Sym::NONE`] or an unknown symbol.
    pub fn resolve(&self, sym: Sym) -> Option<&str> {
        self.strings.get(sym.index()).map(|s| &**s)
    }

    /// The string of `sym`, or `""` when absent.
    pub fn str(&self, sym: Sym) -> &str {
        self.resolve(sym).unwrap_or("")
    }

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// Whether nothing was interned.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    /// Approximate heap bytes used (both the strings and the lookup table).
    pub fn heap_bytes(&self) -> usize {
        let text: usize = self.strings.iter().map(|s| s.len()).sum();
        // The strings are stored twice (vector and map key); the map adds a key, a value and a control byte per slot.
        2 * text
            + self.strings.capacity() * std::mem::size_of::<Box<str>>()
            + self.index.capacity() * (std::mem::size_of::<(Box<str>, Sym)>() + 1)
    }
}
