//! The detectors that read what a call returned: no progress, the same error again (whatever
//! the arguments, or alternating), failure streaks, package installs that keep failing and the
//! same result for other arguments.

use super::edits::Edit;
use super::{
    outcomes, AgentGuard, AgentLoopKind, AgentSettings, CallRec, FailureId, Finding, Reason,
};
use crate::Action;

/// Package installs failing in a row that warn (see `failed_installs`).
const FAILED_INSTALLS: usize = 3;

/// Times one change is made or undone in a file before it warns (see `flipping`).
const FLIPS: usize = 3;

/// Bytes an acknowledgment holds at most (see `same_result`).
const ACKNOWLEDGMENT_LEN: usize = 256;

impl AgentGuard {
    pub(super) fn no_progress(&self, s: &AgentSettings, me: usize, found: &mut Vec<Finding>) {
        let run = self.runs[1] as usize;
        if run == 0 || (s.no_progress.is_off() && s.failing_repeats.is_off()) {
            return;
        }
        let calls: Vec<usize> = (me - run..=me).collect();
        let (_, distinct) = outcomes(calls.iter().map(|&i| &self.calls[i]));
        if distinct || calls.iter().any(|&i| self.calls[i].outcome.is_none()) {
            return;
        }
        let count = calls.len() as u32;
        let failing = self.calls[me].error.is_some();
        let (t, reason) = if failing && !s.failing_repeats.is_off() {
            (s.failing_repeats, Reason::RepeatedFailure)
        } else {
            (s.no_progress, Reason::NoProgress)
        };
        let a = t.action(count);
        if a > Action::Continue {
            let mut f = Finding::new(AgentLoopKind::NoProgress, a, reason, count, t.warn.max(1));
            f.period = 1;
            f.calls = calls;
            found.push(f);
        }
    }

    /// Window indexes of calls to `tool` since the failure epoch that failed with `fp`, oldest
    /// first; `me` is included when `with_me`. With no `tool` (a compiler's diagnostic, see
    /// [`diagnostic`](super::diagnostic)), the calls of every tool: a build that stops at one
    /// cause is one dead end whichever command ran it (`setup.py develop`, `pip install -e .`,
    /// `python -m build`), and no other command's success ends it.
    pub(super) fn errors_like(
        &self,
        s: &AgentSettings,
        me: usize,
        tool: Option<u64>,
        fp: u64,
        with_me: bool,
    ) -> Vec<usize> {
        let lo = (me + 1).saturating_sub(s.error_window as usize);
        let end = if with_me { me + 1 } else { me };
        // The streak ends at the tool's last success: a tool that works is not a dead end.
        let lo = tool
            .and_then(|tool| (lo..end).rev().find(|&i| self.succeeded(i, tool)))
            .map_or(lo, |i| i + 1);
        // An edit that leaves a command failing exactly as it failed (but for where the
        // lines now stand) has not fixed it: the same command's same output counts from
        // before the last write too.
        let (memo, placeless) = (self.calls[me].memo, self.calls[me].placeless);
        (lo..end)
            .filter(|&i| {
                let c = &self.calls[i];
                tool.map_or(true, |t| c.tool == t)
                    && c.error == Some(fp)
                    && (c.step >= self.failure_epoch
                        || (c.memo == memo && c.placeless == placeless))
            })
            .collect()
    }

    /// Call `i` is to `tool` and returned without an error.
    pub(super) fn succeeded(&self, i: usize, tool: u64) -> bool {
        let c = &self.calls[i];
        c.tool == tool && c.outcome.is_some() && c.error.is_none()
    }

    /// The failed calls of call `me`'s tool, oldest first, since its last success within the
    /// error window (and since the last write).
    fn failures_since_success(&self, s: &AgentSettings, me: usize) -> Vec<usize> {
        let tool = self.calls[me].tool;
        let lo = (me + 1).saturating_sub(s.error_window as usize);
        let lo = (lo..me)
            .rev()
            .find(|&i| self.succeeded(i, tool))
            .map_or(lo, |i| i + 1);
        (lo..=me)
            .filter(|&i| {
                let c = &self.calls[i];
                c.tool == tool && c.error.is_some() && c.step >= self.failure_epoch
            })
            .collect()
    }

    pub(super) fn same_error(&self, s: &AgentSettings, me: usize, found: &mut Vec<Finding>) {
        if s.same_error.is_off() {
            return;
        }
        let c = &self.calls[me];
        let tool = (!c.diagnosed).then_some(c.tool);
        let fp = c.error.expect("an error");
        let calls = self.errors_like(s, me, tool, fp, true);
        if let Some((&last, before)) = calls.split_last() {
            if last == me && !before.is_empty() && self.new_attempt(me, before) {
                return;
            }
        }
        let t = s.same_error;
        let across = self.failures_across_edits(s, me, tool, fp);
        if across.len() > calls.len() && s.results_are_progress {
            found.extend(Finding::fixes_missed(
                AgentLoopKind::SameError,
                t.warn,
                across,
            ));
            return;
        }
        found.extend(Finding::of_calls(
            AgentLoopKind::SameError,
            Reason::RepeatedFailure,
            t,
            t.warn,
            calls,
        ));
    }

