//! Credit on the web off the page's thread. The browser gives a page one thread, so a scheme that
//! takes a second on a large run would freeze it; instead a dedicated worker running this same
//! wasm module (started from a small module script that imports the page's own wasm-bindgen
//! output) keeps its own copy of each large run, loaded once from the same bytes, and computes
//! credit on request. The page sends the scheme choice as JSON and gets the arrays back; until they
//! arrive it shows the previous credit, as the native app does with its worker threads.
//!
//! Both sides of the protocol are here: [`serve`] runs in the worker, the rest on the page.
//! Messages are plain objects: `{kind: "run", id, name, bytes}` (load a run), `{kind: "credit",
//! request, run, choice}` (compute; the reply has `step`, `token`, `token_returns`, `values` as
//! `Float32Array`s, `formula`, `names`, `level`, or `error`), `{kind: "release", id}`.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::mpsc;

use eframe::wasm_bindgen::closure::Closure;
use eframe::wasm_bindgen::{JsCast as _, JsValue};

use crate::app::state::SchemeChoice;
use crate::credit::{Credit, Level, Terms};
use crate::load::{LoadReport, load_bytes};
use crate::model::Run;

/// Runs with more path steps than this compute credit in the worker; smaller ones in the frame
/// (a few milliseconds).
pub const WORKER_STEPS: usize = 50_000;

/// What a credit request's receiver gets when the worker is gone: compute in the frame instead.
pub const WORKER_GONE: &str = "the credit worker stopped";

type Reply = Result<Credit, String>;

/// Replies awaited, by request id, with the callback that wakes the page.
type Waiting = BTreeMap<u32, (mpsc::Sender<Reply>, Box<dyn Fn()>)>;

/// The page's handle on the worker.
struct CreditWorker {
    worker: web_sys::Worker,
    waiting: Rc<RefCell<Waiting>>,
    broken: Rc<RefCell<bool>>,
    next_id: std::cell::Cell<u32>,
}

thread_local! {
    /// The worker, started on first use (`None` inside when it could not be started).
    static WORKER: std::cell::OnceCell<Option<Rc<CreditWorker>>> = const { std::cell::OnceCell::new() };
}

fn get(object: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(object, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn set(object: &js_sys::Object, key: &str, value: &JsValue) {
    let _: Result<bool, _> = js_sys::Reflect::set(object, &JsValue::from_str(key), value);
}

fn floats(values: &[f32]) -> JsValue {
    js_sys::Float32Array::from(values).into()
}

fn to_floats(value: &JsValue) -> Option<Vec<f32>> {
    value.dyn_ref::<js_sys::Float32Array>().map(js_sys::Float32Array::to_vec)
}

/// The URL of a `<link rel=…>` of the page (Trunk links the page's wasm-bindgen script and wasm).
fn link_href(document: &web_sys::Document, selector: &str) -> Option<String> {
    let element = document.query_selector(selector).ok()??;
    get(&element, "href").as_string()
}

/// Starts the worker from a module script that imports the page's own wasm-bindgen output.
fn start() -> Option<Rc<CreditWorker>> {
    let document = web_sys::window()?.document()?;
    let script = link_href(&document, "link[rel=modulepreload][href$='.js']")?;
    let wasm = link_href(&document, "link[rel=preload][href$='.wasm']")?;
    let source = format!(
        "const early = []; self.onmessage = (e) => early.push(e);\n\
         import init, * as bindings from {script:?};\n\
         await init({{ module_or_path: {wasm:?} }});\n\
         bindings.vantage_credit_worker();\n\
         for (const e of early) self.onmessage(e);\n"
    );
    let parts = js_sys::Array::of1(&JsValue::from_str(&source));
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type("text/javascript");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &bag).ok()?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).ok()?;
    let options = web_sys::WorkerOptions::new();
    options.set_type(web_sys::WorkerType::Module);
    let worker = web_sys::Worker::new_with_options(&url, &options).ok()?;
    let waiting: Rc<RefCell<Waiting>> = Rc::default();
    let broken = Rc::new(RefCell::new(false));
    let replies = Rc::clone(&waiting);
    let onmessage = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
        let data = event.data();
        let Some(request) = get(&data, "request").as_f64() else { return };
        let Some((sender, wake)) = replies.borrow_mut().remove(&(request as u32)) else { return };
        let _: Result<(), _> = sender.send(credit_of(&data));
        wake();
    });
    worker.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    let (failed, gone) = (Rc::clone(&waiting), Rc::clone(&broken));
    let onerror = Closure::<dyn FnMut(web_sys::Event)>::new(move |_event: web_sys::Event| {
        log::warn!("{WORKER_GONE}; computing credit on the page");
        *gone.borrow_mut() = true;
        for (sender, wake) in std::mem::take(&mut *failed.borrow_mut()).into_values() {
            let _: Result<(), _> = sender.send(Err(WORKER_GONE.to_owned()));
            wake();
        }
    });
    worker.set_onerror(Some(onerror.as_ref().unchecked_ref()));
    onerror.forget();
    Some(Rc::new(CreditWorker { worker, waiting, broken, next_id: std::cell::Cell::new(1) }))
}

