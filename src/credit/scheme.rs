//! A scheme's two faces. Callers hold the object-safe [`Scheme`]: the registry lists it, and its
//! parameters travel as text values ([`Params`]). A scheme file writes the typed face behind it: it
//! declares itself once with `scheme!` (who it is, the struct its parameters read as, its presets:
//! [`Declaration`]) and computes from those typed knobs in one function ([`Typed::credit`]), with
//! or without the values per step its explanation needs. The one implementation of [`Scheme`] for
//! every [`Typed`] scheme reads the knobs once per call and derives the rest.

use crate::credit::data::batch::{Batch, Output};
use crate::credit::data::real::Real;
use crate::credit::engine::inputs::Preparation;
use crate::credit::params::declare::Declared;
use crate::credit::{Credit, CreditError, ParamSpec, Params, Preset, SchemeInfo, Support};
use crate::model::{NodeId, Run, TrajectoryId};

/// A credit-assignment scheme.
pub trait Scheme: Sync {
    /// Who it is.
    fn info(&self) -> &SchemeInfo;

    /// Its parameters.
    fn params(&self) -> &[ParamSpec];

    /// Trainer presets.
    fn presets(&self) -> &[Preset] {
        &[]
    }

    /// Whether `run` has what it needs.
    fn supports(&self, run: &Run) -> Support;

    /// Computes credit; pure and deterministic.
    fn compute(&self, run: &Run, params: &Params) -> Result<Credit, CreditError>;

    /// [`Self::compute`]'s credit, bit for bit, with the values per path step its terms need to
    /// redo each step's number by hand (`Terms::step_values`: a tree node's value and its
    /// parent's), which `compute` leaves out: keeping them costs time and memory on every
    /// recomputation, and only the inspector reads them. The same as `compute` for a scheme whose
    /// rows' terms and [`Self::step_terms`] say it all.
    fn compute_explained(&self, run: &Run, params: &Params) -> Result<Credit, CreditError> {
        self.compute(run, params)
    }

    /// The token kernel, for schemes that are trainer estimators over `(rows × positions)`.
    fn token_kernel(&self) -> Option<&dyn TokenKernel> {
        None
    }

    /// Why, under `params`, a trajectory's credit depends on the groups of other training steps
    /// in the batch it is computed with (a normalization or whitening over the whole batch), in
    /// words ("whitens the advantages over the batch"); `None` when it depends on its own group
    /// (or trajectory) only, so that credit computed one training step at a time equals credit
    /// computed on the whole run (`vantage credit RUN_DIR` asks for `--batch-scope` otherwise;
    /// `tests/it/partitions.rs` checks both answers on every scheme).
    fn batch_wide(&self, params: &Params) -> Option<&'static str> {
        let _: &Params = params;
        None
    }

    /// The terms of `credit` (computed under `params`) at path step `position` of trajectory `t`
    /// that its row of [`Credit::terms`] does not hold: a step's own constant (TRIAGE's c(role)),
    /// the later steps' scores a sum runs over (PRM process credit). Computed for that one step
    /// when the inspector shows it, so that the number can be reproduced by hand; none by default.
    /// A term without a value is a note (how many more scores were left out).
    fn step_terms(
        &self,
        run: &Run,
        params: &Params,
        credit: &Credit,
        t: TrajectoryId,
        position: usize,
    ) -> Vec<(String, Option<f64>)> {
        let _: (&Run, &Params, &Credit, TrajectoryId, usize) = (run, params, credit, t, position);
        Vec::new()
    }
}

/// Why `scheme`'s credit under `preset` (its defaults when `None`) depends on the whole batch
/// ([`Scheme::batch_wide`]); `None` when it does not, or the preset is not the scheme's.
pub fn batch_wide_under(scheme: &dyn Scheme, preset: Option<&str>) -> Option<&'static str> {
    let params = Params::resolve(scheme, preset, &Vec::new()).ok()?;
    scheme.batch_wide(&params)
}

/// A typed scheme's knobs at their defaults.
pub fn default_knobs<T: Typed>(scheme: &T) -> T::Knobs {
    T::Knobs::of(&Params::defaults(scheme))
}

