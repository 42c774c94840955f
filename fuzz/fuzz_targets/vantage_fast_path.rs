#![no_main]
// Target `vantage_fast_path`: see vantage::fuzzing and fuzz/README.md.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    vantage::fuzzing::run("vantage_fast_path", data);
});
