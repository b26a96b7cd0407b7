//! The CPU backend's deterministic schedule: update rounds whose outcome
//! does not depend on timing, so that a run gives the same mesh whatever
//! the number of workers.
//!
//! In a racing round (the GPU's, `cavity_device::dynamic::update`) blocks
//! dequeue patches in whatever order they get there and take neighbour
//! locks with a bounded number of tries: which cavity wins depends on
//! timing. Here the host picks the round's patches itself before the
//! launch, each with a *territory* (the patch and its neighbours, the only
//! patches it can lock), and marks every other patch [`RESERVED`], so no
//! lock is ever contended: a block either holds a territory patch at once
//! or learns at once that it may not take the patch. The picked patches
//! are at least [`SPACING`] hops apart in the patch graph (patches joined
//! when one names the other in its stash), so a block reads only patches
//! (its territory's neighbours, through the ribbon entries and stashes of
//! what it locks) that no other block of the round writes: each block's
//! work is a function of the mesh as the round found it, and the blocks of
//! a round commute.
//!
//! The pick follows the racing scheduler's own rule (Luby's rule on the
//! patch graph, `cavity_device::dynamic::scheduler::outranks`): a queued
//! patch that a queued stash neighbour outranks is not picked, and the
//! others are taken in rank order while they keep the spacing. The patch
//! ranked first is always picked, so every round makes progress.

use std::cmp::Ordering;
use std::collections::VecDeque;

use cavity_device::dynamic::layout::{NO_PATCH, STASH_SIZE, flag};
use cavity_device::dynamic::lock::{FREE, RESERVED};
use cavity_device::dynamic::queue;
use cavity_device::dynamic::scheduler;

use crate::dynamic::DynamicMesh;

/// Fewest hops between two patches of one round. A block locks only its
/// territory (its patch `p` and the patches one hop away) and reads at
/// most two hops from `p` (the owners named by the ribbon entries of the
/// stars it copies from its territory); another block writes only its own
/// territory. Four hops keep every read two-hop ball clear of every other
/// territory.
pub const SPACING: u32 = 4;

/// Picks the next round's patches among the queued ones of `mesh` (the
/// round salted with `salt`), puts them at the front of the queue (the rest
/// queued behind them, in patch order) and reserves every patch lock
/// outside their territories. Returns the number of picked patches: the
/// round must launch exactly that many blocks, each of which dequeues one
/// of them. Call [`release`] after the round.
pub fn prepare(mesh: &mut DynamicMesh, salt: u32) -> u32 {
    let n = mesh.num_patches as usize;
    let mut queued: Vec<u32> = mesh
        .queue
        .iter()
        .copied()
        .filter(|&p| p != NO_PATCH)
        .collect();
    queued.sort_unstable();
    queued.dedup();
    debug_assert_eq!(
        queued.len(),
        mesh.queue_state[queue::COUNT as usize] as usize,
        "the queue holds each queued patch once"
    );
    let neighbours = patch_graph(mesh);
    let is_queued = |q: u32| mesh.flags[q as usize] & flag::QUEUED != 0;
    let stash = |p: u32| {
        mesh.stash[(p * STASH_SIZE) as usize..][..STASH_SIZE as usize]
            .iter()
            .copied()
            .filter(move |&q| q != NO_PATCH && q != p)
    };
    // The racing round's rule: outranked by a competing stash neighbour.
    let outranked = |p: u32| stash(p).any(|q| is_queued(q) && scheduler::outranks(q, p, salt));
    let mut order = queued.clone();
    order.sort_unstable_by(|&a, &b| {
        if a == b {
            Ordering::Equal
        } else if scheduler::outranks(a, b, salt) {
            Ordering::Less
        } else {
            Ordering::Greater
        }
    });
    let mut claimed = vec![false; n];
    let mut is_picked = vec![false; n];
    // The pick whose ball last reached each patch (a ball must pass through
    // patches an earlier ball claimed).
    let mut seen = vec![u32::MAX; n];
    let mut picked = Vec::new();
    let mut frontier = VecDeque::new();
    for &p in &order {
        if claimed[p as usize] || outranked(p) {
            continue;
        }
        picked.push(p);
        is_picked[p as usize] = true;
        // Everything closer than the spacing is out for this round.
        frontier.clear();
        frontier.push_back((p, 0));
        seen[p as usize] = p;
        while let Some((q, d)) = frontier.pop_front() {
            claimed[q as usize] = true;
            if d + 1 == SPACING {
                continue;
            }
            for &r in &neighbours[q as usize] {
                if seen[r as usize] != p {
                    seen[r as usize] = p;
                    frontier.push_back((r, d + 1));
                }
            }
        }
    }
    mesh.locks.fill(RESERVED);
    for &p in &picked {
        mesh.locks[p as usize] = FREE;
        for &q in &neighbours[p as usize] {
            mesh.locks[q as usize] = FREE;
        }
    }
    let rest = queued.iter().copied().filter(|&p| !is_picked[p as usize]);
    let front: Vec<u32> = picked.iter().copied().chain(rest).collect();
    mesh.queue.fill(NO_PATCH);
    mesh.queue[..front.len()].copy_from_slice(&front);
    mesh.queue_state[queue::COUNT as usize] = front.len() as u32;
    mesh.queue_state[1] = 0;
    mesh.queue_state[2] = front.len() as u32;
    picked.len() as u32
}

/// Frees every patch lock after a round of [`prepare`].
pub fn release(mesh: &mut DynamicMesh) {
    mesh.locks.fill(FREE);
}

/// The undirected patch graph of the patches in use: `p` and `q` adjacent
/// when either names the other in its stash. Sorted neighbour lists.
fn patch_graph(mesh: &DynamicMesh) -> Vec<Vec<u32>> {
    let n = mesh.num_patches as usize;
    let mut neighbours = vec![Vec::new(); n];
    for p in 0..n {
        for &q in &mesh.stash[p * STASH_SIZE as usize..][..STASH_SIZE as usize] {
            if q != NO_PATCH && (q as usize) < n && q as usize != p {
                neighbours[p].push(q);
                neighbours[q as usize].push(p as u32);
            }
        }
    }
    for list in &mut neighbours {
        list.sort_unstable();
        list.dedup();
    }
    neighbours
}
