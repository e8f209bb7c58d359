//! The `loopguard` command's record reader: any bytes, as lines of JSON records of any shape,
//! are read and scanned or refused with a message, never a panic.
#![no_main]

use std::io::BufReader;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use loopguard_cli::lines::{read_line, Line};
use loopguard_cli::records::Scanner;
use loopguard_cli::settings::{load, Configs, PresetChoice};

fuzz_target!(|data: &[u8]| {
    // Built once: a configuration compiles its patterns.
    static CONFIGS: OnceLock<Configs> = OnceLock::new();
    let configs = CONFIGS.get_or_init(|| load(&PresetChoice::default(), None).unwrap());
    let mut scanner = Scanner::new(configs);
    let mut input = BufReader::with_capacity(64, data);
    let mut line = Vec::new();
    let mut n = 0;
    loop {
        match read_line(&mut input, &mut line, 4096).unwrap() {
            Line::End => break,
            Line::TooLong { bytes } => assert!(bytes > 4096),
            Line::Read { .. } => {
                n += 1;
                assert!(line.len() <= 4096);
                if let Ok(record) = serde_json::from_slice(&line) {
                    if let Ok(out) = scanner.scan(&record, format!("line {n}")) {
                        assert!(out.saved <= out.total, "saved {} of {}", out.saved, out.total);
                    }
                }
            }
        }
    }
});
