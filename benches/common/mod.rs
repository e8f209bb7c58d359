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
