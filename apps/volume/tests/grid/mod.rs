//! The perturbed grids of tetrahedra and hexahedra the volumetric suites
//! share.

use cavity_volume::CellVertices;

/// A grid of `n.0 × n.1 × n.2` unit cubes, each vertex moved by up to
/// `amplitude` along each axis by a hash of it and `seed`; each cube six
/// positively oriented tetrahedra (the Kuhn split) or, where `hex` says,
/// one hexahedron; cubes where `keep` says no are left out (holes,
/// cavities, several components). Vertex `(x, y, z)` is `x + (n.0 + 1)(y
/// + (n.1 + 1) z)`, unused ones included.
pub fn grid(
    n: [u32; 3],
    amplitude: f32,
    seed: u64,
    keep: impl Fn(u32) -> bool,
    hex: impl Fn(u32) -> bool,
) -> (Vec<[f32; 3]>, Vec<CellVertices>) {
    let [nx, ny, nz] = n;
    let id = |x: u32, y: u32, z: u32| x + (nx + 1) * (y + (ny + 1) * z);
    let mut positions = Vec::new();
    for z in 0..=nz {
        for y in 0..=ny {
            for x in 0..=nx {
                let i = id(x, y, z) as u64;
                let h = |k: u64| {
                    let v = (i * 2_654_435_761 + k * 40_503 + seed * 97)
                        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    amplitude * (((v >> 40) % 2001) as f32 / 1000.0 - 1.0)
                };
                positions.push([x as f32 + h(1), y as f32 + h(2), z as f32 + h(3)]);
            }
        }
    }
    let mut cells = Vec::new();
    let mut cube = 0;
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                let c = cube;
                cube += 1;
                if !keep(c) {
                    continue;
                }
                let v = |d: [u32; 3]| id(x + d[0], y + d[1], z + d[2]);
                if hex(c) {
                    cells.push(CellVertices::Hexahedron([
                        v([0, 0, 0]),
                        v([1, 0, 0]),
                        v([1, 1, 0]),
                        v([0, 1, 0]),
                        v([0, 0, 1]),
                        v([1, 0, 1]),
                        v([1, 1, 1]),
                        v([0, 1, 1]),
                    ]));
                    continue;
                }
                for [a, b, _] in [
                    [0, 1, 2],
                    [0, 2, 1],
                    [1, 0, 2],
                    [1, 2, 0],
                    [2, 0, 1],
                    [2, 1, 0],
                ] {
                    let mut p = [0u32; 3];
                    let first = {
                        p[a] = 1;
                        p
                    };
                    p[b] = 1;
                    let mut t = [v([0, 0, 0]), v(first), v(p), v([1, 1, 1])];
                    // The Kuhn path's parity decides the orientation.
                    if (a + 1) % 3 != b {
                        t.swap(1, 2);
                    }
                    cells.push(CellVertices::Tetrahedron(t));
                }
            }
        }
    }
    (positions, cells)
}
