//! Vector geometry on `[f32; 3]` points, the same on the GPU and the host
//! (square roots by core's float math, which the GPU runs as `sqrt.rn`):
//! what kernels of every kind use for lengths, normals, areas and angles;
//! the same on `[f64; 3]` points in [`double`], for measures taken as the
//! host takes them in `f64` (the survey's, the tetrahedra's volumes).

/// `√x`, rounded as IEEE's square root (`sqrt.rn.f32` on the GPU), for
/// kernel crates on a stable `core` (core's float math is unstable).
#[inline(always)]
pub fn sqrt(x: f32) -> f32 {
    core::f32::math::sqrt(x)
}

/// `a - b`.
pub fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `a · b`.
pub fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `u × v`.
pub fn cross(u: [f32; 3], v: [f32; 3]) -> [f32; 3] {
    [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ]
}

/// Twice the area vector of the triangle `a, b, c` (its normal, scaled).
pub fn normal(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> [f32; 3] {
    cross(sub(b, a), sub(c, a))
}

/// `|a|`.
pub fn norm(a: [f32; 3]) -> f32 {
    sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
}

/// The midpoint of `a` and `b`.
pub fn midpoint(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        0.5 * (a[0] + b[0]),
        0.5 * (a[1] + b[1]),
        0.5 * (a[2] + b[2]),
    ]
}

/// Sine of the smallest interior angle of triangle `a, b, c` (0 when
/// degenerate): twice its area over the product of its two longest edges.
/// It orders triangles as their smallest angles do (at most 60°).
pub fn smallest_angle_sin(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> f32 {
    let [x, y, z] = [norm(sub(b, a)), norm(sub(c, b)), norm(sub(a, c))];
    let shortest = x.min(y).min(z);
    let longest = x.max(y).max(z);
    let middle = x + y + z - shortest - longest;
    let d = middle * longest;
    if d > 0.0 {
        norm(normal(a, b, c)) / d
    } else {
        0.0
    }
}

/// Area of the triangle `p`.
pub fn area(p: [[f32; 3]; 3]) -> f32 {
    0.5 * norm(normal(p[0], p[1], p[2]))
}

/// Vector geometry on `[f64; 3]` points.
pub mod double {
    /// `a - b`.
    #[inline(always)]
    pub fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
        [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
    }

    /// `a · b`.
    #[inline(always)]
    pub fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
        a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
    }

    /// `a × b`.
    #[inline(always)]
    pub fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    }

    /// `|a|`, rounded as IEEE's square root.
    #[inline(always)]
    pub fn norm(a: [f64; 3]) -> f64 {
        core::f64::math::sqrt(dot(a, a))
    }
}
