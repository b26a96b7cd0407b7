//! Vertex normals through the query model equal a direct serial computation
//! (area-weighted face normals summed per vertex, then normalized).

use cavity::backend::positions_by_handle;
use cavity::{Kind, PatchedMesh, TriMesh};
use cavity_tests::{any_mesh, test_backend};
use glam::Vec3;
use proptest::prelude::*;

fn direct_normals(mesh: &TriMesh) -> Vec<Vec3> {
    let p = |v: u32| Vec3::from(mesh.positions[v as usize]);
    let mut n = vec![Vec3::ZERO; mesh.positions.len()];
    for f in &mesh.faces {
        let face = (p(f[1]) - p(f[0])).cross(p(f[2]) - p(f[0]));
        for &v in f {
            n[v as usize] += face;
        }
    }
    n.into_iter().map(|x| x.normalize_or_zero()).collect()
}

fn check(mesh: &TriMesh, patch_size: u32) -> Result<(), String> {
    let patched = PatchedMesh::new(mesh, patch_size).map_err(|e| e.to_string())?;
    let positions = positions_by_handle(&patched, &mesh.positions);
    let got = test_backend()
        .vertex_normals(&patched, &positions)
        .map_err(|e| e.to_string())?;
    let expected = direct_normals(mesh);
    for (h, &v) in patched.to_input(Kind::Vertex).iter().enumerate() {
        let g = Vec3::new(got[3 * h], got[3 * h + 1], got[3 * h + 2]);
        let e = expected[v as usize];
        if (g - e).length() > 1e-4 {
            return Err(format!("vertex {v}: got {g}, expected {e}"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cavity_tests::cases(32), ..ProptestConfig::default() })]
    #[test]
    fn normals_match_direct(mesh in any_mesh(), patch_size in 1u32..600) {
        if let Err(e) = check(&mesh, patch_size) {
            prop_assert!(false, "{e}");
        }
    }
}

#[test]
fn normals_on_the_bundled_mesh() {
    let mesh = cavity_tests::bundled_mesh();
    check(&mesh, 512).unwrap();
}
