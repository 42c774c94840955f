#![no_main]
// Target `format_open_instruct`: see vantage::fuzzing and fuzz/README.md.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    vantage::fuzzing::run("format_open_instruct", data);
});
