//! `loopguard`: scan logs of token streams, texts and agent traces for loops, as the guards
//! would have seen them live.
//!
//! ```text
//! loopguard scan tests/data/smollm2-sample.jsonl          # summary of halts and savings
//! loopguard scan --format json traces.jsonl > verdicts.jsonl
//! loopguard config --print-defaults > loopguard.toml     # every threshold, commented
//! loopguard proxy --upstream http://127.0.0.1:8000       # guard an OpenAI-compatible server
//! ```
//!
//! Exit status: 0 when no record reached the `--fail-on` action (a block or a halt by
//! default), 1 when one did, 2 on errors (bad arguments or configuration, unreadable files,
//! malformed lines; the other records are still scanned and reported).

use std::io::{BufReader, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use loopguard::Action;

use loopguard_cli::lines::{self, Line};
use loopguard_cli::records::Scanner;
use loopguard_cli::report::{self, Format, Summary};
use loopguard_cli::settings::{self, PresetChoice};

#[derive(Parser)]
#[command(
    name = "loopguard",
    version,
    about = "Find where language models looped, and what it cost"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Scan JSON Lines records (token_ids, text, events or messages) with the guards.
    Scan(ScanArgs),
    /// Print or check a configuration file.
    Config(ConfigArgs),
    /// Serve an HTTP proxy in front of an OpenAI-compatible server: looping completions are
    /// cut, looping agents get recovery text (see the README's "Proxy").
    #[cfg(feature = "proxy")]
    Proxy(ProxyArgs),
}

#[cfg(feature = "proxy")]
#[derive(clap::Args)]
struct ProxyArgs {
    /// The server's base URL (the request's path is appended): http://HOST:PORT.
    #[arg(long, value_name = "URL")]
    upstream: String,
    /// Address to listen on (loopback by default).
    #[arg(long, default_value = "127.0.0.1:8089", value_name = "ADDR")]
    listen: std::net::SocketAddr,
    /// A stream preset and/or an agent preset (as for `scan`).
    #[arg(long, value_name = "NAME")]
    preset: Vec<String>,
    /// A TOML or JSON configuration: [stream], [agent], and [models."NAME"] overrides keyed by
    /// the request's `model`.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The finish_reason of a halted choice.
    #[arg(long, default_value = "repetition", value_name = "TEXT")]
    finish_reason: String,
    /// Largest request body, in bytes (larger: 413).
    #[arg(long, default_value_t = 32 << 20, value_name = "BYTES")]
    max_body: usize,
    /// Connections served at once (more: 503).
    #[arg(long, default_value_t = 256, value_name = "N")]
    max_connections: usize,
    /// Seconds to connect to the upstream.
    #[arg(long, default_value_t = 10, value_name = "SECONDS")]
    connect_timeout: u64,
    /// Seconds the upstream may stay silent in a response before it is dropped.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    idle_timeout: u64,
    /// Agent conversations held (least recently used evicted).
    #[arg(long, default_value_t = 4096, value_name = "N")]
    conversations: usize,
    /// No log line per request.
    #[arg(long)]
    quiet: bool,
}

#[derive(clap::Args)]
struct ScanArgs {
    /// JSON Lines files; `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// `human` (a summary) or `json` (one line per record, in input order).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// A stream preset (strict, balanced, lenient) or an agent preset (default, gemini_cli,
    /// openhands, roo_code, cline); give it twice to set both.
    #[arg(long, value_name = "NAME")]
    preset: Vec<String>,
    /// A TOML or JSON configuration (see `loopguard config --print-defaults`).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The weakest action that makes the exit status 1.
    #[arg(long, value_enum, default_value_t = FailOn::Block)]
    fail_on: FailOn,
    /// How many of the worst halts the summary shows.
    #[arg(long, default_value_t = 20, value_name = "N")]
    examples: usize,
    /// The longest line read, in bytes; a longer one is skipped with an error, never held.
    #[arg(long, default_value_t = lines::DEFAULT_MAX_LINE, value_name = "BYTES")]
    max_line_bytes: usize,
}

