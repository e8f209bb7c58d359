//! Per-model profiles: small models loop differently from large ones, and tokenizers cut the
//! same text into tokens of different sizes. A profile adjusts a preset's thresholds for one
//! model family, chosen by the model name a host already has (`StreamSettings::model`, the
//! `model` of an OpenAI request).
//!
//! Every entry is justified by a measurement on that model's real output (README, *Per-model
//! profiles*, `scripts/profile_eval.sh`); a family with no entry keeps the preset as it is.

use crate::config::StreamSettings;

/// One model family's adjustments.
pub struct Profile {
    /// The profile's name (`"gemma3"`).
    pub name: &'static str,
    /// Lower-case fragments of model names that select it; the first profile with a fragment
    /// found in the lower-cased name wins.
    pub matches: &'static [&'static str],
    /// What it changes and why, as the README's table says it.
    pub why: &'static str,
    adjust: fn(&mut StreamSettings),
}

impl Profile {
    /// Applies the adjustments to `s` (scaled from whatever preset `s` holds).
    pub fn apply(&self, s: &mut StreamSettings) {
        (self.adjust)(s)
    }
}

impl std::fmt::Debug for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profile").field("name", &self.name).finish()
    }
}

/// The profile table, most specific first. Each entry's numbers are in the README (*Per-model
/// profiles*, `scripts/profile_eval.sh`).
pub static PROFILES: &[Profile] = &[
    Profile {
        name: "smollm2",
        matches: &["smollm2", "smollm-2"],
        why: "halt_span x0.8, at least 32 (balanced 40 -> 32): no human code or text cut by \
              SmolLM2's tokenizer holds three copies over 32 tokens (28 halts HTML closing \
              tags), nor does any normal SmolLM2 output; its code loops halt 1.5 copies sooner",
        adjust: shorter_halt_span,
    },
    Profile {
        name: "gemma3",
        matches: &["gemma-3", "gemma3"],
        why: "halt_span x0.8, at least 32 (balanced 40 -> 32): Gemma3's tokenizer keeps human \
              code and text clear down to 28 tokens (24 halts a Rust argument list); 32 keeps \
              a step of margin; its code loops halt a copy sooner",
        adjust: shorter_halt_span,
    },
];

/// Four fifths of the preset's exact-loop span, never under 32 tokens: the shortest span at
/// which no human code or text halts as both measured tokenizers cut it.
fn shorter_halt_span(s: &mut StreamSettings) {
    s.halt_span = (s.halt_span * 4 / 5).max(32).min(s.halt_span);
}

/// The profile for a model name (any case; `"HuggingFaceTB/SmolLM2-135M-Instruct"`,
/// `"gemma-3-270m-it-Q4_K_M.gguf"`), or `None` for a family without one.
pub fn profile_for(model: &str) -> Option<&'static Profile> {
    if model.is_empty() {
        return None;
    }
    let name = model.to_ascii_lowercase();
    PROFILES
        .iter()
        .find(|p| p.matches.iter().any(|m| name.contains(m)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Preset, StreamConfig};

    #[test]
    fn names_select_their_family_and_others_nothing() {
        for (name, want) in [
            ("HuggingFaceTB/SmolLM2-135M-Instruct", Some("smollm2")),
            ("SmolLM2-135M-Instruct.Q4_1.gguf", Some("smollm2")),
            ("google/gemma-3-270m-it", Some("gemma3")),
            ("gemma-3-270m-q4_k_m.gguf", Some("gemma3")),
            ("meta-llama/Llama-3.1-8B", None),
            ("gemma-2-9b", None),
            ("", None),
        ] {
            assert_eq!(profile_for(name).map(|p| p.name), want, "{name}");
        }
    }

    #[test]
    fn a_profile_scales_the_preset_it_is_given() {
        for (preset, want) in [
            (Preset::Balanced, 32),
            (Preset::Strict, 32),
            (Preset::Lenient, 51),
        ] {
            let mut s = StreamSettings::preset(preset);
            s.model = "SmolLM2-135M".into();
            let c = StreamConfig::new(&s).unwrap();
            assert_eq!(c.settings().halt_span, want, "{preset:?}");
            assert_eq!(c.profile().map(|p| p.name), Some("smollm2"));
        }
        let s = StreamSettings {
            model: "some-other-model".into(),
            ..StreamSettings::default()
        };
        let c = StreamConfig::new(&s).unwrap();
        assert_eq!(c.settings().halt_span, 40);
        assert!(c.profile().is_none());
    }
}
