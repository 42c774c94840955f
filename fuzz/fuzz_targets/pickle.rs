#![no_main]
// Target `pickle`: see vantage::fuzzing and fuzz/README.md.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    vantage::fuzzing::run("pickle", data);
});
