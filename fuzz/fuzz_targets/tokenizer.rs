#![no_main]
// Target `tokenizer`: see vantage::fuzzing and fuzz/README.md.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    vantage::fuzzing::run("tokenizer", data);
});
