//! A file's bytes written through a shared memory map ([`write_mapped`]),
//! so that rayon's workers fill its parts at once: a stream of writes to
//! one file is one core's copying (the kernel serializes writes to a file
//! under its inode lock), while page faults on a map run on every core.
//! Only on local file systems that reserve a file's room when asked
//! (tmpfs, ext4, XFS): the room is reserved first (`fallocate`), so that a
//! full disk is an error here, not a fault (`SIGBUS`) in the middle of the
//! copy, which a copy-on-write, network or thinly provisioned file system
//! could still give. Linux only; elsewhere, and on other file systems, the
//! caller writes the stream instead.

use std::fs::File;

/// Sets `file` (opened for reading and writing, empty) to `len` bytes
/// and calls `fill` on them, mapped (what it writes is the file's at
/// once; a later `File::sync_all` makes it durable); returns `Ok(false)`
/// without calling it, the file left empty, where the file is not mapped
/// (see the [module](self)): the caller then writes it otherwise.
///
/// # Errors
/// A failed reservation (a full disk: `ENOSPC`), or `fill`'s.
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
    if !reserves_room(fd) {
        return Ok(false);
    }
    loop {
        // SAFETY: `fd` is `file`'s open descriptor; the call only gives
        // the file room (and length).
        if unsafe { libc::fallocate(fd, 0, 0, size) } == 0 {
            break;
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EOPNOTSUPP | libc::EINVAL) => return Ok(false),
            _ => return Err(e),
        }
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
        // Empty again for the caller's stream.
        file.set_len(0)?;
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

/// Whether the file system of `fd` reserves room when asked and faults
/// only past it: tmpfs, ext4, XFS.
#[cfg(target_os = "linux")]
fn reserves_room(fd: std::os::fd::RawFd) -> bool {
    let mut fs = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: `fd` is an open descriptor and `fs` room for the answer.
    if unsafe { libc::fstatfs(fd, fs.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: `fstatfs` succeeded, so it wrote `fs`.
    let kind = unsafe { fs.assume_init() }.f_type;
    [
        libc::TMPFS_MAGIC,
        libc::EXT4_SUPER_MAGIC,
        libc::XFS_SUPER_MAGIC,
    ]
    .contains(&kind)
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
