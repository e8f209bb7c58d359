//! Timing helpers shared by the benchmarks.
#![allow(dead_code)]

use std::hint::black_box;
use std::time::Instant;

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs `f` `rounds` times and returns the median seconds per call.
pub fn time(rounds: usize, mut f: impl FnMut() -> u64) -> f64 {
    let mut secs = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        black_box(f());
        secs.push(t.elapsed().as_secs_f64());
    }
    median(secs)
}

/// Runs `f` and `g` in turn, `rounds` times each, and returns the median seconds per call of
/// each and the median of the per-round ratios `g / f`. Each round's two runs are back to back,
/// so the ratio holds even when the machine's speed drifts between rounds.
pub fn time_pair(
    rounds: usize,
    mut f: impl FnMut() -> u64,
    mut g: impl FnMut() -> u64,
) -> (f64, f64, f64) {
    let (mut fs, mut gs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        black_box(f());
        let a = t.elapsed().as_secs_f64();
        let t = Instant::now();
        black_box(g());
        let b = t.elapsed().as_secs_f64();
        fs.push(a);
        gs.push(b);
        ratios.push(b / a);
    }
    (median(fs), median(gs), median(ratios))
}
