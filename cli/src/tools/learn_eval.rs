//! `emergo learn-eval`: the evaluation weights learnt from self-play — alpha-beta games, then a
//! logistic regression of their results on the evaluation's features — written as a weights
//! file (`engine/weights.txt` format).

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use emergo_engine::learn;

use super::ToolError;

/// Flags of `emergo learn-eval`.
#[derive(Clone, Debug, Args)]
pub struct LearnEvalArgs {
    /// Self-play games.
    #[arg(long, default_value_t = 4000)]
    pub games: usize,
    /// Depth of the alpha-beta self-play.
    #[arg(long, default_value_t = 3)]
    pub depth: u32,
    /// Gradient-descent iterations of the fit.
    #[arg(long, default_value_t = 2000)]
    pub iterations: usize,
    /// Threads playing games.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Seed (the same seed and parameters give the same weights).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the weights to this file instead of standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs `emergo learn-eval`: progress on stderr, the weights file to `--out` or `out`.
pub fn run(args: LearnEvalArgs, out: &mut impl Write) -> Result<(), ToolError> {
    let LearnEvalArgs {
        games,
        depth,
        iterations,
        threads,
        seed,
        out: path,
    } = args;
    if !(1..=1_000_000).contains(&games) || !(1..=8).contains(&depth) {
        return Err(ToolError::Invalid(
            "--games must be in 1..=1000000 and --depth in 1..=8".to_owned(),
        ));
    }
    if !(1..=1_000_000).contains(&iterations) || !(1..=256).contains(&threads) {
        return Err(ToolError::Invalid(
            "--iterations must be in 1..=1000000 and --threads in 1..=256".to_owned(),
        ));
    }
    let cfg = learn::SelfPlay {
        games,
        depth,
        threads,
        seed,
        ..learn::SelfPlay::default()
    };
    let began = Instant::now();
    let samples = learn::generate(&cfg, &|n| {
        if n % 500 == 0 || n == games {
            eprintln!("learn-eval: {n}/{games} self-play games");
        }
    });
    eprintln!(
        "learn-eval: {} positions in {:.1} s; fitting",
        samples.len(),
        began.elapsed().as_secs_f64()
    );
    let start = emergo_engine::eval::Weights::default();
    let (weights, report) = learn::fit(&samples, &start, iterations);
    eprintln!(
        "learn-eval: cross-entropy {:.4} -> {:.4} on {} positions ({:.1} s)",
        report.loss_before,
        report.loss_after,
        report.samples,
        report.elapsed.as_secs_f64()
    );
    let text = format!(
        "# Evaluation weights learnt by `emergo learn-eval --games {games} --depth {depth} \
         --iterations {iterations} --seed {seed}`\n# cross-entropy {:.4} -> {:.4} on {} \
         self-play positions\n{}",
        report.loss_before,
        report.loss_after,
        report.samples,
        weights.to_text()
    );
    match path {
        Some(p) => std::fs::write(p, text)?,
        None => write!(out, "{text}")?,
    }
    Ok(())
}
