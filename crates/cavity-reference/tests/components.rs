//! The library's parallel disjoint sets (`cavity::components`) against the
//! oracle's serial union-find.

use cavity::components::{count_roots, vertex_sets};
use cavity_reference::vertex_components;

/// A deterministic scramble of `0..n` (a multiplicative walk).
fn scrambled(n: u32, i: u32) -> u32 {
    ((u64::from(i) * 2_654_435_761) % u64::from(n)) as u32
}

#[test]
fn sets_match_the_serial_union_find() {
    for n in [1u32, 2, 7, 100, 5000] {
        for stride in [1u32, 3, 17] {
            let faces: Vec<[u32; 3]> = (0..n / 3)
                .filter(|i| i % stride != 0)
                .map(|i| [0, 1, 2].map(|k| scrambled(n, 3 * i + k * stride) % n))
                .collect();
            let mut serial = vertex_components(n as usize, &faces);
            let roots = vertex_sets(n as usize, &faces).roots();
            assert_eq!(count_roots(&roots), serial.count());
            // The first member met of each serial set is its smallest.
            let mut smallest = std::collections::HashMap::new();
            for a in 0..n {
                let first = *smallest.entry(serial.find(a as usize)).or_insert(a);
                assert_eq!(roots[a as usize], first);
            }
        }
    }
}
