//! The Python package's declarations (`vantage::api::python`): its type stubs are current, every
//! parameter whose help is a command's finds that help, and a method that is a command takes every
//! argument the command declares. The package itself is tested by
//! python/tests (pytest, in `.ci/run`).

use std::path::Path;

use vantage::api::declaration;
use vantage::api::python::{API, Help, Signature, arg_help, declared_arguments, docstring, python_stub, signature};

#[test]
fn every_parameter_help_taken_from_the_command_line_exists() {
    for item in API {
        for (param, help) in item.params {
            if let Help::Arg(command, id) = help {
                assert!(arg_help(command, id).is_some(), "{}: {param}: no argument {id} in `{command}`", item.name);
            }
        }
        assert!(docstring(item.name).is_some_and(|d| !d.contains("(no help")), "{}", item.name);
    }
    assert!(docstring("Run.credit").unwrap().contains(&arg_help("credit", "preset").unwrap()));
}

#[test]
fn python_stub_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/vantage/__init__.pyi");
    let made = python_stub();
    if std::env::var_os("VANTAGE_BLESS").is_some() {
        std::fs::write(&path, &made).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(committed == made, "python/vantage/__init__.pyi is stale: VANTAGE_BLESS=1 cargo test python_stub");
}

#[test]
fn a_method_that_is_a_command_takes_what_the_command_declares() {
    let forensics = API.iter().find(|i| i.name == "Run.forensics").unwrap();
    let Signature::Declared { command, .. } = forensics.signature else { panic!("Run.forensics is written by hand") };
    let declared = declaration(command).unwrap();
    let names: Vec<String> = declared_arguments(&declared).into_iter().map(|(name, _)| name).collect();
    assert_eq!(names, ["spike_bound"]);
    assert_eq!(signature(forensics), "(self, spike_bound: float = 10.0) -> dict[str, Any]");
    let doc = docstring("Run.forensics").unwrap();
    assert!(doc.starts_with("Baseline forensics (docs/FORENSICS.md)"), "{doc}");
    assert!(doc.contains("spike_bound: A logged advantage beyond this"), "{doc}");
    for item in API {
        if let Signature::Declared { command, .. } = item.signature {
            assert!(declaration(command).is_some(), "{}: no command {command}", item.name);
        }
    }
}
