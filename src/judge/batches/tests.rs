use super::*;
use std::time::Duration;

const RULE: GateRule = GateRule {
    threshold: 0.15,
    min_reps: 6,
    max_reps: 12,
    batching: Batching {
        batches: 2,
        max_batches: 4,
        gap: Duration::from_millis(0),
    },
};

/// Feeds rounds whose siblings cost `treated(rep)` and baseline
/// `baseline(rep)` until the evidence decides; returns the verdict and the
/// evidence. Every round is paired (none excluded).
fn run(treated: impl Fn(usize) -> f64, baseline: impl Fn(usize) -> f64) -> (Verdict, Evidence) {
    run_from(Evidence::default(), treated, baseline)
}

/// [`run`] from `evidence` (a prior, say).
fn run_from(
    mut evidence: Evidence,
    treated: impl Fn(usize) -> f64,
    baseline: impl Fn(usize) -> f64,
) -> (Verdict, Evidence) {
    let mut paired = PairedCosts::default();
    for rep in 0..RULE.max_reps * RULE.batching.max_batches {
        paired.treated.push(treated(rep));
        paired.baseline.push(baseline(rep));
        paired.reps.push(rep);
        if let Next::Decided(verdict) =
            evidence.round_measured(&RULE, rep, std::slice::from_ref(&paired))
        {
            return (verdict, evidence);
        }
    }
    panic!("no verdict after the most rounds: {evidence:?}");
}

/// ±2 % in a fixed pattern: a quiet host.
fn jitter(rep: usize) -> f64 {
    1.0 + 0.02 * [0.0, 1.0, -1.0, 0.5, -0.5, 0.25][rep % 6]
}

#[test]
fn a_quiet_physical_host_decides_after_two_batches_of_six() {
    let (verdict, evidence) = run(|rep| 1.8 * jitter(rep + 1), jitter);
    assert_eq!(verdict, Verdict::Physical);
    let sides: Vec<_> = evidence.batches.iter().map(|b| b.side).collect();
    assert_eq!(sides, [Some(Side::Above), Some(Side::Above)]);
    assert_eq!(evidence.batches[1].rounds, (6..12).collect::<Vec<_>>());
    let noise = evidence.noise().unwrap();
    assert!(!noise.is_high(), "{noise:?}");
    assert_eq!((noise.rounds, noise.noisy_rounds), (12, 0));
}

#[test]
fn a_prior_on_the_side_a_batch_finds_stands_for_the_second_batch() {
    let prior = Evidence::with_prior(Side::Above);
    let (verdict, evidence) = run_from(prior.clone(), |rep| 1.8 * jitter(rep + 1), jitter);
    assert_eq!(verdict, Verdict::Physical);
    assert_eq!(evidence.batches.len(), 1);
    // Against the prior, the measurement still needs its two batches.
    let (verdict, evidence) = run_from(prior, jitter, jitter);
    assert_eq!(verdict, Verdict::Virtual);
    assert_eq!(evidence.batches.len(), 2);
}

#[test]
fn a_quiet_virtual_host_decides_too() {
    let (verdict, evidence) = run(|rep| 1.01 * jitter(rep + 2), jitter);
    assert_eq!(verdict, Verdict::Virtual);
    assert_eq!(evidence.batches.len(), 2);
}

#[test]
fn a_burst_over_one_whole_batch_makes_a_virtual_host_inconclusive_never_physical() {
    // The burst slows the treated arm's second worker through all of
    // batch 1: that batch alone says above, the next one below.
    let (verdict, evidence) = run(
        |rep| if rep < 6 { 1.5 } else { 1.0 } * jitter(rep + 1),
        jitter,
    );
    assert_eq!(verdict, Verdict::Inconclusive);
    let sides: Vec<_> = evidence.batches.iter().map(|b| b.side).collect();
    assert_eq!(sides, [Some(Side::Above), Some(Side::Below)]);
}

