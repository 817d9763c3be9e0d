//! How much memory this process may still allocate, so sizes that multiply into memory are
//! checked before any allocation: a clear error instead of an abort in the allocator.

/// Bytes this process can still allocate: the smaller of the system's available memory
/// (`MemAvailable`) and what the address-space limit (`ulimit -v`) leaves. `None` where
/// neither can be read (not Linux).
pub fn available_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| kib_field(&t, "MemAvailable:"));
    let headroom = address_space_limit().map(|limit| {
        let used = std::fs::read_to_string("/proc/self/status").ok().and_then(|t| kib_field(&t, "VmSize:")).unwrap_or(0);
        limit.saturating_sub(used)
    });
    match (meminfo, headroom) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The soft address-space limit in bytes (`ulimit -v`), if one is set.
fn address_space_limit() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..].split_whitespace().next()?.parse().ok()
}

fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    Some(line[name.len()..].split_whitespace().next()?.parse::<u64>().ok()? * 1024)
}

/// `bytes` for people: `1.5 GiB`, `512.0 MiB`, `3.2 PiB`.
pub fn human(bytes: u128) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 { format!("{bytes} B") } else { format!("{v:.1} {}", UNITS[u]) }
}

/// `Err(message)` if `bytes` for `what` exceed what this process can allocate, saying how
/// much is needed and how much is available.
pub fn check(what: &str, bytes: u128) -> Result<(), String> {
    if bytes > isize::MAX as u128 {
        return Err(format!("{what} need {}, more than this machine can address", human(bytes)));
    }
    match available_bytes() {
        Some(avail) if bytes > avail as u128 => Err(format!("{what} need {}; {} is available", human(bytes), human(avail as u128))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_and_checked() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(3 << 29), "1.5 GiB");
        if cfg!(target_os = "linux") {
            assert!(available_bytes().is_some_and(|b| b > 0));
        }
        let e = check("4000000000 walks", 65_536_000_016_384).unwrap_err();
        assert!(e.contains("need") && e.contains("available"), "{e}");
        assert!(check("a few bytes", 16).is_ok());
    }
}

/// Makes the C allocator keep memory that is freed for the next allocations instead of
/// handing it back to the kernel: blocks up to 32 MiB come from the heap (not a fresh
/// `mmap` each), and the heap is not trimmed. A run that frees and allocates output of the
/// same sizes over and over (the streaming sampler: each window's blocks are dropped once
/// written) then reuses pages instead of faulting in fresh zeroed ones: on R-MAT 18 the
/// first-touch faults were a quarter of a sampling epoch (`bench/results/`). For a program's
/// `main` (the CLI), not a library: it sets the whole process's allocator. Does nothing where
/// the allocator is not glibc's.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only sets glibc's tuning parameters; these two are valid for any
        // value in range (32 MiB is the largest mmap threshold glibc accepts on 64 bits).
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
        }
    }
}

/// Asks the kernel to back the whole pages of `bytes` bytes at `ptr` with transparent huge
/// pages (Linux; elsewhere, or where THP is off, nothing happens). For what every step reads at
/// random (the graph's edges, alias tables, edge filters): with 4 KiB pages nearly every such
/// read missed the TLB (DeepWalk unweighted on R-MAT 18: +25-38% with the graph on huge pages,
/// `bench/results/2026-12-05-cpu-huge-pages.md`). Advise before the pages are first written:
/// pages already there are only collapsed later, by the kernel's own pace.
pub fn advise_huge_pages(ptr: *const u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = (ptr as usize).next_multiple_of(PAGE);
        let end = (ptr as usize).saturating_add(bytes) & !(PAGE - 1);
        if end > start {
            // SAFETY: MADV_HUGEPAGE only changes how pages are backed, never what they hold;
            // on a range that is not mapped it fails, and a failure (THP off) leaves them small.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, bytes);
}

/// A vector of `n` values made by `make`, whose pages were advised huge before they were
/// written ([`advise_huge_pages`]).
pub fn huge_page_vec<T>(n: usize, make: impl FnMut() -> T) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    advise_huge_pages(v.as_ptr() as *const u8, n.saturating_mul(std::mem::size_of::<T>()));
    v.resize_with(n, make);
    v
}
