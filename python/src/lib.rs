//! `vantage._native`: the Python package's native module. It only converts: every number, table
//! and error comes from the Rust core through `vantage::api::python`, as the command line computes
//! it. Columns cross as byte buffers in Arrow's layouts (one write each), on which the Python
//! layer (`python/vantage/__init__.py`) builds numpy and pyarrow arrays without copying them.

use std::path::PathBuf;
use std::sync::Arc;

use numpy::{PyArrayMethods as _, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use vantage::analysis::tables::{Strings, Table, Values};
use vantage::api::python as embed;
use vantage::load::{LoadError, LoadReport};
use vantage::model::Run;

/// An exception of `vantage._errors` (`kind`), with where it happened when known.
fn raise(
    py: Python<'_>,
    kind: &str,
    message: String,
    file: Option<String>,
    line: Option<u64>,
    field: Option<String>,
) -> PyErr {
    let made = py
        .import("vantage._errors")
        .and_then(|m| m.getattr(kind))
        .and_then(|class| class.call1((message, file, line, field)));
    match made {
        Ok(instance) => PyErr::from_value(instance),
        Err(err) => err,
    }
}

/// A load error as `vantage.LoadError` (or `vantage.RunNotFound`), with its file, line and field.
fn load_error(py: Python<'_>, err: &LoadError) -> PyErr {
    let located = err.located();
    let (file, source) = match err {
        LoadError::File { path, source } => (Some(path.clone()), &**source),
        other => (None, other),
    };
    let (line, field) = match source {
        LoadError::Unsupported { line, field, .. } => ((*line > 0).then_some(*line), Some(field.clone())),
        LoadError::Incompatible { .. } | LoadError::Unrecognised { .. } => (Some(1), Some("record".to_owned())),
        _ => (None, None),
    };
    let missing = matches!(source, LoadError::Io { source } if source.kind() == std::io::ErrorKind::NotFound);
    raise(py, if missing { "RunNotFound" } else { "LoadError" }, located, file, line, field)
}

fn scheme_error(py: Python<'_>, message: String) -> PyErr {
    raise(py, "SchemeError", message, None, None, None)
}

fn vantage_error(py: Python<'_>, message: String) -> PyErr {
    raise(py, "VantageError", message, None, None, None)
}

/// A numpy array that owns `values` (no copy: numpy frees the vector with the array).
fn array<T: numpy::Element>(py: Python<'_>, values: Vec<T>) -> Bound<'_, PyAny> {
    numpy::PyArray1::from_vec(py, values).into_any()
}

/// A table as a list of `(name, kind, arrays, valid)`, each array a numpy array that owns the
/// core's vector: `kind` is `f32`, `u32`, `u64`, `i64`, `bool`, `text` (offsets, data) or
/// `labels` (keys, dictionary offsets, dictionary data); `valid` a boolean array, or `None` when
/// every row holds a value.
fn table(py: Python<'_>, table: Table) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for column in table.columns {
        let (kind, arrays) = match column.values {
            Values::F32(v) => ("f32", vec![array(py, v)]),
            Values::U32(v) => ("u32", vec![array(py, v)]),
            Values::U64(v) => ("u64", vec![array(py, v)]),
            Values::I64(v) => ("i64", vec![array(py, v)]),
            Values::Bool(v) => ("bool", vec![array(py, v)]),
            Values::Text(Strings { offsets, data }) => ("text", vec![array(py, offsets), array(py, data)]),
            Values::Labels { keys, dictionary: Strings { offsets, data } } => {
                ("labels", vec![array(py, keys), array(py, offsets), array(py, data)])
            }
        };
        let valid = column.valid.map(|v| array(py, v));
        list.append((column.name, kind, arrays, valid))?;
    }
    Ok(list)
}

/// A `serde_json::Value` as Python objects (through `json.loads`).
fn json<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (value.to_string(),))
}

