//! The float type a kernel computes in: `f32` to reproduce trainers bit for bit, `f64` for reference.

use std::fmt::Debug;
use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub};

/// A float that kernels are generic over.
pub trait Real:
    Copy
    + Debug
    + Default
    + PartialOrd
    + Add<Output = Self>
    + AddAssign
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + Send
    + Sync
    + 'static
    + crate::credit::data::pool::Buffers
{
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// From an `f64` (rounded for `f32`).
    fn of(x: f64) -> Self;
    /// From an `f32` (exact).
    fn of32(x: f32) -> Self;
    /// To `f64` (exact).
    fn f64(self) -> f64;
    /// To `f32` (rounded for `f64`).
    fn f32(self) -> f32;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Exponential.
    fn exp(self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// Whether NaN.
    fn is_nan(self) -> bool;
    /// The larger of two values (NaN-ignoring like `f32::max`).
    fn max(self, other: Self) -> Self;
    /// The smaller of two values.
    fn min(self, other: Self) -> Self;
}

macro_rules! impl_real {
    ($t:ty, $of:expr, $to32:expr) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline]
            fn of(x: f64) -> Self {
                $of(x)
            }
            #[inline]
            fn of32(x: f32) -> Self {
                Self::from(x)
            }
            #[inline]
            fn f64(self) -> f64 {
                f64::from(self)
            }
            #[inline]
            fn f32(self) -> f32 {
                $to32(self)
            }
            #[inline]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline]
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            #[inline]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline]
            fn max(self, other: Self) -> Self {
                <$t>::max(self, other)
            }
            #[inline]
            fn min(self, other: Self) -> Self {
                <$t>::min(self, other)
            }
        }
    };
}

impl_real!(f32, |x: f64| x as f32, |x: f32| x);
impl_real!(f64, |x: f64| x, |x: f64| x as f32);
