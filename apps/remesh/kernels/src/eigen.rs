//! Eigen-decomposition of symmetric 3 × 3 matrices by cyclic Jacobi
//! rotations (Golub and Van Loan, "Matrix Computations", section 8.5), for
//! null-space smoothing on the device, where no linear-algebra library
//! runs.

use cavity_device::geometry::sqrt;

/// Sweeps over the three off-diagonal entries; Jacobi converges
/// quadratically, and `f32` needs far fewer.
const SWEEPS: u32 = 8;

type Mat3 = [[f32; 3]; 3];

fn mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let mut c = [[0.0; 3]; 3];
    for (i, row) in c.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            *x = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
        }
    }
    c
}

fn transpose(a: &Mat3) -> Mat3 {
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| a[j][i]))
}

/// The eigenvalues of symmetric `a` (row-major) and their unit
/// eigenvectors: `(values, vectors)` with `a · vectors[k] = values[k] ·
/// vectors[k]`, in no particular order. `a` must be symmetric (the
/// rotations assume it); non-finite entries give non-finite results.
pub fn symmetric_eigen(a: Mat3) -> ([f32; 3], Mat3) {
    let mut a = a;
    // Columns of `v` are the eigenvectors: a₀ = v · a · vᵀ throughout.
    let mut v = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    for _ in 0..SWEEPS {
        let off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
        let diagonal = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
        if off <= 1e-14 * diagonal || off == 0.0 {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            if a[p][q] == 0.0 {
                continue;
            }
            // The rotation J in plane (p, q) with Jᵀ a J zero at (p, q):
            // t = tan φ solves t² + 2 θ t - 1 = 0, the smaller root.
            let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            let t = if theta.abs() > 1e15 {
                0.5 / theta
            } else {
                let r = sqrt(theta * theta + 1.0);
                if theta >= 0.0 {
                    1.0 / (theta + r)
                } else {
                    -1.0 / (-theta + r)
                }
            };
            let c = 1.0 / sqrt(t * t + 1.0);
            let s = t * c;
            let mut j = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
            j[p][p] = c;
            j[q][q] = c;
            j[p][q] = s;
            j[q][p] = -s;
            a = mul(&transpose(&j), &mul(&a, &j));
            a[p][q] = 0.0;
            a[q][p] = 0.0;
            v = mul(&v, &j);
        }
    }
    let vectors = transpose(&v);
    ([a[0][0], a[1][1], a[2][2]], vectors)
}