#[test]
fn a_burst_over_a_few_rounds_moves_nothing() {
    let burst = |rep: usize| (2..4).contains(&rep) || rep == 8;
    let (verdict, evidence) = run(
        move |rep| if burst(rep) { 1.6 } else { 1.0 } * jitter(rep + 1),
        jitter,
    );
    assert_eq!(verdict, Verdict::Virtual);
    assert!(
        evidence.batches[0].rounds.len() > 6,
        "the burst bought rounds"
    );
}

#[test]
fn a_round_whose_baseline_strays_is_flagged_and_left_out() {
    let (verdict, evidence) = run(
        |rep| 1.8 * jitter(rep),
        |rep| if rep == 4 { 2.0 } else { jitter(rep) },
    );
    assert_eq!(verdict, Verdict::Physical);
    assert_eq!(evidence.batches[0].noisy_rounds, [4]);
    assert_eq!(evidence.batches[0].rounds.len(), 7, "a kept sixth round");
    assert_eq!(evidence.batches[0].estimate.as_ref().unwrap().reps, 6);
    assert_eq!(evidence.noise().unwrap().noisy_rounds, 1);
}

#[test]
fn straddling_batches_buy_more_batches_then_inconclusive() {
    // A penalty right at the threshold, ±5 %.
    let (verdict, evidence) = run(|rep| 1.15 * (1.0 + 0.05 * (rep % 3) as f64 - 0.05), |_| 1.0);
    assert_eq!(verdict, Verdict::Inconclusive);
    assert_eq!(evidence.batches.len(), RULE.batching.max_batches);
    assert!(
        evidence
            .batches
            .iter()
            .all(|b| b.side == Some(Side::Straddles) && b.rounds.len() == RULE.max_reps)
    );
}

#[test]
fn a_host_that_slowed_between_batches_has_a_high_noise_figure() {
    let (verdict, evidence) = run(
        |rep| 1.8 * jitter(rep) * if rep < 6 { 1.0 } else { 1.3 },
        |rep| jitter(rep) * if rep < 6 { 1.0 } else { 1.3 },
    );
    assert_eq!(verdict, Verdict::Physical, "the ratio cancels the drift");
    let noise = evidence.noise().unwrap();
    assert!(
        (noise.baseline_drift.unwrap() - 0.3).abs() < 0.03,
        "{noise:?}"
    );
    assert!(noise.is_high());
}

#[test]
fn the_pooled_estimate_keeps_the_old_one_beside_it() {
    let (_, evidence) = run(|rep| 1.8 * jitter(rep + 1), jitter);
    let mut paired = PairedCosts::default();
    for rep in 0..12 {
        paired.treated.push(1.8 * jitter(rep + 1));
        paired.baseline.push(jitter(rep));
        paired.reps.push(rep);
    }
    let pooled = evidence
        .pooled(&RULE, std::slice::from_ref(&paired))
        .unwrap();
    assert_eq!(pooled.reps, 12);
    let old = pooled.mean_based.unwrap();
    assert!((old.penalty - pooled.penalty).abs() < 0.02);
    assert!(pooled.ci95.low <= pooled.penalty && pooled.penalty <= pooled.ci95.high);
}

#[test]
fn a_round_whose_workers_came_out_uneven_is_flagged_and_left_out() {
    // A burst slowed one sibling worker in rounds 1 and 3: the arm's mean
    // rose by half, which would read as a penalty.
    let mut evidence = Evidence::default();
    let mut paired = PairedCosts::default();
    let mut verdict = None;
    for rep in 0..RULE.max_reps * RULE.batching.max_batches {
        let burst = rep % 4 == 1;
        paired
            .treated
            .push(if burst { 1.5 } else { 1.0 } * jitter(rep + 1));
        paired.baseline.push(jitter(rep));
        paired.reps.push(rep);
        paired.treated_spread.push(if burst { 1.0 } else { 0.02 });
        if let Next::Decided(v) = evidence.round_measured(&RULE, rep, std::slice::from_ref(&paired))
        {
            verdict = Some(v);
            break;
        }
    }
    assert_eq!(verdict, Some(Verdict::Virtual));
    assert!(evidence.batches[0].noisy_rounds.contains(&1));
    let noise = evidence.noise().unwrap();
    assert!(
        noise.is_high(),
        "a quarter of the rounds flagged: {noise:?}"
    );
}

