//! Prints what a guard holds at each preset.
use loopguard::{Preset, StreamConfig, StreamGuard, StreamSettings};
fn main() {
    for (name, p) in [
        ("strict", Preset::Strict),
        ("balanced", Preset::Balanced),
        ("lenient", Preset::Lenient),
    ] {
        let g = StreamGuard::new(&StreamConfig::preset(p));
        println!("{name:10} {} bytes", g.memory_usage());
    }
    let g =
        StreamGuard::new(&StreamConfig::new(&StreamSettings::vllm_compatible(1, 256, 3)).unwrap());
    println!("{:10} {} bytes", "vllm(1,256,3)", g.memory_usage());
    println!(
        "inline struct: {} bytes",
        std::mem::size_of::<StreamGuard>()
    );
    let mut g = StreamGuard::new(&StreamConfig::default());
    let before = g.memory_usage();
    g.checkpoint();
    println!(
        "a first checkpoint adds {} bytes",
        g.memory_usage() - before
    );
}
