//! `cavity normals`: area-weighted vertex normals, written with the mesh.

use std::path::Path;
use std::time::Instant;

use cavity::io::write_mesh;

use crate::Result;
use crate::args::Common;
use crate::device::GivenBack;
use crate::output::sayln;

pub(crate) fn normals(input: Option<&Path>, output: &Path, common: &Common) -> Result<()> {
    let (format, mesh, backend) = super::open(input, output, common)?;
    let t = Instant::now();
    let normals = cavity_normals::vertex_normals(&mesh, common.patch_size, &backend)?;
    let seconds = t.elapsed().as_secs_f64();
    let device = backend.name();
    let released = GivenBack::new(backend);
    let zero = normals.iter().filter(|n| **n == [0.0; 3]).count();
    if zero > 0 {
        eprintln!(
            "warning: {zero} vertices have no normal (no face, or only faces of zero area): written as (0, 0, 0)"
        );
    }
    write_mesh(output, &mesh, Some(&normals), format)?;
    drop(released);
    sayln!(
        "normals of {} vertices on {} in {:.3} ms (with patching and transfers); wrote {}",
        mesh.num_vertices(),
        device,
        seconds * 1e3,
        output.display()
    );
    Ok(())
}
