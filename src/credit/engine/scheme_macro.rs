//! The boilerplate of a trainer-estimator scheme: info, parameters (the struct it declares them
//! in, `engine::declare`, with the common ones among them), presets, support check, and computing
//! through its token kernel.

/// Declares a unit struct implementing [`crate::credit::Scheme`] and [`crate::credit::TokenKernel`].
macro_rules! estimator {
    (
        $ty:ident, kernel: $kernel:ident, info: $info:expr, params: $knobs:ty,
        presets: [$($preset:expr),* $(,)?], supports: $supports:expr $(, batch_wide: $batch_wide:expr)?
        $(, uses_values: $uses_values:expr)?
    ) => {
        /// See the module documentation.
        pub struct $ty;

        static INFO: $crate::credit::SchemeInfo = $info;

        static PARAMS: std::sync::LazyLock<Vec<$crate::credit::ParamSpec>> = std::sync::LazyLock::new(<$knobs as $crate::credit::engine::declare::Declared>::specs);

        static PRESETS: &[$crate::credit::Preset] = &[$($preset),*];

        impl $crate::credit::Scheme for $ty {
            fn info(&self) -> &$crate::credit::SchemeInfo {
                &INFO
            }
            fn params(&self) -> &[$crate::credit::ParamSpec] {
                &PARAMS
            }
            fn presets(&self) -> &[$crate::credit::Preset] {
                PRESETS
            }
            fn supports(&self, run: &$crate::model::Run) -> $crate::credit::Support {
                let check: fn(&$crate::model::Run) -> $crate::credit::Support = $supports;
                check(run)
            }
            fn compute(
                &self,
                run: &$crate::model::Run,
                params: &$crate::credit::Params,
            ) -> Result<$crate::credit::Credit, $crate::credit::CreditError> {
                $crate::credit::engine::inputs::compute_token_scheme(self, self, run, params)
            }
            fn token_kernel(&self) -> Option<&dyn $crate::credit::TokenKernel> {
                Some(self)
            }
            $(
                fn batch_wide(&self, params: &$crate::credit::Params) -> Option<&'static str> {
                    let check: fn(&$crate::credit::Params) -> Option<&'static str> = $batch_wide;
                    check(params)
                }
            )?
        }

        $crate::credit::engine::inputs::token_kernel!($ty, $kernel $(, $uses_values)?);
    };
}
pub(crate) use estimator;
