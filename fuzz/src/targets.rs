//! The readers under fuzzing, one [`Target`] each, and how an input is
//! handed to them: whole, or split into the files of a multi-file format
//! at [`SEPARATOR`]. Shared by the fuzz crate (`fuzz/`) and the corpus
//! replay test of `cavity-tests` (`tests/tests/fuzz_corpus.rs`), which
//! includes this file, so that both call the same entry points.

use std::path::Path;

use cavity::io::{Format, PlyEncoding, StlEncoding, read_mesh_from};

/// The line that separates the files of a multi-file format in one input
/// (TetGen's `.node` and `.ele`; Triangle's `.node`, `.ele` and `.neigh`).
pub const SEPARATOR: &[u8] = b"\n%%%%\n";

/// A reader under fuzzing; its [`Target::name`] is the fuzz target's and
/// the corpus folder's (`fuzz/corpus/<name>/`, packed as
/// `fuzz/corpus/<name>.tar.gz`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// PLY, seeded with ASCII files (the reader detects the encoding).
    PlyAscii,
    /// PLY, seeded with binary files of both byte orders.
    PlyBinary,
    /// Wavefront OBJ.
    Obj,
    /// OFF surfaces.
    Off,
    /// STL, seeded with ASCII files (the reader detects the encoding).
    StlAscii,
    /// STL, seeded with binary files.
    StlBinary,
    /// MEDIT `.mesh`.
    Medit,
    /// TetGen `.node` and `.ele`, split at [`SEPARATOR`].
    TetGen,
    /// Gmsh `.msh`, seeded with version 2.2 files (ASCII and binary).
    Gmsh22,
    /// Gmsh `.msh`, seeded with version 4.1 files (ASCII and binary).
    Gmsh41,
    /// Legacy VTK `.vtk`.
    Vtk,
    /// Triangle's `.node`, `.ele` and optional `.neigh`, split at
    /// [`SEPARATOR`] (Polylla's input).
    Triangle,
    /// 2D OFF triangulations (Polylla's input).
    Off2d,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 13] = [
        Target::PlyAscii,
        Target::PlyBinary,
        Target::Obj,
        Target::Off,
        Target::StlAscii,
        Target::StlBinary,
        Target::Medit,
        Target::TetGen,
        Target::Gmsh22,
        Target::Gmsh41,
        Target::Vtk,
        Target::Triangle,
        Target::Off2d,
    ];

    /// The fuzz target's name, that of its corpus folder.
    pub fn name(self) -> &'static str {
        match self {
            Target::PlyAscii => "ply_ascii",
            Target::PlyBinary => "ply_binary",
            Target::Obj => "obj",
            Target::Off => "off",
            Target::StlAscii => "stl_ascii",
            Target::StlBinary => "stl_binary",
            Target::Medit => "medit",
            Target::TetGen => "tetgen",
            Target::Gmsh22 => "gmsh22",
            Target::Gmsh41 => "gmsh41",
            Target::Vtk => "vtk",
            Target::Triangle => "triangle",
            Target::Off2d => "off2d",
        }
    }
}

/// The first `N - 1` pieces of `data` before a [`SEPARATOR`] each, and
/// the rest; pieces past the separators present are `None`.
pub fn parts<const N: usize>(data: &[u8]) -> [Option<&[u8]>; N] {
    let mut out = [None; N];
    let mut rest = Some(data);
    for (k, slot) in out.iter_mut().enumerate() {
        let Some(r) = rest else { break };
        let cut = (k + 1 < N)
            .then(|| r.windows(SEPARATOR.len()).position(|w| w == SEPARATOR))
            .flatten();
        match cut {
            Some(at) => {
                *slot = Some(&r[..at]);
                rest = Some(&r[at + SEPARATOR.len()..]);
            }
            None => {
                *slot = Some(r);
                rest = None;
            }
        }
    }
    out
}

/// Runs `target`'s reader on `data`: `Ok` when it read a mesh, the error's
/// message when it refused the input. A panic or abort here is a bug.
pub fn read(target: Target, data: &[u8]) -> Result<(), String> {
    let surface = |format| {
        read_mesh_from(data, format, "input")
            .map(drop)
            .map_err(|e| e.to_string())
    };
    let path = Path::new;
    match target {
        Target::PlyAscii | Target::PlyBinary => surface(Format::Ply(PlyEncoding::Ascii)),
        Target::Obj => surface(Format::Obj),
        Target::Off => surface(Format::Off),
        Target::StlAscii | Target::StlBinary => surface(Format::Stl(StlEncoding::Ascii)),
        Target::Medit => cavity_volume::io::medit::read_bytes(path("input.mesh"), data)
            .map(drop)
            .map_err(|e| e.to_string()),
        Target::TetGen => {
            let [node, ele] = parts::<2>(data);
            cavity_volume::io::tetgen::read_bytes(
                (path("input.node"), node.unwrap_or_default()),
                (path("input.ele"), ele.unwrap_or_default()),
            )
            .map(drop)
            .map_err(|e| e.to_string())
        }
        Target::Gmsh22 | Target::Gmsh41 => {
            cavity_volume::io::gmsh::read_bytes(path("input.msh"), data)
                .map(drop)
                .map_err(|e| e.to_string())
        }
        Target::Vtk => cavity_volume::io::vtk::read_bytes(path("input.vtk"), data)
            .map(drop)
            .map_err(|e| e.to_string()),
        Target::Triangle => {
            let [node, ele, neigh] = parts::<3>(data);
            cavity_polylla::io::read_triangle_bytes(
                (path("input.node"), node.unwrap_or_default()),
                (path("input.ele"), ele.unwrap_or_default()),
                neigh.map(|n| (path("input.neigh"), n)),
            )
            .map(drop)
            .map_err(|e| e.to_string())
        }
        Target::Off2d => cavity_polylla::io::read_off_bytes(path("input.off"), data)
            .map(drop)
            .map_err(|e| e.to_string()),
    }
}
