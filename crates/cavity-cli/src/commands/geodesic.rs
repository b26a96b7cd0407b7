//! `cavity geodesic`: geodesic distance from source vertices, written with
//! the mesh (a PLY vertex property, or a column file beside OBJ and OFF;
//! STL, without a vertex list, is refused).

use std::path::{Path, PathBuf};

use cavity::io::{
    Format, VertexData, check_writable, check_writable_file, stage_mesh, write_column,
    write_mesh_with,
};
use cavity_geodesic::GeodesicSettings;

use crate::Result;
use crate::args::Common;
use crate::input::check_input;
use crate::output::{refuse_overwrite, sayln};
use crate::stages::Clock;

/// The file beside a mesh `output` in a format without vertex properties
/// that holds the distances: its name with "-distance.txt" for the
/// extension.
pub(crate) fn column_path(output: &Path) -> PathBuf {
    let stem = output.file_stem().unwrap_or_default().to_string_lossy();
    output.with_file_name(format!("{stem}-distance.txt"))
}

pub(crate) fn geodesic(
    input: Option<&Path>,
    output: &Path,
    sources: &[u32],
    settings: &GeodesicSettings,
    common: &Common,
) -> Result<()> {
    let mut clock = Clock::start();
    settings.check()?;
    if let Some(input) = input {
        check_input(input)?;
    }
    refuse_overwrite(input, output)?;
    let format = check_writable(output)?;
    if let Format::Stl(_) = format {
        return Err(format!(
            "{}: STL has no vertex list for the distances to follow: write a .ply (the distance as a vertex property), .obj or .off",
            output.display()
        )
        .into());
    }
    let column = (!matches!(format, Format::Ply(_))).then(|| column_path(output));
    if let Some(column) = &column {
        refuse_overwrite(input, column)?;
        check_writable_file(column)?;
    }
    let (read, _, backend) = super::read_on(input, common.device, &mut clock)?;
    let (distance, report) = cavity_geodesic::geodesic_distance_on(
        &read.mesh,
        &read.topology,
        sources,
        settings,
        &backend,
    )?;
    drop(read.topology);
    let mesh = read.mesh;
    let seconds = clock.device("geodesic", &backend);
    clock.part("of which propagation", report.propagation_seconds);
    let released = clock.release(backend);
    match &column {
        None => {
            let data = VertexData {
                normals: None,
                scalar: Some(("distance", &distance)),
            };
            write_mesh_with(output, &mesh, data, format)?;
        }
        Some(column) => {
            // Both or neither: the mesh is renamed into place once the
            // column is.
            let staged = stage_mesh(output, &mesh, None, format)?;
            write_column(column, &distance)?;
            staged.commit()?;
        }
    }
    clock.host("write");
    drop(released);
    let largest = distance
        .iter()
        .copied()
        .filter(|d| d.is_finite())
        .fold(0.0f32, f32::max);
    if report.unreachable > 0 {
        eprintln!(
            "warning: {} vertices are not connected to a source (another component, or no face): distance inf",
            report.unreachable
        );
    }
    sayln!(
        "geodesic distance of {} vertices from {} source(s), largest {}: {} toplesets, {} band passes and {} settling passes ({:.3} ms) on {} in {:.3} ms (with toplesets, patching and transfers); wrote {}{}",
        mesh.num_vertices(),
        sources.len(),
        cavity::units::significant(f64::from(largest), 4),
        report.toplesets,
        report.passes,
        report.settling_passes,
        report.propagation_seconds * 1e3,
        report.device,
        seconds * 1e3,
        output.display(),
        column.map_or(String::new(), |c| format!(
            " and the distances, one per vertex and line, to {}",
            c.display()
        ))
    );
    sayln!("{}", clock.line());
    Ok(())
}
