//! Parameters declared once, read as typed values. A scheme (or a group of parameters several
//! schemes share) declares its parameters with `params!`: a struct whose fields are the
//! parameters, each with its range, default and doc. The declaration gives both the
//! [`ParamSpec`]s (the CLI's `--set`, the app's sliders, presets, deep links, saved state and
//! docs/SCHEMES.md read them) and the struct the scheme reads its [`Params`] as, so a misspelt
//! parameter is a compile error. A choice is an enum made by `choice!`.

use crate::credit::{ParamKind, ParamSpec, ParamValue, Params};

/// How one parameter is declared: its range (numbers only), its default as text, its doc.
#[derive(Clone, Copy, Debug)]
pub struct Decl {
    /// Smallest value (numbers).
    pub min: f64,
    /// Largest value (numbers).
    pub max: f64,
    /// The default, as `--set` would write it.
    pub default: &'static str,
    /// One sentence on what it does.
    pub doc: &'static str,
}

/// A flag or a choice: its default and doc.
pub const fn decl(default: &'static str, doc: &'static str) -> Decl {
    Decl { min: 0.0, max: 0.0, default, doc }
}

/// A number in `[min, max]`: its default and doc.
pub const fn range(min: f64, max: f64, default: &'static str, doc: &'static str) -> Decl {
    Decl { min, max, default, doc }
}

/// A parameter's name from its field's (`r#match` is `match`).
pub fn name(field: &'static str) -> &'static str {
    field.strip_prefix("r#").unwrap_or(field)
}

/// A field that is a group of parameters declared elsewhere (flattened into the scheme's).
pub const GROUP: Decl = decl("", "");

/// A value a declared parameter reads as: a flag, a number, a choice, or a whole group.
pub trait Declared: Sized {
    /// Adds the specs it declares (named `name`, for one parameter) to `out`.
    fn declare(name: &'static str, decl: Decl, out: &mut Vec<ParamSpec>);
    /// Its value in `params` (the declared default where `params` lacks it: resolved for
    /// another scheme).
    fn read(params: &Params, name: &'static str, decl: Decl) -> Self;

    /// The specs a struct of parameters declares, in order.
    fn specs() -> Vec<ParamSpec> {
        let mut out = Vec::new();
        Self::declare("", GROUP, &mut out);
        out
    }

    /// The values of a struct of parameters in `params`, typed.
    fn of(params: &Params) -> Self {
        Self::read(params, "", GROUP)
    }

    /// The values of a struct of parameters in `params`, when `params` hold them at all (`None`
    /// for a scheme that does not declare them).
    fn of_declared(params: &Params) -> Option<Self> {
        Option::<Self>::read(params, "", GROUP)
    }
}

/// The value `params` has for `name`, else the default `decl` declares.
fn value(params: &Params, name: &'static str, decl: Decl, kind: ParamKind) -> Option<ParamValue> {
    params.get(name).or_else(|| ParamSpec { name, kind, default: decl.default, doc: decl.doc }.parse(decl.default).ok())
}

impl Declared for bool {
    fn declare(name: &'static str, decl: Decl, out: &mut Vec<ParamSpec>) {
        out.push(ParamSpec::bool(name, decl.default, decl.doc));
    }
    fn read(params: &Params, name: &'static str, decl: Decl) -> Self {
        matches!(value(params, name, decl, ParamKind::Bool), Some(ParamValue::Bool(true)))
    }
}

impl Declared for f64 {
    fn declare(name: &'static str, decl: Decl, out: &mut Vec<ParamSpec>) {
        out.push(ParamSpec::float(name, decl.min, decl.max, decl.default, decl.doc));
    }
    fn read(params: &Params, name: &'static str, decl: Decl) -> Self {
        match value(params, name, decl, ParamKind::Float { min: decl.min, max: decl.max }) {
            Some(ParamValue::Float(v)) => v,
            Some(ParamValue::Int(v)) => v as Self,
            _ => 0.0,
        }
    }
}

/// A text parameter (`ParamKind::Text`).
impl Declared for &'static str {
    fn declare(name: &'static str, decl: Decl, out: &mut Vec<ParamSpec>) {
        out.push(ParamSpec::text(name, decl.default, decl.doc));
    }
    fn read(params: &Params, name: &'static str, decl: Decl) -> Self {
        match value(params, name, decl, ParamKind::Text) {
            Some(ParamValue::Text(v)) => v,
            _ => "",
        }
    }
}

impl Declared for i64 {
    fn declare(name: &'static str, decl: Decl, out: &mut Vec<ParamSpec>) {
        out.push(ParamSpec::int(name, decl.min as Self, decl.max as Self, decl.default, decl.doc));
    }
    fn read(params: &Params, name: &'static str, decl: Decl) -> Self {
        match value(params, name, decl, ParamKind::Int { min: decl.min as Self, max: decl.max as Self }) {
            Some(ParamValue::Int(v)) => v,
            _ => 0,
        }
    }
}

/// A group or parameter a scheme may lack: `None` where `params` has none of it.
impl<T: Declared> Declared for Option<T> {
    fn declare(name: &'static str, decl: Decl, out: &mut Vec<ParamSpec>) {
        T::declare(name, decl, out);
    }
    fn read(params: &Params, name: &'static str, decl: Decl) -> Self {
        let mut names = Vec::new();
        T::declare(name, decl, &mut names);
        names.iter().all(|spec| params.get(spec.name).is_some()).then(|| T::read(params, name, decl))
    }
}

/// A choice parameter's type: an enum whose variants are its words.
pub trait Choice: Copy + 'static {
    /// The words, in the order the variants are declared.
    const NAMES: &'static [&'static str];
    /// The variants, in the same order.
    const ALL: &'static [Self];
    /// Its word.
    fn name(self) -> &'static str;
}

