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
    /// A zeroed vector (pooled for `f32`, see `credit::engine::pool`).
    fn zeroed(len: usize) -> Vec<Self>;
    /// An empty vector with room for `len` (pooled for `f32`).
    fn with_room(len: usize) -> Vec<Self>;
    /// A buffer of `len` values whatever they are, for output written in full before it is read
    /// (`pool::scratch` for `f32`).
    fn scratch(len: usize) -> Vec<Self>;
    /// Hands a buffer back to the pool (`f32`) or drops it.
    fn recycle(buffer: Vec<Self>);
}

macro_rules! impl_real {
    ($t:ty, $of:expr, $to32:expr, $zeroed:expr, $room:expr, $scratch:expr, $recycle:expr) => {
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
            fn zeroed(len: usize) -> Vec<Self> {
                $zeroed(len)
            }
            fn with_room(len: usize) -> Vec<Self> {
                $room(len)
            }
            fn scratch(len: usize) -> Vec<Self> {
                $scratch(len)
            }
            fn recycle(buffer: Vec<Self>) {
                $recycle(buffer);
            }
        }
    };
}

impl_real!(
    f32,
    |x: f64| x as f32,
    |x: f32| x,
    crate::credit::engine::pool::zeroed,
    crate::credit::engine::pool::take,
    crate::credit::engine::pool::scratch,
    crate::credit::engine::pool::give
);
impl_real!(
    f64,
    |x: f64| x,
    |x: f64| x as f32,
    |len: usize| vec![0.0; len],
    Vec::with_capacity,
    |len: usize| vec![0.0; len],
    drop
);