    /// The failures of call `me`'s command with `fp`, its verdicts' counts and its output's end
    /// (every command's, for a compiler's diagnostic) within the error window and since its
    /// tool last succeeded, oldest first, each after an edit made since the one before: a fix
    /// tried each time, and the failure left as it was. A failure of the command in another
    /// way, or with other counts (`2 failed`, then `1 failed`), ends them: the edits moved it.
    fn failures_across_edits(
        &self,
        s: &AgentSettings,
        me: usize,
        tool: Option<u64>,
        fp: u64,
    ) -> Vec<usize> {
        let lo = (me + 1).saturating_sub(s.error_window as usize);
        let memo = self.calls[me].memo;
        let id = (Some(fp), self.calls[me].tally, self.calls[me].tail);
        let mut calls = Vec::new();
        let mut edited = false;
        for i in (lo..=me).rev() {
            let c = &self.calls[i];
            if c.wrote {
                edited = true;
                continue;
            }
            if !c.answered || tool.is_some_and(|t| c.tool != t) {
                continue;
            }
            if c.failure_id() == id {
                // The same failure again with no edit between is `errors_like`'s evidence.
                if calls.is_empty() || edited {
                    calls.push(i);
                    edited = false;
                }
                continue;
            }
            match c.error {
                Some(_) if c.memo == memo => break,
                None if tool.is_some() || c.memo == memo => break,
                _ => {}
            }
        }
        calls.reverse();
        calls
    }

    /// The tool has failed at every call since its last success (and the last write), whatever
    /// the errors: trying one variant after another of something that cannot work here.
    pub(super) fn failure_streak(&self, s: &AgentSettings, me: usize, found: &mut Vec<Finding>) {
        let t = s.failure_streak;
        if t.is_off() {
            return;
        }
        let calls = self.failures_since_success(s, me);
        // The arguments differ: the failures are evidence of a dead end, not of no progress
        // on one call, so this rule warns at most unless told otherwise.
        found.extend(Finding::of_calls(
            AgentLoopKind::FailureStreak,
            Reason::RepeatedFailure,
            t,
            t.warn.max(1),
            calls,
        ));
    }

    /// Package installs failing `FAILED_INSTALLS` times in a row (the calls between aside),
    /// whatever the packages: the agent is repairing its environment, not doing its task, and
    /// what fails three times (a package that is not there, a network that does not answer,
    /// broken dependencies) will not install by trying the next name. On with `same_error`,
    /// and only warns: a host that wants it to block turns on `failure_streak`.
    pub(super) fn failed_installs(&self, s: &AgentSettings, me: usize, found: &mut Vec<Finding>) {
        if s.same_error.is_off() || !self.calls[me].install {
            return;
        }
        let lo = (me + 1).saturating_sub(s.error_window as usize);
        let mut calls: Vec<usize> = (lo..=me)
            .rev()
            .filter(|&i| self.calls[i].install && self.calls[i].answered)
            .take_while(|&i| self.calls[i].error.is_some())
            .collect();
        if calls.len() < FAILED_INSTALLS {
            return;
        }
        calls.reverse();
        let count = calls.len() as u32;
        let mut f = Finding::new(
            AgentLoopKind::FailureStreak,
            Action::Warn,
            Reason::RepeatedFailure,
            count,
            FAILED_INSTALLS as u32,
        );
        // Told by the program when one package manager failed each time (`apt-get failed 3x
        // in a row`: a shell call's tool is its program's), else as what they were.
        let tool = self.calls[me].tool;
        if calls.iter().any(|&i| self.calls[i].tool != tool) {
            f.subject = Some("package installs".into());
        }
        f.calls = calls;
        found.push(f);
    }

