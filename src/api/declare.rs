//! A command's one declaration, read by its other faces: `vantage mcp`'s tool (its description and
//! input schema) and the Python stubs' parameters, from the clap declaration the command line
//! parses.
//!
//! - The tool's name is the command's; its description is the command's help (the first
//!   paragraph of its doc comment: the rest is the terminal's, such as exit codes).
//! - Its properties are the command's arguments by their ids (`a_steps` for `--a-steps`,
//!   `thresholds` for `--set`), the positional run as `path`; an argument under the heading
//!   [`TERMINAL`] (`--json`, `--follow`) is left out. Each property's description is the
//!   argument's help, and its type comes from the argument: a flag is a boolean, a repeatable
//!   argument a list (one of `NAME=NUMBER` settings an object of numbers), an unsigned integer an
//!   integer from 0 (its help's "(A to B)" bounds it), a float a number, possible values an
//!   `enum`, anything else a string; a default is the schema's `default`.
//! - A required argument is a required property.
//!
//! serde reads the same struct from a tool call's `arguments`; `tests` hold the two to each other,
//! so a renamed field or a new argument cannot leave the schema behind.

use std::any::TypeId;

use serde::Deserialize as _;
use serde_json::{Map, Value, json};

use super::Tool;

/// The help heading of arguments only a person at a terminal gives (`--json`, `--follow`): no MCP
/// tool or Python function takes them.
pub const TERMINAL: &str = "At the terminal";

/// The command a declaration makes, as the command line builds it.
pub fn command<T: Tool>() -> clap::Command {
    T::augment_args(clap::Command::new(T::NAME))
}

/// The arguments a tool and a Python function take, by their names there (`path` for the
/// positional run), in declaration order.
pub fn arguments(command: &clap::Command) -> impl Iterator<Item = (String, &clap::Arg)> {
    command.get_arguments().filter(|a| a.get_help_heading() != Some(TERMINAL)).map(|arg| {
        let name = if arg.is_positional() { "path".to_owned() } else { arg.get_id().as_str().to_owned() };
        (name, arg)
    })
}

/// An argument's help, as one paragraph of plain text.
pub fn help(arg: &clap::Arg) -> Option<String> {
    let help = arg.get_long_help().or_else(|| arg.get_help())?.to_string();
    Some(help.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// A command's help (its doc comment's first paragraph), as one line.
pub fn description(command: &clap::Command) -> String {
    let about = command.get_about().map(ToString::to_string).unwrap_or_default();
    about.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What an argument's value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A flag.
    Flag,
    /// An integer from 0.
    Unsigned,
    /// An integer.
    Integer,
    /// A number.
    Number,
    /// A text (a path, an id, a range).
    Text,
}

/// The kind of one value of `arg`.
pub fn kind(arg: &clap::Arg) -> Kind {
    if matches!(arg.get_action(), clap::ArgAction::SetTrue | clap::ArgAction::SetFalse) {
        return Kind::Flag;
    }
    let id = arg.get_value_parser().type_id();
    let is = |t: TypeId| id == t;
    if [TypeId::of::<usize>(), TypeId::of::<u64>(), TypeId::of::<u32>(), TypeId::of::<u16>(), TypeId::of::<u8>()]
        .into_iter()
        .any(is)
    {
        Kind::Unsigned
    } else if [TypeId::of::<i64>(), TypeId::of::<i32>()].into_iter().any(is) {
        Kind::Integer
    } else if [TypeId::of::<f64>(), TypeId::of::<f32>()].into_iter().any(is) {
        Kind::Number
    } else {
        Kind::Text
    }
}

/// Whether `arg` may be given more than once (a list).
pub fn repeatable(arg: &clap::Arg) -> bool {
    matches!(arg.get_action(), clap::ArgAction::Append)
}

/// Whether `arg` is a repeatable `NAME=NUMBER` setting: an object of numbers by name.
fn settings(arg: &clap::Arg) -> bool {
    repeatable(arg) && arg.get_value_names().is_some_and(|names| names.iter().any(|n| n.as_str() == "NAME=NUMBER"))
}

/// The bounds "(A to B)" at the end of an integer argument's help, which its command checks.
fn bounds(help: &str) -> Option<(i64, i64)> {
    let inside = help.trim_end_matches('.').strip_suffix(')')?.rsplit_once('(')?.1;
    let (low, high) = inside.split_once(" to ")?;
    Some((low.trim().parse().ok()?, high.trim().parse().ok()?))
}

/// One value of `arg` as JSON: a default, or a possible value.
fn value(arg: &clap::Arg, text: &str) -> Value {
    match kind(arg) {
        Kind::Flag => Value::from(text == "true"),
        Kind::Unsigned | Kind::Integer => text.parse::<i64>().map_or_else(|_| Value::from(text), Value::from),
        Kind::Number => text.parse::<f64>().map_or_else(|_| Value::from(text), Value::from),
        Kind::Text => Value::from(text),
    }
}

/// The JSON schema of one argument's value.
fn property(arg: &clap::Arg) -> Value {
    let help = help(arg);
    let mut one = Map::new();
    let possible: Vec<Value> =
        arg.get_possible_values().iter().filter(|p| !p.is_hide_set()).map(|p| Value::from(p.get_name())).collect();
    match kind(arg) {
        _ if !possible.is_empty() && kind(arg) != Kind::Flag => {
            one.insert("type".into(), json!("string"));
            one.insert("enum".into(), Value::Array(possible));
        }
        Kind::Flag => drop(one.insert("type".into(), json!("boolean"))),
        Kind::Unsigned | Kind::Integer => {
            one.insert("type".into(), json!("integer"));
            match help.as_deref().and_then(bounds) {
                Some((low, high)) => {
                    one.insert("minimum".into(), json!(low));
                    one.insert("maximum".into(), json!(high));
                }
                None if kind(arg) == Kind::Unsigned => drop(one.insert("minimum".into(), json!(0))),
                None => {}
            }
        }
        Kind::Number => drop(one.insert("type".into(), json!("number"))),
        Kind::Text => drop(one.insert("type".into(), json!("string"))),
    }
    let mut schema = if settings(arg) {
        json!({ "type": "object", "additionalProperties": { "type": "number" } })
    } else if repeatable(arg) && !arg.is_positional() {
        json!({ "type": "array", "items": Value::Object(one) })
    } else {
        Value::Object(one)
    };
    if let Some(help) = help {
        schema["description"] = Value::from(help);
    }
    let defaults = arg.get_default_values();
    if let [default] = defaults
        && kind(arg) != Kind::Flag
        && !repeatable(arg)
    {
        schema["default"] = value(arg, &default.to_string_lossy());
    }
    schema
}

/// The input schema of a command's MCP tool.
pub fn input_schema(command: &clap::Command) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, arg) in arguments(command) {
        if arg.is_required_set() {
            required.push(Value::from(name.clone()));
        }
        properties.insert(name, property(arg));
    }
    json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
}

