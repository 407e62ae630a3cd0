//! A learned correction to the static evaluation: a small neural network trained to say what a
//! deeper alpha-beta search says of a quiet position (distillation of search into evaluation).
//!
//! Why: the MCTS scores its leaves with the quiescence search and the linear evaluation
//! ([`crate::eval`]), which cannot see the quiet set-ups behind Emergo's combinations (a
//! sacrifice whose forced chain leaves the capturing stack to a bigger chain). Alpha-beta reads
//! them by brute force 7–8 plies deep. A network that has learnt, from many positions, what a
//! 6-ply search concludes carries part of that reading into every leaf at the cost of a few
//! hundred additions.
//!
//! # The network
//!
//! Inputs ([`encode`]), from the side to move's point of view:
//! - per square (41), for each of "my unit" and "their unit": one controller, two, three or
//!   more; at least one prisoner, at least two: 410 binary inputs, of which a position sets at
//!   most three per occupied square;
//! - the evaluation's [`features`] (scaled by 1/10) and both sides' men in hand (by 1/12).
//!
//! One hidden layer of rectified units, one output `y` in logistic units. The score is
//! `linear + LOGISTIC_SCALE * y` centimen: the network learns a *correction* to the linear
//! evaluation and starts at none (output weights near 0). The correction is kept within the
//! network's bound ([`ValueNet::with_bound`]; ±350 centimen for the shipped one): far from
//! the positions it was fitted to, a rectified network extrapolates linearly, and a search
//! that trusts it goes looking for exactly those errors (unbounded, it rated each man fed into
//! a capture as a gain and the engine gave men away to a random-playing opponent).
//!
//! The first layer is sparse: the hidden pre-activations are the sum of the rows of the inputs
//! that are on, so a forward pass costs `(active + dense) × hidden` additions.
//!
//! # Training ([`train`])
//!
//! Cross-entropy of `σ(score / LOGISTIC_SCALE)` against the target probability
//! `σ(deep / LOGISTIC_SCALE)`, `deep` the alpha-beta score of the position, by mini-batch Adam
//! with a little L2, seeded: the same samples and settings give the same network.

use emergo_rules::{NUM_SQUARES, Position, Square};
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng, SeedableRng};

use crate::eval::{
    Correction, FEATURES, LOGISTIC_SCALE, WIN_THRESHOLD, Weights, features, linear_score,
};

/// Binary inputs per square: 5 for my unit, 5 for theirs.
pub const PER_SQUARE: usize = 10;

/// Binary (sparse) inputs.
pub const SPARSE_INPUTS: usize = NUM_SQUARES * PER_SQUARE;

/// Dense inputs: the evaluation's features and both sides' men in hand.
pub const DENSE_INPUTS: usize = FEATURES + 2;

/// All inputs.
pub const INPUTS: usize = SPARSE_INPUTS + DENSE_INPUTS;

/// At most three binary inputs per square are on (controllers bucket and two prisoner flags).
const MAX_ACTIVE: usize = NUM_SQUARES * 3;

/// Largest hidden layer a network file may ask for (bounds the forward pass's stack buffer).
pub const MAX_HIDDEN: usize = 256;

/// Largest bound on the correction a network may have, in centimen (ten men).
pub const MAX_BOUND: u16 = 1_000;

/// The first line of a network file.
const MAGIC: &str = "emergo-value-net 1";

/// A quiet position as the network sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Encoded {
    active: [u16; MAX_ACTIVE],
    n_active: u8,
    dense: [f32; DENSE_INPUTS],
    /// The linear evaluation of the position (centimen, side to move).
    pub linear: i32,
}

impl Encoded {
    /// Indices of the binary inputs that are on.
    pub fn active(&self) -> &[u16] {
        &self.active[..usize::from(self.n_active)]
    }

    /// The dense inputs.
    pub fn dense(&self) -> &[f32; DENSE_INPUTS] {
        &self.dense
    }
}

/// Encodes a quiet position (see the module docs); `weights` give the linear score the network
/// corrects (their own network, if any, is not used).
pub fn encode(pos: &Position, weights: &Weights) -> Encoded {
    let f = features(pos);
    encode_with(pos, &f, linear_score(&f, weights))
}

