//! Output: one JSON line per record, or a summary for a person.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

use loopguard::Action;
use serde_json::Value;

use crate::records::{Outcome, Shape};

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A summary: records, halts, savings, counts per kind and the worst examples.
    Human,
    /// One JSON object per record, in input order.
    Json,
}

/// `{"id", "type", "length", "verdict", "first_warn_at", "block_at", "halt_at", "kind",
/// "period", "repeats", "onset", "tokens_saved", "evidence"}` on one line.
pub fn write_json(out: &mut impl Write, o: &Outcome) -> io::Result<()> {
    fn opt<T: Into<Value>>(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
    // Written field by field to keep the documented order (serde_json sorts map keys).
    let repeats = o.repeats.map(|r| (r * 100.0).round() / 100.0);
    let fields: [(&str, Value); 13] = [
        ("id", o.id.clone().into()),
        ("type", o.shape.as_str().into()),
        ("length", o.length.into()),
        ("verdict", o.verdict.as_str().into()),
        ("first_warn_at", opt(o.first_warn_at)),
        ("block_at", opt(o.block_at)),
        ("halt_at", opt(o.halt_at)),
        ("kind", opt(o.kind)),
        ("period", opt(o.period)),
        ("repeats", opt(repeats)),
        ("onset", opt(o.onset)),
        ("tokens_saved", o.saved.into()),
        ("evidence", opt(o.evidence.clone())),
    ];
    out.write_all(b"{")?;
    for (i, (key, value)) in fields.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        write!(out, "\"{key}\":{value}")?;
    }
    out.write_all(b"}\n")
}

/// Counts over every record and the halts that saved the most.
pub struct Summary {
    records: u64,
    by_shape: BTreeMap<&'static str, u64>,
    /// Records whose strongest action was each of warn, block, halt.
    /// Records by their strongest action, in `Action` order.
    by_action: [u64; 5],
    /// (length, saved) per unit: tokens, words, events.
    units: BTreeMap<&'static str, (u64, u64)>,
    /// (halted, blocked, warned) per kind.
    kinds: BTreeMap<&'static str, [u64; 3]>,
    worst: Vec<Outcome>,
    examples: usize,
    strongest: Action,
}

impl Summary {
    pub fn new(examples: usize) -> Summary {
        Summary {
            records: 0,
            by_shape: BTreeMap::new(),
            by_action: [0; 5],
            units: BTreeMap::new(),
            kinds: BTreeMap::new(),
            worst: Vec::new(),
            examples,
            strongest: Action::Continue,
        }
    }

    /// The strongest action over every record.
    pub fn worst(&self) -> Action {
        self.strongest
    }

    pub fn add(&mut self, o: Outcome) {
        self.records += 1;
        *self.by_shape.entry(o.shape.noun()).or_default() += 1;
        self.by_action[o.verdict as usize] += 1;
        self.strongest = self.strongest.max(o.verdict);
        let unit = self.units.entry(o.shape.unit()).or_default();
        unit.0 += o.total;
        unit.1 += o.saved;
        if let Some(kind) = o.kind {
            let slot = match o.verdict {
                Action::Halt => 0,
                Action::Block => 1,
                _ => 2,
            };
            self.kinds.entry(kind).or_default()[slot] += 1;
        }
        if o.verdict >= Action::Block && self.examples > 0 {
            self.worst.push(o);
            if self.worst.len() > 4 * self.examples {
                self.keep_worst();
            }
        }
    }

    /// Halts before blocks, then the most saved first.
    fn keep_worst(&mut self) {
        self.worst
            .sort_by_key(|o| std::cmp::Reverse((o.verdict, o.saved, o.length)));
        self.worst.truncate(self.examples);
    }

    pub fn write(
        &mut self,
        out: &mut impl Write,
        files: &[PathBuf],
        elapsed: Duration,
        errors: u64,
    ) -> io::Result<()> {
        self.keep_worst();
        let shapes: Vec<String> = self
            .by_shape
            .iter()
            .map(|(shape, n)| format!("{n} {shape}"))
            .collect();
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        writeln!(
            out,
            "Scanned {} records ({}) from {} in {:.2} s.",
            self.records,
            shapes.join(", "),
            names.join(", "),
            elapsed.as_secs_f64()
        )?;
        let pct = |n: u64| 100.0 * n as f64 / self.records.max(1) as f64;
        let [clean, warned, blocked, ended, halted] = self.by_action;
        writeln!(
            out,
            "  halted {halted} ({:.0}%), blocked {blocked} ({:.0}%), warned only {warned} ({:.0}%), clean {clean}",
            pct(halted),
            pct(blocked),
            pct(warned)
        )?;
        if ended > 0 {
            // Only with a reasoning end marker configured.
            writeln!(
                out,
                "  reasoning ended (not halted) {ended} ({:.0}%)",
                pct(ended)
            )?;
        }
        for (unit, (length, saved)) in &self.units {
            writeln!(
                out,
                "  {unit} that would have been saved: {saved} of {length} ({:.0}%)",
                100.0 * *saved as f64 / (*length).max(1) as f64
            )?;
        }
        if errors > 0 {
            writeln!(out, "  {errors} lines could not be read (see stderr)")?;
        }
        if !self.kinds.is_empty() {
            writeln!(out, "\nBy kind (records halted / blocked / warned only):")?;
            let mut kinds: Vec<_> = self.kinds.iter().collect();
            kinds.sort_by(|a, b| b.1.cmp(a.1));
            for (kind, [h, b, w]) in kinds {
                writeln!(out, "  {kind:<20} {h:>6} / {b:>6} / {w:>6}")?;
            }
        }
        if !self.worst.is_empty() {
            writeln!(
                out,
                "\nHalts and blocks, most saved first ({} shown):",
                self.worst.len()
            )?;
            for o in &self.worst {
                example(out, o)?;
            }
        }
        Ok(())
    }
}

/// One halted or blocked record: where, what, how much it saved, and the repeated span.
fn example(out: &mut impl Write, o: &Outcome) -> io::Result<()> {
    let (unit, at) = match o.shape {
        Shape::Tokens => ("token", o.halt_at.or(o.block_at)),
        Shape::Text => ("byte", o.halt_at),
        Shape::Events | Shape::Messages => ("event", o.halt_at.or(o.block_at)),
    };
    writeln!(out, "  {}", o.id)?;
    write!(
        out,
        "    {} at {unit} {} of {}: {}",
        o.verdict.as_str(),
        at.map_or("?".into(), |a| a.to_string()),
        o.length,
        o.kind.unwrap_or("?")
    )?;
    if let Some(p) = o.period.filter(|&p| p > 0) {
        write!(out, ", period {p}")?;
    }
    if let Some(r) = o.repeats {
        write!(out, ", x{r:.1}")?;
    }
    if let Some(s) = o.onset {
        write!(out, " since {unit} {s}")?;
    }
    if o.saved > 0 {
        write!(out, "; saves {} {}", o.saved, o.shape.unit())?;
    }
    writeln!(out)?;
    if let Some(e) = &o.evidence {
        let shown: String = e.chars().take(120).collect();
        let more = if shown.len() < e.len() { "…" } else { "" };
        let what = match o.shape {
            Shape::Tokens | Shape::Text => "repeating",
            Shape::Events | Shape::Messages => "looping on",
        };
        writeln!(out, "    {what} {shown:?}{more}")?;
    }
    Ok(())
}
