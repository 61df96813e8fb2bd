//! Throw-away: the memory study's ladder and matrix on this machine,
//! printed (`cargo run --release --example memory`).

use placement_study::measure::memory::{LadderOptions, NumaOptions, measure_ladder, measure_numa};
use placement_study::plan::memory::{STEPS_PER_OCTAVE, ladder_plan, numa_plan};

fn main() -> anyhow::Result<()> {
    let topology = placement_study::probe::probe(None, None)?;
    let plan = ladder_plan(&topology, None, STEPS_PER_OCTAVE)?;
    let ladder = measure_ladder(&plan, &LadderOptions::default())?;
    println!(
        "ladder on CPU {} ({} sizes, {:.2} s, huge {:?}):",
        ladder.cpu,
        ladder.points.len(),
        ladder.seconds,
        ladder.huge_bytes
    );
    for point in &ladder.points {
        let mut sorted = point.ns_per_load.clone();
        sorted.sort_by(f64::total_cmp);
        println!(
            "{:>12} B  {:8.2} ns  (max {:8.2})",
            point.size_bytes,
            sorted[sorted.len() / 10],
            sorted[sorted.len() - 1]
        );
    }
    let numa = numa_plan(&topology, None, plan.top_bytes())?;
    let matrix = measure_numa(&numa, plan.line_bytes, &NumaOptions::default())?;
    println!("matrix ({:.2} s):", matrix.seconds);
    for column in &matrix.columns {
        println!("{column:?}");
    }
    for cell in &matrix.cells {
        let mut sorted = cell.ns_per_load.clone();
        sorted.sort_by(f64::total_cmp);
        println!(
            "node {} -> {}: {:?} ns, {:?} GB/s",
            cell.cpu_node,
            cell.memory_node,
            sorted.first(),
            cell.bytes_per_second
                .iter()
                .map(|b| b / 1e9)
                .collect::<Vec<_>>()
        );
    }
    Ok(())
}