/// [`encode`] with the features and linear score already computed.
fn encode_with(pos: &Position, f: &[i32; FEATURES], linear: i32) -> Encoded {
    let me = pos.side_to_move();
    let mut active = [0u16; MAX_ACTIVE];
    let mut n = 0usize;
    for sq in Square::iter_bits(pos.units_of(me) | pos.units_of(me.other())) {
        let Some(unit) = pos.unit_at(sq) else {
            continue;
        };
        let base = sq.index() * PER_SQUARE + if unit.owner == me { 0 } else { 5 };
        let mut on = |i: usize| {
            if n < MAX_ACTIVE {
                active[n] = i as u16;
                n += 1;
            }
        };
        on(base + usize::from(unit.controllers.clamp(1, 3) - 1));
        if unit.prisoners >= 1 {
            on(base + 3);
        }
        if unit.prisoners >= 2 {
            on(base + 4);
        }
    }
    let mut dense = [0f32; DENSE_INPUTS];
    for (d, &x) in dense.iter_mut().zip(f) {
        *d = x as f32 / 10.0;
    }
    dense[FEATURES] = f32::from(pos.in_hand(me)) / 12.0;
    dense[FEATURES + 1] = f32::from(pos.in_hand(me.other())) / 12.0;
    Encoded {
        active,
        n_active: n as u8,
        dense,
        linear,
    }
}

/// The network's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueNet {
    hidden: usize,
    /// First layer, one row of `hidden` weights per input.
    w1: Vec<f32>,
    b1: Vec<f32>,
    /// Output layer.
    w2: Vec<f32>,
    b2: f32,
    /// The largest correction, in centimen, either way (see [`ValueNet::with_bound`]).
    bound: Option<u16>,
}

