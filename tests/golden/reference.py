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


def prime_rl_algorithm(repo, path, name, ns=None):
    """prime-rl's algorithm class `name` from its file `path` (under the checkout `repo`), run as
    written with stand-ins for `iter_trainable_traces` (every trace trainable) and
    `assign_advantages` (records the trace's value); returns the class and the dict of advantages
    assigned, by trace id. `ns` adds to the namespace it runs in (torch, the config classes)."""
    assigned = {}

    def iter_trainable_traces(episodes):
        for episode in episodes:
            for trace in episode.traces:
                yield episode, trace

    def assign_advantages(trace, value):
        assigned[trace.id] = value

    names = {"iter_trainable_traces": iter_trainable_traces, "assign_advantages": assign_advantages,
             "vf": None, "Algorithm": object, "InferencePool": object, **(ns or {})}
    prefix = [ast.parse("from __future__ import annotations").body[0]]
    run(definitions(f"{repo}/{path}", [name]), names, repo, prefix)
    return names[name], assigned
