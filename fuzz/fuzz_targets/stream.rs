#![no_main]
// Target `stream`: see vantage::fuzzing and fuzz/README.md.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    vantage::fuzzing::run("stream", data);
});
