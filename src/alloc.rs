//! The allocator of `rulecraft play` and the benchmarks: mimalloc, asked for a block of the
//! word's alignment or less through its plain `mi_malloc` (every block it gives is aligned to a
//! word), which skips the alignment tests of `mi_malloc_aligned` that the `mimalloc` crate's
//! allocator makes at every allocation; larger alignments through `mi_malloc_aligned`.

use libmimalloc_sys::{
    mi_free, mi_malloc, mi_malloc_aligned, mi_realloc, mi_realloc_aligned, mi_zalloc,
    mi_zalloc_aligned,
};
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// What mimalloc aligns every block to.
const WORD: usize = std::mem::size_of::<usize>();

/// mimalloc's `mi_option_purge_decommits` (the sixth in `mimalloc.h`'s `mi_option_e` of the
/// mimalloc 3 that `libmimalloc-sys` builds; its own constants name an older list): whether the
/// memory it purges is given back to the system (decommitted) or only reset.
const PURGE_DECOMMITS: libmimalloc_sys::mi_option_t = 5;

/// Has mimalloc reset, not decommit, the memory it purges: a large derivation made and dropped
/// again and again (a galaxy's effects pass: 23.5 MB of derived values at 42,638 objects) then
/// takes pages back without the system zeroing them anew (huge pages zeroed at each fault took
/// about a tenth of such a pass: criterion, 98.7 ms -> 90.4 ms for both parts). The memory is
/// still given back when the system needs it. Only the galaxy's benchmark and profile ask for it:
/// whole classic games (small states, one or two threads) showed no difference beyond the noise,
/// so `rulecraft play` keeps mimalloc's default.
#[allow(dead_code)] // this file is a module of the binary and of each benchmark
pub fn reset_on_purge() {
    // SAFETY: sets one of mimalloc's options (a plain value it reads when it purges); no block
    // is touched.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DECOMMITS, 0) }
}

/// mimalloc, plain where the alignment asked for is a word's or less.
pub struct Mimalloc;

// SAFETY: every block comes from mimalloc and goes back to it (`mi_free` takes blocks of either
// kind); `mi_malloc` gives blocks aligned to at least a word (mimalloc's `MI_MAX_ALIGN_SIZE`),
// so a layout of that alignment or less is met; larger alignments go through the `_aligned`
// calls, which take the alignment asked for. `GlobalAlloc` is never asked for size 0.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= WORD {
            mi_malloc(layout.size()) as *mut u8
        } else {
            mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= WORD {
            mi_zalloc(layout.size()) as *mut u8
        } else {
            mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        mi_free(ptr as *mut c_void);
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= WORD {
            mi_realloc(ptr as *mut c_void, new_size) as *mut u8
        } else {
            mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
        }
    }
}