impl ValueNet {
    /// A network with `hidden` units (clamped to 1..=[`MAX_HIDDEN`]) and small random weights,
    /// whose output starts near 0 (no correction).
    pub fn new(hidden: usize, seed: u64) -> ValueNet {
        let hidden = hidden.clamp(1, MAX_HIDDEN);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut uniform = |scale: f32| {
            let u = (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
            (2.0 * u - 1.0) * scale
        };
        // About 40 inputs are on in a middle-game position.
        let w1 = (0..INPUTS * hidden).map(|_| uniform(0.15)).collect();
        let w2 = (0..hidden).map(|_| uniform(0.01)).collect();
        ValueNet {
            hidden,
            w1,
            b1: vec![0.0; hidden],
            w2,
            b2: 0.0,
            bound: None,
        }
    }

    /// The same network with its correction kept within `±bound` centimen (`None`: unbounded).
    ///
    /// Why: the network is trustworthy near the positions it was fitted to and nowhere else. A
    /// search tree is full of positions no training game reached, and there an unbounded
    /// correction can outweigh men given away (the engine fed men into captures against a weak
    /// opponent, `docs/STRENGTH.md`, "The value network"). A bound keeps the linear
    /// evaluation's material count in charge of large differences; the network adjusts within
    /// it.
    pub fn with_bound(mut self, bound: Option<u16>) -> ValueNet {
        self.bound = bound.map(|b| b.clamp(1, MAX_BOUND));
        self
    }

    /// The bound on the correction, in centimen, if any.
    pub fn bound(&self) -> Option<u16> {
        self.bound
    }

    /// The output `y` (logistic units) within the bound.
    fn bounded(&self, y: f32) -> f32 {
        match self.bound {
            Some(b) => {
                let b = f32::from(b) / LOGISTIC_SCALE;
                y.clamp(-b, b)
            }
            None => y,
        }
    }

    /// Hidden units.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// The hidden layer's pre-activations into `h` (`hidden` long).
    fn pre_activations(&self, e: &Encoded, h: &mut [f32]) {
        // The common sizes get loops the compiler unrolls into vector instructions.
        match self.hidden {
            16 => self.pre_activations_fixed::<16>(e, h),
            32 => self.pre_activations_fixed::<32>(e, h),
            64 => self.pre_activations_fixed::<64>(e, h),
            _ => self.pre_activations_any(e, h),
        }
    }

    fn pre_activations_fixed<const H: usize>(&self, e: &Encoded, h: &mut [f32]) {
        let (Ok(out), Ok(bias)) = (
            <&mut [f32; H]>::try_from(h),
            <&[f32; H]>::try_from(&self.b1[..]),
        ) else {
            return;
        };
        let row =
            |i: usize| -> Option<&[f32; H]> { self.w1.get(i * H..(i + 1) * H)?.try_into().ok() };
        // A local accumulator stays in vector registers across the rows.
        let mut acc = *bias;
        for &i in e.active() {
            if let Some(row) = row(usize::from(i)) {
                for k in 0..H {
                    acc[k] += row[k];
                }
            }
        }
        for (j, &x) in e.dense.iter().enumerate() {
            if x == 0.0 {
                continue;
            }
            if let Some(row) = row(SPARSE_INPUTS + j) {
                for k in 0..H {
                    acc[k] += x * row[k];
                }
            }
        }
        *out = acc;
    }

    fn pre_activations_any(&self, e: &Encoded, h: &mut [f32]) {
        let hid = self.hidden;
        h.copy_from_slice(&self.b1);
        for &i in e.active() {
            let row = &self.w1[usize::from(i) * hid..][..hid];
            for (a, w) in h.iter_mut().zip(row) {
                *a += w;
            }
        }
        for (j, &x) in e.dense.iter().enumerate() {
            if x != 0.0 {
                let row = &self.w1[(SPARSE_INPUTS + j) * hid..][..hid];
                for (a, w) in h.iter_mut().zip(row) {
                    *a += x * w;
                }
            }
        }
    }

    /// The correction, in logistic units.
    pub fn output(&self, e: &Encoded) -> f32 {
        let mut buf = [0f32; MAX_HIDDEN];
        let h = &mut buf[..self.hidden];
        self.pre_activations(e, h);
        self.output_from(h)
    }

    /// The output layer over the hidden pre-activations `pre`.
    fn output_from(&self, pre: &[f32]) -> f32 {
        self.b2
            + pre
                .iter()
                .zip(&self.w2)
                .map(|(a, w)| a.max(0.0) * w)
                .sum::<f32>()
    }

    /// The corrected score of an encoded position, in centimen for the side to move, kept
    /// short of the win scores; the correction is kept within the bound.
    pub fn score(&self, e: &Encoded) -> i32 {
        let y = self.bounded(self.output(e));
        let s = e.linear as f32 + LOGISTIC_SCALE * y;
        let limit = (WIN_THRESHOLD - 1) as f32;
        if s.is_finite() {
            s.clamp(-limit, limit).round() as i32
        } else {
            e.linear
        }
    }

    /// The network as text ([`parse`](ValueNet::parse) reads it back): a header line, the
    /// hidden size, the input count, the bound if any, then every parameter, one row per line.
    pub fn to_text(&self) -> String {
        let mut out = format!("{MAGIC}\nhidden {}\ninputs {INPUTS}\n", self.hidden);
        if let Some(b) = self.bound {
            out.push_str(&format!("bound {b}\n"));
        }
        let row = |out: &mut String, v: &[f32]| {
            let line: Vec<String> = v.iter().map(|x| format!("{x:e}")).collect();
            out.push_str(&line.join(" "));
            out.push('\n');
        };
        for r in self.w1.chunks(self.hidden) {
            row(&mut out, r);
        }
        row(&mut out, &self.b1);
        row(&mut out, &self.w2);
        row(&mut out, &[self.b2]);
        out
    }

    /// Reads a network written by [`to_text`](ValueNet::to_text). Errors say which line is wrong.
    /// Lines starting with `#` are comments; the `bound` line is optional (files written before
    /// it existed have none).
    pub fn parse(text: &str) -> Result<ValueNet, String> {
        let mut lines = NetLines(
            text.lines()
                .enumerate()
                .filter(|(_, l)| !l.starts_with('#'))
                .peekable(),
        );
        let (i, magic) = lines.next("the header")?;
        if magic.trim() != MAGIC {
            return Err(format!("line {i}: expected {MAGIC:?}"));
        }
        let hidden = lines.header("hidden")?;
        if !(1..=MAX_HIDDEN).contains(&hidden) {
            return Err(format!("hidden {hidden}: expected 1..={MAX_HIDDEN}"));
        }
        let inputs = lines.header("inputs")?;
        if inputs != INPUTS {
            return Err(format!(
                "inputs {inputs}: this build's network has {INPUTS} (another encoding)"
            ));
        }
        let bound = if lines.starts_with("bound") {
            let b = lines.header("bound")?;
            if !(1..=MAX_BOUND as usize).contains(&b) {
                return Err(format!("bound {b}: expected 1..={MAX_BOUND} centimen"));
            }
            Some(b as u16)
        } else {
            None
        };
        let mut w1 = Vec::with_capacity(INPUTS * hidden);
        for _ in 0..INPUTS {
            w1.extend(lines.row(hidden, "the first layer")?);
        }
        let b1 = lines.row(hidden, "the hidden biases")?;
        let w2 = lines.row(hidden, "the output weights")?;
        let b2 = lines.row(1, "the output bias")?[0];
        Ok(ValueNet {
            hidden,
            w1,
            b1,
            w2,
            b2,
            bound,
        })
    }
}

/// The non-comment lines of a network file, numbered from 1, for [`ValueNet::parse`].
struct NetLines<I: Iterator>(std::iter::Peekable<I>);

impl<'a, I: Iterator<Item = (usize, &'a str)>> NetLines<I> {
    /// The next line and its number; `what` names what was expected if the file ends.
    fn next(&mut self, what: &str) -> Result<(usize, &'a str), String> {
        self.0
            .next()
            .map(|(i, l)| (i + 1, l))
            .ok_or_else(|| format!("the file ends before {what}"))
    }

