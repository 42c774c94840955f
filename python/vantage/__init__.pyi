# Generated from vantage's declarations (src/api/python.rs and the commands' in src/api/): do not edit;
# tests/it/python.rs fails when it is stale; VANTAGE_BLESS=1 cargo test python_stub writes it anew.
import os
from typing import Any, Hashable, Sequence

import numpy
import pyarrow
from numpy.typing import ArrayLike

__version__: str

class VantageError(Exception):
    """Any error vantage reports; `file`, `line` and `field` say where, when known."""

    file: str | None
    line: int | None
    field: str | None

class LoadError(VantageError):
    """A run that could not be read, with the file, line and field `vantage check` names."""

class RunNotFound(LoadError, FileNotFoundError):
    """A path that does not exist."""

class SchemeError(VantageError, ValueError):
    """An unknown scheme or preset, or a parameter it does not take or a value out of its range."""

class ShapeError(VantageError, ValueError):
    """Arrays whose lengths do not fit together (credit_batch)."""

def open(path: str | os.PathLike[str], *, format: str | None = None, steps: str | int | None = None, outcomes: Sequence[str | os.PathLike[str]] = (), memory_budget: str | None = None) -> Run:
    """Open one run, as `vantage check` reads it. Raises LoadError (with the file, line and field) when nothing loads, and when a folder holds several runs (use open_all).

    Args:
        path: A log, a run folder, or a vantage Parquet v2 dataset, in any format `vantage formats` lists.
        format: Read as this format instead of detecting it; `vantage formats` names them.
        steps: v2 datasets: read only these training steps (`17`, `10..20` inclusive, `2000..`, `..99`)
        outcomes: Join the outcomes of this results file to the trajectories opened (a SWE-bench report, `report.json`, `results.json`, StableToolBench pass-rate votes); repeatable. A results file among the files opened is used the same way.
        memory_budget: The memory a load may hold (`8G`); by default what the machine has free, as the command line (or VANTAGE_MEMORY_BUDGET).
    """

def open_all(path: str | os.PathLike[str], *, format: str | None = None, steps: str | int | None = None, outcomes: Sequence[str | os.PathLike[str]] = (), memory_budget: str | None = None) -> list[Run]:
    """Open every run at a path (each log of a run folder). Raises LoadError only when nothing loads; the runs that did not load are in `vantage check PATH`.

    Args:
        path: A log, a run folder, or a vantage Parquet v2 dataset, in any format `vantage formats` lists.
        format: Read as this format instead of detecting it; `vantage formats` names them.
        steps: v2 datasets: read only these training steps (`17`, `10..20` inclusive, `2000..`, `..99`)
        outcomes: Join the outcomes of this results file to the trajectories opened (a SWE-bench report, `report.json`, `results.json`, StableToolBench pass-rate votes); repeatable. A results file among the files opened is used the same way.
        memory_budget: The memory a load may hold (`8G`); by default what the machine has free, as the command line (or VANTAGE_MEMORY_BUDGET).
    """

def schemes() -> list[dict[str, Any]]:
    """Every credit scheme, as `vantage schemes` lists it: id, name, family, citation, source, from_code, needs, checked, batch_wide, params (name, kind, range, choices, default, doc) and presets (name, sets, doc).
    """

def formats() -> dict[str, str]:
    """The log formats vantage reads: the name `format=` takes, and what it is.
    """

def credit_batch(rewards: ArrayLike, group_ids: Sequence[Hashable], scheme: str = 'grpo', preset: str | None = None, *, mask: ArrayLike | None = None, values: ArrayLike | None = None, log_probs: ArrayLike | None = None, ref_log_probs: ArrayLike | None = None, **params: float | int | bool | str) -> numpy.ndarray:
    """A scheme's advantages on plain arrays, as a trainer computes them, with the numbers the app shows. One reward per sequence (a 1-D array, as TRL and NeMo-RL pass scores), or per token (2-D, batch × length, as verl's token_level_rewards with its response mask). The result has the rewards' shape and precision (float32 or float64).

    Args:
        rewards: Per-sequence scores (1-D) or per-token rewards (2-D).
        group_ids: Each sequence's prompt (group), any hashable label; one per row of rewards.
        scheme: Scheme id (see `vantage schemes`); `expr:FORMULA` for a formula of your own (docs/EXPRESSIONS.md), `formula:NAME` for a built-in or saved formula.
        preset: Trainer preset: verl, trl, openrlhf (see `vantage schemes`)
        mask: 2-D only: the response mask (1 where a token counts); all ones when absent.
        values: 2-D only: the critic's values (GAE).
        log_probs: 2-D only: the policy's log-probabilities (KL penalties).
        ref_log_probs: 2-D only: the reference policy's log-probabilities (KL penalties).
        params: Parameter value, repeatable: `--set gamma=0.99` (for a formula, its `$gamma`)
    """