/// A command's MCP tool: its name, description and input schema.
pub fn tool<T: Tool>() -> Value {
    let command = command::<T>();
    json!({ "name": T::NAME, "description": description(&command), "inputSchema": input_schema(&command) })
}

/// The Python type of one of `arg`'s values, and its default as Python writes it.
pub fn python(arg: &clap::Arg) -> (String, Option<String>) {
    let one = match kind(arg) {
        Kind::Flag => "bool",
        Kind::Unsigned | Kind::Integer => "int",
        Kind::Number => "float",
        Kind::Text if arg.is_positional() => "str | os.PathLike[str]",
        Kind::Text => "str",
    };
    let default = arg.get_default_values().first().map(|d| d.to_string_lossy().into_owned());
    match (kind(arg), default) {
        (Kind::Flag, _) => (one.to_owned(), Some("False".to_owned())),
        (_, _) if settings(arg) => ("dict[str, float] | None".to_owned(), Some("None".to_owned())),
        (_, _) if repeatable(arg) => (format!("Sequence[{one}]"), Some("()".to_owned())),
        (Kind::Number, Some(d)) => {
            let d = d.parse::<f64>().map_or(d, |v| format!("{v:?}"));
            (one.to_owned(), Some(d))
        }
        (Kind::Text, Some(d)) => (one.to_owned(), Some(format!("{d:?}"))),
        (_, Some(d)) => (one.to_owned(), Some(d)),
        (_, None) if arg.is_required_set() => (one.to_owned(), None),
        (_, None) => (format!("{one} | None"), Some("None".to_owned())),
    }
}

/// A text argument with named choices that its command checks itself, so that a wrong one is the
/// command's own error (in JSON with `--json`), not the parser's: `--help` lists the choices and
/// the MCP schema makes them an `enum`.
#[derive(Clone, Debug)]
pub struct Choices(pub Vec<&'static str>);

impl clap::builder::TypedValueParser for Choices {
    type Value = String;

    fn parse_ref(
        &self,
        command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(command, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(self.0.iter().map(|name| clap::builder::PossibleValue::new(*name))))
    }
}

/// serde: one path (a tool call's `path`) or a list, as a list.
pub fn one_or_more<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<std::path::PathBuf>, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum OneOrMore {
        One(std::path::PathBuf),
        More(Vec<std::path::PathBuf>),
    }
    Ok(match OneOrMore::deserialize(d)? {
        OneOrMore::One(path) => vec![path],
        OneOrMore::More(paths) => paths,
    })
}

/// serde: `NAME=NUMBER` settings given as an object (`{"truncated": 0.3}`), as the command line's
/// `NAME=VALUE` texts.
pub fn named_numbers<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let map = std::collections::BTreeMap::<String, f64>::deserialize(d)?;
    Ok(map.into_iter().map(|(name, value)| format!("{name}={value}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_read_from_the_end_of_the_help() {
        assert_eq!(bounds("The rows listed, at most (1 to 1000)."), Some((1, 1000)));
        assert_eq!(bounds("The characters of each text shown, at most (1 to 100000)"), Some((1, 100_000)));
        assert_eq!(bounds("A number (e.g. 3)."), None);
    }
}