    pub(super) fn whack_a_mole(&self, s: &AgentSettings, me: usize, found: &mut Vec<Finding>) {
        if s.whack_a_mole.is_off() {
            return;
        }
        // Newest first.
        let mut errors = self.failures_since_success(s, me);
        errors.reverse();
        let fp = |j: usize| self.calls[errors[j]].error;
        let mut n = 0;
        if errors.len() >= 2 && fp(0) != fp(1) {
            n = 2;
            while n < errors.len() && fp(n) == fp(n - 2) {
                n += 1;
            }
        }
        let circling = self.circling(s, me);
        let calls = if circling.len() > n {
            circling
        } else {
            errors[..n].iter().rev().copied().collect()
        };
        let t = s.whack_a_mole;
        if calls.len() < t.warn as usize && s.results_are_progress {
            // Failures that come back in more than two ways.
            let returning = self.returning(s, me);
            found.extend(Finding::fixes_missed(
                AgentLoopKind::WhackAMole,
                t.warn,
                returning,
            ));
            return;
        }
        if let Some(f) = Finding::of_calls(
            AgentLoopKind::WhackAMole,
            Reason::RepeatedFailure,
            t,
            t.warn,
            calls,
        ) {
            found.push(Finding { period: 2, ..f });
        }
    }

    /// The answered calls of call `me`'s command (its line and directory) within the error
    /// window that failed since it last succeeded, newest first.
    fn command_failures(&self, s: &AgentSettings, me: usize) -> impl Iterator<Item = usize> + '_ {
        let memo = self.calls[me].memo;
        let lo = (me + 1).saturating_sub(s.error_window as usize);
        (lo..=me)
            .rev()
            .filter(move |&i| self.calls[i].memo == memo && self.calls[i].answered)
            .take_while(|&i| self.calls[i].error.is_some())
    }

    /// The failures of call `me`'s command (its line and directory) within the error window
    /// and since it last succeeded, oldest first, when `me`'s failure is one the command gave
    /// before and left behind, and another did so before it: edits that bring back a failure
    /// already fixed, twice, go back over ground covered, in however many ways the command
    /// fails between (`ERR_REQUIRE_ESM`, then `Cannot use import statement`, `ERR_REQUIRE_ESM`
    /// again, a missing module, `Cannot use import statement` again). A failure as it failed
    /// just before is no return (see [`Self::failures_across_edits`]). Empty otherwise.
    fn returning(&self, s: &AgentSettings, me: usize) -> Vec<usize> {
        let mut calls: Vec<usize> = self.command_failures(s, me).collect();
        calls.reverse();
        let id = |i: usize| self.calls[i].failure_id();
        let returns = |k: usize| {
            k >= 2
                && id(calls[k]) != id(calls[k - 1])
                && calls[..k - 1].iter().any(|&j| id(j) == id(calls[k]))
        };
        let last = calls.len().wrapping_sub(1);
        if calls.is_empty() || !returns(last) || !(0..last).any(returns) {
            return Vec::new();
        }
        calls
    }

    /// The newest failures of call `me`'s command (its line and directory), since it last
    /// succeeded, within the error window and across writes, oldest first, as far back as they
    /// fail in exactly two ways (what failed, see [`CallRec::failure_id`]): an edit that turns
    /// one failure into the other and back has fixed nothing, as an edit that leaves one failure as it was has not (see
    /// [`Self::errors_like`]). The failure the agent set out to fix, a third way before the
    /// two, ends them. Empty unless there are two ways.
    fn circling(&self, s: &AgentSettings, me: usize) -> Vec<usize> {
        let mut calls = Vec::new();
        let mut ways: [Option<FailureId>; 2] = [None; 2];
        for i in self.command_failures(s, me) {
            let way = Some(self.calls[i].failure_id());
            match ways {
                [None, _] => ways[0] = way,
                [w, None] if w != way => ways[1] = way,
                [w, v] if w != way && v != way => break,
                _ => {}
            }
            calls.push(i);
        }
        calls.reverse();
        if ways[1].is_some() {
            calls
        } else {
            Vec::new()
        }
    }

    /// A change made a third time in a file, made or undone (the same text replaced by the same
    /// other, either way), other edits between: the agent switches a setting back and forth
    /// (`slice(0, max)` to `slice(0, max - 1)` and back, a test's 80 and 81) instead of finding
    /// why neither holds. A change made and undone once is a trial; a third time is going back
    /// over ground covered. A warning, with the edits as evidence.
    pub(super) fn flipping(&self, s: &AgentSettings, me: usize, found: &mut Vec<Finding>) {
        let t = s.whack_a_mole;
        let Some(Edit::Replace { path, delta, .. }) = self.calls[me].edit else {
            return;
        };
        if t.is_off() || !s.results_are_progress || delta == 0 {
            return;
        }
        let lo = (me + 1).saturating_sub(s.error_window as usize);
        let calls: Vec<usize> = (lo..=me)
            .filter(|&i| {
                let c = &self.calls[i];
                c.answered
                    && c.error.is_none()
                    && matches!(c.edit, Some(Edit::Replace { path: p, delta: d, .. })
                        if p == path && d == delta)
            })
            .collect();
        found.extend(Finding::fixes_missed(
            AgentLoopKind::WhackAMole,
            FLIPS as u32,
            calls,
        ));
    }

    /// Reads of a shell in a row within the error window, nothing else between (SWE-agent's
    /// `scroll_up`, `scroll_down`, `goto`, `open`), that show call `me`'s page for the third
    /// time: paging back and forth over the same windows of a file, or reopening two files in
    /// turn, however the agent moves, learns nothing from them. A read that
    /// comes back to a page after other work (a search, an edit, another file) is a revisit,
    /// and ends the run. The calls that showed it, oldest first, when one of them was made
    /// another way; empty otherwise.
    fn paging(&self, s: &AgentSettings, me: usize) -> Vec<usize> {
        let c = &self.calls[me];
        let reads = |o: &CallRec| {
            o.shell
                && o.answered
                && o.error.is_none()
                && !o.progress
                && !o.check
                && !o.install
                && !o.launched
                && o.result_len > ACKNOWLEDGMENT_LEN
                && o.version == c.version
        };
        if !s.results_are_progress || !reads(c) {
            return Vec::new();
        }
        let lo = (me + 1).saturating_sub(s.error_window as usize);
        let mut calls: Vec<usize> = (lo..me)
            .rev()
            .take_while(|&i| reads(&self.calls[i]))
            .filter(|&i| self.calls[i].outcome == c.outcome)
            .collect();
        calls.reverse();
        // The same call again and again, nothing between: the rules on repeated calls judge it.
        let repeated = calls.iter().all(|&i| self.calls[i].key == c.key)
            && calls.windows(2).all(|w| w[0] + 1 == w[1])
            && calls.last().map_or(true, |&l| l + 1 == me);
        if repeated {
            calls.clear();
        }
        calls
    }

    /// The same result for different arguments: they do not matter, the agent learns nothing
    /// by varying them. Not an acknowledgment (below); not a write that succeeded, repeats no
    /// earlier write and whose answer does not say no (Gemini CLI's `replace` answering
    /// "Successfully modified file: F" to each edit of F), nor packages installed one after
    /// another (`npm install zod`, then `date-fns`: a package manager's summary reads alike
    /// whatever it installed, `found 0 vulnerabilities` included); not a check of the project
    /// that passed (`cargo check` answering `Finished` after each edit, `pytest` answering `2
    /// passed` for each test file): passing checks answer alike by design, and each says its
    /// edit or its target is right, unless the answer only hands back the handle of the check
    /// started in the background (Windsurf's `Background command ID: …`), which says nothing
    /// of its verdict. A script of the agent's own answering alike after each edit
    /// says the edits change nothing, and an editor answering different edits with the same
    /// refusal (`Usage: edit …`, a linter's error), where the harness flags no failure, did
    /// nothing.
    pub(super) fn same_result(&self, s: &AgentSettings, me: usize, found: &mut Vec<Finding>) {
        let c = &self.calls[me];
        if s.same_result.is_off()
            || c.outcome.is_none()
            || (c.result_len < s.same_result_min_len as usize && !c.nothing_found)
            || (s.results_are_progress
                && ((c.check && !c.launched) || (c.wrote && (c.install || !c.denies))))
        {
            return;
        }
        let lo = (me + 1).saturating_sub(s.near_window as usize);
        let mut calls: Vec<usize> = (lo..me)
            .filter(|&i| {
                let o = &self.calls[i];
                o.tool == c.tool && o.outcome == c.outcome && o.key != c.key
            })
            .collect();
        if calls.len() + 1 < s.same_result.warn as usize {
            calls = self.paging(s, me);
        }
        // A tool that has answered every call held alike and briefly, from its first, each
        // call with new arguments, acknowledges: OpenHands' `think` ("Your thought has been
        // logged."), Claude Code's `TodoWrite` ("Todos have been modified successfully…" to
        // every list). Its answer does not depend on what it is given, and a write is judged
        // by what it writes (a write that repeats an earlier one). Not a shell's program
        // (`ls` or `find` answering three paths alike has found nothing), not an answer that
        // says no (`No files found` to three patterns: see `failure::denies`), not a page, a
        // listing or an editor's refusal quoting the edit, which are long, and not the same
        // call (no write) made again after an edit and answered alike: that edit changed
        // nothing.
        // (`calls` not empty: an earlier call of the tool answered alike.)
        if !calls.is_empty()
            && !c.shell
            && !c.denies
            && c.result_len <= ACKNOWLEDGMENT_LEN
            && (self.calls.iter().take(me))
                .filter(|o| o.tool == c.tool)
                .all(|o| o.answered && o.outcome == c.outcome && (c.progress || o.memo != c.memo))
        {
            return;
        }
        calls.push(me);
        let t = s.same_result;
        found.extend(Finding::of_calls(
            AgentLoopKind::SameResult,
            Reason::NoProgress,
            t,
            t.warn,
            calls,
        ));
    }
}
