//! Fuzzes the reader of `Target::Off2d` (docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = cavity_fuzz::read(cavity_fuzz::Target::Off2d, data);
});
