//! The fuzz targets' entry points: [`Target`] names a reader and [`read`]
//! calls it on one input, the same call the corpus replay test
//! (`tests/tests/fuzz_corpus.rs`) makes for every committed input.

mod targets;

pub use targets::{SEPARATOR, Target, parts, read};