/// The path step whose own terms are asked for ([`Typed::step_terms`]): its trajectory, its
/// position in the run's paths (`credit.step[position]`), its index along its trajectory's path,
/// and its node.
#[derive(Clone, Copy, Debug)]
pub struct StepAt {
    /// The trajectory.
    pub t: TrajectoryId,
    /// Its position among all the run's path steps.
    pub position: usize,
    /// Its index along the trajectory's path (0 for the first step).
    pub k: usize,
    /// Its node.
    pub node: NodeId,
}

/// A step's own terms: named values; a term without a value is a note.
pub type StepTerms = Vec<(String, Option<f64>)>;

/// What a scheme file declares once, written by `scheme!`: who it is, the struct its parameters
/// read as (whose fields declare the specs), and its presets.
pub trait Declaration {
    /// The scheme's parameters, typed.
    type Knobs: Declared;
    /// Who it is.
    fn info(&self) -> &'static SchemeInfo;
    /// The specs [`Self::Knobs`] declares.
    fn specs(&self) -> &'static [ParamSpec];
    /// Trainer presets.
    fn presets(&self) -> &'static [Preset];
}

/// A scheme as its file writes it: what it needs of a run, and its credit from its typed knobs.
pub trait Typed: Declaration + Sync {
    /// Whether `run` has what it needs.
    fn supports(&self, run: &Run) -> Support;

    /// The credit under `knobs`; with `explain`, also the values per path step its terms need
    /// ([`Scheme::compute_explained`]), the credit itself the same to the bit.
    fn credit(&self, run: &Run, knobs: &Self::Knobs, explain: bool) -> Result<Credit, CreditError>;

    /// [`Scheme::token_kernel`].
    fn token_kernel(&self) -> Option<&dyn TokenKernel> {
        None
    }

    /// [`Scheme::batch_wide`] under `knobs`.
    fn batch_wide(&self, knobs: &Self::Knobs) -> Option<&'static str> {
        let _: &Self::Knobs = knobs;
        None
    }

    /// [`Scheme::step_terms`] under `knobs`, at step `at` (a step of the trajectory asked for).
    fn step_terms(&self, run: &Run, knobs: &Self::Knobs, credit: &Credit, at: StepAt) -> StepTerms {
        let _: (&Run, &Self::Knobs, &Credit, StepAt) = (run, knobs, credit, at);
        Vec::new()
    }
}

impl<T: Typed> Scheme for T {
    fn info(&self) -> &SchemeInfo {
        Declaration::info(self)
    }
    fn params(&self) -> &[ParamSpec] {
        self.specs()
    }
    fn presets(&self) -> &[Preset] {
        Declaration::presets(self)
    }
    fn supports(&self, run: &Run) -> Support {
        Typed::supports(self, run)
    }
    fn compute(&self, run: &Run, params: &Params) -> Result<Credit, CreditError> {
        self.credit(run, &T::Knobs::of(params), false)
    }
    fn compute_explained(&self, run: &Run, params: &Params) -> Result<Credit, CreditError> {
        self.credit(run, &T::Knobs::of(params), true)
    }
    fn token_kernel(&self) -> Option<&dyn TokenKernel> {
        Typed::token_kernel(self)
    }
    fn batch_wide(&self, params: &Params) -> Option<&'static str> {
        Typed::batch_wide(self, &T::Knobs::of(params))
    }
    fn step_terms(
        &self,
        run: &Run,
        params: &Params,
        credit: &Credit,
        t: TrajectoryId,
        position: usize,
    ) -> Vec<(String, Option<f64>)> {
        let tr = &run.trajectories;
        let range = tr.path_range(t);
        if !range.contains(&position) {
            return Vec::new();
        }
        let at = StepAt { t, position, k: position - range.start, node: tr.path_nodes[position] };
        Typed::step_terms(self, run, &T::Knobs::of(params), credit, at)
    }
}

/// What a scheme's credit function gives: its credit, or its credit or why not.
pub trait IntoCredit {
    /// As [`Typed::credit`] returns it.
    fn into_credit(self) -> Result<Credit, CreditError>;
}

impl IntoCredit for Credit {
    fn into_credit(self) -> Result<Credit, CreditError> {
        Ok(self)
    }
}

impl IntoCredit for Result<Credit, CreditError> {
    fn into_credit(self) -> Self {
        self
    }
}

