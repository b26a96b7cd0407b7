//! Property tests' skipped cases, counted: a case a test lets pass
//! without checking its result (an operation that stops with a capacity
//! error it allows, such as out of patch slots) is printed and counted,
//! and the test fails once too many cases were skipped, so that a run
//! where nearly every case stops early cannot pass as a run that checked
//! them (issue 53 item 5).

use std::fmt::Display;
use std::sync::atomic::{AtomicU32, Ordering};

use proptest::test_runner::TestCaseError;

/// The cases one property test ran and skipped (a `static` beside the
/// test): at most `percent` % of the cases run so far may be skipped,
/// beyond the first `grace` skips.
pub struct Skips {
    name: &'static str,
    percent: u32,
    grace: u32,
    ran: AtomicU32,
    skipped: AtomicU32,
}

impl Skips {
    /// The counter of test `name` allowing `percent` % of its cases,
    /// and `grace` more, to be skipped.
    pub const fn new(name: &'static str, percent: u32, grace: u32) -> Skips {
        Skips {
            name,
            percent,
            grace,
            ran: AtomicU32::new(0),
            skipped: AtomicU32::new(0),
        }
    }

    /// Counts a case at its start.
    pub fn ran(&self) {
        self.ran.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts the current case as skipped for `why` and prints it (on
    /// stderr, which `cargo test` shows with the test's output).
    ///
    /// # Errors
    /// A failed case once more than the allowed share of the cases run so
    /// far were skipped.
    pub fn skip(&self, why: impl Display) -> Result<(), TestCaseError> {
        let skipped = self.skipped.fetch_add(1, Ordering::Relaxed) + 1;
        let ran = self.ran.load(Ordering::Relaxed).max(1);
        eprintln!("{}: case skipped ({skipped} of {ran}): {why}", self.name);
        if skipped > self.grace + ran * self.percent / 100 {
            return Err(TestCaseError::fail(format!(
                "{}: {skipped} of {ran} cases skipped (at most {} % and {} more): the test \
                 checks too little; last: {why}",
                self.name, self.percent, self.grace
            )));
        }
        Ok(())
    }
}