/// Parameter values from `**params` (`True` as `true`).
fn sets(params: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (name, value) in params.into_iter().flat_map(|d| d.iter()) {
        let text = if let Ok(flag) = value.cast::<pyo3::types::PyBool>() {
            flag.is_true().to_string()
        } else {
            value.str()?.to_string()
        };
        out.push((name.extract::<String>()?, text));
    }
    Ok(out)
}

/// One opened run.
#[pyclass(frozen, module = "vantage._native")]
struct NativeRun {
    run: Arc<Run>,
    path: PathBuf,
    report: LoadReport,
}

#[pymethods]
impl NativeRun {
    #[getter]
    fn path(&self) -> String {
        self.path.display().to_string()
    }

    #[getter]
    fn name(&self) -> String {
        self.run.meta.name.clone()
    }

    #[getter]
    fn format(&self) -> String {
        self.run.meta.format.clone()
    }

    #[getter]
    fn notes(&self) -> Vec<String> {
        self.run.meta.notes.clone()
    }

    /// `(file, line, field, message, skipped)` for each warning.
    fn warnings(&self) -> Vec<(String, u64, String, String, bool)> {
        let file = &self.report.file;
        self.report
            .warnings
            .iter()
            .map(|w| (file.clone(), w.line, w.field.clone(), w.reason.clone(), w.skipped))
            .collect()
    }

    fn num_trajectories(&self) -> usize {
        self.run.trajectories.len()
    }

    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (entry, _) = embed::check_entry(&self.path, Ok(&self.run), &self.report, true);
        json(py, &entry)
    }

    /// Baseline forensics (docs/FORENSICS.md): the object `vantage forensics --json` prints,
    /// every finding listed.
    #[pyo3(signature = (spike_bound = 10.0))]
    fn forensics<'py>(&self, py: Python<'py>, spike_bound: f64) -> PyResult<Bound<'py, PyAny>> {
        if !(spike_bound.is_finite() && spike_bound > 0.0) {
            return Err(vantage_error(py, format!("spike_bound {spike_bound}: a positive number")));
        }
        let run = Arc::clone(&self.run);
        let options = vantage::analysis::forensics::Options { spike_bound, texts: true };
        let report = py.detach(move || vantage::api::forensics::report(&run, &options));
        json(py, &report)
    }

    /// Adds a label (docs/LABELS.md) beside the run; the labels file written.
    #[pyo3(signature = (name, value, trajectory, step = None, note = None, by = None, remove = false))]
    #[expect(clippy::too_many_arguments, reason = "the Python method's keyword arguments")]
    fn label(
        &self,
        py: Python<'_>,
        name: &str,
        value: &str,
        trajectory: String,
        step: Option<u32>,
        note: Option<String>,
        by: Option<&str>,
        remove: bool,
    ) -> PyResult<String> {
        let target = vantage::model::labels::Target { trajectory, step };
        let run = Arc::clone(&self.run);
        let path = self.path.clone();
        let written = if remove {
            py.detach(|| vantage::api::label::remove(&path, &run, name, target))
        } else {
            let source = match by {
                Some(by) => vantage::api::label::source(by).map_err(|e| vantage_error(py, format!("{e:#}")))?,
                None => vantage::api::label::person(),
            };
            if let Some(why) = vantage::model::labels::bad_name(name) {
                return Err(vantage_error(py, format!("{name:?}: {why}")));
            }
            let label = vantage::model::labels::Label {
                name: name.to_owned(),
                value: vantage::model::labels::Value::parse(value),
                target,
                source,
                note,
                time: Some(vantage::source::labels::now()),
            };
            py.detach(|| vantage::api::label::add(&path, &run, vec![label]))
        };
        written.map(|p| p.display().to_string()).map_err(|e| vantage_error(py, format!("{e:#}")))
    }

    /// The run's labels as columns, and the notes on those that did not go on it.
    fn labels<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyList>, Vec<String>)> {
        let run = Arc::clone(&self.run);
        let path = self.path.clone();
        let (labels, notes) = py.detach(move || vantage::api::label::of(&path, &run));
        Ok((table(py, vantage::analysis::tables::labels_table(&labels.labels))?, notes))
    }

    /// `steps`, `trajectories` or `tokens` as columns (the steps with a `label.NAME` column per
    /// label, with `labels`).
    #[pyo3(signature = (which, text = false, labels = false))]
    fn table<'py>(&self, py: Python<'py>, which: &str, text: bool, labels: bool) -> PyResult<Bound<'py, PyList>> {
        let run = Arc::clone(&self.run);
        let path = self.path.clone();
        let made = py.detach(move || match which {
            "steps" => {
                let mut table = vantage::analysis::tables::steps(&run, text);
                if labels {
                    let (labels, _) = vantage::api::label::of(&path, &run);
                    vantage::analysis::tables::add_label_columns(&mut table, &run, &labels);
                }
                Some(table)
            }
            "trajectories" => Some(vantage::analysis::tables::trajectories(&run)),
            "tokens" => Some(vantage::analysis::tables::tokens(&run)),
            _ => None,
        });
        let made = made.ok_or_else(|| vantage_error(py, format!("no table {which}")))?;
        table(py, made)
    }

    /// Credit under a scheme, a preset or a formula.
    #[pyo3(signature = (scheme, preset = None, tokens = false, params = None))]
    fn credit(
        &self,
        py: Python<'_>,
        scheme: &str,
        preset: Option<&str>,
        tokens: bool,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<NativeCredit> {
        let sets = sets(params)?;
        let computation = embed::Computation::resolve(scheme, preset, sets.clone())
            .map_err(|e| scheme_error(py, format!("{e:#}")))?;
        let run = Arc::clone(&self.run);
        let credit = py.detach(|| computation.compute(&run)).map_err(|e| vantage_error(py, format!("{e:#}")))?;
        let name = computation.name().to_owned();
        let mut credit = credit;
        let values = if tokens {
            let Some(token) = credit.token.take() else {
                return Err(scheme_error(
                    py,
                    format!("scheme {name} gives step-level credit only; ask for step credit"),
                ));
            };
            token
        } else {
            std::mem::take(&mut credit.step)
        };
        // numpy owns the values from here (no copy), read-only: the table and comparisons read them.
        let values = numpy::PyArray1::from_vec(py, values);
        values.getattr("flags")?.setattr("writeable", false)?;
        Ok(NativeCredit {
            run: Arc::clone(&self.run),
            path: self.path.clone(),
            name,
            preset: preset.map(str::to_owned),
            sets,
            tokens,
            values: values.unbind(),
        })
    }
}

