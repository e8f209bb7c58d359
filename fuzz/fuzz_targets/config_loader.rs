//! Configuration files of any text, TOML or JSON: loaded or refused with a message, never a
//! panic; a loaded configuration makes working guards.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard::{AgentGuard, StreamGuard};
use loopguard_cli::settings::{load_text, PresetChoice, Syntax};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for syntax in [Syntax::Toml, Syntax::Json] {
        match load_text(&PresetChoice::default(), &text, syntax, "fuzz") {
            Ok(c) => {
                let mut s = StreamGuard::new(&c.stream);
                for i in 0..64u32 {
                    s.push_token(i % 3, Some(b"ab"));
                }
                let mut a = AgentGuard::new(&c.agent);
                for _ in 0..8 {
                    a.call("bash", br#"{"command": "ls"}"#);
                    a.result(Some(b"x"), None);
                }
            }
            Err(e) => assert!(e.starts_with("fuzz: "), "{e}"),
        }
    }
});
