//! The device a command runs on: its selection and its release.

use cavity::backend::{Backend, BackendError, DeviceChoice};

use crate::Result;
use crate::args::Device;

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
/// its output (the driver takes about 0.06 s to tear a CUDA context
/// down); dropping it waits for that, on every path out of the caller.
pub(crate) struct GivenBack(Option<std::thread::JoinHandle<()>>);

impl GivenBack {
    pub(crate) fn new(backend: Backend) -> GivenBack {
        GivenBack(Some(std::thread::spawn(move || drop(backend))))
    }
}

impl Drop for GivenBack {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take()
            && handle.join().is_err()
        {
            eprintln!("warning: releasing the GPU failed (the output is not affected)");
        }
    }
}