    /// Whether the next line starts with `key`.
    fn starts_with(&mut self, key: &str) -> bool {
        self.0.peek().is_some_and(|(_, l)| l.starts_with(key))
    }

    /// A `key N` line's N.
    fn header(&mut self, key: &str) -> Result<usize, String> {
        let (i, l) = self.next(key)?;
        l.strip_prefix(key)
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| format!("line {i}: expected `{key} N`"))
    }

    /// A line of `len` finite numbers.
    fn row(&mut self, len: usize, what: &str) -> Result<Vec<f32>, String> {
        let (i, l) = self.next(what)?;
        let v: Vec<f32> = l
            .split_whitespace()
            .map(|x| x.parse::<f32>().ok().filter(|x| x.is_finite()))
            .collect::<Option<_>>()
            .ok_or_else(|| format!("line {i}: not a row of numbers"))?;
        if v.len() == len {
            Ok(v)
        } else {
            Err(format!("line {i}: {} numbers, expected {len}", v.len()))
        }
    }
}

impl Correction for ValueNet {
    fn correct(&self, pos: &Position, features: &[i32; FEATURES], linear: i32) -> i32 {
        self.score(&encode_with(pos, features, linear))
    }

    fn describe(&self) -> String {
        match self.bound {
            Some(b) => format!(
                "learned value correction ({} hidden units, within ±{b} centimen)",
                self.hidden
            ),
            None => format!("learned value correction ({} hidden units)", self.hidden),
        }
    }
}

/// The network shipped with the engine, `engine/value-net.txt` (embedded in the binary;
/// regenerate it with `emergo learn-value`), or `None` if that file does not parse (a test
/// checks it does).
pub fn shipped() -> Option<&'static ValueNet> {
    static NET: std::sync::OnceLock<Option<ValueNet>> = std::sync::OnceLock::new();
    NET.get_or_init(|| ValueNet::parse(include_str!("../value-net.txt")).ok())
        .as_ref()
}

/// Loads the network in the file at `path`, once per process: later calls with the same path
/// get the same network (engines hold it by `'static` reference, see [`Weights::net`]).
/// `default` names the [`shipped`] network.
pub fn load(path: &str) -> Result<&'static ValueNet, String> {
    if path == "default" {
        return shipped().ok_or_else(|| "the shipped network does not parse".to_owned());
    }
    static LOADED: std::sync::Mutex<Vec<(String, &'static ValueNet)>> =
        std::sync::Mutex::new(Vec::new());
    let mut loaded = LOADED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, net)) = loaded.iter().find(|(p, _)| p == path) {
        return Ok(net);
    }
    let text = read_capped(path)?;
    let net: &'static ValueNet = Box::leak(Box::new(
        ValueNet::parse(&text).map_err(|e| format!("{path}: {e}"))?,
    ));
    loaded.push((path.to_owned(), net));
    Ok(net)
}

