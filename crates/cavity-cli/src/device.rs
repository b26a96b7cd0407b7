//! The device a command runs on: its selection and its release.

use cavity::backend::{Backend, BackendError, DeviceChoice};

use crate::Result;
use crate::args::Device;

/// The driver's setting for the number of hardware work queues a CUDA
/// context opens.
const WORK_QUEUES: &str = "CUDA_DEVICE_MAX_CONNECTIONS";

/// Asks the CUDA driver for one hardware work queue per context
/// ([`WORK_QUEUES`] = 1) unless the environment already names a number.
///
/// Every command queues all its device work on one stream, so the seven
/// further queues the driver opens by default serve nothing; opening and
/// closing them is most of what a context's creation and teardown cost: on
/// an H200 (driver 580) creating the context took 0.101-0.143 s with the
/// default and 0.060-0.064 s with one queue, destroying it 0.055-0.074 s
/// and 0.025-0.026 s (issue 55, the 58th session's call A). `cuInit`
/// (about 0.1 s) does not change.
///
/// Must run before any thread starts: the environment is changed here and
/// read by the driver when the backend opens.
pub(crate) fn one_work_queue() {
    if std::env::var_os(WORK_QUEUES).is_none() {
        // SAFETY: called first in `main`, before this process starts any
        // thread, so nothing reads or writes the environment meanwhile.
        unsafe { std::env::set_var(WORK_QUEUES, "1") };
    }
}

/// The library's device choice of `device`.
pub(crate) fn choice(device: Device) -> DeviceChoice {
    match device {
        Device::Auto => DeviceChoice::Auto,
        Device::Cuda => DeviceChoice::Cuda,
        Device::Cpu => DeviceChoice::Cpu,
        Device::CpuRacing => DeviceChoice::CpuRacing,
    }
}

/// The backend of `device`, saying which it is.
pub(crate) fn backend(device: Device) -> Result<Backend> {
    let (b, note) = select(device)?;
    eprintln!("{note}");
    Ok(b)
}

/// The backend of `device` and the note saying which it is (for the
/// caller to print; a thread of its own can start it).
pub(crate) fn select(device: Device) -> std::result::Result<(Backend, String), BackendError> {
    Backend::select_with(choice(device), &|| {
        eprintln!(
            "compiling the GPU kernels for this device (once per GPU and driver, up to a minute; later runs load them from the cache)"
        )
    })
}

/// The device being given back on another thread while the caller writes
/// its output (`Backend::give_back`); dropping it waits for that, on every
/// path out of the caller, and warns where the release failed.
pub(crate) struct GivenBack(Option<cavity::backend::GivenBack>);

impl GivenBack {
    pub(crate) fn new(backend: Backend) -> GivenBack {
        GivenBack(Some(backend.give_back()))
    }
}

impl Drop for GivenBack {
    fn drop(&mut self) {
        if let Some(given) = self.0.take()
            && !given.wait()
        {
            eprintln!("warning: releasing the GPU failed (the output is not affected)");
        }
    }
}
