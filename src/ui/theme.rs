//! The one place with color literals and spacing.
#![expect(clippy::disallowed_methods, reason = "colors are declared here and only here")]

use egui::Color32;

/// Text color for warnings.
pub const WARNING: Color32 = Color32::from_rgb(230, 160, 40);
/// Text color for errors.
pub const ERROR: Color32 = Color32::from_rgb(230, 80, 70);
/// Muted text (labels beside values).
pub const MUTED: Color32 = Color32::from_gray(140);

/// Larger heading size for the run name.
pub const TITLE_SIZE: f32 = 20.0;
