#![no_main]
// Target `detect`: see vantage::fuzzing and fuzz/README.md.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    vantage::fuzzing::run("detect", data);
});
