//! Lenient JSON pieces shared by the loaders: non-finite number literals, numbers that may be
//! `null` or `"NaN"`, ids that may be strings or integers, and located error messages.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};

/// Rewrites the bare literals `NaN`, `Infinity` and `-Infinity` outside strings into the strings
/// `"NaN"`, `"Infinity"` and `"-Infinity"`, which [`Num`] accepts, so that strict JSON parsers read them.
pub fn quote_non_finite(line: &str) -> Cow<'_, str> {
    if !line.contains("NaN") && !line.contains("Infinity") {
        return Cow::Borrowed(line);
    }
    let bytes = line.as_bytes();
    let mut out = String::with_capacity(line.len() + 16);
    let mut in_string = false;
    let mut escaped = false;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        let replacement = match b {
            b'"' => {
                in_string = true;
                None
            }
            b'N' if bytes[i..].starts_with(b"NaN") => Some(("\"NaN\"", 3)),
            b'I' if bytes[i..].starts_with(b"Infinity") => Some(("\"Infinity\"", 8)),
            b'-' if bytes[i + 1..].starts_with(b"Infinity") => Some(("\"-Infinity\"", 9)),
            _ => None,
        };
        if let Some((text, len)) = replacement {
            out.push_str(&line[copied..i]);
            out.push_str(text);
            i += len;
            copied = i;
        } else {
            i += 1;
        }
    }
    if copied == 0 {
        // "NaN" or "Infinity" only inside strings.
        return Cow::Borrowed(line);
    }
    out.push_str(&line[copied..]);
    Cow::Owned(out)
}

/// A number that also accepts `null` (missing, read as `NaN`) and the strings `"NaN"`, `"Infinity"`, `"-Infinity"`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Num(pub f32);

impl<'de> serde::Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NumVisitor;
        impl Visitor<'_> for NumVisitor {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number (or NaN, Infinity, -Infinity, null)")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                Ok(Num(v as f32))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num(v as f32))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(v as f32))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Num, E> {
                Ok(Num(f32::NAN))
            }
            fn visit_none<E: de::Error>(self) -> Result<Num, E> {
                Ok(Num(f32::NAN))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Num, E> {
                match v {
                    "NaN" | "nan" => Ok(Num(f32::NAN)),
                    "Infinity" | "inf" => Ok(Num(f32::INFINITY)),
                    "-Infinity" | "-inf" => Ok(Num(f32::NEG_INFINITY)),
                    _ => Err(E::invalid_type(de::Unexpected::Str(v), &self)),
                }
            }
        }
        deserializer.deserialize_any(NumVisitor)
    }
}

/// An id given as a string or an integer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Id(pub String);

impl<'de> serde::Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Key::deserialize(deserializer).map(|key| Self(key.0.into_owned()))
    }
}

/// A string or integer id, as [`Id`] reads it, borrowed from the input when it is a string
/// without escapes (a step's state key in vantage JSONL: one per step, not worth an allocation
/// each).
#[derive(Debug)]
pub struct Key<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or integer id")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
        }
        deserializer.deserialize_any(KeyVisitor)
    }
}

/// A 0/1 or boolean mask value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flag(pub bool);

