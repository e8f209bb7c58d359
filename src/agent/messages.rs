//! What the agent says and reports besides its tool calls: assistant messages (whole or
//! streamed), thoughts, user turns and state fingerprints, and the rules that read them
//! (identical messages, monologues, semantic repeats, runaway text, chanting, degenerate
//! message text, oscillating states).

use super::chant;
use super::topic::WordSet;
use super::MESSAGE_WORDS_BYTES;
use super::{AgentGuard, AgentLoopKind, AgentSettings, AgentVerdict, Finding, Reason};
use crate::Action;

impl AgentGuard {
    /// A whole assistant message (text the model wrote, not a tool call).
    pub fn assistant(&mut self, text: &str) -> &AgentVerdict {
        let during = self.assistant_chunk(text).clone();
        self.end_message();
        if during.action > self.verdict.action {
            self.verdict = during;
        }
        &self.verdict
    }

    /// Part of a streamed assistant message. Call [`end_message`](Self::end_message) when it is
    /// complete (a tool call also ends it).
    pub fn assistant_chunk(&mut self, text: &str) -> &AgentVerdict {
        self.stats.checks += 1;
        if self.sticky_halt() || !self.enabled {
            return self.quiet_or_halt();
        }
        if !self.message_open {
            self.message_open = true;
            self.message_hash.reset();
            self.message_bytes.clear();
        }
        self.message_hash.update(text.as_bytes());
        let room = MESSAGE_WORDS_BYTES.saturating_sub(self.message_bytes.len());
        self.message_bytes
            .extend_from_slice(&text.as_bytes()[..room.min(text.len())]);
        self.runaway_chars += text.chars().count() as u64;
        let config = self.config.clone();
        let s = &config.inner.settings;
        let step = self.step;
        let mut found = Vec::new();
        if let Some(f) = self.runaway() {
            found.push(f);
        }
        if let Some(c) = &s.chant {
            if self.chant.push(c, text).is_some() {
                let mut f = Finding::new(
                    AgentLoopKind::ContentChanting,
                    Action::Warn,
                    Reason::Text,
                    c.threshold,
                    c.threshold,
                );
                f.steps.push(step);
                found.push(f);
            }
        }
        let fences = text.matches("```").count();
        let was_in_code = self.in_code;
        self.in_code ^= fences % 2 == 1;
        // Rules and box drawing are layout, whatever their length.
        let prose = !was_in_code && !self.in_code && fences == 0 && !chant::is_divider(text);
        if let Some(g) = self.message_guard.as_mut().filter(|_| prose) {
            let before = g.verdict().action;
            let v = g.push_text(text.as_bytes());
            // A reasoning end a message guard may be configured for is a halt here: the
            // agent guard cannot force text into the model's message.
            if v.action >= Action::EndReasoning && before < Action::EndReasoning {
                let copies = v.repeats as u32;
                let mut f = Finding::new(
                    AgentLoopKind::TextDegeneration,
                    s.message_text_action,
                    Reason::Text,
                    copies,
                    3,
                );
                f.steps.push(step);
                f.subject = Some(
                    String::from_utf8_lossy(g.repeated_text())
                        .trim()
                        .chars()
                        .take(80)
                        .collect(),
                );
                if s.message_text_action != Action::Continue {
                    found.push(f);
                }
            }
        }
        self.conclude(found, step, false);
        &self.verdict
    }

    /// Ends the streamed assistant message: it counts as one step for the message rules
    /// (identical messages, monologue, semantic repeats).
    pub fn end_message(&mut self) -> &AgentVerdict {
        if !self.message_open || self.sticky_halt() || !self.enabled {
            return self.quiet_or_halt();
        }
        let step = self.step;
        self.step += 1;
        let hash = self.message_hash.digest();
        let bytes = std::mem::take(&mut self.message_bytes);
        self.end_message_text();
        let config = self.config.clone();
        let s = &config.inner.settings;
        let mut found = Vec::new();
        self.identical_messages = if self.last_message == Some(hash) {
            self.identical_messages + 1
        } else {
            1
        };
        self.last_message = Some(hash);
        let a = s.identical_messages.action(self.identical_messages);
        if a > Action::Continue {
            let mut f = Finding::new(
                AgentLoopKind::IdenticalMessages,
                a,
                Reason::Text,
                self.identical_messages,
                s.identical_messages.warn,
            );
            f.steps.push(step);
            found.push(f);
        }
        self.monologue += 1;
        let a = s.monologue.action(self.monologue);
        if a > Action::Continue {
            let mut f = Finding::new(
                AgentLoopKind::Monologue,
                a,
                Reason::Text,
                self.monologue,
                s.monologue.warn,
            );
            f.steps.push(step);
            found.push(f);
        }
        found.extend(self.semantic(&bytes, step));
        self.message_bytes = bytes;
        self.conclude(found, step, false);
        &self.verdict
    }

    /// A thought (reasoning the model gave without acting): compared with earlier thoughts and
    /// messages; it neither counts as a step nor breaks runs of tool calls.
    pub fn thought(&mut self, text: &str) -> &AgentVerdict {
        self.stats.checks += 1;
        if self.sticky_halt() || !self.enabled {
            return self.quiet_or_halt();
        }
        let step = self.step;
        let found = self.semantic(text.as_bytes(), step).into_iter().collect();
        self.conclude(found, step, false);
        &self.verdict
    }

