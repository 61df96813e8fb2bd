//! Labels more than one view or figure of a kind says: kept here, below
//! the views and the figures that share them, so that neither imports the
//! other.

/// The banner an ungated run carries on every output.
pub const UNGATED: &str = "UNGATED: --skip-gate was given, so nothing shows that placement on this host is \
physical; on a VM these numbers may describe the hypervisor's scheduling, not SMT";

/// Why an arm of a command study is marked.
pub const NOT_QUOTABLE: &str = "* not quotable: its CV is above the bar, under 2 repetitions were \
                            measured, or other load shared its cores (see Checks)";

/// "0-3,8" style list of CPUs, in the order given when not a range.
pub fn cpu_list(cpus: &[u32]) -> String {
    crate::cpuset::CpuSet::from_cpus(cpus.iter().copied()).to_string()
}
