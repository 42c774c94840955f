"""What the generators in tests/golden/*/generate.py share: a reference file's named definitions,
taken by name from its syntax tree and run as written, and the output written as they all write it.
"""

import ast
import json
import sys


def definitions(path, names, cls=None):
    """The named functions or classes of the file at `path` (the methods of class `cls` when given),
    as syntax-tree nodes in the order named; stops, naming them, if any is missing."""
    tree = ast.parse(open(path).read())
    body = tree.body
    if cls is not None:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == cls).body
    found = {n.name: n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name in names}
    missing = [n for n in names if n not in found]
    if missing:
        raise SystemExit(f"{path} lacks {missing}")
    return [found[n] for n in names]


def run(nodes, ns, filename, prefix=()):
    """Runs each definition in the namespace `ns`, after the statements `prefix` (such as a
    `from __future__ import annotations` the file starts with); returns `ns`."""
    for node in nodes:
        module = ast.fix_missing_locations(ast.Module(body=list(prefix) + [node], type_ignores=[]))
        exec(compile(module, filename, "exec"), ns)
    return ns


def dump(out):
    """Writes the cases to standard output as JSON, one space of indent."""
    json.dump(out, sys.stdout, indent=1)
    print()
