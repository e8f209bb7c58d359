//! The detectors that read a call before it runs: the same call again (back to back,
//! interleaved or in a cycle), a call like one that kept failing, and near duplicates.

use super::text::ArgWords;
use super::{
    outcomes, AgentGuard, AgentLoopKind, AgentSettings, Finding, Reason, Thresholds, MOVING_ANSWERS,
};
use crate::Action;

/// Calls in a row that must repeat an earlier stretch for a replay.
const REPLAY_CALLS: usize = 3;

impl AgentGuard {
    /// 1 when the loop memory holds an identical-call loop on call `i`, which then counts one
    /// repeat more: a loop the agent fell into before warns one repeat earlier. A scan of the
    /// memory: asked only when one repeat more would fire.
    pub(super) fn recalled(&self, i: usize) -> u32 {
        self.memory
            .recalls(AgentLoopKind::IdenticalCall, self.calls[i].memo) as u32
    }

    /// The calls just before this one with its `key`, back to back and answered without a
    /// failure, are a poll whose answer changed within the last `MOVING_ANSWERS` of them: it
    /// watches something that moves (a CI run's jobs finishing one by one), and the agent is
    /// waiting, not repeating itself.
    pub(super) fn polls_moving(&self, key: u64) -> bool {
        let (mut newest, mut same) = (None, 0);
        for c in self.calls.iter().rev() {
            // A failure retried is no poll: its answers differ by a request's id at most.
            let poll = c.key == key && c.answered && c.error.is_none();
            let Some(answer) = c.outcome.filter(|_| poll) else {
                return false;
            };
            match newest {
                Some(n) if n != answer => return same <= MOVING_ANSWERS,
                _ => (newest, same) = (Some(answer), same + 1),
            }
        }
        false
    }

    pub(super) fn identical(&self, s: &AgentSettings, me: usize, found: &mut Vec<Finding>) {
        let t = self.calls[me].repeats.unwrap_or(s.identical);
        if t.is_off() {
            return;
        }
        let count = self.runs[1] + 1;
        if t.action(count + 1) == Action::Continue
            || t.action(count + self.recalled(me)) == Action::Continue
        {
            return;
        }
        // The run may be longer than the window: the evidence is what the window holds.
        let first = (me + 1).saturating_sub(count as usize);
        let calls: Vec<usize> = (first..=me).collect();
        self.args_finding(s, AgentLoopKind::IdenticalCall, t, count, 1, calls, found);
    }

    pub(super) fn interleaved(&self, s: &AgentSettings, me: usize, found: &mut Vec<Finding>) {
        let t = self.calls[me].repeats.unwrap_or(s.interleaved);
        if t.is_off() {
            return;
        }
        let key = self.calls[me].key;
        let lo = (me + 1).saturating_sub(s.interleaved_window as usize);
        let seen = (lo..me).filter(|&i| self.calls[i].key == key).count() + 1;
        if (seen as u32) + 1 < t.first() || (seen as u32) + self.recalled(me) < t.first() {
            return;
        }
        // The agent learnt something in between (a new outcome) and asks again: unless the
        // call was answered the same each time, when asking once more can tell it nothing.
        let mut answers = (lo..me)
            .filter(|&i| self.calls[i].key == key)
            .map(|i| self.calls[i].outcome.filter(|_| self.calls[i].answered));
        let first = answers.next().flatten();
        let same_answer = first.is_some() && answers.all(|a| a == first);
        let mut calls = vec![me];
        for i in (lo..me).rev() {
            let c = &self.calls[i];
            if c.key == key {
                calls.push(i);
            } else if c.novel && !same_answer {
                break;
            }
        }
        if calls.len() as u32 <= self.runs[1] + 1 {
            return; // back to back: `identical` speaks for it
        }
        calls.reverse();
        let count = calls.len() as u32;
        self.args_finding(s, AgentLoopKind::IdenticalCall, t, count, 1, calls, found);
    }

