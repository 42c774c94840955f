//! A scheme's parameters: their descriptors and presets, resolving `--set k=v` text into
//! validated values ([`Params`], the text values' one home below the scheme face), and the
//! declarations that read them as typed structs ([`declare`]).

pub mod declare;

use std::collections::BTreeMap;

use crate::credit::{CreditError, Scheme};

/// What kind of value a parameter takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamKind {
    /// A real number in `[min, max]`.
    Float {
        /// Smallest allowed value.
        min: f64,
        /// Largest allowed value.
        max: f64,
    },
    /// An integer in `[min, max]`.
    Int {
        /// Smallest allowed value.
        min: i64,
        /// Largest allowed value.
        max: i64,
    },
    /// On or off.
    Bool,
    /// One of a fixed list of words.
    Choice(&'static [&'static str]),
    /// A line of text (at most 1000 characters), such as a map of roles to estimators.
    Text,
}

/// A parameter descriptor: the CLI `--set`, the UI sliders and docs/SCHEMES.md all come from it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSpec {
    /// Name used in `--set name=value`.
    pub name: &'static str,
    /// Type and range.
    pub kind: ParamKind,
    /// Default value, as text.
    pub default: &'static str,
    /// One sentence on what it does.
    pub doc: &'static str,
}

impl ParamSpec {
    /// A float parameter.
    pub const fn float(name: &'static str, min: f64, max: f64, default: &'static str, doc: &'static str) -> Self {
        Self { name, kind: ParamKind::Float { min, max }, default, doc }
    }

    /// A boolean parameter.
    pub const fn bool(name: &'static str, default: &'static str, doc: &'static str) -> Self {
        Self { name, kind: ParamKind::Bool, default, doc }
    }

    /// A choice parameter.
    pub const fn choice(
        name: &'static str,
        options: &'static [&'static str],
        default: &'static str,
        doc: &'static str,
    ) -> Self {
        Self { name, kind: ParamKind::Choice(options), default, doc }
    }

    /// A text parameter.
    pub const fn text(name: &'static str, default: &'static str, doc: &'static str) -> Self {
        Self { name, kind: ParamKind::Text, default, doc }
    }

    /// An integer parameter.
    pub const fn int(name: &'static str, min: i64, max: i64, default: &'static str, doc: &'static str) -> Self {
        Self { name, kind: ParamKind::Int { min, max }, default, doc }
    }

    /// Parses and range-checks `text`.
    pub fn parse(&self, text: &str) -> Result<ParamValue, String> {
        let text = text.trim();
        match self.kind {
            ParamKind::Float { min, max } => {
                let v: f64 = text.parse().map_err(|err| format!("expected a number in [{min}, {max}] ({err})"))?;
                if !(min..=max).contains(&v) {
                    return Err(format!("out of range [{min}, {max}]"));
                }
                Ok(ParamValue::Float(v))
            }
            ParamKind::Int { min, max } => {
                let v: i64 = text.parse().map_err(|err| format!("expected an integer in [{min}, {max}] ({err})"))?;
                if !(min..=max).contains(&v) {
                    return Err(format!("out of range [{min}, {max}]"));
                }
                Ok(ParamValue::Int(v))
            }
            ParamKind::Bool => match text {
                "true" | "1" | "on" | "yes" => Ok(ParamValue::Bool(true)),
                "false" | "0" | "off" | "no" => Ok(ParamValue::Bool(false)),
                _ => Err("expected true or false".to_owned()),
            },
            ParamKind::Choice(options) => options
                .iter()
                .find(|o| **o == text)
                .map(|o| ParamValue::Choice(o))
                .ok_or_else(|| format!("expected one of {}", options.join(", "))),
            ParamKind::Text if text.chars().count() > MAX_TEXT => Err(format!("longer than {MAX_TEXT} characters")),
            ParamKind::Text if text.chars().any(char::is_control) => Err("a control character".to_owned()),
            ParamKind::Text => Ok(ParamValue::Text(intern(text))),
        }
    }
}

/// The longest text parameter.
pub const MAX_TEXT: usize = 1000;

/// `text` kept for the program's life, once per distinct text, so that a value stays `Copy`
/// (text parameters are typed by people: few and short).
fn intern(text: &str) -> &'static str {
    static TEXTS: std::sync::LazyLock<std::sync::Mutex<std::collections::HashSet<&'static str>>> =
        std::sync::LazyLock::new(Default::default);
    let mut texts = TEXTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(&kept) = texts.get(text) {
        return kept;
    }
    let kept: &'static str = Box::leak(text.to_owned().into_boxed_str());
    texts.insert(kept);
    kept
}

