//! A file's bytes written through a shared memory map ([`write_mapped`]),
//! so that rayon's workers fill its parts at once: a stream of writes to
//! one file is one core's copying (the kernel serializes writes to a file
//! under its inode lock), while page faults on a map run on every core.
//! The file's room is reserved first (`posix_fallocate`), so that a full
//! disk is an error here, not a fault in the middle of the copy. Linux
//! only; elsewhere, and where a file system cannot map or reserve, the
//! caller writes the stream instead.

use std::fs::File;

/// Sets `file` (opened for reading and writing, empty) to `len` bytes
/// and calls `fill` on them, mapped; returns `Ok(false)` without calling
/// it where the file cannot be mapped (the caller then writes it
/// otherwise). The pages written are the file's once the map is undone:
/// a later `File::sync_all` makes them durable.
///
/// # Errors
/// A failed resize or reservation (a full disk: `ENOSPC`), or `fill`'s.
#[cfg(target_os = "linux")]
pub(super) fn write_mapped(
    file: &File,
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> std::io::Result<()>,
) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    if len == 0 {
        return Ok(false);
    }
    let fd = file.as_raw_fd();
    let Ok(size) = libc::off_t::try_from(len) else {
        return Ok(false);
    };
    // SAFETY: `fd` is `file`'s open descriptor; the call only gives the
    // file room.
    match unsafe { libc::posix_fallocate(fd, 0, size) } {
        0 => {}
        libc::EOPNOTSUPP | libc::EINVAL => return Ok(false),
        e => return Err(std::io::Error::from_raw_os_error(e)),
    }
    // SAFETY: a new shared map of `len` bytes of `fd`, which holds them
    // now (reserved above); the kernel picks the address.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return Ok(false);
    }
    let map = Map { addr, len };
    // SAFETY: the map is `len` bytes, readable and writable, and nothing
    // else reads or writes them while `bytes` lives (the file is the
    // caller's new temporary file, the map this function's own).
    let bytes = unsafe { std::slice::from_raw_parts_mut(addr.cast::<u8>(), len) };
    let filled = fill(bytes);
    drop(map);
    filled.map(|()| true)
}

/// [`write_mapped`] where files are not mapped: the caller writes the
/// stream.
#[cfg(not(target_os = "linux"))]
pub(super) fn write_mapped(
    _: &File,
    _: usize,
    _: impl FnOnce(&mut [u8]) -> std::io::Result<()>,
) -> std::io::Result<bool> {
    Ok(false)
}

/// A shared map, undone when dropped.
#[cfg(target_os = "linux")]
struct Map {
    addr: *mut libc::c_void,
    len: usize,
}

#[cfg(target_os = "linux")]
impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: the map `mmap` made, whose bytes are no longer lent out
        // (`write_mapped` drops it after `fill` returned).
        unsafe { libc::munmap(self.addr, self.len) };
    }
}
