//! NUMA memory policy and page location: `mbind(2)` on a range,
//! `set_mempolicy(2)` and `get_mempolicy(2)` for a thread (read back to
//! check that it took), and `move_pages(2)` with no target, which says the
//! node each page is on. None needs privilege: a policy is the calling
//! thread's own, inherited across fork and exec.
//!
//! Neither `nix` nor `rustix` wraps these (rustix lists them as not
//! implemented), and glibc leaves them to libnuma: they are made through
//! `libc::syscall`, with the constants `libc` defines.

use crate::plan::membind::nodes_phrase;
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

/// Words of the mask a policy is read back into: 1024 nodes, the most a
/// Linux kernel numbers (`NODES_SHIFT` is at most 10); `get_mempolicy`
/// refuses a mask shorter than the kernel's node count.
const READ_BACK_WORDS: usize = 1024 / WORD_BITS;

/// Why a thread's `MPOL_BIND` did not take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindRefused {
    /// `set_mempolicy` failed with this errno.
    Set(i32),
    /// `get_mempolicy` failed with this errno.
    ReadBack(i32),
    /// The policy read back is not `MPOL_BIND` on the nodes asked for.
    Other,
}

impl BindRefused {
    /// The refusal as the wire of a forked child carries it (two ints,
    /// after the stage an exec failure uses: 0).
    pub fn encode(self) -> [libc::c_int; 2] {
        match self {
            BindRefused::Set(errno) => [1, errno],
            BindRefused::ReadBack(errno) => [2, errno],
            BindRefused::Other => [3, 0],
        }
    }

    /// What [`BindRefused::encode`] wrote; `None` for another stage.
    pub fn decode([stage, errno]: [libc::c_int; 2]) -> Option<BindRefused> {
        match stage {
            1 => Some(BindRefused::Set(errno)),
            2 => Some(BindRefused::ReadBack(errno)),
            3 => Some(BindRefused::Other),
            _ => None,
        }
    }

    /// Why, in words, with what to do about it: `nodes` as asked for.
    pub fn reason(self, nodes: &[u32]) -> String {
        let errno = |e: i32| std::io::Error::from_raw_os_error(e);
        match self {
            BindRefused::Set(libc::ENOSYS) | BindRefused::ReadBack(libc::ENOSYS) => {
                "this kernel has no NUMA support (set_mempolicy: ENOSYS); drop --membind".into()
            }
            BindRefused::Set(libc::EPERM) => "set_mempolicy was refused (EPERM: a seccomp \
                filter, such as a container's default profile, allows it only with \
                CAP_SYS_NICE); run with that capability, or drop --membind"
                .into(),
            BindRefused::Set(libc::EINVAL) => format!(
                "set_mempolicy refused {} (EINVAL: none is in this process's cpuset, \
                 Mems_allowed_list in /proc/self/status); name nodes it allows",
                nodes_phrase(nodes)
            ),
            BindRefused::Set(e) => format!("set_mempolicy failed: {}", errno(e)),
            BindRefused::ReadBack(e) => format!("get_mempolicy failed: {}", errno(e)),
            BindRefused::Other => format!(
                "the policy read back is not MPOL_BIND on {} (a cpuset narrowed it: see \
                 Mems_allowed_list in /proc/self/status); name nodes it allows",
                nodes_phrase(nodes)
            ),
        }
    }
}

/// A thread's `MPOL_BIND`, prepared so that a forked child can set it and
/// read it back before its exec with no allocation: two system calls on
/// memory made here.
#[derive(Clone, Debug)]
pub struct PreparedBind {
    mask: NodeMask,
    read_back: Vec<libc::c_ulong>,
}

impl PreparedBind {
    /// The policy binding to `nodes`, and room to read it back.
    pub fn new(nodes: &[u32]) -> PreparedBind {
        let mask = NodeMask::of(nodes);
        let read_back = vec![0; READ_BACK_WORDS.max(mask.words.len())];
        PreparedBind { mask, read_back }
    }

    /// Binds the calling thread's future allocations to the nodes
    /// (`set_mempolicy(MPOL_BIND)`), then reads the policy back: it took
    /// when it is `MPOL_BIND` on those nodes exactly. Async-signal-safe.
    pub fn apply(&mut self) -> Result<(), BindRefused> {
        // SAFETY: set_mempolicy reads `max_node - 1` bits of the mask,
        // which it owns; it changes only this thread's policy.
        let set = unsafe {
            libc::syscall(
                libc::SYS_set_mempolicy,
                libc::MPOL_BIND,
                self.mask.words.as_ptr(),
                self.mask.max_node(),
            )
        };
        if set != 0 {
            return Err(BindRefused::Set(errno()));
        }
        let mut mode: libc::c_int = -1;
        self.read_back.fill(0);
        // SAFETY: get_mempolicy writes one int to `mode` and at most
        // `read_back.len()` words (`max_node - 1` bits) to the mask; no
        // address or flag: the thread's own policy.
        let got = unsafe {
            libc::syscall(
                libc::SYS_get_mempolicy,
                &raw mut mode,
                self.read_back.as_mut_ptr(),
                (self.read_back.len() * WORD_BITS + 1) as libc::c_ulong,
                std::ptr::null::<libc::c_void>(),
                0 as libc::c_ulong,
            )
        };
        if got != 0 {
            return Err(BindRefused::ReadBack(errno()));
        }
        let asked = self.mask.words.iter().chain(std::iter::repeat(&0));
        let same = self
            .read_back
            .iter()
            .zip(asked)
            .all(|(got, want)| got == want);
        if mode != libc::MPOL_BIND || !same {
            return Err(BindRefused::Other);
        }
        Ok(())
    }
}

/// The calling thread's errno, read without allocating.
fn errno() -> i32 {
    // SAFETY: errno is the calling thread's own int.
    unsafe { *libc::__errno_location() }
}

/// Whether this kernel, in this process's cpuset, binds memory to
/// `nodes`: set and read back in a thread of its own (a policy is the
/// thread's, and ends with it), so nothing here changes.
pub fn try_bind(nodes: &[u32]) -> Result<(), BindRefused> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| PreparedBind::new(nodes).apply())
            .join()
            .unwrap_or(Err(BindRefused::Other))
    })
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
    fn a_bind_to_this_machines_node_takes_and_its_refusals_round_trip() {
        // Every Linux machine with NUMA support has node 0 (this one's only).
        assert_eq!(try_bind(&[0]), Ok(()));
        let nowhere = try_bind(&[1000]).unwrap_err();
        assert!(
            matches!(nowhere, BindRefused::Set(libc::EINVAL)),
            "{nowhere:?}"
        );
        assert!(nowhere.reason(&[1000]).contains("Mems_allowed_list"));
        for refused in [
            BindRefused::Set(libc::ENOSYS),
            BindRefused::ReadBack(libc::EFAULT),
            BindRefused::Other,
        ] {
            assert_eq!(BindRefused::decode(refused.encode()), Some(refused));
        }
        assert_eq!(BindRefused::decode([0, libc::ENOENT]), None);
        assert!(
            BindRefused::Set(libc::ENOSYS)
                .reason(&[0])
                .starts_with("this kernel has no NUMA support")
        );
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
