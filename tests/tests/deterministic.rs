//! The CPU backend's deterministic schedule (`cavity::backend::cpu::territories`):
//! the dynamic applications (remeshing, Delaunay flips, surface tracking)
//! give the same mesh, bit for bit, whatever the number of workers and from
//! run to run, on inputs with open boundaries, holes and patches small
//! enough to slice; and the round's pick keeps its blocks apart. (On the
//! CPU only: the GPU's blocks race.)

use cavity::TriMesh;
use cavity::backend::Backend;
use cavity::backend::cpu::rounds::refill_host;
use cavity::backend::cpu::territories;
use cavity::backend::cpu::{CpuBackend, Schedule};
use cavity::dynamic::{CapacityFactors, DynamicMesh};
use cavity_delaunay::delaunay;
use cavity_device::dynamic::layout::{NO_PATCH, STASH_SIZE};
use cavity_device::dynamic::queue;
use cavity_device::dynamic::{lock, scheduler};
use cavity_remesh::{Hooks, Layout, RemeshSettings, remesh};
use cavity_tests::{bundled_mesh, grid, on_workers};
use cavity_track::{TrackHooks, TrackSettings, track};

/// Worker counts compared (one worker runs the blocks one after another).
const WORKERS: [usize; 4] = [1, 2, 3, 4];

/// The mesh as comparable bits: positions by their bit patterns, faces.
fn bits(m: &TriMesh) -> (Vec<[u32; 3]>, Vec<[u32; 3]>) {
    let positions = m.positions.iter().map(|p| p.map(f32::to_bits)).collect();
    (positions, m.faces.clone())
}

/// Asserts that `run` gives the same mesh on every worker count of
/// [`WORKERS`] and twice on the last one.
fn same_on_any_workers(what: &str, run: impl Fn() -> TriMesh + Sync) {
    let first = bits(&on_workers(WORKERS[0], &run));
    let last = *WORKERS.last().expect("worker counts");
    for n in WORKERS[1..].iter().copied().chain([last]) {
        let got = bits(&on_workers(n, &run));
        assert!(
            got == first,
            "{what}: {n} workers give another mesh than {} ({} vs {} faces)",
            WORKERS[0],
            got.1.len(),
            first.1.len()
        );
    }
}

fn cpu() -> Backend {
    Backend::Cpu(CpuBackend::with_schedule(Schedule::Deterministic))
}

/// A jittered grid with holes: open boundaries, jagged hole rims.
fn holey_sheet() -> TriMesh {
    let holes: Vec<usize> = (0..2 * 40 * 40)
        .filter(|f| f % 37 == 5 || f % 91 < 3)
        .collect();
    let mut m = grid(40, 40, &[false, true], false, &holes);
    for (i, p) in m.positions.iter_mut().enumerate() {
        let h = (i as u32).wrapping_mul(2_654_435_761);
        p[0] += ((h >> 8) % 1000) as f32 * 3e-4;
        p[1] += ((h >> 18) % 1000) as f32 * 3e-4;
        p[2] += ((h >> 4) % 1000) as f32 * 1e-4;
    }
    m
}

#[test]
fn remeshing_is_the_same_on_any_number_of_workers() {
    let settings = RemeshSettings::default();
    for (what, input, patch_size) in [
        ("bundled dragon", bundled_mesh(), 512),
        ("holey sheet, patches of 32", holey_sheet(), 32),
    ] {
        let layout = Layout {
            patch_size,
            factors: CapacityFactors::default(),
        };
        same_on_any_workers(what, || {
            remesh(&input, &settings, &cpu(), layout, &mut Hooks::default())
                .expect("remesh")
                .0
        });
    }
}

#[test]
fn delaunay_flips_are_the_same_on_any_number_of_workers() {
    let input = holey_sheet();
    same_on_any_workers("Delaunay flips", || {
        delaunay(&input, 16, CapacityFactors::default(), &cpu())
            .expect("flips")
            .0
    });
}

#[test]
fn surface_tracking_is_the_same_on_any_number_of_workers() {
    let settings = TrackSettings {
        grid: 48,
        frames: 8,
        ..TrackSettings::default()
    };
    let layout = Layout {
        patch_size: 64,
        factors: CapacityFactors::default(),
    };
    same_on_any_workers("surface tracking", || {
        track(&settings, &cpu(), layout, &mut TrackHooks::default())
            .expect("track")
            .0
    });
}

/// Hops from `from` to every patch of `mesh` in the undirected patch
/// graph of the stashes (`u32::MAX`: unreachable).
fn hops(mesh: &DynamicMesh, from: u32) -> Vec<u32> {
    let n = mesh.num_patches() as usize;
    let stash = |p: usize| {
        mesh.storage().stash[p * STASH_SIZE as usize..][..STASH_SIZE as usize]
            .iter()
            .copied()
            .filter(move |&q| q != NO_PATCH && (q as usize) < n)
    };
    let mut dist = vec![u32::MAX; n];
    dist[from as usize] = 0;
    let mut frontier = vec![from as usize];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for p in frontier {
            let near = stash(p)
                .map(|q| q as usize)
                .chain((0..n).filter(|&q| stash(q).any(|r| r as usize == p)));
            for q in near.collect::<Vec<_>>() {
                if dist[q] == u32::MAX {
                    dist[q] = dist[p] + 1;
                    next.push(q);
                }
            }
        }
        frontier = next;
    }
    dist
}

/// The round's pick (`territories::prepare`): every queued patch not
/// outranked may be picked, the picked ones are at least `SPACING` hops
/// apart, they lead the queue, the highest-ranked queued patch is among
/// them, and exactly their territories (the patch and its neighbours) are
/// free to lock.
#[test]
fn picked_patches_are_spaced_apart_and_alone_in_their_territories() {
    let input = holey_sheet();
    let mut mesh = DynamicMesh::new(&input, 16, CapacityFactors::default()).expect("dynamic");
    assert!(mesh.num_patches() > 100, "{} patches", mesh.num_patches());
    for salt in [0, 1, 7, 12345] {
        refill_host(&mut mesh, false);
        let queued = mesh.storage().queue_state[queue::COUNT as usize];
        let n = territories::prepare(&mut mesh, salt) as usize;
        assert!(n > 1, "salt {salt}: {n} picked");
        let picked = mesh.storage().queue[..n].to_vec();
        assert_eq!(mesh.storage().queue_state[queue::COUNT as usize], queued);
        let top = (0..mesh.num_patches())
            .reduce(|a, b| {
                if scheduler::outranks(b, a, salt) {
                    b
                } else {
                    a
                }
            })
            .expect("patches");
        assert!(picked.contains(&top), "salt {salt}: {top} not picked");
        let mut free = vec![false; mesh.num_patches() as usize];
        for &p in &picked {
            let d = hops(&mesh, p);
            for &q in &picked {
                assert!(
                    q == p || d[q as usize] >= territories::SPACING,
                    "salt {salt}: {p} and {q} are {} hops apart",
                    d[q as usize]
                );
            }
            for (q, &h) in d.iter().enumerate() {
                free[q] |= h <= 1;
            }
        }
        for (q, &f) in free.iter().enumerate() {
            let want = if f { lock::FREE } else { lock::RESERVED };
            assert_eq!(mesh.storage().locks[q], want, "salt {salt}: lock of {q}");
        }
        territories::release(&mut mesh);
        assert!(mesh.storage().locks.iter().all(|&l| l == lock::FREE));
    }
}