    pub(super) fn cycle(&self, s: &AgentSettings, me: usize, found: &mut Vec<Finding>) {
        if s.cycle.is_off() {
            return;
        }
        for k in s.cycle_min as usize..=s.cycle_max as usize {
            let span = self.runs[k] as usize + k;
            if span < 2 * k || k > me {
                continue;
            }
            let turns = (span.saturating_sub(s.cycle_tail as usize) / k) as u32;
            if s.cycle.action(turns) == Action::Continue {
                continue;
            }
            // The run may be longer than the window: the evidence is what the window holds.
            let first = (me + 1).saturating_sub(span);
            // A cycle of one call repeated is an identical call, reported for k = 1 only.
            if k > 1 && (first..first + k).all(|i| self.calls[i].key == self.calls[me].key) {
                continue;
            }
            let calls: Vec<usize> = (first..=me).collect();
            let kind = if k == 1 {
                AgentLoopKind::IdenticalCall
            } else {
                AgentLoopKind::Cycle
            };
            let before = found.len();
            self.args_finding(s, kind, s.cycle, turns, k, calls, found);
            if let Some(f) = found.get_mut(before) {
                if k > 1 {
                    f.subject = Some(
                        (first..first + k)
                            .map(|i| self.calls[i].label.as_str())
                            .collect::<Vec<_>>()
                            .join(" → "),
                    );
                }
            }
            return;
        }
    }

    /// The agent walks again a stretch of its own earlier calls, in the same order and with
    /// the same results, farther back than a cycle reaches (find, open, search, edit … then
    /// all of it again). The current call and the `REPLAY_CALLS - 1` before it each repeat
    /// the call `d` earlier, which returned what they returned. A replay is a cycle through a
    /// failure: it is on when both `cycle` and `same_error` are (never in a peer's preset,
    /// none of which has it), and only warns.
    pub(super) fn replay(&self, s: &AgentSettings, me: usize, found: &mut Vec<Finding>) {
        if s.cycle.is_off() || s.same_error.is_off() || me < REPLAY_CALLS {
            return;
        }
        let first = me + 1 - REPLAY_CALLS;
        for d in s.cycle_max as usize + 1..=first {
            let same = |i: usize| {
                let (a, b) = (&self.calls[i], &self.calls[i - d]);
                a.memo == b.memo && (i == me || (a.outcome.is_some() && a.outcome == b.outcome))
            };
            // Through a failure its tool has not got past since it first met it.
            let standing = |i: usize| {
                let c = &self.calls[i];
                c.error.is_some() && !(i - d..me).any(|k| self.succeeded(k, c.tool))
            };
            if !(first..=me).all(same) || !(first..me).any(standing) {
                continue;
            }
            let mut f = Finding::new(AgentLoopKind::Cycle, Action::Warn, Reason::NoProgress, 2, 2);
            f.period = d as u32;
            f.calls = (first - d..first).chain(first..=me).collect();
            f.subject = Some(
                (first..=me)
                    .map(|i| self.calls[i].label.as_str())
                    .collect::<Vec<_>>()
                    .join(" → "),
            );
            found.push(f);
            return;
        }
    }

    /// A finding on repeated arguments: no progress when every earlier call that has a result
    /// returned the same one as the call `period` before it (two at least), arguments alone
    /// otherwise (capped).
    #[allow(clippy::too_many_arguments)]
    fn args_finding(
        &self,
        s: &AgentSettings,
        kind: AgentLoopKind,
        t: Thresholds,
        count: u32,
        period: usize,
        calls: Vec<usize>,
        found: &mut Vec<Finding>,
    ) {
        let me = *calls.last().expect("the current call");
        let recalled = if kind == AgentLoopKind::IdenticalCall {
            self.recalled(me)
        } else {
            0
        };
        let mut a = t.action(count + recalled);
        if a == Action::Continue {
            return;
        }
        // Calls `period` apart are the same call: compare their results position by position.
        let (known, distinct) = (0..period)
            .map(|p| {
                outcomes(
                    calls[..calls.len() - 1]
                        .iter()
                        .skip(p)
                        .step_by(period)
                        .map(|&i| &self.calls[i]),
                )
            })
            .fold((0, false), |(k, d), (k2, d2)| (k + k2, d || d2));
        if distinct && s.results_are_progress {
            return; // results changed: progress
        }
        let reason = if known >= 2 && !distinct {
            if self.calls[calls[0]].error.is_some() {
                Reason::RepeatedFailure
            } else {
                Reason::NoProgress
            }
        } else {
            if self.calls[me].poller {
                return;
            }
            a = a.min(s.args_only_cap);
            Reason::RepeatedArgs
        };
        if a == Action::Continue {
            return;
        }
        let mut f = Finding::new(kind, a, reason, count, t.warn.max(1));
        f.period = period as u32;
        f.calls = calls;
        found.push(f);
    }

