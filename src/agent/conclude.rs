//! How the findings of one event become the guard's verdict: the strongest finding wins
//! (a tie goes to the most specific kind), agreeing detectors raise the confidence, and the
//! ladder climbs — strikes and blocks past their settings halt — with a recommendation, the
//! evidence steps and the calls tried.

use super::MAX_EVIDENCE;
use super::{AgentGuard, AgentLoopKind, AgentVerdict, Reason, Recommendation, Thresholds};
use crate::Action;

/// One finding of one detector on one event.
#[derive(Clone, Debug)]
pub(super) struct Finding {
    pub(super) kind: AgentLoopKind,
    pub(super) action: Action,
    pub(super) reason: Reason,
    pub(super) count: u32,
    pub(super) period: u32,
    pub(super) confidence: f32,
    /// Window indexes of the calls that are the evidence, or message steps (`steps`).
    pub(super) calls: Vec<usize>,
    pub(super) steps: Vec<u64>,
    pub(super) subject: Option<String>,
}

impl Finding {
    pub(super) fn new(
        kind: AgentLoopKind,
        action: Action,
        reason: Reason,
        count: u32,
        over: u32,
    ) -> Finding {
        let base = match reason {
            Reason::RepeatedArgs => 0.5,
            Reason::NoProgress => 0.8,
            Reason::RepeatedFailure | Reason::FixesMissed => 0.7,
            Reason::Text => 0.75,
            Reason::State | Reason::None => 0.6,
        };
        Finding {
            kind,
            action,
            reason,
            count,
            period: 0,
            confidence: (base + 0.05 * count.saturating_sub(over) as f32).min(0.99),
            calls: Vec::new(),
            steps: Vec::new(),
            subject: None,
        }
    }

    /// Fixes that miss over `calls` (window indexes, oldest first), from `warn` of them: a
    /// warning at most, since the evidence is of edits that do not reach a cause, not of a call
    /// repeated (see [`Reason::FixesMissed`]).
    pub(super) fn fixes_missed(
        kind: AgentLoopKind,
        warn: u32,
        calls: Vec<usize>,
    ) -> Option<Finding> {
        let t = Thresholds::new(warn, 0, 0);
        Finding::of_calls(kind, Reason::FixesMissed, t, warn, calls)
    }

    /// What a rule with thresholds `t` finds over `calls` (window indexes, oldest first):
    /// nothing below its first threshold, else the action their count earns. `over` is the
    /// count past which confidence grows.
    pub(super) fn of_calls(
        kind: AgentLoopKind,
        reason: Reason,
        t: Thresholds,
        over: u32,
        calls: Vec<usize>,
    ) -> Option<Finding> {
        let count = calls.len() as u32;
        let action = t.action(count);
        (action > Action::Continue).then(|| Finding {
            calls,
            ..Finding::new(kind, action, reason, count, over)
        })
    }
}

impl AgentGuard {
    pub(super) fn sticky_halt(&self) -> bool {
        self.verdict.action == Action::Halt
    }

    pub(super) fn quiet_or_halt(&mut self) -> &AgentVerdict {
        if self.sticky_halt() {
            return &self.verdict;
        }
        self.quiet()
    }

    pub(super) fn quiet(&mut self) -> &AgentVerdict {
        self.verdict = AgentVerdict {
            step: self.step.saturating_sub(1),
            strikes: self.strikes,
            ..AgentVerdict::default()
        };
        &self.verdict
    }

    /// Fuses the findings of one event into the verdict and climbs the ladder.
    pub(super) fn conclude(
        &mut self,
        found: Vec<Finding>,
        step: u64,
        args_invalid: bool,
    ) -> &AgentVerdict {
        let s = &self.config.inner.settings;
        let Some(best) = found
            .iter()
            .filter(|f| f.action > Action::Continue)
            .max_by(|a, b| {
                a.action
                    .cmp(&b.action)
                    // A tie goes to the most specific kind: the lowest value.
                    .then((b.kind as u8).cmp(&(a.kind as u8)))
            })
            .cloned()
        else {
            self.quiet();
            self.verdict.step = step;
            self.verdict.args_invalid = args_invalid;
            return &self.verdict;
        };
        // Independent detectors that agree make a loop more certain.
        let doubt: f32 = found
            .iter()
            .filter(|f| f.action > Action::Continue)
            .map(|f| 1.0 - f.confidence)
            .product();
        let confidence = (1.0 - doubt).clamp(0.0, 0.999);
        let mut action = best.action;
        self.strikes += 1;
        if s.halt_after_strikes > 0 && self.strikes >= s.halt_after_strikes {
            action = Action::Halt;
        }
        if action == Action::Block {
            if s.halt_after_blocks > 0 && self.blocks >= s.halt_after_blocks {
                action = Action::Halt;
            }
            self.blocks += 1;
        }
        // Escalating is asking the user, which a streak of questions must not be told to do.
        let escalate = best.kind != AgentLoopKind::QuestionStreak;
        let recommendation = if action == Action::Halt || (self.strikes >= 4 && escalate) {
            Recommendation::Escalate
        } else {
            match best.kind {
                AgentLoopKind::SameError
                | AgentLoopKind::WhackAMole
                | AgentLoopKind::Oscillation => Recommendation::Backtrack,
                _ => Recommendation::Replan,
            }
        };
        let mut evidence: Vec<u64> = best
            .calls
            .iter()
            .map(|&i| self.calls[i].step)
            .chain(best.steps.iter().copied())
            .collect();
        if evidence.len() > MAX_EVIDENCE {
            evidence.drain(..evidence.len() - MAX_EVIDENCE);
        }
        let mut tried: Vec<String> = Vec::new();
        for &i in &best.calls {
            let l = &self.calls[i].label;
            if !tried.contains(l) {
                tried.push(l.clone());
            }
        }
        let subject = best.subject.clone().unwrap_or_else(|| {
            best.calls
                .last()
                .map(|&i| self.calls[i].label.clone())
                .unwrap_or_default()
        });
        self.verdict = AgentVerdict {
            action,
            kind: best.kind,
            reason: best.reason,
            count: best.count,
            period: best.period,
            confidence,
            recommendation,
            strikes: self.strikes,
            step,
            args_invalid,
            subject,
            evidence,
            tried,
            // The memory made the difference: the thresholds alone ask less at this count.
            remembered: best.kind == AgentLoopKind::IdenticalCall
                && best.calls.last().is_some_and(|&i| {
                    let t = self.calls[i].repeats.unwrap_or(s.identical);
                    self.recalled(i) > 0 && t.action(best.count) < best.action
                }),
        };
        // A repeated call is remembered once per loop, for later sessions.
        if best.kind == AgentLoopKind::IdenticalCall {
            if let Some(&i) = best.calls.last() {
                let key = self.calls[i].memo;
                if self.last_memo != Some(key) {
                    self.memory
                        .record(AgentLoopKind::IdenticalCall, key, 1, false);
                    self.last_memo = Some(key);
                }
            }
        }
        let st = &mut self.stats;
        st.detections += 1;
        st.by_kind[best.kind as usize] += 1;
        st.highest_strike = st.highest_strike.max(self.strikes);
        match action {
            Action::Warn => st.warnings += 1,
            Action::Block => st.blocks += 1,
            // The agent guard never ends a reasoning section: a halt is the nearest thing.
            Action::Halt | Action::EndReasoning => st.halts += 1,
            Action::Continue => {}
        }
        &self.verdict
    }
}
