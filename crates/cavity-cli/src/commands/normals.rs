//! `cavity normals`: area-weighted vertex normals, written with the mesh
//! (PLY `nx ny nz`, OBJ `vn`, OFF `NOFF`; STL, which holds one normal per
//! facet and none per vertex, is refused).

use cavity::io::{Format, write_mesh};
use std::path::Path;

use crate::Result;
use crate::args::Common;
use crate::output::sayln;
use crate::stages::Clock;

/// Errors when `format` cannot hold per-vertex normals (STL), before any
/// work: the normals would be dropped without a word.
fn refuse_without_normals(output: &Path, format: Format) -> Result<()> {
    if let Format::Stl(_) = format {
        return Err(format!(
            "{}: STL holds one normal per facet and none per vertex, so the vertex normals would be lost: write a .ply (nx ny nz), .obj (vn) or .off (NOFF)",
            output.display()
        )
        .into());
    }
    Ok(())
}

pub(crate) fn normals(input: Option<&Path>, output: &Path, common: &Common) -> Result<()> {
    refuse_without_normals(output, Format::from_path(output)?)?;
    let mut clock = Clock::start();
    let (format, read, _, backend) = super::open_on(input, output, common.device, &mut clock)?;
    let normals =
        cavity_normals::vertex_normals_on(&read.mesh, &read.topology, common.patch_size, &backend)?;
    drop(read.topology);
    let mesh = read.mesh;
    let seconds = clock.device("normals", &backend);
    let device = backend.name();
    let released = clock.release(backend);
    let zero = normals.iter().filter(|n| **n == [0.0; 3]).count();
    if zero > 0 {
        eprintln!(
            "warning: {zero} vertices have no normal (no face, or only faces of zero area): written as (0, 0, 0)"
        );
    }
    write_mesh(output, &mesh, Some(&normals), format)?;
    clock.host("write");
    drop(released);
    sayln!(
        "normals of {} vertices on {} in {:.3} ms (with patching and transfers); wrote {}",
        mesh.num_vertices(),
        device,
        seconds * 1e3,
        output.display()
    );
    sayln!("{}", clock.line());
    Ok(())
}