/// Credit on a run: its values in a read-only numpy array.
#[pyclass(frozen, module = "vantage._native")]
struct NativeCredit {
    run: Arc<Run>,
    path: PathBuf,
    name: String,
    preset: Option<String>,
    sets: Vec<(String, String)>,
    tokens: bool,
    values: Py<numpy::PyArray1<f32>>,
}

impl NativeCredit {
    /// Calls `f` on the values.
    fn with_values<R>(&self, py: Python<'_>, f: impl FnOnce(&[f32]) -> R) -> PyResult<R> {
        let values = self.values.bind(py).readonly();
        Ok(f(values.as_slice()?))
    }

    /// How `vantage compare` names it (`grpo --preset verl`).
    fn label(&self) -> String {
        let mut label = self.name.clone();
        if let Some(preset) = &self.preset {
            label.push_str(&format!(" --preset {preset}"));
        }
        for (name, value) in &self.sets {
            label.push_str(&format!(" --set {name}={value}"));
        }
        label
    }
}

#[pymethods]
impl NativeCredit {
    #[getter]
    fn scheme(&self) -> String {
        self.name.clone()
    }

    #[getter]
    fn preset(&self) -> Option<String> {
        self.preset.clone()
    }

    #[getter]
    fn params(&self) -> Vec<(String, String)> {
        self.sets.clone()
    }