#[derive(clap::Args)]
struct ConfigArgs {
    /// Print the complete default configuration as commented TOML.
    #[arg(long, conflicts_with = "check")]
    print_defaults: bool,
    /// Read a configuration file and report the first error, if any.
    #[arg(long, value_name = "FILE")]
    check: Option<PathBuf>,
    /// Presets the checked file starts from (as for `scan`).
    #[arg(long, value_name = "NAME")]
    preset: Vec<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum FailOn {
    Warn,
    Block,
    Halt,
    Never,
}

impl FailOn {
    fn fails(self, action: Action) -> bool {
        match self {
            FailOn::Warn => action >= Action::Warn,
            FailOn::Block => action >= Action::Block,
            FailOn::Halt => action == Action::Halt,
            FailOn::Never => false,
        }
    }
}

#[cfg(feature = "proxy")]
fn proxy(args: ProxyArgs) -> Result<ExitCode, String> {
    let choice = PresetChoice::parse(&args.preset)?;
    let (base, models) = settings::load_with_models(&choice, args.config.as_deref())?;
    let mut opts = loopguard_proxy::Options::new(&args.upstream);
    opts.listen = args.listen;
    opts.stream = base.stream;
    opts.agent = base.agent;
    opts.models = models
        .into_iter()
        .map(|(model, c)| loopguard_proxy::ModelOverride {
            model,
            stream: c.stream,
            agent: c.agent,
        })
        .collect();
    opts.finish_reason = args.finish_reason;
    opts.max_body = args.max_body;
    opts.max_connections = args.max_connections;
    opts.connect_timeout = std::time::Duration::from_secs(args.connect_timeout.max(1));
    opts.idle_timeout = std::time::Duration::from_secs(args.idle_timeout.max(1));
    opts.conversations = args.conversations;
    opts.log = !args.quiet;
    loopguard_proxy::run(opts)?;
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Scan(args) => scan(&args),
        Command::Config(args) => config(&args),
        #[cfg(feature = "proxy")]
        Command::Proxy(args) => proxy(args),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("loopguard: {message}");
            ExitCode::from(2)
        }
    }
}

fn config(args: &ConfigArgs) -> Result<ExitCode, String> {
    if args.print_defaults {
        print!("{}", settings::defaults_toml());
        return Ok(ExitCode::SUCCESS);
    }
    let Some(path) = &args.check else {
        return Err("config: give --print-defaults or --check FILE".into());
    };
    let c = settings::load(&PresetChoice::parse(&args.preset)?, Some(path))?;
    println!(
        "{}: valid (stream preset {}, agent preset {})",
        path.display(),
        c.stream_preset.name(),
        c.agent_preset.name()
    );
    Ok(ExitCode::SUCCESS)
}

fn scan(args: &ScanArgs) -> Result<ExitCode, String> {
    let configs = settings::load(&PresetChoice::parse(&args.preset)?, args.config.as_deref())?;
    let mut scanner = Scanner::new(&configs);
    let started = Instant::now();
    let progress = progress_bar(&args.files);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut summary = Summary::new(args.examples);
    let mut errors = 0u64;
    let mut report_error = |message: String| {
        errors += 1;
        progress.suspend(|| eprintln!("{message}"));
    };

    for path in &args.files {
        let name = path.display().to_string();
        let input: Box<dyn Read> = if name == "-" {
            Box::new(std::io::stdin().lock())
        } else {
            match std::fs::File::open(path) {
                Ok(f) => Box::new(f),
                Err(e) => {
                    report_error(format!("{name}: {e}"));
                    continue;
                }
            }
        };
        let mut reader = BufReader::with_capacity(1 << 20, input);
        let mut line = Vec::new();
        let mut number = 0u64;
        loop {
            match lines::read_line(&mut reader, &mut line, args.max_line_bytes) {
                Ok(Line::End) => break,
                Ok(Line::Read { bytes }) => progress.inc(bytes as u64),
                Ok(Line::TooLong { bytes }) => {
                    number += 1;
                    progress.inc(bytes);
                    report_error(format!(
                        "{name}:{number}: a line of {bytes} bytes, over --max-line-bytes {}: skipped",
                        args.max_line_bytes
                    ));
                    continue;
                }
                Err(e) => {
                    report_error(format!("{name}:{}: {e}", number + 1));
                    break;
                }
            }
            number += 1;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let record = match serde_json::from_slice(&line) {
                Ok(v) => v,
                Err(e) => {
                    report_error(format!("{name}:{number}: not valid JSON: {e}"));
                    continue;
                }
            };
            match scanner.scan(&record, format!("{name}:{number}")) {
                Ok(outcome) => {
                    if args.format == Format::Json {
                        report::write_json(&mut out, &outcome).map_err(output_error)?;
                    }
                    summary.add(outcome);
                }
                Err(e) => report_error(format!("{name}:{number}: {e}")),
            }
        }
    }
    progress.finish_and_clear();
    if args.format == Format::Human {
        summary
            .write(&mut out, &args.files, started.elapsed(), errors)
            .map_err(output_error)?;
    }
    out.flush().map_err(output_error)?;
    Ok(if errors > 0 {
        ExitCode::from(2)
    } else if args.fail_on.fails(summary.worst()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// A failed write to standard output. When the reader went away (`loopguard scan ... | head`)
/// there is no one left to tell: exit quietly, as other command-line tools do.
fn output_error(e: std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    format!("writing the output: {e}")
}

/// A byte-count bar on stderr for inputs over 4 MiB (a spinner for standard input); hidden
/// when stderr is not a terminal.
fn progress_bar(files: &[PathBuf]) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let stdin = files.iter().any(|f| f.as_os_str() == "-");
    let total: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    if stdin {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {bytes} scanned ({bytes_per_sec})")
                .expect("a valid template"),
        );
        bar
    } else if total >= 4 << 20 {
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} ({bytes_per_sec}, {eta} left)",
            )
            .expect("a valid template"),
        );
        bar
    } else {
        ProgressBar::hidden()
    }
}
