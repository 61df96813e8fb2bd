//! NUMA memory policy and page location: `mbind(2)` on a range, and
//! `move_pages(2)` with no target, which says the node each page is on.
//!
//! Neither `nix` nor `rustix` wraps these (rustix lists them as not
//! implemented), and glibc leaves them to libnuma: they are made through
//! `libc::syscall`, with the constants `libc` defines.

use std::collections::BTreeMap;
use std::io;

const WORD_BITS: usize = libc::c_ulong::BITS as usize;

/// A node mask as the kernel reads it, and the `maxnode` to pass with it
/// (the kernel reads `maxnode - 1` bits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeMask {
    words: Vec<libc::c_ulong>,
}

impl NodeMask {
    pub fn of(nodes: &[u32]) -> NodeMask {
        let last = nodes.iter().copied().max().unwrap_or(0) as usize;
        let mut words = vec![0; last / WORD_BITS + 1];
        for &node in nodes {
            words[node as usize / WORD_BITS] |= 1 << (node as usize % WORD_BITS);
        }
        NodeMask { words }
    }

    fn max_node(&self) -> libc::c_ulong {
        (self.words.len() * WORD_BITS + 1) as libc::c_ulong
    }
}

/// Binds the pages of `[address, address + len)` to `nodes` (MPOL_BIND):
/// pages touched afterwards are allocated there or not at all. `address`
/// must be page-aligned (the kernel refuses it otherwise).
pub fn bind_range(address: usize, len: usize, nodes: &NodeMask) -> io::Result<()> {
    // SAFETY: mbind reads `nodes.words` (max_node - 1 bits, which it owns)
    // and changes only the policy of the range, which the caller maps.
    let done = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            address,
            len,
            libc::MPOL_BIND,
            nodes.words.as_ptr(),
            nodes.max_node(),
            0 as libc::c_uint,
        )
    };
    if done != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Where the pages of a range are, from `move_pages(2)` with no target.
#[derive(
    Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct PageNodes {
    /// Pages asked about.
    pub pages: u64,
    /// Pages found, by node.
    pub by_node: BTreeMap<u32, u64>,
    /// Pages the kernel found on no node (not present, or an error).
    pub missing: u64,
}

impl PageNodes {
    /// Every page asked about is on `node`.
    pub fn all_on(&self, node: u32) -> bool {
        self.pages > 0 && self.by_node.get(&node) == Some(&self.pages)
    }
}

/// Asks the kernel where every `stride`-th byte page of
/// `[address, address + len)` is (`stride` a multiple of the page size).
pub fn page_nodes(address: *const u8, len: usize, stride: usize) -> io::Result<PageNodes> {
    let pages: Vec<*const libc::c_void> = (0..len)
        .step_by(stride.max(1))
        .map(|offset| address.wrapping_add(offset).cast())
        .collect();
    let mut status: Vec<libc::c_int> = vec![0; pages.len()];
    // SAFETY: `pages` and `status` both hold `pages.len()` entries; with no
    // node array the kernel moves nothing and writes each page's node (or
    // a negative errno) into `status`.
    let done = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0 as libc::pid_t,
            pages.len() as libc::c_ulong,
            pages.as_ptr(),
            std::ptr::null::<libc::c_int>(),
            status.as_mut_ptr(),
            0 as libc::c_int,
        )
    };
    if done < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut nodes = PageNodes {
        pages: pages.len() as u64,
        ..PageNodes::default()
    };
    for &node in &status {
        match u32::try_from(node) {
            Ok(node) => *nodes.by_node.entry(node).or_default() += 1,
            Err(_) => nodes.missing += 1,
        }
    }
    Ok(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_hold_the_nodes_bits() {
        let mask = NodeMask::of(&[0, 2, 65]);
        assert_eq!(mask.words, vec![0b101, 0b10]);
        assert_eq!(mask.max_node(), 129);
        assert_eq!(NodeMask::of(&[]).words, vec![0]);
    }

    #[test]
    fn touched_pages_are_found_on_a_node_and_untouched_ones_missing() {
        let page = 4096;
        let mut memory = vec![0u8; 64 * page];
        let start = memory.as_ptr().align_offset(page);
        let touched = &mut memory[start..start + 16 * page];
        touched.iter_mut().step_by(page).for_each(|b| *b = 1);
        let found = page_nodes(touched.as_ptr(), touched.len(), page).unwrap();
        assert_eq!(found.pages, 16);
        // A kernel without NUMA says every page is on node 0.
        assert_eq!(found.by_node.values().sum::<u64>(), 16);
        assert_eq!(found.missing, 0);
    }
}