def compare(a: Credit, b: Credit) -> Comparison:
    """Two credits on the same run side by side, as the app's Compare view and `vantage compare` set them: Spearman ρ, sign disagreements by kind, the steps where they differ most, the groups they disagree on most.

    Args:
        a: Scheme A's credit (Run.credit).
        b: Scheme B's credit on the same run.
    """

def convert(path: str | os.PathLike[str], out: str | os.PathLike[str], *, format: str | None = None, steps: str | int | None = None, outcomes: Sequence[str | os.PathLike[str]] = (), memory_budget: str | None = None) -> str:
    """Read a log in any supported format and write it as `vantage convert` does; returns the line it prints.

    Args:
        path: The log to read (a file, a verl or TRL directory, a v2 dataset)
        out: Where to write (never the input, nor inside an input directory)
        format: Read as this format instead of detecting it (see `vantage formats`)
        steps: v2 datasets: read only these training steps (`17`, `10..20` inclusive, `2000..`, `..99`)
        outcomes: Join the outcomes of this results file to the trajectories opened (a SWE-bench report, `report.json`, `results.json`, StableToolBench pass-rate votes); repeatable. A results file among the files opened is used the same way.
        memory_budget: The memory a load may hold (`8G`).
    """

def show(run: Run, scheme_a: str | None = None, scheme_b: str | None = None, *, view: str | None = None, app: bool = True) -> str:
    """Open the desktop app on the run with schemes A and B (the `vantage` program on PATH, or VANTAGE_BIN), or, with app=False or when there is no program or display, print the command that does and the deep link (the fragment `--link` and a served run's URL take). Returns the command; an unknown scheme or view raises SchemeError.

    Args:
        run: The run to show.
        scheme_a: App: scheme A (a registry id, `expr:FORMULA` or `formula:NAME`; see `vantage schemes`)
        scheme_b: App: scheme B.
        view: App: the view to open (group, compare, overview, tokens, diff, transcript, runs, summary; graph: the Group view on its behaviour graph)
        app: Start the app (else only print the command).
    """

