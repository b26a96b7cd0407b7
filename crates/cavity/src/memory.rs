//! How much memory a job may plan for: the host's available memory (the
//! kernel's estimate of what can be allocated without swapping, within the
//! limit of the process's cgroup where one is set, read with `sysinfo`),
//! capped by [`MEMORY_LIMIT`] when it is set. Large layouts are checked
//! against it before they are allocated, so that an oversized job is an
//! error with its estimate and the setting to change rather than an abort
//! ("memory allocation of ... bytes failed").

/// Environment variable capping the bytes a job may plan for, below the
/// host's available memory: a number of bytes, or with a suffix `K`, `M`,
/// `G` or `T` (powers of 1024), as `CAVITY_MEMORY_LIMIT=8G`.
pub const MEMORY_LIMIT: &str = "CAVITY_MEMORY_LIMIT";

/// Bytes the host can allocate now (see the [module](self)), or `None`
/// where the system does not say and no [`MEMORY_LIMIT`] is set.
pub fn available_host_bytes() -> Option<u64> {
    use sysinfo::{MemoryRefreshKind, RefreshKind, System};
    let system = System::new_with_specifics(
        RefreshKind::nothing().with_memory(MemoryRefreshKind::nothing().with_ram()),
    )
    .ok();
    // sysinfo gives 0 where it cannot read the memory.
    let available = system
        .as_ref()
        .map(System::available_memory)
        .filter(|&a| a > 0);
    let cgroup = system
        .as_ref()
        .and_then(System::cgroup_limits)
        .map(|c| c.free_memory);
    [available, cgroup, limit()].into_iter().flatten().min()
}

/// The [`MEMORY_LIMIT`] in bytes, when set and readable.
fn limit() -> Option<u64> {
    parse_limit(&std::env::var(MEMORY_LIMIT).ok()?)
}

/// Bytes of a limit written as `12345`, `512M`, `8G` (powers of 1024).
fn parse_limit(text: &str) -> Option<u64> {
    let text = text.trim();
    let (number, shift) = match text.chars().last()?.to_ascii_uppercase() {
        'K' => (&text[..text.len() - 1], 10),
        'M' => (&text[..text.len() - 1], 20),
        'G' => (&text[..text.len() - 1], 30),
        'T' => (&text[..text.len() - 1], 40),
        _ => (text, 0),
    };
    let value: f64 = number.trim().parse().ok()?;
    (value.is_finite() && value >= 0.0).then(|| (value * (1u64 << shift) as f64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_in_bytes_and_with_suffixes() {
        assert_eq!(parse_limit("4096"), Some(4096));
        assert_eq!(parse_limit("2K"), Some(2048));
        assert_eq!(parse_limit("1.5g"), Some(3 << 29));
        assert_eq!(parse_limit("-1G"), None);
        assert_eq!(parse_limit("lots"), None);
    }
}
