//! Fuzzes the reader of `Target::Medit` (docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = cavity_fuzz::read(cavity_fuzz::Target::Medit, data);
});