/// Largest network file [`load`] reads: the shipped 16-unit network is under 100 KiB of text,
/// and a 128-unit one would be about 1 MiB.
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// The text of the network file at `path`, refused once it is longer than [`MAX_FILE_BYTES`]:
/// a path given by mistake (`/dev/zero`, a log) must fail at once, not be read forever.
fn read_capped(path: &str) -> Result<String, String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{path}: {e}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "{path}: longer than {MAX_FILE_BYTES} bytes, far more than a network file holds"
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("{path}: not UTF-8 text"))
}

/// One training position.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainSample {
    /// The position, encoded.
    pub input: Encoded,
    /// The probability the network's score should say (`σ(deep / LOGISTIC_SCALE)`).
    pub target: f32,
}

/// Training settings.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainConfig {
    /// Hidden units.
    pub hidden: usize,
    /// Passes over the samples.
    pub epochs: usize,
    /// Samples per Adam step.
    pub batch: usize,
    /// Adam's step size.
    pub learning_rate: f32,
    /// L2 penalty on every weight.
    pub l2: f32,
    /// Seed of the initial weights and the sample order.
    pub seed: u64,
    /// The trained network's bound on its correction, in centimen
    /// ([`ValueNet::with_bound`]); training itself ignores it.
    pub bound: Option<u16>,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            hidden: 32,
            epochs: 20,
            batch: 256,
            learning_rate: 1e-3,
            l2: 1e-6,
            seed: 1,
            bound: Some(350),
        }
    }
}

/// `σ(x)`.
fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// Mean cross-entropy (nats) of `samples` under `net`, or of the linear evaluation alone when
/// `net` is `None`.
pub fn mean_loss(samples: &[TrainSample], net: Option<&ValueNet>) -> f64 {
    let mut total = 0.0f64;
    for s in samples {
        let z = s.input.linear as f32 / LOGISTIC_SCALE
            + net.map_or(0.0, |n| n.bounded(n.output(&s.input)));
        let p = f64::from(sigmoid(z)).clamp(1e-7, 1.0 - 1e-7);
        let t = f64::from(s.target);
        total -= t * p.ln() + (1.0 - t) * (1.0 - p).ln();
    }
    total / samples.len().max(1) as f64
}