    /// A user turn. When `user_resets_scope` is set (the default), detection starts afresh.
    pub fn user(&mut self, _text: &str) -> &AgentVerdict {
        self.stats.checks += 1;
        self.step += 1;
        if self.config.inner.settings.user_resets_scope {
            self.reset();
        }
        self.quiet_or_halt()
    }

    /// A fingerprint of the state the agent works on (e.g. a hash of the files it touched),
    /// reported after each change. Going back and forth between states is a loop.
    pub fn state(&mut self, fingerprint: u64) -> &AgentVerdict {
        self.stats.checks += 1;
        if self.sticky_halt() || !self.enabled {
            return self.quiet_or_halt();
        }
        let step = self.step;
        if self.states.back() == Some(&fingerprint) {
            return self.quiet();
        }
        let back2 = self.states.len().checked_sub(2).map(|i| self.states[i]);
        self.returns = if back2 == Some(fingerprint) {
            self.returns + 1
        } else {
            0
        };
        if self.states.len() == 4 {
            self.states.pop_front();
        }
        self.states.push_back(fingerprint);
        let s = &self.config.inner.settings;
        let a = s.oscillation.action(self.returns);
        let mut found = Vec::new();
        if a > Action::Continue {
            let mut f = Finding::new(
                AgentLoopKind::Oscillation,
                a,
                Reason::State,
                self.returns,
                s.oscillation.warn,
            );
            f.period = 2;
            f.steps.push(step);
            f.subject = Some(format!("state {fingerprint:016x}"));
            found.push(f);
        }
        self.conclude(found, step, false);
        &self.verdict
    }

    // ---- detectors on text ----

    pub(super) fn semantic(&mut self, text: &[u8], step: u64) -> Option<Finding> {
        let s = &self.config.inner.settings;
        if s.semantic_repeat.is_off() {
            return None;
        }
        let words = WordSet::of(text, &mut self.scratch);
        if words.is_empty() {
            return None;
        }
        let mut steps: Vec<u64> = self
            .messages
            .iter()
            .filter(|(_, w)| w.jaccard(&words) >= s.semantic_similarity)
            .map(|(st, _)| *st)
            .collect();
        steps.push(step);
        if self.messages.len() == s.semantic_window as usize {
            self.messages.pop_front();
        }
        self.messages.push_back((step, words));
        // Restating the goal while every action differs is how agents write, not a loop: the
        // actions taken since the first of these messages must repeat too.
        if !self.actions_repeat(s, steps[0]) {
            return None;
        }
        let count = steps.len() as u32;
        let a = s
            .semantic_repeat
            .action(count)
            .min(s.args_only_cap.max(Action::Warn));
        if a == Action::Continue {
            return None;
        }
        let mut f = Finding::new(
            AgentLoopKind::SemanticRepeat,
            a,
            Reason::Text,
            count,
            s.semantic_repeat.warn,
        );
        f.steps = steps;
        f.subject = Some(
            String::from_utf8_lossy(text)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .chars()
                .take(80)
                .collect(),
        );
        Some(f)
    }

    /// Among the calls made since step `since`, one repeats another: the same call (as the
    /// files then were), or a near duplicate of it. A write that repeats one writes what was
    /// written already; any other call repeats only if its result taught nothing new: an
    /// agent that says the same thing while each `ls` of a walk down the directories lists
    /// new files is making progress, however alike its words.
    fn actions_repeat(&self, s: &AgentSettings, since: u64) -> bool {
        let lo = self.calls.partition_point(|c| c.step < since);
        (lo..self.calls.len()).any(|j| {
            let c = &self.calls[j];
            (c.progress || (c.answered && !c.novel))
                && (lo..j).any(|i| {
                    let o = &self.calls[i];
                    o.key == c.key
                        || (o.tool == c.tool
                            && !c.sketch.is_empty()
                            && o.sketch.at_least(&c.sketch, s.near_similarity))
                })
        })
    }

    pub(super) fn runaway(&self) -> Option<Finding> {
        let s = &self.config.inner.settings;
        if s.runaway_chars == 0 || self.runaway_chars < s.runaway_chars as u64 {
            return None;
        }
        let (now, since) = (self.now_ms?, self.last_tool_ms?);
        if now.saturating_sub(since) < s.runaway_ms as u64 {
            return None;
        }
        let mut f = Finding::new(
            AgentLoopKind::RunawayText,
            s.runaway_action,
            Reason::Text,
            self.runaway_chars.min(u32::MAX as u64) as u32,
            s.runaway_chars,
        );
        f.confidence = 0.7;
        f.steps.push(self.step);
        Some(f)
    }

    pub(super) fn end_message_text(&mut self) {
        self.message_open = false;
        self.in_code = false;
        // A reset clears 16 KiB: only when some text went in.
        if let Some(g) = self.message_guard.as_mut().filter(|g| g.stats().bytes > 0) {
            g.reset();
        }
    }
}