    /// Calls to a tool whose errors reached the block count are blocked whatever the
    /// arguments, unless those errors each blamed the argument they failed on (`src/main is a
    /// directory`) and this call uses a word the agent has just learnt from the latest result
    /// that none of them tried (the file the `ls` after them listed): it acts on something
    /// new, and may work. It still counts, and warns, if it fails the same way.
    pub(super) fn dead_end_at_call(&self, s: &AgentSettings, me: usize, found: &mut Vec<Finding>) {
        if s.same_error.is_off() || self.calls[me].failure_tolerant || me == 0 {
            return;
        }
        let tool = self.calls[me].tool;
        let last_err = (0..me)
            .rev()
            .map(|i| &self.calls[i])
            .take_while(|c| c.step >= self.failure_epoch)
            .find(|c| c.tool == tool && c.outcome.is_some());
        let Some(fp) = last_err.and_then(|c| c.error) else {
            return; // its last call succeeded
        };
        let calls = self.errors_like(s, me, Some(tool), fp, false);
        let count = calls.len() as u32;
        let a = s.same_error.action(count);
        if a >= Action::Block && !self.new_attempt(me, &calls) {
            let mut f = Finding::new(
                AgentLoopKind::SameError,
                a,
                Reason::RepeatedFailure,
                count,
                s.same_error.warn,
            );
            f.calls = calls;
            f.calls.push(me);
            found.push(f);
        }
    }

    /// Call `me` is a new attempt after the failed `calls`: each of their errors blamed its
    /// argument, and `me` uses a word the latest result taught that none of them tried.
    pub(super) fn new_attempt(&self, me: usize, calls: &[usize]) -> bool {
        calls.iter().all(|&i| self.calls[i].error_names_args) && {
            let tried: Vec<ArgWords> = (calls.iter())
                .map(|&i| ArgWords::of(self.calls[i].args_head.bytes()))
                .collect();
            ArgWords::of(self.calls[me].args_head.bytes()).uses_new(&self.learnt, &tried)
        }
    }

    pub(super) fn near_duplicate(&self, s: &AgentSettings, me: usize, found: &mut Vec<Finding>) {
        if s.near_duplicate.is_off() || self.calls[me].poller {
            return;
        }
        let c = &self.calls[me];
        if c.sketch.is_empty() {
            return;
        }
        let lo = (me + 1).saturating_sub(s.near_window as usize);
        let mut calls: Vec<usize> = (lo..me)
            .filter(|&i| {
                let o = &self.calls[i];
                // Calls made before a write saw other files: they are not repeats of this one.
                o.tool == c.tool
                    && o.version == c.version
                    && !o.blocked
                    && o.sketch.at_least(&c.sketch, s.near_similarity)
            })
            .collect();
        // Only when the arguments differ somewhere: identical calls have their own rules.
        if calls.iter().all(|&i| self.calls[i].key == c.key) {
            return;
        }
        calls.push(me);
        let count = calls.len() as u32;
        let mut a = s.near_duplicate.action(count);
        if a == Action::Continue {
            return;
        }
        let (known, distinct) = outcomes(calls[..calls.len() - 1].iter().map(|&i| &self.calls[i]));
        if distinct {
            return;
        }
        let reason = if known >= 2 {
            Reason::NoProgress
        } else {
            a = a.min(s.args_only_cap);
            Reason::RepeatedArgs
        };
        let mut f = Finding::new(
            AgentLoopKind::NearDuplicate,
            a,
            reason,
            count,
            s.near_duplicate.warn,
        );
        f.calls = calls;
        found.push(f);
    }
}
