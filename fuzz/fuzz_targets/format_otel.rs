#![no_main]
// Target `format_otel`: see vantage::fuzzing and fuzz/README.md.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    vantage::fuzzing::run("format_otel", data);
});
