//! Property tests' skipped cases, counted: a case a test lets pass
//! without checking its result (an operation that stops with a capacity
//! error it allows, such as out of patch slots) is printed and counted,
//! and the test fails once too many cases were skipped, so that a run
//! where nearly every case stops early cannot pass as a run that checked
//! them; the test ends with [`Skips::summary`], so that its output says
//! how many cases it checked (issue 53 item 5).

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
        if self.too_many(skipped, ran) {
            return Err(TestCaseError::fail(format!(
                "{}: {skipped} of {ran} cases skipped (at most {} % and {} more): the test \
                 checks too little; last: {why}",
                self.name, self.percent, self.grace
            )));
        }
        Ok(())
    }

    /// Prints, at the end of the test, how many of its cases ran and how
    /// many were skipped (on stderr, with `--nocapture` or a failure), and
    /// returns the number checked.
    ///
    /// # Panics
    /// When no case ran, or when more than the allowed share was skipped
    /// (a failed case says so first; this holds if the cases were counted
    /// apart from [`Skips::skip`]).
    pub fn summary(&self) -> u32 {
        let (ran, skipped) = (
            self.ran.load(Ordering::Relaxed),
            self.skipped.load(Ordering::Relaxed),
        );
        eprintln!(
            "{}: {} of {ran} cases checked, {skipped} skipped (at most {} % and {} more)",
            self.name,
            ran - skipped,
            self.percent,
            self.grace
        );
        assert!(ran > 0, "{}: no case ran", self.name);
        assert!(
            !self.too_many(skipped, ran),
            "{}: {skipped} of {ran} cases skipped",
            self.name
        );
        ran - skipped
    }

    /// Whether `skipped` of `ran` cases are more than allowed.
    fn too_many(&self, skipped: u32, ran: u32) -> bool {
        skipped > self.grace + ran * self.percent / 100
    }
}
