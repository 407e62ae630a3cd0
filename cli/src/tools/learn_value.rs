//! `emergo learn-value`: the value network (`engine/value-net.txt`) learnt from alpha-beta
//! searches — positions from alpha-beta self-play (or saved ones, or recorded games), each
//! labelled by a deeper search, and a small network fitted to correct the evaluation towards
//! those labels, one game in ten held out to judge it.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use emergo_engine::distill::{self, DistillConfig, Labelled};
use emergo_engine::eval::{Correction, Weights};
use emergo_engine::value_net::{self, TrainConfig};

use super::ToolError;

/// Flags of `emergo learn-value`.
#[derive(Clone, Debug, Args)]
pub struct LearnValueArgs {
    /// Self-play games (ignored with --data).
    #[arg(long, default_value_t = DistillConfig::default().games)]
    pub games: usize,
    /// Depth of the self-play searches.
    #[arg(long, default_value_t = DistillConfig::default().play_depth)]
    pub play_depth: u32,
    /// Depth of the labelling searches.
    #[arg(long, default_value_t = DistillConfig::default().label_depth)]
    pub label_depth: u32,
    /// One game in this many has a weak side, which plays a random move half the time, so
    /// that the data holds the lopsided positions good players never reach (0: none).
    #[arg(long, default_value_t = DistillConfig::default().weak_every)]
    pub weak_every: usize,
    /// Threads playing and labelling games.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Seed of the self-play and of the fit (the same settings give the same network).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Hidden units of the network.
    #[arg(long, default_value_t = TrainConfig::default().hidden)]
    pub hidden: usize,
    /// Passes over the training positions.
    #[arg(long, default_value_t = TrainConfig::default().epochs)]
    pub epochs: usize,
    /// Keep the network's correction within this many centimen either way (0: unbounded);
    /// written into the network file.
    #[arg(long, default_value_t = TrainConfig::default().bound.unwrap_or(0))]
    pub bound: u16,
    /// Train on labelled positions saved earlier by --save-data (comma-separated files)
    /// instead of playing games.
    #[arg(long, value_delimiter = ',')]
    pub data: Vec<PathBuf>,
    /// Also label the quiet positions of these recorded games (`emergo arena --out` or
    /// `emergo play` records, comma-separated) and train on them: the positions the
    /// network's own engine reaches, which self-play does not.
    #[arg(long, value_delimiter = ',')]
    pub pgn: Vec<PathBuf>,
    /// Label with searches whose leaves this network corrects (`default`: the shipped one)
    /// instead of the plain evaluation: the labels bootstrap, a 6-ply search with the
    /// network seeing further than a plain one.
    #[arg(long)]
    pub label_net: Option<String>,
    /// Score the --data positions again with --label-depth (and --label-net) instead of
    /// keeping their saved labels.
    #[arg(long, requires = "data")]
    pub relabel: bool,
    /// Save the labelled positions to this file (to train again without replaying).
    #[arg(long)]
    pub save_data: Option<PathBuf>,
    /// Write the network to this file instead of standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs `emergo learn-value`: progress on stderr, the network file to `--out` or `out`.
pub fn run(args: LearnValueArgs, out: &mut impl Write) -> Result<(), ToolError> {
    check(&args)?;
    let label_weights = Weights {
        net: match &args.label_net {
            Some(p) => Some(
                value_net::load(p).map_err(|e| ToolError::Invalid(format!("--label-net: {e}")))?
                    as &dyn Correction,
            ),
            None => None,
        },
        ..Weights::default()
    };
    let began = Instant::now();
    let mut labelled = if args.data.is_empty() {
        self_play(&args, label_weights)
    } else {
        saved(&args, &label_weights)?
    };
    for (i, file) in args.pgn.iter().enumerate() {
        labelled.extend(recorded(&args, &label_weights, i, file)?);
    }
    if let Some(p) = &args.save_data {
        std::fs::write(p, distill::to_text(&labelled))?;
    }
    let (train, test) = distill::samples(&labelled, &Weights::default());
    if train.is_empty() || test.is_empty() {
        return Err(ToolError::Invalid(
            "learn-value: too few positions to train and judge a network".to_owned(),
        ));
    }
    let before = value_net::mean_loss(&test, None);
    eprintln!(
        "learn-value: {} training and {} held-out positions ({:.1} s); the evaluation's \
         held-out loss {before:.4}",
        train.len(),
        test.len(),
        began.elapsed().as_secs_f64(),
    );
    let epochs = args.epochs;
    let cfg = TrainConfig {
        hidden: args.hidden,
        epochs,
        seed: args.seed,
        bound: (args.bound > 0).then_some(args.bound),
        ..TrainConfig::default()
    };
    let net = value_net::train(&train, &cfg, &mut |epoch, loss| {
        if epoch % 5 == 0 || epoch == epochs {
            eprintln!("learn-value: epoch {epoch}/{epochs}, training loss {loss:.4}");
        }
    });
    let after = value_net::mean_loss(&test, Some(&net));
    eprintln!("learn-value: held-out cross-entropy {before:.4} -> {after:.4}");
    let text = format!(
        "# The value network (emergo_engine::value_net), learnt by\n# `emergo learn-value \
         {} --hidden {} --epochs {epochs} --bound {}`:\n# {} training positions; \
         held-out cross-entropy {before:.4} -> {after:.4}\n{}",
        source(&args),
        args.hidden,
        args.bound,
        train.len(),
        net.to_text(),
    );
    match &args.out {
        Some(p) => std::fs::write(p, text)?,
        None => write!(out, "{text}")?,
    }
    Ok(())
}

/// The flags' ranges, and a labelling network that would label nothing.
fn check(args: &LearnValueArgs) -> Result<(), ToolError> {
    if !(1..=1_000_000).contains(&args.games)
        || !(1..=8).contains(&args.play_depth)
        || !(1..=10).contains(&args.label_depth)
    {
        return Err(ToolError::Invalid(
            "--games must be in 1..=1000000, --play-depth in 1..=8, --label-depth in 1..=10"
                .to_owned(),
        ));
    }
    if !(1..=256).contains(&args.threads)
        || !(1..=value_net::MAX_HIDDEN).contains(&args.hidden)
        || !(1..=10_000).contains(&args.epochs)
        || args.bound > value_net::MAX_BOUND
    {
        return Err(ToolError::Invalid(format!(
            "--threads must be in 1..=256, --hidden in 1..={}, --epochs in 1..=10000, \
             --bound in 0..={}",
            value_net::MAX_HIDDEN,
            value_net::MAX_BOUND
        )));
    }
    // Saved positions keep their saved labels unless relabelled: a labelling network would
    // then label nothing, yet the output's header would name it.
    if args.label_net.is_some() && !args.data.is_empty() && !args.relabel && args.pgn.is_empty() {
        return Err(ToolError::Invalid(
            "--label-net labels nothing with --data alone: add --relabel (or --pgn)".to_owned(),
        ));
    }
    Ok(())
}

/// Positions of new alpha-beta self-play games, labelled.
fn self_play(args: &LearnValueArgs, label_weights: Weights) -> Vec<Labelled> {
    let games = args.games;
    let cfg = DistillConfig {
        games,
        play_depth: args.play_depth,
        label_depth: args.label_depth,
        threads: args.threads,
        seed: args.seed,
        weak_every: args.weak_every,
        label_weights,
        ..DistillConfig::default()
    };
    distill::generate(&cfg, &|n| {
        if n % 100 == 0 || n == games {
            eprintln!("learn-value: {n}/{games} games played and labelled");
        }
    })
}

/// The positions saved by `--save-data` in the `--data` files, labelled again with
/// `--relabel`.
fn saved(args: &LearnValueArgs, label_weights: &Weights) -> Result<Vec<Labelled>, ToolError> {
    let mut all = Vec::new();
    for (i, file) in args.data.iter().enumerate() {
        let named = |e: String| ToolError::Invalid(format!("--data {}: {e}", file.display()));
        let text = std::fs::read_to_string(file).map_err(|e| named(e.to_string()))?;
        let mut part = distill::parse(&text).map_err(named)?;
        // Each file numbers its games from 0: keep them apart for the split.
        for l in &mut part {
            l.game = l.game.wrapping_add((i as u64) << 40);
        }
        all.extend(part);
    }
    if args.relabel {
        let games = all.chunk_by(|a, b| a.game == b.game).count();
        all = distill::relabel(&all, args.label_depth, label_weights, args.threads, &|n| {
            if n % 500 == 0 || n == games {
                eprintln!("learn-value: {n}/{games} saved games labelled again");
            }
        });
    }
    Ok(all)
}

/// The quiet positions of the games recorded in `file`, the `i`-th `--pgn` file, labelled.
fn recorded(
    args: &LearnValueArgs,
    label_weights: &Weights,
    i: usize,
    file: &std::path::Path,
) -> Result<Vec<Labelled>, ToolError> {
    let named =
        |e: &dyn std::fmt::Display| ToolError::Invalid(format!("--pgn {}: {e}", file.display()));
    let text = std::fs::read_to_string(file).map_err(|e| named(&e))?;
    let records = emergo_rules::record::parse_pgn(&text).map_err(|e| named(&e))?;
    // Game numbers apart from the self-play's and the other files' (for the split).
    let first = (1u64 << 50) | ((i as u64) << 40);
    let part = distill::label_records(
        &records,
        args.label_depth,
        label_weights,
        args.threads,
        first,
        &|_| {},
    )
    .map_err(|e| named(&e))?;
    eprintln!(
        "learn-value: {} positions from {} games of {}",
        part.len(),
        records.len(),
        file.display()
    );
    Ok(part)
}

/// Where the positions came from, as the flags that reproduce them, for the file's header.
fn source(args: &LearnValueArgs) -> String {
    let seed = args.seed;
    let mut source = if args.data.is_empty() {
        format!(
            "--games {} --play-depth {} --label-depth {} --weak-every {} --seed {seed}",
            args.games, args.play_depth, args.label_depth, args.weak_every
        )
    } else if args.relabel {
        format!(
            "--data (saved positions) --relabel --label-depth {} --seed {seed}",
            args.label_depth
        )
    } else {
        format!("--data (saved positions) --seed {seed}")
    };
    if let Some(p) = &args.label_net {
        source.push_str(&format!(" --label-net {p}"));
    }
    if !args.pgn.is_empty() {
        source.push_str(&format!(" --pgn ({} record files)", args.pgn.len()));
    }
    source
}
