//! Kernel parameters on the way to the GPU: a declared kernel's
//! [`Kernel::Params`](cavity_device::kernel::Kernel::Params) is a tuple of
//! kernel parameters, each plain data (`bytemuck::Pod`) or an array view
//! ([`KernelParam`], checked at compile time), pushed to a cudarc launch
//! one by one; zero-sized elements are no parameters of the PTX entry and
//! are skipped.

use bytemuck::TransparentWrapper;
use cudarc::driver::{DeviceRepr, LaunchArgs, PushKernelArg};

use cavity_device::kernel::KernelParam;

/// A kernel parameter on its way to a launch.
#[repr(transparent)]
#[derive(Clone, Copy, TransparentWrapper)]
pub struct ParamArg<T>(T);

// SAFETY: `T`'s bytes are those the PTX parameter of the same `repr(C)`
// type expects (`KernelParam`), passed by value.
unsafe impl<T: KernelParam> DeviceRepr for ParamArg<T> {}

/// A parameter tuple that can be pushed to a launch.
pub trait KernelArgs {
    /// Pushes every non-zero-sized element, in order.
    fn push<'a>(&'a self, launch: &mut LaunchArgs<'a>);
    /// The byte sizes of the non-zero-sized elements, in order: the entry
    /// point's parameters.
    fn sizes() -> Vec<usize>;
}

/// Pushes `value` unless it is zero-sized.
fn push_one<'a, T: KernelParam>(launch: &mut LaunchArgs<'a>, value: &'a T) {
    if size_of::<T>() > 0 {
        launch.arg(ParamArg::wrap_ref(value));
    }
}

/// Implements [`KernelArgs`] for tuples of the given arities.
macro_rules! tuple_args {
    ($(($($t:ident $i:tt),+))+) => {$(
        impl<$($t: KernelParam),+> KernelArgs for ($($t,)+) {
            fn push<'a>(&'a self, launch: &mut LaunchArgs<'a>) {
                $(push_one(launch, &self.$i);)+
            }
            fn sizes() -> Vec<usize> {
                [$(size_of::<$t>()),+].into_iter().filter(|&n| n > 0).collect()
            }
        }
    )+};
}

tuple_args! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10)
}

#[cfg(test)]
mod tests {
    use cavity_device::dynamic::layout::RawDynamicMesh;

    use super::KernelArgs;

    /// An application without parameters (as Delaunay's).
    #[derive(Clone, Copy, bytemuck::Zeroable, bytemuck::Pod)]
    #[repr(C)]
    struct NoParameters;

    #[test]
    fn sizes_leave_zero_sized_parameters_out() {
        type Update = (RawDynamicMesh, u32, NoParameters);
        assert_eq!(Update::sizes(), vec![size_of::<RawDynamicMesh>(), 4]);
        assert_eq!(<(u64, u32, [f32; 3])>::sizes(), vec![8, 4, 12]);
    }
}