/// Trains a network on `samples` (see the module docs). `progress` is called after each epoch
/// with the epoch (from 1) and the epoch's mean training loss.
pub fn train(
    samples: &[TrainSample],
    cfg: &TrainConfig,
    progress: &mut dyn FnMut(usize, f64),
) -> ValueNet {
    let mut net = ValueNet::new(cfg.hidden, cfg.seed);
    let hid = net.hidden;
    let n_params = INPUTS * hid + 2 * hid + 1;
    // Parameters flattened as w1 | b1 | w2 | b2, for Adam's moments and the gradient.
    let (mut m, mut v) = (vec![0f32; n_params], vec![0f32; n_params]);
    let mut grad = vec![0f32; n_params];
    let mut order: Vec<usize> = (0..samples.len()).collect();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(cfg.seed ^ 0x5EED);
    let (b1c, b2c, eps) = (0.9f32, 0.999f32, 1e-8f32);
    let batch = cfg.batch.max(1);
    let mut step = 0i32;
    let mut pre = vec![0f32; hid];
    let mut dh = vec![0f32; hid];
    for epoch in 1..=cfg.epochs {
        // Fisher–Yates with the seeded generator.
        for i in (1..order.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        let mut epoch_loss = 0.0f64;
        for chunk in order.chunks(batch) {
            grad.iter_mut().for_each(|g| *g = 0.0);
            for &k in chunk {
                let s = &samples[k];
                net.pre_activations(&s.input, &mut pre);
                let y = net.output_from(&pre);
                let p = sigmoid(s.input.linear as f32 / LOGISTIC_SCALE + y);
                let pc = f64::from(p).clamp(1e-7, 1.0 - 1e-7);
                let t = f64::from(s.target);
                epoch_loss -= t * pc.ln() + (1.0 - t) * (1.0 - pc).ln();
                let g = p - s.target;
                let (gw1, rest) = grad.split_at_mut(INPUTS * hid);
                let (gb1, rest) = rest.split_at_mut(hid);
                let (gw2, gb2) = rest.split_at_mut(hid);
                gb2[0] += g;
                for k in 0..hid {
                    let a = pre[k];
                    gw2[k] += g * a.max(0.0);
                    dh[k] = if a > 0.0 { g * net.w2[k] } else { 0.0 };
                    gb1[k] += dh[k];
                }
                for &i in s.input.active() {
                    for (gw, d) in gw1[usize::from(i) * hid..][..hid].iter_mut().zip(&dh) {
                        *gw += d;
                    }
                }
                for (j, &x) in s.input.dense.iter().enumerate() {
                    if x != 0.0 {
                        for (gw, d) in gw1[(SPARSE_INPUTS + j) * hid..][..hid].iter_mut().zip(&dh) {
                            *gw += x * d;
                        }
                    }
                }
            }
            step += 1;
            let scale = 1.0 / chunk.len() as f32;
            let (c1, c2) = (1.0 - b1c.powi(step), 1.0 - b2c.powi(step));
            let lr = cfg.learning_rate;
            let mut update = |idx: usize, param: &mut f32| {
                let g = grad[idx] * scale + cfg.l2 * *param;
                m[idx] = b1c * m[idx] + (1.0 - b1c) * g;
                v[idx] = b2c * v[idx] + (1.0 - b2c) * g * g;
                *param -= lr * (m[idx] / c1) / ((v[idx] / c2).sqrt() + eps);
            };
            let mut idx = 0;
            for p in net
                .w1
                .iter_mut()
                .chain(net.b1.iter_mut())
                .chain(net.w2.iter_mut())
            {
                update(idx, p);
                idx += 1;
            }
            update(idx, &mut net.b2);
        }
        progress(epoch, epoch_loss / samples.len().max(1) as f64);
    }
    net.with_bound(cfg.bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positions() -> Vec<Position> {
        // A few quiet positions from a seeded random game.
        let mut rng = emergo_rules::playout_rng(7);
        let mut pos = Position::initial();
        let mut out = Vec::new();
        for _ in 0..60 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves.as_slice()[(rng.next_u64() % moves.len() as u64) as usize];
            pos.play_unchecked(m);
            if !pos.has_capture() {
                out.push(pos);
            }
        }
        out
    }

    #[test]
    fn encoding_sets_one_controller_bucket_per_unit() {
        let w = Weights::default();
        for pos in positions() {
            let e = encode(&pos, &w);
            let units = (pos.units_of(emergo_rules::Player::White)
                | pos.units_of(emergo_rules::Player::Black))
            .count_ones() as usize;
            let buckets = e
                .active()
                .iter()
                .filter(|&&i| usize::from(i) % 5 < 3)
                .count();
            assert_eq!(buckets, units);
            assert!(e.active().iter().all(|&i| usize::from(i) < SPARSE_INPUTS));
            assert_eq!(e.linear, crate::eval::evaluate_with(&pos, &w));
        }
    }

    #[test]
    fn a_new_network_barely_corrects_and_round_trips_as_text() {
        let net = ValueNet::new(16, 3);
        let w = Weights::default();
        for pos in positions() {
            let e = encode(&pos, &w);
            assert!((net.score(&e) - e.linear).abs() < 40, "{}", net.score(&e));
        }
        assert!(shipped().is_some(), "engine/value-net.txt must parse");
        let back = ValueNet::parse(&net.to_text()).unwrap();
        assert_eq!(back, net);
        assert!(ValueNet::parse("emergo-value-net 1\nhidden 0\n").is_err());
        assert!(ValueNet::parse("nonsense").is_err());
        let truncated: String = net
            .to_text()
            .lines()
            .take(20)
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            ValueNet::parse(&truncated)
                .unwrap_err()
                .contains("ends before")
        );
    }

    #[test]
    fn a_bound_caps_the_correction_and_is_kept_in_the_text() {
        let w = Weights::default();
        let mut net = ValueNet::new(16, 3);
        // An output bias of 5 logistic units: a correction of +1,000 centimen everywhere.
        net.b2 = 5.0;
        let bounded = net.clone().with_bound(Some(50));
        assert_eq!(bounded.bound(), Some(50));
        for pos in positions() {
            let e = encode(&pos, &w);
            assert!(net.score(&e) - e.linear > 900, "{}", net.score(&e));
            assert_eq!(bounded.score(&e), e.linear + 50);
        }
        let text = bounded.to_text();
        assert!(text.contains("\nbound 50\n"), "{}", &text[..60]);
        assert_eq!(ValueNet::parse(&text).unwrap(), bounded);
        assert!(!net.to_text().contains("bound"));
        assert!(bounded.describe().contains("within ±50 centimen"));
        for bad in ["bound 0", "bound 1001", "bound x"] {
            let err = ValueNet::parse(&text.replace("bound 50", bad)).unwrap_err();
            assert!(err.contains("bound"), "{bad}: {err}");
        }
        // Out-of-range settings are clamped, and the held-out loss sees the bound.
        assert_eq!(
            net.clone().with_bound(Some(u16::MAX)).bound(),
            Some(MAX_BOUND)
        );
        let samples: Vec<_> = positions()
            .iter()
            .map(|p| {
                let input = encode(p, &w);
                let target = sigmoid(input.linear as f32 / LOGISTIC_SCALE);
                TrainSample { input, target }
            })
            .collect();
        assert!(mean_loss(&samples, Some(&bounded)) < mean_loss(&samples, Some(&net)));
    }

    #[test]
    fn a_network_file_that_never_ends_is_refused_at_once() {
        let began = std::time::Instant::now();
        let e = load("/dev/zero").map(|_| ()).unwrap_err();
        assert!(e.starts_with("/dev/zero: longer than"), "{e}");
        assert!(began.elapsed() < std::time::Duration::from_secs(5));
        let e = load("/nonexistent/emergo.net").map(|_| ()).unwrap_err();
        assert!(e.starts_with("/nonexistent/emergo.net: "), "{e}");
    }

    #[test]
    fn training_learns_a_planted_correction_reproducibly() {
        // Targets: the linear score plus 150 centimen whenever the side to move has a unit on
        // square 0 (a1). The network must learn that square's worth.
        let w = Weights::default();
        let mut samples = Vec::new();
        let mut rng = emergo_rules::playout_rng(11);
        for g in 0..40 {
            let mut pos = Position::initial();
            for _ in 0..(10 + g % 30) {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let m = moves.as_slice()[(rng.next_u64() % moves.len() as u64) as usize];
                pos.play_unchecked(m);
                if pos.has_capture() {
                    continue;
                }
                let input = encode(&pos, &w);
                let on_a1 = pos.units_of(pos.side_to_move()) & 1 != 0;
                let deep = input.linear + if on_a1 { 150 } else { 0 };
                samples.push(TrainSample {
                    input,
                    target: sigmoid(deep as f32 / LOGISTIC_SCALE),
                });
            }
        }
        let cfg = TrainConfig {
            hidden: 8,
            epochs: 60,
            batch: 32,
            learning_rate: 3e-3,
            ..TrainConfig::default()
        };
        let net = train(&samples, &cfg, &mut |_, _| {});
        let before = mean_loss(&samples, None);
        let after = mean_loss(&samples, Some(&net));
        assert!(after < before, "{after} >= {before}");
        let again = train(&samples, &cfg, &mut |_, _| {});
        assert_eq!(again, net);
        let (with, without): (Vec<_>, Vec<_>) = samples
            .iter()
            .partition(|s| s.input.active().iter().any(|&i| i < 3));
        let mean = |v: &[&TrainSample]| {
            v.iter()
                .map(|s| (net.score(&s.input) - s.input.linear) as f64)
                .sum::<f64>()
                / v.len().max(1) as f64
        };
        assert!(!with.is_empty() && !without.is_empty());
        assert!(
            mean(&with) - mean(&without) > 60.0,
            "{} {}",
            mean(&with),
            mean(&without)
        );
    }
}
