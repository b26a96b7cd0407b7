//! Registering cavities: cavity keys, seed priorities and the creation
//! stage that asks the application which seeds get a cavity.

use crate::block::Block;

use super::{CTL_CAVITIES, CTL_SCREENED, CavityApp, Ctx};

/// Key of cavity `c` (the low 16 bits) with priority `prio` (the high 16
/// bits; smaller keys win).
#[inline(always)]
pub fn key(prio: u32, c: u32) -> u32 {
    (prio << 16) | c
}

/// Random 16-bit priority of a seed, from its patch, local index and the
/// round's salt.
#[inline(always)]
pub fn priority(p: u32, seed: u32, salt: u32) -> u32 {
    let mut x = p.wrapping_mul(0x9e37_79b9) ^ seed.wrapping_mul(0x85eb_ca6b) ^ salt;
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x & 0xffff
}

/// Registers the cavities: `app.create` on every owned, active seed that
/// neither declined in this sweep nor waits for a neighbour (and passes
/// [`CavityApp::screen`] when the application screens: those seeds are
/// gathered in `work.flags`, free once the free lists are built, in
/// ascending order on the host's block of one thread, so that the
/// cavities are numbered as without the screen there).
#[inline(always)]
pub fn create<B: Block, A: CavityApp>(block: &B, ctx: &Ctx<'_, B>, app: &A, salt: u32) {
    let copy = ctx.copy;
    let work = ctx.work;
    let kind = A::TEMPLATE.seed_kind();
    if block.thread_idx() == 0 {
        work.ctl.set(CTL_CAVITIES, 0);
        work.ctl.set(CTL_SCREENED, 0);
    }
    block.sync();
    let eligible = |s: u32| {
        let skip = work.declined.bit(s) || work.waiting.bit(s);
        copy.is_owned(kind, s) && copy.is_active(kind, s) && !skip
    };
    // The closures are inlined: an outlined one takes the context through
    // local memory (a tenfold stack frame in a kernel crate's survey).
    let register = #[inline(always)]
    |s: u32| {
        if app.create(ctx, s) {
            let c = block.shared_fetch_add(work.ctl, CTL_CAVITIES, 1);
            work.seeds.set(c, s as u16);
            let random = priority(copy.p, s, salt);
            work.keys
                .set(c, key(app.priority(ctx, s, random) & 0xffff, c));
        }
    };
    if A::SCREENS {
        block.for_each(copy.count(kind), |s| {
            if eligible(s) && app.screen(ctx, s) {
                let i = block.shared_fetch_add(work.ctl, CTL_SCREENED, 1);
                work.flags.set(i, s);
            }
        });
        block.sync();
        block.for_each(
            work.ctl.get(CTL_SCREENED),
            #[inline(always)]
            |i| register(work.flags.get(i)),
        );
    } else {
        block.for_each(
            copy.count(kind),
            #[inline(always)]
            |s| {
                if eligible(s) {
                    register(s);
                }
            },
        );
    }
    block.sync();
}
