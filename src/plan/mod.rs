//! Plan: which CPUs each placement arm uses, from the topology.