class Run:
    """One opened run. `warnings` holds what `vantage check` lists: each with file, line, field, message and whether the record was skipped.
    """
    path: str
    name: str
    format: str
    notes: list[str]
    warnings: list[dict[str, Any]]
    def summary(self) -> dict[str, Any]:
        """What `vantage check --json` says of the run (docs/JSON.md): format, summary counts, schemes supported and why others are not, audit, notes, warnings.
        """
    def forensics(self, spike_bound: float = 10.0) -> dict[str, Any]:
        """Baseline forensics (docs/FORENSICS.md): the rows that corrupted a group's baseline (failed rollouts, pad rows, partial groups, duplicates, filtered rows, advantage spikes, reward fallbacks) per training step and group, each with the credit they moved, whether the logged advantages include them, and the evidence.

        The object `vantage forensics --json` prints, with every finding listed: `findings` (kind, train_step, group, trajectories, credit_moved, trainer_included, evidence, source), `counts` by kind, the `scheme` credit_moved is taken under, `group_size`, `notes`.

        Args:
            spike_bound: A logged advantage beyond this, in absolute value, on a zero std is a `std_spike`.
        """
    def label(self, name: str, value: str | float | bool | None = None, *, trajectory: str, step: int | None = None, note: str | None = None, by: str | None = None) -> str:
        """Add a label (docs/LABELS.md) beside the run, never in its log, as `vantage label RUN --add NAME[=VALUE]` does; returns the labels file written. Raises VantageError for a trajectory the run does not have or a step past its end.

        Args:
            name: The label's name (`hack`); no `=`.
            value: None or True for a flag, a word (`"high"`) or a number (0.8).
            trajectory: The trajectory labelled (its id, as `compare` and the app name it)
            step: The step of the trajectory labelled, from 0 (without it, the whole trajectory)
            note: A note on the label.
            by: Who labels, `KIND:NAME` with KIND person, file, agent or rule (default: the person at the terminal; an MCP client's name for the tool; the formula for --rule)
        """
    def unlabel(self, name: str, *, trajectory: str, step: int | None = None) -> str:
        """Take the labels of a name off a target, as `vantage label RUN --remove NAME` does; returns the labels file written.

        Args:
            name: Take off the labels of this name from the target.
            trajectory: The trajectory labelled (its id, as `compare` and the app name it)
            step: The step of the trajectory labelled, from 0 (without it, the whole trajectory)
        """
    def labels(self) -> pyarrow.Table:
        """The run's labels, whoever made them (the app, `vantage label`, an agent through `vantage mcp`, Python), one row each in the order added: name, value (as shown; empty for a flag), number (a flag 1, a word null), trajectory, step (null on a whole trajectory), source_kind, source, note, time. Labels of trajectories the run does not have, and lines of the labels file that do not read, are warned about.
        """
    def steps(self, text: bool = False, labels: bool = False) -> pyarrow.Table:
        """One row per step of every trajectory, in the order of step credit: group, trajectory, step, node, train_step, kind, role, env_reward, reward, success, first_error, scores.NAME; with labels, label.NAME per label.

        Args:
            text: Add each step's thought, action and observation (read from the log where the run left them there).
            labels: Add a label.NAME column per label (docs/LABELS.md): the step's value of it (its own, else its rollout's; `true` for a flag), null where it has none.
        """
    def trajectories(self) -> pyarrow.Table:
        """One row per trajectory: trajectory, group, train_step, task, reward, success, finish, steps, tokens, outcome.NAME.
        """
    def tokens(self) -> pyarrow.Table:
        """One row per token, in the order of token credit: trajectory, position, mask, and each per-token column the run logs.
        """
    def credit(self, scheme: str, preset: str | None = None, *, tokens: bool = False, **params: float | int | bool | str) -> Credit:
        """Credit under a scheme, a preset or a formula, computed as `vantage credit` computes it (the same bits).

        Args:
            scheme: Scheme id (see `vantage schemes`); `expr:FORMULA` for a formula of your own (docs/EXPRESSIONS.md), `formula:NAME` for a built-in or saved formula.
            preset: Trainer preset: verl, trl, openrlhf (see `vantage schemes`)
            tokens: Per token instead of per step (for schemes that compute per token).
            params: Parameter value, repeatable: `--set gamma=0.99` (for a formula, its `$gamma`)
        """

class Credit:
    """Credit on a run: one float32 per step (aligned with Run.steps()) or per token (aligned with Run.tokens()). numpy.asarray(credit) and pyarrow.table(credit) take it as they are.
    """
    run: Run
    scheme: str
    preset: str | None
    params: dict[str, str]
    level: str
    def to_numpy(self) -> numpy.ndarray:
        """The values, float32 (NaN where the scheme gives none): the core's own vector, read-only and not copied (numpy.array(credit) makes a copy to write to).
        """
    def table(self) -> pyarrow.Table:
        """`vantage credit`'s rows: trajectory, group, step, node, credit (per token: trajectory, group, token, mask, credit).
        """

class Comparison:
    """Two credits compared (vantage.compare).
    """
    a: str
    b: str
    paired: int
    spearman: float | None
    sign_disagreement: float
    differing: int
    disagreements: dict[str, int]
    def top(self, n: int = 20, offset: int = 0) -> pyarrow.Table:
        """The steps where A and B differ most: trajectory, group, step, kind, a, b, text.

        Args:
            n: The rows listed, at most (1 to 1000)
            offset: Skip this many rows first (paging)
        """
    def groups(self, n: int = 20, offset: int = 0) -> pyarrow.Table:
        """The groups A and B disagree on most: group, steps, spearman, sign_disagreement.

        Args:
            n: The rows listed, at most (1 to 1000)
            offset: Skip this many rows first (paging)
        """
    def by_label(self) -> list[dict[str, Any]]:
        """The comparison split by the run's labels (docs/LABELS.md), as `vantage compare --by-label --json` lists it in `by_label`: per label, and per word of a label that takes words, the steps that carry it (label, word, steps, trajectories) and what A and B give them (a and b: steps, mean, mean_abs, sum, positive), and their sign_disagreement; last, the steps with no label (label None).
        """
    def to_dict(self, n: int = 20, offset: int = 0) -> dict[str, Any]:
        """`vantage compare --json`'s object (docs/JSON.md).

        Args:
            n: The rows listed, at most (1 to 1000)
            offset: Skip this many rows first (paging)
        """