/// The worker, started on first call; `None` where it cannot run or has stopped.
fn worker() -> Option<Rc<CreditWorker>> {
    let worker = WORKER.with(|w| w.get_or_init(start).clone())?;
    let broken = *worker.broken.borrow();
    (!broken).then_some(worker)
}

impl CreditWorker {
    /// A fresh id for a run or a request.
    fn next(&self) -> u32 {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        id
    }
}

/// A message object with these fields.
fn message(fields: &[(&str, JsValue)]) -> js_sys::Object {
    let message = js_sys::Object::new();
    for (key, value) in fields {
        set(&message, key, value);
    }
    message
}

/// Gives the worker its own copy of a run (loaded from the same bytes as the page's); the id to
/// request credit with, or `None` where there is no worker.
pub fn register(name: &str, bytes: &[u8]) -> Option<u32> {
    let worker = worker()?;
    let id = worker.next();
    let bytes = js_sys::Uint8Array::from(bytes).into();
    let run = message(&[("kind", "run".into()), ("id", id.into()), ("name", name.into()), ("bytes", bytes)]);
    worker.worker.post_message(&run).ok()?;
    Some(id)
}

/// Frees the worker's copy of a run.
pub fn release(run: u32) {
    let Some(worker) = worker() else { return };
    let _: Result<(), _> = worker.worker.post_message(&message(&[("kind", "release".into()), ("id", run.into())]));
}

/// Asks the worker for credit under `choice` on its copy of `run`; `repaint` is called when the
/// reply is in. `None` where there is no worker (compute on the page instead).
pub fn request(run: u32, choice: &SchemeChoice, repaint: impl Fn() + 'static) -> Option<mpsc::Receiver<Reply>> {
    let worker = worker()?;
    let id = worker.next();
    let choice = serde_json::to_string(choice).ok()?.into();
    let ask = message(&[("kind", "credit".into()), ("request", id.into()), ("run", run.into()), ("choice", choice)]);
    let (sender, receiver) = mpsc::channel();
    worker.waiting.borrow_mut().insert(id, (sender, Box::new(repaint)));
    if worker.worker.post_message(&ask).is_err() {
        worker.waiting.borrow_mut().remove(&id);
        return None;
    }
    Some(receiver)
}

