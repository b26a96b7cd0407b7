//! Vertex normals from their application crate (`apps/normals`, a
//! per-vertex computation on the public model) equal a direct serial
//! computation (area-weighted face normals summed per vertex, then
//! normalized).

use cavity::TriMesh;
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
    let got = cavity_normals::vertex_normals(mesh, patch_size, &test_backend())
        .map_err(|e| e.to_string())?;
    let expected = direct_normals(mesh);
    for (v, (&g, &e)) in got.iter().zip(&expected).enumerate() {
        let g = Vec3::from(g);
        if (g - e).length() > 1e-4 {
            return Err(format!("vertex {v}: got {g}, expected {e}"));
        }
    }
    if got.len() != expected.len() {
        return Err(format!(
            "{} normals for {} vertices",
            got.len(),
            expected.len()
        ));
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
