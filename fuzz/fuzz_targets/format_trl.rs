#![no_main]
// Target `format_trl`: see vantage::fuzzing and fuzz/README.md. polars panics on some damaged files;
// vantage catches those panics where it calls polars (load::formats::vantage_parquet::read_frame), so the
// abort-on-panic hook libFuzzer installs is put back to the default one here: a panic is still a
// finding when it reaches the target, not where polars raises it and vantage catches it.
libfuzzer_sys::fuzz_target!(
    init: {
        drop(std::panic::take_hook());
    },
    |data: &[u8]| {
        vantage::fuzzing::run("format_trl", data);
    }
);
