//! Loop memories of any bytes: imported or refused with a message, never a panic. A memory
//! that imports exports again to bytes that import to the same memory, and a guard holding it
//! goes on working.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard::{AgentConfig, AgentGuard, MAX_MEMORY, MAX_MEMORY_BYTES};

fuzz_target!(|data: &[u8]| {
    let config = AgentConfig::default();
    let mut g = AgentGuard::new(&config);
    match g.import_memory(data) {
        Err(e) => {
            assert!(e.to_string().starts_with("memory: "));
            assert_eq!(g.memory_len(), 0, "a refused memory merged something");
        }
        Ok(n) => {
            assert!(n <= MAX_MEMORY && g.memory_len() <= n);
            let out = g.export_memory();
            assert!(out.len() <= MAX_MEMORY_BYTES);
            let mut h = AgentGuard::new(&config);
            assert_eq!(h.import_memory(&out), Ok(g.memory_len()));
            assert_eq!(h.export_memory(), out);
            // Importing twice merges: the same loops, counted twice.
            assert_eq!(g.import_memory(data), Ok(n));
            assert_eq!(g.export_memory().len(), out.len());
            for _ in 0..6 {
                g.call("bash", br#"{"command": "ls"}"#);
                g.result(Some(b""), None);
            }
        }
    }
});