impl<'de> serde::Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FlagVisitor;
        impl Visitor<'_> for FlagVisitor {
            type Value = Flag;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("true, false, 0 or 1")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Flag, E> {
                Ok(Flag(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Flag, E> {
                match v {
                    0 => Ok(Flag(false)),
                    1 => Ok(Flag(true)),
                    _ => Err(E::invalid_value(de::Unexpected::Unsigned(v), &self)),
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Flag, E> {
                match v {
                    0 => Ok(Flag(false)),
                    1 => Ok(Flag(true)),
                    _ => Err(E::invalid_value(de::Unexpected::Signed(v), &self)),
                }
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Flag, E> {
                match v {
                    0.0 => Ok(Flag(false)),
                    1.0 => Ok(Flag(true)),
                    _ => Err(E::invalid_value(de::Unexpected::Float(v), &self)),
                }
            }
        }
        deserializer.deserialize_any(FlagVisitor)
    }
}

/// A parse failure located inside a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// Field path such as `steps[2].scores.prm`, or `record` for the record as a whole.
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

/// Parses one JSON text into `T`, naming the field of the first error and collecting the paths of
/// unknown (ignored) fields.
pub fn parse_located<'de, T: serde::Deserialize<'de>>(
    text: &'de str,
    ignored: &mut Vec<String>,
) -> Result<T, FieldError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = {
        let mut on_ignored = |path: serde_ignored::Path<'_>| ignored.push(format_ignored_path(&path));
        let tracked = serde_ignored::Deserializer::new(&mut de, &mut on_ignored);
        serde_path_to_error::deserialize(tracked).map_err(|err| {
            let path = err.path().to_string();
            let broken_json = matches!(
                err.inner().classify(),
                serde_json::error::Category::Eof | serde_json::error::Category::Syntax
            );
            let field = if broken_json || path == "." || path.is_empty() { "record".to_owned() } else { path };
            FieldError { field, reason: describe_json_error(err.inner()) }
        })?
    };
    de.end().map_err(|err| FieldError { field: "record".to_owned(), reason: describe_json_error(&err) })?;
    Ok(value)
}

/// A `serde_json` error without its "at line 1 column N" suffix (the line is the file's, not the record's).
pub fn describe_json_error(err: &serde_json::Error) -> String {
    let text = err.to_string();
    let base = text.rfind(" at line ").map_or(text.as_str(), |at| &text[..at]);
    match err.classify() {
        serde_json::error::Category::Eof => {
            format!("record is cut off ({base}, column {})", err.column())
        }
        serde_json::error::Category::Syntax => {
            format!("invalid JSON ({base}, column {})", err.column())
        }
        _ => base.to_owned(),
    }
}

fn format_ignored_path(path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    match path {
        Path::Root => String::new(),
        Path::Seq { parent, index } => format!("{}[{index}]", format_ignored_path(parent)),
        Path::Map { parent, key } => {
            let parent = format_ignored_path(parent);
            if parent.is_empty() { key.clone() } else { format!("{parent}.{key}") }
        }
        Path::Some { parent } | Path::NewtypeStruct { parent } | Path::NewtypeVariant { parent } => {
            format_ignored_path(parent)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_bare_non_finite_literals_only_outside_strings() {
        let line = r#"{"a": NaN, "b": -Infinity, "c": "NaN Infinity", "d": [Infinity]}"#;
        assert_eq!(quote_non_finite(line), r#"{"a": "NaN", "b": "-Infinity", "c": "NaN Infinity", "d": ["Infinity"]}"#);
        assert!(matches!(quote_non_finite(r#"{"a": 1}"#), Cow::Borrowed(_)));
        let escaped = r#"{"a": "x\"NaN", "b": NaN}"#;
        assert_eq!(quote_non_finite(escaped), r#"{"a": "x\"NaN", "b": "NaN"}"#);
    }

    #[test]
    fn num_accepts_lenient_values() {
        let v: Vec<Num> = serde_json::from_str(r#"[1, 2.5, null, "NaN", "Infinity", "-Infinity"]"#).unwrap();
        assert_eq!(v[0].0, 1.0);
        assert_eq!(v[1].0, 2.5);
        assert!(v[2].0.is_nan() && v[3].0.is_nan());
        assert_eq!(v[4].0, f32::INFINITY);
        assert_eq!(v[5].0, f32::NEG_INFINITY);
        assert!(serde_json::from_str::<Num>(r#""high""#).is_err());
    }

    #[test]
    fn located_errors_name_the_field() {
        #[derive(serde::Deserialize)]
        struct Inner {
            #[expect(dead_code, reason = "only parsed")]
            x: Num,
        }
        #[derive(serde::Deserialize)]
        struct Outer {
            #[expect(dead_code, reason = "only parsed")]
            items: Vec<Inner>,
        }
        let mut ignored = Vec::new();
        let err = parse_located::<Outer>(r#"{"items": [{"x": 1}, {"x": "bad", "y": 2}]}"#, &mut ignored).err().unwrap();
        assert_eq!(err.field, "items[1].x");
        assert!(err.reason.contains("expected a number"), "{}", err.reason);
        let mut ignored = Vec::new();
        assert!(parse_located::<Outer>(r#"{"items": [{"x": 1, "extra": 2}]}"#, &mut ignored).is_ok());
        assert_eq!(ignored, vec!["items[0].extra".to_owned()]);
        let err = parse_located::<Outer>(r#"{"items": [{"x": 1"#, &mut Vec::new()).err().unwrap();
        assert_eq!(err.field, "record");
        assert!(err.reason.contains("cut off"), "{}", err.reason);
    }
}