    #[getter]
    fn level(&self) -> &'static str {
        if self.tokens { "token" } else { "step" }
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        PyUntypedArrayMethods::len(self.values.bind(py))
    }

    /// The values: a read-only float32 numpy array (the same one each time).
    fn values<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray1<f32>> {
        self.values.bind(py).clone()
    }

    /// `vantage credit`'s rows as columns.
    fn table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let made = self.with_values(py, |v| embed::credit_table(&self.run, v, self.tokens))?;
        table(py, made)
    }

    /// This credit (A) compared with `other` (B), computed once.
    fn compare(&self, py: Python<'_>, other: &NativeCredit) -> PyResult<NativeComparison> {
        if !Arc::ptr_eq(&self.run, &other.run) {
            return Err(vantage_error(
                py,
                "the two credits are on different runs: compare credits of one Run".to_owned(),
            ));
        }
        if self.tokens || other.tokens {
            return Err(vantage_error(py, "compare step credit (Run.credit without tokens=True)".to_owned()));
        }
        let (comparison, steps) = self.with_values(py, |a| {
            other.with_values(py, |b| {
                (vantage::analysis::compare::Comparison::of(&self.run, a, b), [a.to_vec(), b.to_vec()])
            })
        })??;
        Ok(NativeComparison {
            run: Arc::clone(&self.run),
            path: self.path.clone(),
            names: [self.label(), other.label()],
            comparison,
            steps,
        })
    }
}

/// Two credits compared.
#[pyclass(frozen, module = "vantage._native")]
struct NativeComparison {
    run: Arc<Run>,
    path: PathBuf,
    names: [String; 2],
    comparison: vantage::analysis::compare::Comparison,
    /// A's and B's step credits, for the split by label.
    steps: [Vec<f32>; 2],
}

#[pymethods]
impl NativeComparison {
    /// `vantage compare --by-label --json`'s `by_label` rows and `label_notes`.
    fn by_label<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, Vec<String>)> {
        let (rows, notes) = vantage::api::compare::by_label(&self.path, &self.run, &self.steps[0], &self.steps[1]);
        Ok((json(py, &rows)?, notes))
    }

    /// `vantage compare --json`'s object, its rows and groups paged.
    fn page<'py>(&self, py: Python<'py>, limit: usize, offset: usize) -> PyResult<Bound<'py, PyAny>> {
        let page = embed::Page { json: true, limit, offset };
        let run_name = self.path.display().to_string();
        json(py, &embed::comparison(&self.run, &run_name, &self.names, &self.comparison, &page))
    }
}

/// Every run at `path`: `(run, None)` for each that loaded, `(None, error)` for each that did not.
#[pyfunction]
#[pyo3(signature = (path, format = None, steps = None, outcomes = Vec::new(), memory_budget = None))]
fn open_all(
    py: Python<'_>,
    path: PathBuf,
    format: Option<&str>,
    steps: Option<&str>,
    outcomes: Vec<PathBuf>,
    memory_budget: Option<&str>,
) -> PyResult<Vec<(Option<NativeRun>, Option<PyErr>)>> {
    let options = embed::open_options(steps, &outcomes, memory_budget).map_err(|e| load_error(py, &e))?;
    let format = format.map(str::to_owned);
    let opened = py.detach(|| embed::open_all(&path, &options, format.as_deref()));
    Ok(opened
        .into_iter()
        .map(|one| match one.result {
            Ok(run) => (Some(NativeRun { run: Arc::new(run), path: one.path, report: one.report }), None),
            Err(err) => (None, Some(load_error(py, &err))),
        })
        .collect())
}

#[pyfunction]
fn schemes_json(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    json(py, &vantage::credit::listing::json())
}

#[pyfunction]
fn formats() -> Vec<(&'static str, &'static str)> {
    embed::formats()
}

/// A docstring of `vantage.API` (`None`: no such name).
#[pyfunction]
fn docstring(name: &str) -> Option<String> {
    embed::docstring(name)
}