/// The credit in a reply, or its error.
fn credit_of(data: &JsValue) -> Reply {
    if let Some(error) = get(data, "error").as_string() {
        return Err(error);
    }
    let names = js_sys::Array::from(&get(data, "names"))
        .iter()
        .filter_map(|n| n.as_string())
        .map(std::borrow::Cow::Owned)
        .collect();
    let level = match get(data, "level").as_string().as_deref() {
        Some("token") => Some(Level::Token),
        Some("step") => Some(Level::Step),
        _ => None,
    };
    Ok(Credit {
        step: to_floats(&get(data, "step")).ok_or("a reply without step credit")?,
        token: to_floats(&get(data, "token")),
        token_returns: to_floats(&get(data, "token_returns")),
        terms: Terms {
            formula: get(data, "formula").as_string().unwrap_or_default(),
            names,
            values: to_floats(&get(data, "values")).unwrap_or_default(),
            per_step: get(data, "per_step").as_bool().unwrap_or(false),
            step_names: js_sys::Array::from(&get(data, "step_names"))
                .iter()
                .filter_map(|n| n.as_string())
                .map(std::borrow::Cow::Owned)
                .collect(),
            step_values: to_floats(&get(data, "step_values")).unwrap_or_default(),
        },
        level,
    })
}

/// The reply to a credit request.
fn reply(request: &JsValue, result: Reply) -> js_sys::Object {
    let message = js_sys::Object::new();
    set(&message, "request", request);
    match result {
        Ok(credit) => {
            set(&message, "step", &floats(&credit.step));
            if let Some(token) = &credit.token {
                set(&message, "token", &floats(token));
            }
            if let Some(returns) = &credit.token_returns {
                set(&message, "token_returns", &floats(returns));
            }
            set(&message, "formula", &credit.terms.formula.as_str().into());
            let names: js_sys::Array = credit.terms.names.iter().map(|n| JsValue::from_str(n)).collect();
            set(&message, "names", &names);
            set(&message, "values", &floats(&credit.terms.values));
            set(&message, "per_step", &credit.terms.per_step.into());
            let step_names: js_sys::Array = credit.terms.step_names.iter().map(|n| JsValue::from_str(n)).collect();
            set(&message, "step_names", &step_names);
            set(&message, "step_values", &floats(&credit.terms.step_values));
            let level = match credit.level {
                Some(Level::Token) => "token",
                Some(Level::Step) => "step",
                None => "",
            };
            set(&message, "level", &level.into());
        }
        Err(error) => set(&message, "error", &error.into()),
    }
    message
}

/// The worker's side: loads runs and answers credit requests (called by the worker's script).
pub fn serve() {
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let runs: RefCell<HashMap<u32, Run>> = RefCell::default();
    let answer = scope.clone();
    let onmessage = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
        let data = event.data();
        let id = get(&data, "id").as_f64().unwrap_or(0.0) as u32;
        match get(&data, "kind").as_string().as_deref() {
            Some("run") => {
                let name = get(&data, "name").as_string().unwrap_or_default();
                let bytes =
                    get(&data, "bytes").dyn_into::<js_sys::Uint8Array>().map(|b| b.to_vec()).unwrap_or_default();
                let mut report = LoadReport::new(&name);
                match load_bytes(&name, &bytes, &mut report) {
                    Ok(run) => {
                        runs.borrow_mut().insert(id, run);
                    }
                    Err(err) => log::warn!("credit worker: {err:#}"),
                }
            }
            Some("credit") => {
                let request = get(&data, "request");
                let run = get(&data, "run").as_f64().unwrap_or(0.0) as u32;
                let choice = get(&data, "choice").as_string().unwrap_or_default();
                let started = web_time::Instant::now();
                let result = match (runs.borrow().get(&run), serde_json::from_str::<SchemeChoice>(&choice)) {
                    (Some(run), Ok(choice)) => {
                        let result =
                            crate::app::open_run::compute(run, &choice, &crate::app::faults::Faults::default());
                        log::info!(
                            "credit {} computed in the worker in {} ms{}",
                            choice.scheme_id,
                            started.elapsed().as_millis(),
                            if result.is_err() { " (failed)" } else { "" }
                        );
                        result
                    }
                    (None, _) => Err(WORKER_GONE.to_owned()),
                    (_, Err(err)) => Err(format!("a malformed request: {err}")),
                };
                let _: Result<(), _> = answer.post_message(&reply(&request, result));
            }
            Some("release") => {
                runs.borrow_mut().remove(&id);
            }
            _ => {}
        }
    });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
}
