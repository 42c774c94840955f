//! The one place with color literals and spacing: text colors, colormaps, role colors.
#![expect(clippy::disallowed_methods, reason = "colors are declared here and only here")]

use egui::Color32;

/// Text color for warnings.
pub const WARNING: Color32 = Color32::from_rgb(230, 160, 40);
/// Text color for errors.
pub const ERROR: Color32 = Color32::from_rgb(230, 80, 70);
/// Muted text (labels beside values).
pub const MUTED: Color32 = Color32::from_gray(140);
/// Cells and nodes without a value.
pub const MISSING: Color32 = Color32::from_gray(48);
/// Outline of the selected cell or node.
pub const SELECTED: Color32 = Color32::from_rgb(255, 215, 0);
/// Tree edges.
pub const EDGE: Color32 = Color32::from_gray(110);
/// Badge of a successful leaf.
pub const SUCCESS: Color32 = Color32::from_rgb(70, 180, 90);
/// Badge of a failed leaf.
pub const FAILURE: Color32 = Color32::from_rgb(210, 70, 70);
/// Text on colored token backgrounds.
pub const TOKEN_TEXT: Color32 = Color32::from_gray(10);
/// Token text on a dark background.
pub const TOKEN_TEXT_LIGHT: Color32 = Color32::from_gray(245);
/// Bookmark marker.
pub const BOOKMARK: Color32 = Color32::from_rgb(90, 170, 250);
/// A label's name (docs/LABELS.md), in the inspector and the tables split by label.
pub const LABEL: Color32 = Color32::from_rgb(200, 140, 240);

/// Larger heading size for the run name.
pub const TITLE_SIZE: f32 = 20.0;
/// Text scale in meeting mode.
pub const MEETING_ZOOM: f32 = 1.5;

/// Colormaps, as rerun's `re_renderer` colormap enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colormap {
    /// Blue – white – red, centered at 0: signed credit.
    Diverging,
    /// Dark purple to yellow (viridis): rewards, scores, probabilities.
    Sequential,
}

impl Colormap {
    /// Every colormap.
    pub const ALL: [Self; 2] = [Self::Diverging, Self::Sequential];

    /// The color of `t` in `[0, 1]` (clamped; `NaN` gives [`MISSING`]).
    pub fn at(self, t: f32) -> Color32 {
        if t.is_nan() {
            return MISSING;
        }
        let t = t.clamp(0.0, 1.0);
        let stops: &[[u8; 3]] = match self {
            Self::Diverging => &[[33, 102, 172], [103, 169, 207], [247, 247, 247], [239, 138, 98], [178, 24, 43]],
            Self::Sequential => &[[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]],
        };
        let x = t * (stops.len() - 1) as f32;
        let i = (x.floor() as usize).min(stops.len() - 2);
        let f = x - i as f32;
        let mix = |a: u8, b: u8| (f32::from(a) + (f32::from(b) - f32::from(a)) * f).round() as u8;
        let (a, b) = (stops[i], stops[i + 1]);
        Color32::from_rgb(mix(a[0], b[0]), mix(a[1], b[1]), mix(a[2], b[2]))
    }
}

/// The largest |credit| that still counts as none at all (rounding noise of a 0).
pub const FLAT_CREDIT: f32 = 1e-6;

/// How values map to colors: a colormap over a range (symmetric around 0 for credit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValueColors {
    /// The colormap.
    pub map: Colormap,
    /// Value at the low end.
    pub lo: f32,
    /// Value at the high end.
    pub hi: f32,
}

impl ValueColors {
    /// Signed credit: diverging, centered at 0, symmetric over the largest magnitude.
    pub fn credit(range: (f32, f32)) -> Self {
        let m = range.0.abs().max(range.1.abs()).max(FLAT_CREDIT);
        Self { map: Colormap::Diverging, lo: -m, hi: m }
    }

    /// A field: sequential over its range.
    pub fn field(range: (f32, f32)) -> Self {
        let hi = if range.1 > range.0 { range.1 } else { range.0 + 1.0 };
        Self { map: Colormap::Sequential, lo: range.0, hi }
    }

    /// Whether every value is 0 (a credit range no wider than rounding): the legend says so
    /// instead of showing a range of noise.
    pub fn is_flat(&self) -> bool {
        self.map == Colormap::Diverging && self.hi <= FLAT_CREDIT
    }

    /// The color of `v`.
    pub fn color(&self, v: f32) -> Color32 {
        self.map.at((v - self.lo) / (self.hi - self.lo))
    }
}

/// Categorical colors for role labels (progress, exploration, infrastructure, regression first).
pub fn category(index: usize) -> Color32 {
    const PALETTE: [[u8; 3]; 8] = [
        [76, 175, 80],
        [66, 165, 245],
        [158, 158, 158],
        [239, 83, 80],
        [255, 167, 38],
        [171, 71, 188],
        [38, 198, 218],
        [212, 225, 87],
    ];
    let [r, g, b] = PALETTE[index % PALETTE.len()];
    Color32::from_rgb(r, g, b)
}

/// Translucent fill behind the heatmap's hovered row.
pub fn highlight() -> Color32 {
    Color32::from_rgba_unmultiplied(255, 255, 255, 40)
}