/// The deep link (a fragment without `#`) of schemes A and B in a view, on a run URL.
#[pyfunction]
#[pyo3(signature = (run_url = None, a = None, b = None, view = None))]
fn deep_link(
    py: Python<'_>,
    run_url: Option<&str>,
    a: Option<&str>,
    b: Option<&str>,
    view: Option<&str>,
) -> PyResult<String> {
    embed::deep_link(run_url, a, b, view).map_err(|e| scheme_error(py, e))
}

#[pyfunction]
#[pyo3(signature = (path, out, format = None, steps = None, outcomes = Vec::new(), memory_budget = None))]
fn convert(
    py: Python<'_>,
    path: PathBuf,
    out: PathBuf,
    format: Option<&str>,
    steps: Option<&str>,
    outcomes: Vec<PathBuf>,
    memory_budget: Option<&str>,
) -> PyResult<String> {
    let options = embed::open_options(steps, &outcomes, memory_budget).map_err(|e| load_error(py, &e))?;
    let format = format.map(str::to_owned);
    py.detach(|| embed::convert(&path, &out, &options, format.as_deref())).map_err(|e| {
        match e.downcast_ref::<LoadError>() {
            Some(load) => load_error(py, load),
            None => vantage_error(py, format!("{e:#}")),
        }
    })
}

/// Little-endian floats of `bytes` (`width` 4 or 8).
fn floats<F>(bytes: &[u8], of: fn(&[u8]) -> F, width: usize) -> Vec<F> {
    bytes.chunks_exact(width).map(of).collect()
}

fn f32_of(b: &[u8]) -> f32 {
    f32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn f64_of(b: &[u8]) -> f64 {
    f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}

/// `vantage.credit_batch`: the arrays as little-endian bytes (float32 or float64 as `float64`
/// says), `rows × length`, and dense group ids; the advantages as a buffer of the same precision.
#[pyfunction]
#[pyo3(signature = (rows, length, rewards, group, scheme, preset, float64, mask = None, values = None, log_probs = None, ref_log_probs = None, params = None))]
#[expect(clippy::too_many_arguments, reason = "the arrays a trainer hands over, each optional")]
fn credit_batch<'py>(
    py: Python<'py>,
    rows: usize,
    length: usize,
    rewards: &[u8],
    group: Vec<u32>,
    scheme: &str,
    preset: Option<&str>,
    float64: bool,
    mask: Option<&[u8]>,
    values: Option<&[u8]>,
    log_probs: Option<&[u8]>,
    ref_log_probs: Option<&[u8]>,
    params: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let sets = sets(params)?;
    let failed = |e: embed::BatchError| match e {
        embed::BatchError::Shape(message) => raise(py, "ShapeError", message, None, None, None),
        embed::BatchError::Scheme(message) => scheme_error(py, message),
    };
    macro_rules! run {
        ($of:expr, $width:expr) => {{
            let column = |b: Option<&[u8]>| b.map(|b| floats(b, $of, $width));
            let arrays = embed::BatchArrays {
                rows,
                length,
                rewards: floats(rewards, $of, $width),
                mask: column(mask),
                values: column(values),
                logprob: column(log_probs),
                ref_logprob: column(ref_log_probs),
                group,
            };
            let advantages = py.detach(|| embed::credit_batch(arrays, scheme, preset, &sets)).map_err(failed)?;
            Ok(array(py, advantages))
        }};
    }
    if float64 { run!(f64_of, 8) } else { run!(f32_of, 4) }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeRun>()?;
    m.add_class::<NativeCredit>()?;
    m.add_class::<NativeComparison>()?;
    m.add_function(wrap_pyfunction!(open_all, m)?)?;
    m.add_function(wrap_pyfunction!(schemes_json, m)?)?;
    m.add_function(wrap_pyfunction!(formats, m)?)?;
    m.add_function(wrap_pyfunction!(docstring, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(deep_link, m)?)?;
    m.add_function(wrap_pyfunction!(credit_batch, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