/// Declares a scheme: its unit struct, and its [`Declaration`] from its info, the struct its
/// parameters read as and its presets (none when left out). With `supports` (a function of the
/// run) and `credit` (a function of the run, the knobs and `explain`, giving its [`Credit`] or a
/// `Result` of it), and what makes it batch-wide (a function of the knobs), it writes its
/// [`Typed`] face too; else the file implements [`Typed`].
macro_rules! scheme {
    (
        $(#[$doc:meta])* $ty:ident, knobs: $knobs:ty, info: $info:expr
        $(, presets: $presets:expr)?, supports: $supports:expr, credit: $credit:expr
        $(, batch_wide: $batch_wide:expr)? $(, token_kernel: $token_kernel:ident)? $(,)?
    ) => {
        $crate::credit::scheme::scheme!($(#[$doc])* $ty, knobs: $knobs, info: $info $(, presets: $presets)?);

        impl $crate::credit::scheme::Typed for $ty {
            fn supports(&self, run: &$crate::model::Run) -> $crate::credit::Support {
                let check: fn(&$crate::model::Run) -> $crate::credit::Support = $supports;
                check(run)
            }
            fn credit(
                &self,
                run: &$crate::model::Run,
                knobs: &$knobs,
                explain: bool,
            ) -> Result<$crate::credit::Credit, $crate::credit::CreditError> {
                $crate::credit::scheme::IntoCredit::into_credit($credit(run, knobs, explain))
            }
            $(
                fn batch_wide(&self, knobs: &$knobs) -> Option<&'static str> {
                    let check: fn(&$knobs) -> Option<&'static str> = $batch_wide;
                    check(knobs)
                }
            )?
            $(
                fn token_kernel(&self) -> Option<&dyn $crate::credit::scheme::TokenKernel> {
                    let $token_kernel: &dyn $crate::credit::scheme::TokenKernel = self;
                    Some($token_kernel)
                }
            )?
        }
    };
    (
        $(#[$doc:meta])* $ty:ident, knobs: $knobs:ty, info: $info:expr
        $(, presets: $presets:expr)? $(,)?
    ) => {
        $(#[$doc])*
        pub struct $ty;

        static INFO: $crate::credit::SchemeInfo = $info;

        static PARAMS: std::sync::LazyLock<Vec<$crate::credit::ParamSpec>> =
            std::sync::LazyLock::new(<$knobs as $crate::credit::params::declare::Declared>::specs);

        static PRESETS: &[$crate::credit::Preset] = &$crate::credit::scheme::scheme!(@presets $($presets)?);

        impl $crate::credit::scheme::Declaration for $ty {
            type Knobs = $knobs;
            fn info(&self) -> &'static $crate::credit::SchemeInfo {
                &INFO
            }
            fn specs(&self) -> &'static [$crate::credit::ParamSpec] {
                &PARAMS
            }
            fn presets(&self) -> &'static [$crate::credit::Preset] {
                PRESETS
            }
        }
    };
    (@presets) => {
        []
    };
    (@presets $presets:expr) => {
        $presets
    };
}
pub(crate) use scheme;

/// A trainer estimator's kernel over rows of positions, in `f32` (the trainer's precision) or
/// `f64`, as callers outside the scheme hold it (the trainers' golden tests, credit on plain
/// arrays, the forensics' recomputation): its parameters as text values, read as the scheme's
/// knobs here, at the face (`token_kernel!`).
pub trait TokenKernel: Sync {
    /// Runs in `f32`.
    fn run32(&self, batch: &Batch<'_, f32>, params: &Params) -> Result<Output<f32>, CreditError>;
    /// Runs in `f64`.
    fn run64(&self, batch: &Batch<'_, f64>, params: &Params) -> Result<Output<f64>, CreditError>;
    /// How `params` ask for its batch to be prepared (`engine::inputs::prepare_batch`).
    fn preparation(&self, params: &Params) -> Preparation;
    /// Whether the kernel reads critic values (only then are they gathered into the batch).
    fn uses_values(&self) -> bool {
        false
    }
}

/// A float a [`TokenKernel`] runs in: `f32` calls `run32`, `f64` calls `run64` (for code generic
/// over the precision, such as credit on plain arrays and the trainers' golden tests).
pub trait KernelFloat: Real {
    /// Runs `kernel` on `batch` in this precision.
    fn run(kernel: &dyn TokenKernel, batch: &Batch<'_, Self>, params: &Params) -> Result<Output<Self>, CreditError>;
}

impl KernelFloat for f32 {
    fn run(kernel: &dyn TokenKernel, batch: &Batch<'_, Self>, params: &Params) -> Result<Output<Self>, CreditError> {
        kernel.run32(batch, params)
    }
}

impl KernelFloat for f64 {
    fn run(kernel: &dyn TokenKernel, batch: &Batch<'_, Self>, params: &Params) -> Result<Output<Self>, CreditError> {
        kernel.run64(batch, params)
    }
}

/// Implements [`TokenKernel`] for a scheme type from its generic kernel function, which takes
/// the scheme's knobs (`$knobs`, read from the text values here).
macro_rules! token_kernel {
    ($ty:ty, $kernel:ident, $knobs:ty, $uses_values:expr) => {
        impl $crate::credit::scheme::TokenKernel for $ty {
            fn run32(
                &self,
                batch: &$crate::credit::Batch<'_, f32>,
                params: &$crate::credit::Params,
            ) -> Result<$crate::credit::Output<f32>, $crate::credit::CreditError> {
                $kernel::<f32>(batch, &<$knobs as $crate::credit::params::declare::Declared>::of(params))
            }
            fn run64(
                &self,
                batch: &$crate::credit::Batch<'_, f64>,
                params: &$crate::credit::Params,
            ) -> Result<$crate::credit::Output<f64>, $crate::credit::CreditError> {
                $kernel::<f64>(batch, &<$knobs as $crate::credit::params::declare::Declared>::of(params))
            }
            fn preparation(&self, params: &$crate::credit::Params) -> $crate::credit::engine::inputs::Preparation {
                $crate::credit::engine::inputs::Prepared::preparation(
                    &<$knobs as $crate::credit::params::declare::Declared>::of(params),
                )
            }
            fn uses_values(&self) -> bool {
                $uses_values
            }
        }
    };
}
pub(crate) use token_kernel;

/// Declares a trainer-estimator scheme: its [`Declaration`] ([`scheme!`]), its [`Typed`] face
/// (support check, credit through its token kernel on the batch its knobs prepare, what makes it
/// batch-wide, from its knobs) and its [`TokenKernel`]. `kernel` is a generic function of the
/// batch and the knobs; `preparation` how the knobs prepare the batch (the common parameters'
/// alone when left out). `presets`: an array of them.
macro_rules! estimator {
    (
        $ty:ident, kernel: $kernel:ident, info: $info:expr, params: $knobs:ty,
        presets: $presets:expr, supports: $supports:expr
        $(, batch_wide: $batch_wide:expr)?
        $(, uses_values: $uses_values:expr)?
        $(, preparation: $preparation:expr)? $(,)?
    ) => {
        $crate::credit::scheme::scheme!(
            /// See the module documentation.
            $ty,
            knobs: $knobs,
            info: $info,
            presets: $presets,
            supports: $supports,
            credit: |run: &$crate::model::Run, knobs: &$knobs, _explain: bool| {
                $crate::credit::engine::inputs::compute_token_scheme(
                    INFO.id,
                    run,
                    &$crate::credit::engine::inputs::Prepared::preparation(knobs),
                    $crate::credit::scheme::estimator!(@uses_values $($uses_values)?),
                    |batch| $kernel::<f32>(batch, knobs),
                )
            },
            $(batch_wide: $batch_wide,)?
            token_kernel: kernel,
        );

        impl $crate::credit::engine::inputs::Prepared for $knobs {
            fn preparation(&self) -> $crate::credit::engine::inputs::Preparation {
                $crate::credit::scheme::estimator!(@preparation self $(, $preparation)?)
            }
        }

        $crate::credit::scheme::token_kernel!(
            $ty, $kernel, $knobs, $crate::credit::scheme::estimator!(@uses_values $($uses_values)?)
        );
    };
    (@preparation $knobs:ident) => {
        $crate::credit::engine::inputs::Preparation::of($knobs.common)
    };
    (@preparation $knobs:ident, $preparation:expr) => {{
        let preparation: fn(&_) -> $crate::credit::engine::inputs::Preparation = $preparation;
        preparation($knobs)
    }};
    (@uses_values) => {
        false
    };
    (@uses_values $uses_values:expr) => {
        $uses_values
    };
}
pub(crate) use estimator;