/// A typed parameter value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamValue {
    /// A number.
    Float(f64),
    /// An integer.
    Int(i64),
    /// A flag.
    Bool(bool),
    /// A word from the descriptor's list.
    Choice(&'static str),
    /// A text.
    Text(&'static str),
}

impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Float(v) => write!(f, "{v}"),
            Self::Int(v) => write!(f, "{v}"),
            Self::Bool(v) => write!(f, "{v}"),
            Self::Choice(v) | Self::Text(v) => f.write_str(v),
        }
    }
}

/// A named set of parameter values that reproduces one trainer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Preset {
    /// `verl`, `trl`, `openrlhf`, …
    pub name: &'static str,
    /// The values it sets (others keep their defaults).
    pub values: &'static [(&'static str, &'static str)],
    /// What it reproduces.
    pub doc: &'static str,
}

/// Resolved, validated parameter values of one scheme.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    values: BTreeMap<&'static str, ParamValue>,
}

impl std::hash::Hash for Params {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        for (name, value) in &self.values {
            name.hash(state);
            match value {
                ParamValue::Float(v) => v.to_bits().hash(state),
                ParamValue::Int(v) => v.hash(state),
                ParamValue::Bool(v) => v.hash(state),
                ParamValue::Choice(v) | ParamValue::Text(v) => v.hash(state),
            }
        }
    }
}

impl Eq for Params {}

impl Params {
    /// Defaults, then the preset, then each `(name, text)` override, all validated.
    pub fn resolve(scheme: &dyn Scheme, preset: Option<&str>, sets: &[(String, String)]) -> Result<Self, CreditError> {
        let id = scheme.info().id;
        let bad = |name: &str, value: &str, reason: String| CreditError::BadValue {
            scheme: id.to_owned(),
            name: name.to_owned(),
            value: value.to_owned(),
            reason,
        };
        let mut values = BTreeMap::new();
        for spec in scheme.params() {
            let value = spec.parse(spec.default).map_err(|reason| bad(spec.name, spec.default, reason))?;
            values.insert(spec.name, value);
        }
        if let Some(preset_name) = preset {
            let Some(preset) = scheme.presets().iter().find(|p| p.name == preset_name) else {
                let known: Vec<&str> = scheme.presets().iter().map(|p| p.name).collect();
                return Err(CreditError::UnknownPreset {
                    scheme: id.to_owned(),
                    preset: preset_name.to_owned(),
                    known: if known.is_empty() { "none".to_owned() } else { known.join(", ") },
                });
            };
            for (name, text) in preset.values {
                Self::set_one(scheme, &mut values, name, text)?;
            }
        }
        for (name, text) in sets {
            Self::set_one(scheme, &mut values, name, text)?;
        }
        Ok(Self { values })
    }

    /// Defaults only.
    pub fn defaults(scheme: &dyn Scheme) -> Self {
        Self::resolve(scheme, None, &[]).unwrap_or(Self { values: BTreeMap::new() })
    }

    fn set_one(
        scheme: &dyn Scheme,
        values: &mut BTreeMap<&'static str, ParamValue>,
        name: &str,
        text: &str,
    ) -> Result<(), CreditError> {
        let id = scheme.info().id;
        let Some(spec) = scheme.params().iter().find(|p| p.name == name) else {
            return Err(CreditError::UnknownParam { scheme: id.to_owned(), name: name.to_owned() });
        };
        let value = spec.parse(text).map_err(|reason| CreditError::BadValue {
            scheme: id.to_owned(),
            name: name.to_owned(),
            value: text.to_owned(),
            reason,
        })?;
        values.insert(spec.name, value);
        Ok(())
    }

    /// Sets a value directly (the UI's sliders); unknown names are ignored.
    pub fn set(&mut self, name: &str, value: ParamValue) {
        if let Some(slot) = self.values.iter_mut().find(|(k, _)| **k == name).map(|(_, v)| v) {
            *slot = value;
        }
    }

    /// The value named `name`, if the scheme declares it. Schemes read their values as the
    /// typed struct they declare (`params::declare`), not by name.
    pub fn get(&self, name: &str) -> Option<ParamValue> {
        self.values.get(name).copied()
    }

    /// The word of the choice named `name`, if the scheme declares it.
    pub fn choice_value(&self, name: &str) -> Option<&'static str> {
        match self.values.get(name) {
            Some(ParamValue::Choice(v)) => Some(v),
            _ => None,
        }
    }

    /// All values, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, ParamValue)> + '_ {
        self.values.iter().map(|(k, v)| (*k, *v))
    }
}
