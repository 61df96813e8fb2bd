//! Throw-away: the memory study on this machine, its numbers printed
//! (`cargo run --release --example memory`).

use placement_study::study::memory::{MemoryOptions, memory_study};

fn main() -> anyhow::Result<()> {
    let topology = placement_study::probe::probe(None, None)?;
    let result = memory_study(&topology, &MemoryOptions::default())?;
    let ladder = &result.ladder;
    println!(
        "ladder on CPU {}: {} sizes in {:.2} s ({} of huge pages)",
        ladder.cpu,
        ladder.points.len(),
        ladder.seconds,
        ladder.huge_bytes.unwrap_or(0) >> 20
    );
    let judged = &result.ladder_judgement;
    for plateau in &judged.plateaus {
        println!(
            "plateau {:>10} to {:>10}: {:7.2} ns ({} sizes)",
            plateau.first_bytes, plateau.last_bytes, plateau.ns, plateau.sizes
        );
    }
    for level in &judged.levels {
        println!(
            "L{} {} B: {:?}",
            level.level, level.size_bytes, level.status
        );
    }
    println!("ladder: {} ({})", judged.verdict.as_str(), judged.reason);
    println!("matrix in {:.2} s:", result.matrix.seconds);
    for row in &result.numa_judgement.rows {
        for cell in &row.cells {
            println!(
                "  node {} -> node {}: {:?} ns, {:?} GB/s",
                cell.cpu_node,
                cell.memory_node,
                cell.latency.as_ref().map(|l| l.ns),
                cell.bandwidth.as_ref().map(|b| b.bytes_per_second / 1e9)
            );
        }
    }
    println!(
        "matrix: {} ({})",
        result.numa_judgement.verdict.as_str(),
        result.numa_judgement.reason
    );
    println!("verdict: {}", result.verdict.as_str());
    Ok(())
}
