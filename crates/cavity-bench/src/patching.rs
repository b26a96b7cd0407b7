//! The patching benchmark (`cavity bench patching`, issue 55): a mesh's
//! face partition and its patch structures on the device, against the
//! host's build of the same partition (`PatchedMesh::from_partition`,
//! parallel over the CPU's cores) measured in the same run, with the whole
//! `Backend::patched` a command runs.

use std::error::Error;

use cavity::backend::Backend;
use cavity::topology::Topology;
use cavity::{Kind, PatchedMesh, TriMesh, patcher};

use crate::harness::{Devices, MeshBench, Table, fixed, wall_median};

/// The patching benchmark's settings.
#[derive(Clone, Copy, Debug)]
pub struct PatchingBench {
    /// The largest patch, in faces.
    pub patch_size: u32,
    /// Timed runs after one warm-up (medians are reported).
    pub reps: usize,
}

impl MeshBench for PatchingBench {
    fn run(
        &self,
        meshes: &[(String, TriMesh)],
        backend: &Backend,
        progress: &dyn Fn(&str),
    ) -> Result<String, Box<dyn Error>> {
        let mut table = Table::new(
            &[
                &Devices::of(backend).line(),
                &format!(
                    "patch size {}; wall-clock medians of {} runs after a warm-up, seconds",
                    self.patch_size, self.reps
                ),
            ],
            &[
                "mesh",
                "faces",
                "patches",
                "partition",
                "host build",
                "device build",
                "host / device",
                "whole patching",
                "B/face",
            ],
        );
        for (name, mesh) in meshes {
            progress(&format!("{name}: topology"));
            let topo = Topology::new(mesh);
            let seed = patcher::DEFAULT_SEED;
            progress(&format!("{name}: partition"));
            let (part, partition) = wall_median(1, self.reps, || {
                backend.partition(&topo, mesh.num_faces(), self.patch_size, seed)
            })?;
            progress(&format!("{name}: the host's build"));
            let (host, host_s) = wall_median(1, self.reps, || {
                PatchedMesh::from_partition(mesh, &topo, &part, self.patch_size)
            })?;
            progress(&format!("{name}: the device's build"));
            let (device, device_s) = wall_median(1, self.reps, || {
                backend.build_patches(mesh, &topo, &part, self.patch_size)
            })?;
            let maps_agree = Kind::ALL.iter().all(|&k| {
                host.to_input(k) == device.to_input(k) && host.to_handle(k) == device.to_handle(k)
            });
            if host.patches() != device.patches()
                || host.fe() != device.fe()
                || host.ev() != device.ev()
                || host.ribbon() != device.ribbon()
                || host.stash() != device.stash()
                || host.masks() != device.masks()
                || !maps_agree
            {
                return Err(format!("{name}: the device's build differs from the host's").into());
            }
            progress(&format!("{name}: the whole patching"));
            let (_, whole) = wall_median(1, self.reps, || {
                backend.patched(mesh, &topo, self.patch_size)
            })?;
            table.row(vec![
                name.clone(),
                mesh.num_faces().to_string(),
                device.num_patches().to_string(),
                fixed(Some(partition), 3),
                fixed(Some(host_s), 3),
                fixed(Some(device_s), 3),
                format!("{:.1}x", host_s / device_s),
                fixed(Some(whole), 3),
                format!("{:.1}", device.stats().bytes_per_face),
            ]);
        }
        Ok(table.render())
    }
}