/// The variant whose word is `word`.
pub fn from_word<C: Choice>(word: &str) -> Option<C> {
    C::NAMES.iter().position(|w| *w == word).map(|i| C::ALL[i])
}

/// Makes an enum the type of a choice parameter: each variant with its word.
macro_rules! impl_choice {
    ($name:ident { $($variant:ident = $word:literal),+ $(,)? }) => {
        impl $crate::credit::params::declare::Choice for $name {
            const NAMES: &'static [&'static str] = &[$($word),+];
            const ALL: &'static [Self] = &[$(Self::$variant),+];
            fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $word),+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($crate::credit::params::declare::Choice::name(*self))
            }
        }

        impl $crate::credit::params::declare::Declared for $name {
            fn declare(
                name: &'static str,
                decl: $crate::credit::params::declare::Decl,
                out: &mut Vec<$crate::credit::ParamSpec>,
            ) {
                use $crate::credit::params::declare::Choice as _;
                out.push($crate::credit::ParamSpec::choice(name, Self::NAMES, decl.default, decl.doc));
            }
            fn read(
                params: &$crate::credit::Params,
                name: &'static str,
                decl: $crate::credit::params::declare::Decl,
            ) -> Self {
                use $crate::credit::params::declare::Choice as _;
                let word = params.choice_value(name).unwrap_or(decl.default);
                $crate::credit::params::declare::from_word(word).unwrap_or(Self::ALL[0])
            }
        }
    };
}
pub(crate) use impl_choice;

