//! What the core's test files share.

use cavity::backend::{Backend, DeviceChoice};

/// The backend `CAVITY_TEST_DEVICE` names (`cpu` by default, `cuda` on
/// the GPU machine).
pub fn test_backend() -> Backend {
    let choice: DeviceChoice = std::env::var("CAVITY_TEST_DEVICE")
        .unwrap_or_else(|_| "cpu".into())
        .parse()
        .expect("CAVITY_TEST_DEVICE");
    Backend::select(choice).expect("backend").0
}
