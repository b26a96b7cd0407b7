//! Host construction of the Directed Edges arrays that the PDE baseline of
//! the query benchmark walks (RXMesh section 7; Campagna et al. 1998).
//! See [`cavity_bench_kernels::baseline::DirectedEdges`] for the layout.

use cavity_bench_kernels::baseline::{DirectedEdges, NO_HALF_EDGE};

use cavity::TriMesh;
use cavity::topology::Topology;

/// Owned Directed Edges arrays of a manifold mesh in input numbering.
#[derive(Clone, Debug)]
pub struct DirectedEdgesMesh {
    /// Half-edge origins (`3F`).
    pub fv: Vec<u32>,
    /// Opposite half-edges (`3F`), [`NO_HALF_EDGE`] on the boundary.
    pub twin: Vec<u32>,
    /// Undirected edge per half-edge (`3F`).
    pub edge: Vec<u32>,
    /// One outgoing half-edge per vertex (`V`), the twinless one on the boundary.
    pub outgoing: Vec<u32>,
    /// One half-edge per edge (`E`).
    pub edge_half: Vec<u32>,
    /// Largest number of half-edges out of one vertex.
    pub max_valence: u32,
}

/// Why a mesh has no Directed Edges representation.
#[derive(Debug, thiserror::Error)]
pub enum DirectedEdgesError {
    /// An edge with three or more faces.
    #[error("edge {edge} has {faces} faces (PDE needs an edge-manifold mesh)")]
    NonManifoldEdge {
        /// Edge index (topology numbering).
        edge: u32,
        /// Its face count.
        faces: usize,
    },
    /// Two faces traverse an edge in the same direction.
    #[error("the faces of edge {edge} are inconsistently oriented")]
    Orientation {
        /// Edge index.
        edge: u32,
    },
    /// A vertex whose faces form several fans.
    #[error("vertex {vertex} is non-manifold (its faces form several fans)")]
    NonManifoldVertex {
        /// Vertex index.
        vertex: u32,
    },
}

impl DirectedEdgesMesh {
    /// Builds the arrays; errors on inputs PDE cannot represent.
    pub fn new(mesh: &TriMesh, topo: &Topology) -> Result<Self, DirectedEdgesError> {
        let halves = 3 * mesh.num_faces();
        let fv: Vec<u32> = mesh.faces.iter().flatten().copied().collect();
        let edge: Vec<u32> = topo.fe.iter().flatten().copied().collect();
        let mut twin = vec![NO_HALF_EDGE; halves];
        let mut edge_half = vec![NO_HALF_EDGE; topo.ev.len()];
        for (e, faces) in (0..topo.ev.len() as u32).map(|e| (e, topo.edge_faces(e))) {
            if faces.len() > 2 {
                return Err(DirectedEdgesError::NonManifoldEdge {
                    edge: e,
                    faces: faces.len(),
                });
            }
            let half_of = |f: u32| {
                (0..3)
                    .map(|k| 3 * f + k)
                    .find(|&h| edge[h as usize] == e)
                    .expect("EF lists faces containing the edge")
            };
            let hs: Vec<u32> = faces.iter().map(|&f| half_of(f)).collect();
            edge_half[e as usize] = hs[0];
            if let [a, b] = hs[..] {
                if fv[a as usize] == fv[b as usize] {
                    return Err(DirectedEdgesError::Orientation { edge: e });
                }
                twin[a as usize] = b;
                twin[b as usize] = a;
            }
        }
        let mut outgoing = vec![NO_HALF_EDGE; mesh.num_vertices()];
        for h in 0..halves as u32 {
            let v = fv[h as usize] as usize;
            if outgoing[v] == NO_HALF_EDGE || twin[h as usize] == NO_HALF_EDGE {
                outgoing[v] = h;
            }
        }
        let mut max_valence = 0;
        for v in 0..mesh.num_vertices() as u32 {
            let fans = topo.vertex_faces(v).len() as u32;
            max_valence = max_valence.max(fans);
            let mut h = outgoing[v as usize];
            let start = h;
            let mut walked = 0;
            while h != NO_HALF_EDGE && walked <= fans {
                walked += 1;
                let t = twin[if h % 3 == 0 { h + 2 } else { h - 1 } as usize];
                h = if t == start { NO_HALF_EDGE } else { t };
            }
            if walked != fans {
                return Err(DirectedEdgesError::NonManifoldVertex { vertex: v });
            }
        }
        Ok(DirectedEdgesMesh {
            fv,
            twin,
            edge,
            outgoing,
            edge_half,
            max_valence,
        })
    }

    /// The borrowed view the baseline kernel reads.
    pub fn view(&self) -> DirectedEdges<'_> {
        DirectedEdges {
            fv: &self.fv,
            twin: &self.twin,
            edge: &self.edge,
            outgoing: &self.outgoing,
            edge_half: &self.edge_half,
        }
    }
}
