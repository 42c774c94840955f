//! How much memory a load may use. A load estimates what the run will need before it starts (from
//! the file's size) and checks what it holds as it goes; past the budget it stops with
//! [`LoadError::TooLarge`], which says what the run needs and what to do, instead of growing until
//! the operating system ends the app.
//!
//! The budget travels with the load, in its `LoadReport::budget`: natively the memory the machine
//! has available when the process starts, less a margin, or `VANTAGE_MEMORY_BUDGET`
//! (`source::OpenOptions`); on the web, the 4 GiB a wasm32 page can address, less a margin.

use super::LoadError;

/// The budget when the platform set none: what a wasm32 page can hold, less room for the app.
pub const DEFAULT_BUDGET: u64 = 3 << 30;

/// A byte count for people: "512 B", "3.4 MB", "1.07 GB".
pub fn size(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{:.1} kB", b / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", b / 1e6),
        _ => format!("{:.2} GB", b / 1e9),
    }
}

/// Parses a size such as `512M`, `2G`, `1.5GB` or `1000000` (bytes).
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let scale = match unit.trim().to_ascii_lowercase().trim_end_matches("ib").trim_end_matches('b') {
        "" => 1.0,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        "t" => 1e12,
        _ => return None,
    };
    let bytes = number * scale;
    (bytes.is_finite() && bytes >= 1.0).then_some(bytes as u64)
}

/// Checks a load that has read `done` of `total` bytes and holds `held` bytes: stops it when the
/// whole run, extrapolated from what it holds, would pass `budget`. Before anything is read
/// (`done` 0), `held` is the estimate itself.
pub fn check(budget: u64, held: u64, done: u64, total: u64) -> Result<(), LoadError> {
    let needed = if done == 0 || total <= done { held } else { (held as f64 * total as f64 / done as f64) as u64 };
    if needed <= budget && held <= budget {
        return Ok(());
    }
    let read = if done == 0 {
        "estimated before reading".to_owned()
    } else {
        format!("stopped after {:.0} % of the file", 100.0 * done as f64 / total.max(1) as f64)
    };
    Err(LoadError::TooLarge { needed: size(needed.max(held)), budget: size(budget), read })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_past_the_budget_is_refused_with_what_it_needs() {
        assert!(check(1000, 100, 10, 50).is_ok());
        let err = check(1000, 300, 10, 50).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("needs about 1.5 kB") && err.contains("1.0 kB") && err.contains("20 %"), "{err}");
        assert!(check(1000, 2000, 0, 50).is_err());
    }

    #[test]
    fn sizes_parse_and_print() {
        assert_eq!(parse_size("512M"), Some(512_000_000));
        assert_eq!(parse_size("1.5GB"), Some(1_500_000_000));
        assert_eq!(parse_size("2GiB"), Some(2_000_000_000));
        assert_eq!(parse_size("1000"), Some(1000));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(size(2_130_000_000), "2.13 GB");
    }
}