#[test]
fn workers_apart_in_every_round_are_the_hosts_shape_not_noise() {
    // The second worker's host CPU is a third slower all along.
    let mut evidence = Evidence::default();
    let mut paired = PairedCosts::default();
    let mut verdict = None;
    for rep in 0..RULE.max_reps * RULE.batching.max_batches {
        paired.treated.push(0.58 * jitter(rep + 1));
        paired.baseline.push(jitter(rep));
        paired.reps.push(rep);
        paired.treated_spread.push(0.33 + 0.02 * jitter(rep));
        paired.baseline_spread.push(0.05);
        if let Next::Decided(v) = evidence.round_measured(&RULE, rep, std::slice::from_ref(&paired))
        {
            verdict = Some(v);
            break;
        }
    }
    assert_eq!(verdict, Some(Verdict::Virtual));
    assert_eq!(evidence.noise().unwrap().noisy_rounds, 0);
}

/// Feeds two comparisons (the gate's two workers, each against its own
/// CPU alone) until the evidence decides.
fn run_two(worker: impl Fn(usize, usize) -> (f64, f64)) -> (Verdict, Evidence) {
    let mut evidence = Evidence::default();
    let mut paired = [PairedCosts::default(), PairedCosts::default()];
    for rep in 0..RULE.max_reps * RULE.batching.max_batches {
        for (i, one) in paired.iter_mut().enumerate() {
            let (treated, baseline) = worker(i, rep);
            one.treated.push(treated);
            one.baseline.push(baseline);
            one.reps.push(rep);
        }
        if let Next::Decided(verdict) = evidence.round_measured(&RULE, rep, &paired) {
            return (verdict, evidence);
        }
    }
    panic!("no verdict after the most rounds: {evidence:?}");
}

#[test]
fn both_workers_must_pay_for_physical() {
    let (verdict, evidence) = run_two(|i, rep| (1.8 * jitter(rep + i), jitter(rep)));
    assert_eq!(verdict, Verdict::Physical);
    assert!(evidence.batches.iter().all(|b| b.workers.len() == 2));
    let paired: Vec<PairedCosts> = (0..2)
        .map(|i| PairedCosts {
            treated: (0..12).map(|rep| 1.8 * jitter(rep + i)).collect(),
            baseline: (0..12).map(jitter).collect(),
            reps: (0..12).collect(),
            ..PairedCosts::default()
        })
        .collect();
    assert!(evidence.pooled(&RULE, &paired).unwrap().ci95.low > RULE.threshold);
}

#[test]
fn a_steadily_slower_cpu_cancels_in_its_own_workers_ratio() {
    // Worker 1's CPU is 1.5x slower alone and together alike: each
    // worker's ratio is 1, where both workers' mean against CPU 0 alone
    // read +25 %.
    let (verdict, evidence) = run_two(|i, rep| match i {
        0 => (jitter(rep + 1), jitter(rep)),
        _ => (1.5 * jitter(rep + 2), 1.5 * jitter(rep + 3)),
    });
    assert_eq!(verdict, Verdict::Virtual);
    assert_eq!(evidence.batches.len(), 2);
    assert!(!evidence.noise().unwrap().is_high());
}

#[test]
fn one_worker_that_paid_nothing_shows_the_two_share_nothing() {
    // A burst slows worker 1 together (never alone) through both batches:
    // worker 0 paid nothing, so sharing a core is not what slowed it.
    let (verdict, evidence) = run_two(|i, rep| match i {
        0 => (jitter(rep + 1), jitter(rep)),
        _ => (1.6 * jitter(rep + 2), jitter(rep)),
    });
    assert_eq!(verdict, Verdict::Virtual);
    let sides: Vec<_> = evidence.batches[0].workers.iter().map(|w| w.side).collect();
    assert_eq!(sides, [Some(Side::Below), Some(Side::Above)]);
    assert_eq!(evidence.batches[0].side, Some(Side::Below));
    // The batch's estimate is the worker that decided it.
    assert!(evidence.batches[0].estimate.as_ref().unwrap().ci95.high < RULE.threshold);
}
