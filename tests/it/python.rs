//! The Python package's declarations (`vantage::cli::embed`): its type stubs are current, and every
//! parameter whose help is the command line's finds that help. The package itself is tested by
//! python/tests (pytest, in `.ci/run`).

use std::path::Path;

use vantage::cli::embed::{API, Help, cli_help, docstring, python_stub};

#[test]
fn every_parameter_help_taken_from_the_command_line_exists() {
    for item in API {
        for (param, help) in item.params {
            if let Help::Cli(subcommand, id) = help {
                assert!(
                    cli_help(subcommand, id).is_some(),
                    "{}: {param}: no argument {id} in `vantage {subcommand}`",
                    item.name
                );
            }
        }
        assert!(docstring(item.name).is_some_and(|d| !d.contains("(no help")), "{}", item.name);
    }
    assert!(docstring("Run.credit").unwrap().contains(&cli_help("credit", "preset").unwrap()));
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
