#![no_main]
// Target `format_claude_code`: see vantage::fuzzing and fuzz/README.md.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    vantage::fuzzing::run("format_claude_code", data);
});