/// Declares enums for choice parameters, one line each: each variant with its word (its doc).
/// An enum without a doc of its own is documented by its words.
macro_rules! choice {
    ($($(#[$meta:meta])* $vis:vis enum $name:ident { $($variant:ident = $word:literal),+ $(,)? })+) => {
        $(
            $(#[$meta])*
            #[doc = concat!("The words of a choice parameter:", $(" `", $word, "`"),+, ".")]
            #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
            $vis enum $name {
                $(#[doc = concat!("`", $word, "`")] $variant),+
            }

            $crate::credit::params::declare::impl_choice!($name { $($variant = $word),+ });
        )+
    };
}
pub(crate) use choice;

/// Declares a struct of parameters: each field a parameter (`name: type = decl(…)` or
/// `range(…)`), or a group declared elsewhere (`name: Group = GROUP`), in the order the specs
/// list them. The struct reads itself from [`Params`] (`Self::of`) and lists its specs
/// (`Self::specs`). A struct without a doc of its own is documented as a scheme's knobs.
macro_rules! params {
    ($(#[$meta:meta])* $vis:vis struct $name:ident {
        $($(#[$fmeta:meta])* $fvis:vis $field:ident : $ty:ty = $decl:expr),* $(,)?
    }) => {
        $(#[$meta])*
        #[doc = "The parameters, declared once: their specs, and the typed values they read as."]
        #[derive(Clone, Copy, Debug)]
        $vis struct $name {
            $($(#[$fmeta])* $fvis $field: $ty),*
        }

        impl $crate::credit::params::declare::Declared for $name {
            fn declare(
                _: &'static str,
                _: $crate::credit::params::declare::Decl,
                out: &mut Vec<$crate::credit::ParamSpec>,
            ) {
                $(<$ty as $crate::credit::params::declare::Declared>::declare(
                    $crate::credit::params::declare::name(stringify!($field)),
                    $decl,
                    out,
                );)*
            }
            fn read(
                params: &$crate::credit::Params,
                _: &'static str,
                _: $crate::credit::params::declare::Decl,
            ) -> Self {
                Self {
                    $($field: <$ty as $crate::credit::params::declare::Declared>::read(
                        params,
                        $crate::credit::params::declare::name(stringify!($field)),
                        $decl,
                    )),*
                }
            }
        }
    };
}
pub(crate) use params;

#[cfg(test)]
mod tests {
    use super::*;

    choice! {
        /// A test choice.
        enum Side { Left = "left", Right = "right" }
    }

    params! {
        /// A group two structs share.
        struct Shared {
            side: Side = decl("left", "which side"),
        }
    }

    params! {
        /// A struct with one of each kind of field.
        struct Knobs {
            flag: bool = decl("true", "a flag"),
            shared: Shared = GROUP,
            weight: f64 = range(0.0, 2.0, "0.5", "a weight"),
            count: i64 = range(1.0, 9.0, "3", "a count"),
            r#match: bool = decl("false", "a keyword as a name"),
        }
    }

    params! {
        /// A struct without the group.
        struct Other {
            weight: f64 = range(0.0, 2.0, "0.5", "a weight"),
        }
    }

    /// A scheme whose parameters are `Knobs`, for [`Params::resolve`].
    struct Declaring(Vec<ParamSpec>);

    impl crate::credit::Scheme for Declaring {
        fn info(&self) -> &crate::credit::SchemeInfo {
            static INFO: crate::credit::SchemeInfo = crate::credit::SchemeInfo {
                id: "declaring",
                family: crate::credit::Family::Outcome,
                display_name: "declaring",
                citation: "",
                needs: "",
                source: crate::credit::SourceQuality::Approximate("a test"),
                checked: "",
            };
            &INFO
        }
        fn params(&self) -> &[ParamSpec] {
            &self.0
        }
        fn presets(&self) -> &[crate::credit::Preset] {
            &[]
        }
        fn supports(&self, _: &crate::model::Run) -> crate::credit::Support {
            crate::credit::Support::Yes
        }
        fn compute(
            &self,
            _: &crate::model::Run,
            _: &Params,
        ) -> Result<crate::credit::Credit, crate::credit::CreditError> {
            unreachable!("not computed")
        }
    }

    #[test]
    fn a_declaration_gives_the_specs_in_order_and_reads_them_back_typed() {
        let specs = Knobs::specs();
        let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
        assert_eq!(names, ["flag", "side", "weight", "count", "match"]);
        assert_eq!(specs[1].kind, ParamKind::Choice(&["left", "right"]));
        assert_eq!(specs[3].kind, ParamKind::Int { min: 1, max: 9 });
        let scheme = Declaring(specs);
        let defaults = Knobs::of(&Params::defaults(&scheme));
        assert!(defaults.flag && !defaults.r#match);
        assert_eq!((defaults.shared.side, defaults.weight, defaults.count), (Side::Left, 0.5, 3));
        let sets: Vec<(String, String)> =
            [("side", "right"), ("weight", "1.5"), ("match", "true")].map(|(k, v)| (k.to_owned(), v.to_owned())).into();
        let set = Knobs::of(&Params::resolve(&scheme, None, &sets).unwrap());
        assert_eq!((set.shared.side, set.weight, set.r#match), (Side::Right, 1.5, true));
        assert_eq!(Side::Right.to_string(), "right");
        assert_eq!(from_word::<Side>("left"), Some(Side::Left));
        // A group read from the values of a scheme that declares it, and of one that does not.
        assert_eq!(
            Shared::of_declared(&Params::resolve(&scheme, None, &sets).unwrap()).map(|s| s.side),
            Some(Side::Right)
        );
        let other = Declaring(Other::specs());
        assert!(Shared::of_declared(&Params::defaults(&other)).is_none());
        assert_eq!(Other::of(&Params::defaults(&other)).weight, 0.5);
    }
}
