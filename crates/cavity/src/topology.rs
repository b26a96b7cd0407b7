//! Global connectivity of an indexed triangle mesh, built once on the host
//! as the patcher's input: unique edges (EV), per-face edges (FE with
//! orientation), and the CSR incidences VF and EF.

use rayon::prelude::*;

use crate::TriMesh;

/// Input-order connectivity. Edges are the unique unordered vertex pairs,
/// numbered in increasing `(min, max)` order.
#[derive(Clone, Debug)]
pub struct Topology {
    /// `ev[e] = [a, b]` with `a < b` (input vertex indices).
    pub ev: Vec<[u32; 2]>,
    /// `fe[f][k]` = edge from corner `k` to corner `k + 1` of face `f`.
    pub fe: Vec<[u32; 3]>,
    /// VF: faces of vertex `v` are `vf[vf_offsets[v]..vf_offsets[v + 1]]`.
    pub vf_offsets: Vec<u32>,
    /// VF values.
    pub vf: Vec<u32>,
    /// EF: faces of edge `e` are `ef[ef_offsets[e]..ef_offsets[e + 1]]`.
    pub ef_offsets: Vec<u32>,
    /// EF values.
    pub ef: Vec<u32>,
}

impl Topology {
    /// Builds the connectivity of `mesh`, whose indices must be in range.
    pub fn new(mesh: &TriMesh) -> Topology {
        let nv = mesh.num_vertices();
        let mut keys: Vec<(u64, u32)> = mesh
            .faces
            .par_iter()
            .enumerate()
            .flat_map_iter(|(f, t)| {
                (0..3).map(move |k| {
                    let (a, b) = (t[k], t[(k + 1) % 3]);
                    let key = ((a.min(b) as u64) << 32) | a.max(b) as u64;
                    (key, (3 * f + k) as u32)
                })
            })
            .collect();
        keys.par_sort_unstable();
        let mut ev = Vec::new();
        let mut fe = vec![[0u32; 3]; mesh.num_faces()];
        let mut last = u64::MAX;
        for &(key, corner) in &keys {
            if key != last {
                ev.push([(key >> 32) as u32, key as u32]);
                last = key;
            }
            fe[corner as usize / 3][corner as usize % 3] = (ev.len() - 1) as u32;
        }
        let (vf_offsets, vf) = transpose3(nv, &mesh.faces);
        let (ef_offsets, ef) = transpose3(ev.len(), &fe);
        Topology {
            ev,
            fe,
            vf_offsets,
            vf,
            ef_offsets,
            ef,
        }
    }

    /// Faces incident to vertex `v`.
    pub fn vertex_faces(&self, v: u32) -> &[u32] {
        &self.vf[self.vf_offsets[v as usize] as usize..self.vf_offsets[v as usize + 1] as usize]
    }

    /// Faces incident to edge `e`.
    pub fn edge_faces(&self, e: u32) -> &[u32] {
        &self.ef[self.ef_offsets[e as usize] as usize..self.ef_offsets[e as usize + 1] as usize]
    }
}

/// Transposes rows of three targets each into a CSR over `targets`:
/// row `t` of the result lists, in increasing order, the rows containing `t`.
pub fn transpose3(targets: usize, rows: &[[u32; 3]]) -> (Vec<u32>, Vec<u32>) {
    let mut offsets = vec![0u32; targets + 1];
    for row in rows {
        for &t in row {
            offsets[t as usize + 1] += 1;
        }
    }
    for i in 0..targets {
        offsets[i + 1] += offsets[i];
    }
    let mut cursor = offsets.clone();
    let mut values = vec![0u32; offsets[targets] as usize];
    for (r, row) in rows.iter().enumerate() {
        for &t in row {
            values[cursor[t as usize] as usize] = r as u32;
            cursor[t as usize] += 1;
        }
    }
    (offsets, values)
}
