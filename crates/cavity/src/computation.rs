//! Why a computation on the dynamic mesh failed, for the application
//! crates' errors: laying the mesh out, declaring or reading attributes,
//! the run itself, the GPU. An application's error wraps
//! [`ComputationError`] and converts each of its causes with
//! [`computation_error_from!`](crate::computation_error_from).

use crate::attributes::AttributeError;
use crate::backend::{BackendError, PartitionError};
use crate::dynamic::DynamicError;
use crate::rounds::RunError;
use crate::settings::{NamesSettings, Setting};

/// A failed computation on the dynamic mesh.
#[derive(Debug, thiserror::Error)]
pub enum ComputationError {
    /// Patching or laying the mesh out failed (the message names the
    /// setting).
    #[error(transparent)]
    Dynamic(#[from] DynamicError),
    /// A computation or reduction failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The GPU failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// An attribute could not be declared or read (a name taken by
    /// another attribute of the same layout).
    #[error(transparent)]
    Attribute(#[from] AttributeError),
}

impl NamesSettings for ComputationError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            ComputationError::Dynamic(e) => e.settings(),
            ComputationError::Run(e) => e.settings(),
            ComputationError::Backend(e) => e.settings(),
            ComputationError::Attribute(_) => Vec::new(),
        }
    }
}

crate::names_settings!(ComputationError);

/// Patching on a backend (`Backend::patched`) failed: a patch error as the
/// dynamic mesh's, a backend error as the backend's.
impl From<PartitionError> for ComputationError {
    fn from(e: PartitionError) -> Self {
        e.into_either()
    }
}

/// `computation_error_from!(AppError::Variant)`: `From` each cause of a
/// [`ComputationError`] (`DynamicError`, `RunError`, `BackendError`,
/// `PartitionError`, `AttributeError`) for `AppError`, wrapped in `Variant`, so that `?`
/// works on them in the application's code.
#[macro_export]
macro_rules! computation_error_from {
    ($app:ident :: $variant:ident) => {
        $crate::computation_error_from!(@one $app::$variant, $crate::dynamic::DynamicError);
        $crate::computation_error_from!(@one $app::$variant, $crate::rounds::RunError);
        $crate::computation_error_from!(@one $app::$variant, $crate::backend::BackendError);
        $crate::computation_error_from!(@one $app::$variant, $crate::backend::PartitionError);
        $crate::computation_error_from!(@one $app::$variant, $crate::attributes::AttributeError);
    };
    (@one $app:ident :: $variant:ident, $cause:ty) => {
        impl From<$cause> for $app {
            fn from(e: $cause) -> Self {
                $app::$variant($crate::computation::ComputationError::from(e))
            }
        }
    };
}
