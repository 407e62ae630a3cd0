//! Named MCTS configurations for Emergo: the knowledge and the search parameters that decide
//! playing strength, in one place, so that the server, `emergo` and the arena all play the
//! same engine and a match can pit configurations against each other by name or by key.

use std::fmt::Write as _;
use std::sync::Arc;

use emergo_mcts::{SearchParams, Selection};

use crate::eval::{Correction, Weights};
use crate::state::Knowledge;

/// The strength-relevant part of an MCTS search for Emergo (limits, threads and seeds are set
/// elsewhere).
#[derive(Clone, Debug, PartialEq)]
pub struct MctsConfig {
    /// The Emergo knowledge the search uses; `None`: uniform random playouts (the uniform and v1 engines).
    pub knowledge: Option<Knowledge>,
    /// Selection rule.
    pub selection: Selection,
    /// Exploration constant (UCT `c` or PUCT `c_puct`).
    pub exploration: f32,
    /// Growth of the exploration constant with a node's visits
    /// (`SearchParams::exploration_growth`; 0: constant).
    pub exploration_growth: f32,
    /// Visits at which the growth has added `growth * ln 2` (`SearchParams::exploration_base`).
    pub exploration_base: u64,
    /// First-play urgency for children without a static value.
    pub first_play_urgency: f32,
    /// Progressive-bias weight of the priors under UCT.
    pub prior_weight: f32,
    /// Implicit minimax weight.
    pub minimax_weight: f32,
    /// Plies of playout before the evaluation scores it (`Some(0)`: evaluation at the leaf).
    pub playout_cutoff: Option<u32>,
    /// With the evaluation at the leaf, the weight of a playout's result mixed into it
    /// (`SearchParams::playout_mix`; 0: none).
    pub playout_mix: f32,
    /// With the evaluation at the leaf, a new leaf takes its edge's static value (the parent's
    /// score of the move) instead of being evaluated again (`SearchParams::leaf_value_from_edge`).
    pub leaf_value_from_edge: bool,
    /// Stop early when the best move cannot change within the budget.
    pub smart_pruning: bool,
    /// Playouts after which a node's moves are searched again one ply deeper for their priors
    /// and values (`SearchParams::refine_visits`; 0: never).
    pub refine_visits: u64,
    /// Factor between a node's successive refinements (`SearchParams::refine_growth`).
    pub refine_growth: u64,
    /// Refinements of a node at most, each one ply deeper (`SearchParams::refine_levels`).
    pub refine_levels: u32,
    /// Share of a timed search's budget one refinement may take
    /// (`SearchParams::refine_time_share`; 1: half the time left).
    pub refine_time_share: f32,
    /// Weight of a refined node's edge values in its visited children's `Q`
    /// (`SearchParams::refined_value_weight`; 0: none).
    pub refined_value_weight: f32,
    /// With several threads, the visits a node near the root may gain before a thread scans
    /// its children again (`SearchParams::shared_rescan`; 0: whenever another thread passed).
    pub shared_rescan: u32,
    /// With several threads, under PUCT, the share of a node's visits (`1 / rescandiv`) a reused
    /// scan lasts at most, deeper nodes included (`SearchParams::shared_rescan_div`; 0: deeper
    /// nodes scanned in full).
    pub shared_rescan_div: u32,
    /// Lost visits each thread in flight adds to a node during selection
    /// (`SearchParams::virtual_loss`): with several threads, how hard they are pushed apart.
    pub virtual_loss: u32,
    /// Playouts a leaf gets before its children's edges are made
    /// (`SearchParams::expand_threshold`): 1 grows the tree by a node per playout, higher values
    /// trade slower growth for less tree work and memory per playout.
    pub expand_threshold: u32,
}

impl Default for MctsConfig {
    /// The strongest configuration measured (`docs/STRENGTH.md`): the default of the
    /// server and of the `emergo` tools.
    fn default() -> Self {
        MctsConfig::strong()
    }
}

impl MctsConfig {
    /// The default engine: evaluation at the leaf (captures resolved), PUCT with priors from the
    /// evaluation, the root's moves scored by a 2-ply search and its children's by a 1-ply one
    /// (`priordepth=2`: +176 Elo against the same engine with one-ply priors), every node's moves
    /// searched again a ply deeper after 300 playouts and once more after 1,200
    /// (`refine=300,refinelevels=2`: +119 Elo against 3-ply root priors, which were +127 against
    /// 2-ply ones; SPRTs in `docs/STRENGTH.md`, "How the default engine got here"), implicit
    /// minimax backups, and prior bonuses: +100 centimen for a move the opponent must answer by
    /// capturing and +150 for one that leaves the mover a capture (`sacbonus=100,threatbonus=150`:
    /// +77 Elo against the same engine without them). The refutations the engine misses start with
    /// such moves, whose plain scores look bad until the line is read to its end. Every quiet
    /// position's score is corrected by the shipped value network ([`crate::value_net::shipped`],
    /// `net=default`), distilled from 6-ply alpha-beta searches and bounded to ±350 centimen: it
    /// carries part of what alpha-beta reads into every leaf and prior, and the bound keeps it from
    /// talking the search into giving men away where it was never trained (`docs/STRENGTH.md`).
    pub fn strong() -> Self {
        MctsConfig {
            knowledge: Some(Knowledge {
                prior_depth: 2,
                sacrifice_bonus: 100.0,
                threat_bonus: 150.0,
                weights: Weights {
                    net: crate::value_net::shipped().map(|n| n as &dyn Correction),
                    ..Weights::default()
                },
                ..Knowledge::default()
            }),
            selection: Selection::Puct,
            exploration: 2.0,
            exploration_growth: SearchParams::default().exploration_growth,
            exploration_base: SearchParams::default().exploration_base,
            first_play_urgency: 0.5,
            prior_weight: 0.0,
            minimax_weight: 0.5,
            playout_cutoff: Some(0),
            playout_mix: 0.0,
            leaf_value_from_edge: SearchParams::default().leaf_value_from_edge,
            smart_pruning: false,
            refine_visits: 300,
            refine_growth: 4,
            refine_levels: 2,
            refine_time_share: SearchParams::default().refine_time_share,
            refined_value_weight: 0.0,
            shared_rescan: SearchParams::default().shared_rescan,
            shared_rescan_div: SearchParams::default().shared_rescan_div,
            virtual_loss: SearchParams::default().virtual_loss,
            expand_threshold: SearchParams::default().expand_threshold,
        }
    }

    /// The uniform engine: the [first version's](MctsConfig::first_version) search with each
    /// leaf expanded after 8 playouts instead of one (`expand=8`). The tree then takes 22
    /// bytes per playout instead of 130 and its search runs at 91–92% of the raw playouts'
    /// speed instead of 85%, at an equal strength by time (SPRTs in
    /// docs/STRENGTH.md). No knowledge: the knowledge-free point of comparison from 2026-12-07
    /// on (docs/STRENGTH.md's earlier uniform rows measured [`MctsConfig::first_version`]).
    pub fn uniform() -> Self {
        MctsConfig {
            expand_threshold: 8,
            ..MctsConfig::first_version()
        }
    }

    /// The first version's engine, `config=v1`: UCT (c = 1, every child tried once) over
    /// uniformly random playouts to the end of the game, with smart pruning, every leaf
    /// expanded after its first playout. docs/STRENGTH.md's uniform rows before 2026-12-07
    /// measured this engine; kept so that they can be played again.
    pub fn first_version() -> Self {
        let d = SearchParams::default();
        MctsConfig {
            knowledge: None,
            selection: Selection::Uct,
            exploration: d.exploration,
            exploration_growth: d.exploration_growth,
            exploration_base: d.exploration_base,
            first_play_urgency: d.first_play_urgency,
            prior_weight: 0.0,
            minimax_weight: 0.0,
            playout_cutoff: None,
            playout_mix: 0.0,
            leaf_value_from_edge: d.leaf_value_from_edge,
            smart_pruning: true,
            refine_visits: d.refine_visits,
            refine_growth: d.refine_growth,
            refine_levels: d.refine_levels,
            refine_time_share: d.refine_time_share,
            refined_value_weight: d.refined_value_weight,
            shared_rescan: d.shared_rescan,
            shared_rescan_div: d.shared_rescan_div,
            virtual_loss: d.virtual_loss,
            expand_threshold: d.expand_threshold,
        }
    }

    /// A configuration by name: `strong` (also `default`), `uniform` or `v1`.
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "strong" | "default" => Some(MctsConfig::strong()),
            "uniform" => Some(MctsConfig::uniform()),
            "v1" => Some(MctsConfig::first_version()),
            _ => None,
        }
    }

    /// Sets the strength-relevant fields of `params` (the rest is left alone).
    pub fn apply(&self, params: &mut SearchParams) {
        params.selection = self.selection;
        params.exploration = self.exploration;
        params.exploration_growth = self.exploration_growth;
        params.exploration_base = self.exploration_base;
        params.first_play_urgency = self.first_play_urgency;
        params.prior_weight = self.prior_weight;
        params.minimax_weight = self.minimax_weight;
        params.playout_cutoff = self.playout_cutoff;
        params.playout_mix = self.playout_mix;
        params.leaf_value_from_edge = self.leaf_value_from_edge;
        params.smart_pruning = self.smart_pruning;
        params.refine_visits = self.refine_visits;
        params.refine_growth = self.refine_growth;
        params.refine_levels = self.refine_levels;
        params.refine_time_share = self.refine_time_share;
        params.refined_value_weight = self.refined_value_weight;
        params.shared_rescan = self.shared_rescan;
        params.shared_rescan_div = self.shared_rescan_div;
        params.virtual_loss = self.virtual_loss;
        params.expand_threshold = self.expand_threshold;
    }

    /// The knowledge, shared, for [`crate::EmergoState::with_knowledge`].
    pub fn shared_knowledge(&self) -> Option<Arc<Knowledge>> {
        self.knowledge.clone().map(Arc::new)
    }

    /// The keys [`set`](MctsConfig::set) understands, for help texts.
    pub const KEYS: &'static [&'static str] = &[
        "config",
        "c",
        "cgrowth",
        "cbase",
        "fpu",
        "sel",
        "pw",
        "minimax",
        "cutoff",
        "mix",
        "leafvalue",
        "prune",
        "temp",
        "samples",
        "scale",
        "leafdepth",
        "priordepth",
        "refinestep",
        "sacbonus",
        "threatbonus",
        "kcache",
        "net",
        "blockade",
        "refine",
        "refinegrowth",
        "refinelevels",
        "refineshare",
        "refinevalue",
        "rescan",
        "rescandiv",
        "vloss",
        "expand",
    ];

    /// Every setting [`set`](MctsConfig::set) takes, `(KEY[=VALUES], meaning)`, for help texts
    /// (`bot-server --mcts-help`, `emergo arena --engines-help`): documented once, here, beside
    /// the code that reads them; a test checks that every key of [`KEYS`](MctsConfig::KEYS) is
    /// listed.
    pub const SETTINGS: &'static [(&'static str, &'static str)] = &[
        (
            "config=strong|uniform|v1",
            "a named engine (replaces all: give it first)",
        ),
        ("c", "exploration constant (UCT c, PUCT c_puct)"),
        (
            "cgrowth, cbase",
            "growth of c with a node's visits (0: constant)",
        ),
        ("fpu", "first-play urgency of unvalued children"),
        ("sel=uct|puct", "selection rule"),
        ("pw", "progressive-bias weight of priors under UCT"),
        ("minimax", "implicit minimax weight (0 to 1)"),
        (
            "cutoff=N|none",
            "playout plies before the evaluation (0: none)",
        ),
        ("mix", "weight of a playout mixed into the leaf value"),
        (
            "leafvalue=edge|eval",
            "a new leaf's value: its edge's, or evaluated",
        ),
        ("prune=on|off", "stop once the best move cannot change"),
        ("refine", "playouts before a node is read deeper (0: off)"),
        (
            "refinegrowth, refinelevels",
            "factor between refinements; how many at most",
        ),
        (
            "refineshare",
            "share of a timed search a refinement may take",
        ),
        (
            "refinevalue",
            "weight of refined values in children's (0 to 1)",
        ),
        (
            "rescan, rescandiv",
            "threads: how long a node's scan is reused",
        ),
        ("vloss", "virtual loss per thread in flight (0 to 1000)"),
        ("expand", "playouts a leaf gets before its children"),
        ("temp", "prior softmax temperature, centimen"),
        ("samples", "moves sampled a heavy-playout turn (1: uniform)"),
        ("scale", "centimen per logistic unit of win probability"),
        ("leafdepth", "depth of the alpha-beta search scoring a leaf"),
        (
            "priordepth",
            "depth of the searches scoring the root's priors",
        ),
        ("refinestep", "plies each refinement level adds (1 to 4)"),
        (
            "sacbonus, threatbonus",
            "prior bonus of a sacrifice, a threat (centimen)",
        ),
        (
            "kcache=on|off",
            "remember the knowledge of positions seen again",
        ),
        (
            "net=default|PATH|none",
            "the learned value correction (default: shipped)",
        ),
        ("blockade", "lead discounted for a stuck unit, % (0 to 100)"),
    ];

    /// [`SETTINGS`](MctsConfig::SETTINGS) as an aligned list, one setting a line, each line
    /// starting with `indent`.
    pub fn settings_help(indent: &str) -> String {
        MctsConfig::SETTINGS
            .iter()
            .map(|(key, meaning)| format!("{indent}{key:<27} {meaning}\n"))
            .collect()
    }

    /// Changes one setting from text (arena engine specs, tuning): `config=strong|uniform|v1`
    /// (replaces everything, so give it first), `c`, `cgrowth` and `cbase` (the exploration
    /// constant's growth with a node's visits), `fpu`, `sel=uct|puct`, `pw`, `minimax`,
    /// `cutoff=N|none`, `mix` (0 to 1), `leafvalue=edge|eval` (a new leaf's value: its edge's
    /// static value, or evaluated again), `prune=on|off`, `refine` (playouts, 0: off),
    /// `refinegrowth`, `refinelevels`, `refineshare` (0 to 1), `refinevalue`, `rescan` (visits, 0: exact scans with
    /// several threads), `rescandiv` (under PUCT, a reused scan lasts at most this share of a
    /// node's visits, deeper nodes included; 0: deeper nodes scanned in full), `vloss` (virtual
    /// loss per thread in flight, 0 to 1000), `expand` (playouts a leaf gets before its
    /// children's edges are made, 1 to 1000), and for the knowledge `temp`, `samples`, `scale`, `leafdepth`, `priordepth`, `refinestep`,
    /// `sacbonus`, `threatbonus` (centimen), `kcache=on|off`, `net=default|PATH|none` (a learned
    /// value correction, [`crate::value_net`]; `default`: the shipped one), `blockade` (0 to
    /// 100, percent: [`crate::eval::blockade_discount`]).
    /// Errors say what is wrong with the value.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        fn num<T: std::str::FromStr>(
            key: &str,
            value: &str,
            ok: impl Fn(&T) -> bool,
        ) -> Result<T, String> {
            value
                .parse::<T>()
                .ok()
                .filter(|v| ok(v))
                .ok_or_else(|| format!("{key}={value}: not a valid value"))
        }
        let finite = |lo: f32, hi: f32| move |v: &f32| v.is_finite() && (lo..=hi).contains(v);
        match key {
            "config" => {
                *self = MctsConfig::named(value)
                    .ok_or_else(|| format!("config={value}: expected strong, uniform or v1"))?;
            }
            "c" => self.exploration = num(key, value, finite(0.0, 100.0))?,
            "cgrowth" => self.exploration_growth = num(key, value, finite(0.0, 100.0))?,
            "cbase" => self.exploration_base = num(key, value, |v: &u64| *v >= 1)?,
            "fpu" => self.first_play_urgency = num(key, value, finite(0.0, 1.0))?,
            "pw" => self.prior_weight = num(key, value, finite(0.0, 100.0))?,
            "minimax" => self.minimax_weight = num(key, value, finite(0.0, 1.0))?,
            "sel" => {
                self.selection = match value {
                    "uct" => Selection::Uct,
                    "puct" => Selection::Puct,
                    _ => return Err(format!("sel={value}: expected uct or puct")),
                }
            }
            "cutoff" => {
                self.playout_cutoff = match value {
                    "none" => None,
                    _ => Some(num(key, value, |v: &u32| *v <= 1000)?),
                }
            }
            "mix" => self.playout_mix = num(key, value, finite(0.0, 1.0))?,
            "leafvalue" => {
                self.leaf_value_from_edge = match value {
                    "edge" => true,
                    "eval" => false,
                    _ => return Err(format!("leafvalue={value}: expected edge or eval")),
                }
            }
            "refine" => self.refine_visits = num(key, value, |v: &u64| *v <= 1 << 40)?,
            "refinegrowth" => {
                self.refine_growth = num(key, value, |v: &u64| (2..=1000).contains(v))?
            }
            "refinelevels" => self.refine_levels = num(key, value, |v: &u32| (1..=8).contains(v))?,
            "refinevalue" => self.refined_value_weight = num(key, value, finite(0.0, 1.0))?,
            "refineshare" => self.refine_time_share = num(key, value, finite(0.0, 1.0))?,
            "rescan" => self.shared_rescan = num(key, value, |v: &u32| *v <= 1 << 20)?,
            "rescandiv" => {
                self.shared_rescan_div = num(key, value, |v: &u32| *v <= 1 << 20)?;
            }
            "vloss" => self.virtual_loss = num(key, value, |v: &u32| *v <= 1000)?,
            "expand" => {
                self.expand_threshold = num(key, value, |v: &u32| (1..=1000).contains(v))?;
            }
            "prune" => {
                self.smart_pruning = match value {
                    "on" => true,
                    "off" => false,
                    _ => return Err(format!("prune={value}: expected on or off")),
                }
            }
            "temp" | "samples" | "scale" | "leafdepth" | "priordepth" | "refinestep"
            | "sacbonus" | "threatbonus" | "kcache" | "net" | "blockade" => {
                let k = self.knowledge.get_or_insert_with(Knowledge::default);
                match key {
                    "temp" => k.prior_temperature = num(key, value, finite(1.0, 10_000.0))?,
                    "samples" => {
                        k.playout_samples = num(key, value, |v: &u32| (1..=64).contains(v))?
                    }
                    "scale" => k.value_scale = num(key, value, finite(1.0, 10_000.0))?,
                    "priordepth" => k.prior_depth = num(key, value, |v: &u32| *v <= 8)?,
                    "refinestep" => k.refine_step = num(key, value, |v: &u32| (1..=4).contains(v))?,
                    "sacbonus" => k.sacrifice_bonus = num(key, value, finite(-10_000.0, 10_000.0))?,
                    "threatbonus" => k.threat_bonus = num(key, value, finite(-10_000.0, 10_000.0))?,
                    "blockade" => {
                        k.weights.blockade = num(key, value, |v: &i32| (0..=100).contains(v))?
                    }
                    "net" => {
                        k.weights.net = match value {
                            "none" => None,
                            path => Some(
                                crate::value_net::load(path).map_err(|e| format!("net={e}"))?
                                    as &dyn Correction,
                            ),
                        }
                    }
                    "kcache" => {
                        k.cache = match value {
                            "on" => true,
                            "off" => false,
                            _ => return Err(format!("kcache={value}: expected on or off")),
                        }
                    }
                    _ => k.leaf_depth = num(key, value, |v: &u32| *v <= 8)?,
                }
            }
            _ => {
                return Err(format!(
                    "unknown MCTS setting {key:?} (expected one of {})",
                    MctsConfig::KEYS.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// A one-line description, for `ServerInfo` and tables.
    pub fn describe(&self) -> String {
        let mut s = match self.selection {
            Selection::Uct => format!("UCT c={}", self.exploration),
            Selection::Puct => format!("PUCT c={}", self.exploration),
        };
        if self.exploration_growth > 0.0 {
            let _ = write!(
                s,
                " growing by {}·ln(1 + N/{})",
                self.exploration_growth, self.exploration_base
            );
        }
        let _ = write!(s, ", fpu={}", self.first_play_urgency);
        if self.prior_weight > 0.0 {
            let _ = write!(s, ", prior weight={}", self.prior_weight);
        }
        if self.minimax_weight > 0.0 {
            let _ = write!(s, ", implicit minimax={}", self.minimax_weight);
        }
        match self.playout_cutoff {
            None => s.push_str(", playouts to the end"),
            Some(0) if self.playout_mix > 0.0 => {
                let _ = write!(
                    s,
                    ", evaluation at the leaf mixed with a playout (weight {})",
                    self.playout_mix
                );
            }
            Some(0) if self.leaf_value_from_edge => {
                s.push_str(", evaluation at the leaf (a new leaf's from its parent's scores)");
            }
            Some(0) => s.push_str(", evaluation at the leaf"),
            Some(n) => {
                let _ = write!(s, ", playouts cut after {n} plies");
            }
        }
        match &self.knowledge {
            None => s.push_str(", uniform random playouts"),
            Some(k) => {
                let _ = write!(
                    s,
                    ", knowledge: quiescence evaluation (scale {}), priors softmax T={}",
                    k.value_scale, k.prior_temperature
                );
                if k.leaf_depth > 0 {
                    let _ = write!(s, ", leaf search depth {}", k.leaf_depth);
                }
                if k.prior_depth > 0 {
                    let _ = write!(s, ", root priors searched {} plies deep", k.prior_depth);
                }
                if k.sacrifice_bonus != 0.0 {
                    let _ = write!(s, ", sacrifices' priors {:+} centimen", k.sacrifice_bonus);
                }
                if k.threat_bonus != 0.0 {
                    let _ = write!(s, ", threats' priors {:+} centimen", k.threat_bonus);
                }
                if k.cache {
                    s.push_str(", knowledge remembered by position");
                }
                if let Some(net) = k.weights.net {
                    let _ = write!(s, ", {}", net.describe());
                }
                if k.weights.blockade > 0 {
                    let _ = write!(
                        s,
                        ", up to {}% of its lead given up for the opponent's stuck units",
                        k.weights.blockade
                    );
                }
                if self.refine_visits > 0 {
                    let deeper = match k.refine_step {
                        1 => "a ply".to_owned(),
                        n => format!("{n} plies"),
                    };
                    let _ = write!(
                        s,
                        ", priors searched {deeper} deeper after {} playouts",
                        self.refine_visits
                    );
                    if self.refine_levels > 1 {
                        let _ = write!(
                            s,
                            " (and again after {}x as many, {} times in all)",
                            self.refine_growth, self.refine_levels
                        );
                    }
                    if self.refine_time_share < 1.0 {
                        let _ = write!(
                            s,
                            ", a refinement takes at most {}% of the time",
                            self.refine_time_share * 100.0
                        );
                    }
                    if self.refined_value_weight > 0.0 {
                        let _ = write!(
                            s,
                            ", refined values weigh {} in visited moves' Q",
                            self.refined_value_weight
                        );
                    }
                }
                // Playouts run unless the leaf is evaluated instead; with knowledge they are
                // heavy whenever more than one move is sampled per turn.
                if (self.playout_cutoff != Some(0) || self.playout_mix > 0.0)
                    && k.playout_samples > 1
                {
                    let _ = write!(s, ", heavy playouts ({} samples)", k.playout_samples);
                }
            }
        }
        if self.shared_rescan != SearchParams::default().shared_rescan {
            let _ = write!(
                s,
                ", shared scans rescanned every {} visits",
                self.shared_rescan
            );
        }
        match self.shared_rescan_div {
            div if div == SearchParams::default().shared_rescan_div => {}
            0 => s.push_str(", deeper nodes' shared scans off"),
            div => {
                let _ = write!(s, ", shared scans kept for 1/{div} of a node's visits");
            }
        }
        if self.virtual_loss != SearchParams::default().virtual_loss {
            let _ = write!(s, ", virtual loss {}", self.virtual_loss);
        }
        if self.expand_threshold != SearchParams::default().expand_threshold {
            let _ = write!(
                s,
                ", leaves expanded after {} playouts",
                self.expand_threshold
            );
        }
        s.push_str(if self.smart_pruning {
            ", smart pruning"
        } else {
            ", full budget"
        });
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_configs_and_keys() {
        assert_eq!(MctsConfig::named("default"), Some(MctsConfig::strong()));
        let mut c = MctsConfig::strong();
        c.set("config", "uniform").unwrap();
        assert_eq!(c, MctsConfig::uniform());
        // The uniform engine is the first version's with a higher expansion threshold only.
        let mut v1 = MctsConfig::strong();
        v1.set("config", "v1").unwrap();
        assert_eq!(v1, MctsConfig::first_version());
        assert_eq!((v1.expand_threshold, c.expand_threshold), (1, 8));
        v1.set("expand", "8").unwrap();
        assert_eq!(v1, c);
        assert!(c.knowledge.is_none());
        c.set("temp", "50").unwrap();
        assert_eq!(
            c.knowledge.as_ref().map(|k| k.prior_temperature),
            Some(50.0)
        );
        c.set("cutoff", "none").unwrap();
        assert_eq!(c.playout_cutoff, None);
        c.set("cutoff", "6").unwrap();
        assert_eq!(c.playout_cutoff, Some(6));
        c.set("mix", "0.25").unwrap();
        assert_eq!(c.playout_mix, 0.25);
        for (k, v) in [
            ("mix", "1.5"),
            ("mix", "-0.1"),
            ("mix", "nan"),
            ("c", "-1"),
            ("c", "nan"),
            ("fpu", "2"),
            ("sel", "ucb"),
            ("prune", "yes"),
            ("config", "weak"),
            ("depth", "3"),
            ("samples", "0"),
            ("refine", "-1"),
            ("refinegrowth", "1"),
            ("refinelevels", "0"),
            ("refinelevels", "9"),
            ("refinevalue", "1.5"),
            ("refinevalue", "nan"),
            ("sacbonus", "inf"),
            ("threatbonus", "20000"),
            ("kcache", "yes"),
        ] {
            assert!(c.set(k, v).is_err(), "{k}={v}");
        }
    }

    #[test]
    fn the_default_has_prior_bonuses_and_no_knowledge_cache() {
        let default = MctsConfig::strong();
        let k = default.knowledge.as_ref().unwrap();
        assert_eq!(
            (k.sacrifice_bonus, k.threat_bonus, k.cache),
            (100.0, 150.0, false)
        );
        let d = default.describe();
        for part in [
            "sacrifices' priors +100 centimen",
            "threats' priors +150 centimen",
        ] {
            assert!(d.contains(part), "{d}");
        }
        assert!(!d.contains("knowledge remembered by position"), "{d}");
        // Each can be set, and turned off: 0 is "no bonus", not a bonus of nothing shown.
        let mut c = MctsConfig::strong();
        for (key, value) in [("sacbonus", "-20"), ("threatbonus", "0"), ("kcache", "on")] {
            c.set(key, value).unwrap();
        }
        let k = c.knowledge.as_ref().unwrap();
        assert_eq!(
            (k.sacrifice_bonus, k.threat_bonus, k.cache),
            (-20.0, 0.0, true)
        );
        let d = c.describe();
        assert!(d.contains("sacrifices' priors -20 centimen"), "{d}");
        assert!(!d.contains("threats' priors"), "{d}");
        assert!(d.contains("knowledge remembered by position"), "{d}");
    }

    #[test]
    fn the_default_corrects_its_evaluation_with_the_shipped_bounded_network() {
        let default = MctsConfig::strong();
        let net = default.knowledge.as_ref().and_then(|k| k.weights.net);
        let shipped = crate::value_net::shipped().unwrap();
        assert!(net.is_some_and(|n| std::ptr::addr_eq(n, shipped)));
        assert_eq!(shipped.bound(), Some(350));
        let d = default.describe();
        assert!(
            d.contains("learned value correction (16 hidden units, within ±350 centimen)"),
            "{d}"
        );
        let mut c = MctsConfig::strong();
        c.set("net", "none").unwrap();
        assert!(c.knowledge.as_ref().unwrap().weights.net.is_none());
        assert!(!c.describe().contains("learned value"));
        c.set("net", "default").unwrap();
        assert_eq!(c, default);
        let err = c.set("net", "/no/such/file.net").unwrap_err();
        assert!(err.contains("/no/such/file.net"), "{err}");
        // The uniform engine has no knowledge at all.
        assert!(MctsConfig::uniform().knowledge.is_none());
    }

    #[test]
    fn apply_and_describe() {
        let mut p = SearchParams::default();
        MctsConfig::strong().apply(&mut p);
        assert_eq!(p.playout_cutoff, Some(0));
        assert_eq!(p.playout_mix, 0.0);
        assert!(
            MctsConfig::strong()
                .describe()
                .contains("evaluation at the leaf")
        );
        let mut mixed = MctsConfig::strong();
        mixed.set("mix", "0.5").unwrap();
        mixed.apply(&mut p);
        assert_eq!(p.playout_mix, 0.5);
        assert!(
            mixed
                .describe()
                .contains("mixed with a playout (weight 0.5)")
        );
        let mut refined = MctsConfig::strong();
        for (k, v) in [
            ("refine", "500"),
            ("refinegrowth", "8"),
            ("refinelevels", "2"),
            ("refinevalue", "0.25"),
        ] {
            refined.set(k, v).unwrap();
        }
        refined.apply(&mut p);
        assert_eq!(
            (p.refine_visits, p.refine_growth, p.refine_levels),
            (500, 8, 2)
        );
        assert_eq!(p.refined_value_weight, 0.25);
        assert!(refined.describe().contains(
            "priors searched a ply deeper after 500 playouts (and again after 8x as many, 2 times in all), refined values weigh 0.25 in visited moves' Q"
        ));
        // One setting over the default engine's: the config and what it applies.
        let strong_with = |key: &str, value: &str| {
            let mut config = MctsConfig::strong();
            config.set(key, value).unwrap();
            let mut params = SearchParams::default();
            config.apply(&mut params);
            (config, params)
        };
        let (mut pushed, applied) = strong_with("vloss", "3");
        assert_eq!(applied.virtual_loss, 3);
        assert!(pushed.describe().contains(", virtual loss 3"));
        assert!(!MctsConfig::strong().describe().contains("virtual loss"));
        assert!(pushed.set("vloss", "1001").is_err());
        assert!(pushed.set("vloss", "-1").is_err());
        let (mut reused, applied) = strong_with("leafvalue", "edge");
        assert!(applied.leaf_value_from_edge);
        assert!(
            reused
                .describe()
                .contains(", evaluation at the leaf (a new leaf's from its parent's scores)")
        );
        assert!(!MctsConfig::strong().describe().contains("parent's scores"));
        assert!(reused.set("leafvalue", "both").is_err());
        reused.set("leafvalue", "eval").unwrap();
        assert_eq!(reused, MctsConfig::strong());
        let (mut growing, applied) = strong_with("cgrowth", "0.5");
        assert_eq!(
            (applied.exploration_growth, applied.exploration_base),
            (0.5, SearchParams::default().exploration_base)
        );
        growing.set("cbase", "40000").unwrap();
        assert!(
            growing
                .describe()
                .starts_with("PUCT c=2 growing by 0.5·ln(1 + N/40000), fpu=0.5")
        );
        assert!(!MctsConfig::strong().describe().contains("growing"));
        for (key, bad) in [("cgrowth", "-1"), ("cgrowth", "NaN"), ("cbase", "0")] {
            assert!(growing.set(key, bad).is_err(), "{key}={bad}");
        }
        let (mut shared, applied) = strong_with("refineshare", "0.1");
        assert_eq!(applied.refine_time_share, 0.1);
        assert!(
            shared
                .describe()
                .contains(", a refinement takes at most 10% of the time")
        );
        assert!(
            !MctsConfig::strong()
                .describe()
                .contains("a refinement takes")
        );
        for bad in ["-0.5", "1.5", "x"] {
            assert!(shared.set("refineshare", bad).is_err());
        }
        let (mut slow, applied) = strong_with("expand", "2");
        assert_eq!(applied.expand_threshold, 2);
        assert!(
            slow.describe()
                .contains(", leaves expanded after 2 playouts")
        );
        assert!(
            MctsConfig::uniform()
                .describe()
                .contains(", leaves expanded after 8 playouts")
        );
        assert!(
            !MctsConfig::first_version()
                .describe()
                .contains("leaves expanded")
        );
        for bad in ["0", "1001", "-1", "two"] {
            assert!(slow.set("expand", bad).is_err());
        }
        let (mut fixed, applied) = strong_with("rescandiv", "0");
        assert_eq!(applied.shared_rescan_div, 0);
        assert!(
            fixed
                .describe()
                .contains(", deeper nodes' shared scans off")
        );
        fixed.set("rescandiv", "8").unwrap();
        assert!(
            fixed
                .describe()
                .contains(", shared scans kept for 1/8 of a node's visits")
        );
        assert!(
            !MctsConfig::strong()
                .describe()
                .contains("shared scans kept")
        );
        assert!(fixed.set("rescandiv", "-1").is_err());
        // The first version's engine is the search's defaults; the uniform one differs from
        // them in its expansion threshold only.
        let mut p = SearchParams::default();
        MctsConfig::first_version().apply(&mut p);
        assert_eq!(p, SearchParams::default());
        MctsConfig::uniform().apply(&mut p);
        assert_eq!(
            p,
            SearchParams {
                expand_threshold: 8,
                ..SearchParams::default()
            }
        );
        assert!(
            MctsConfig::uniform()
                .describe()
                .contains("uniform random playouts")
        );
    }
    #[test]
    fn every_setting_is_documented() {
        let words: Vec<&str> = MctsConfig::SETTINGS
            .iter()
            .flat_map(|(key, _)| key.split(|c: char| !c.is_ascii_alphanumeric()))
            .collect();
        for key in MctsConfig::KEYS {
            assert!(words.contains(key), "{key} is not in MctsConfig::SETTINGS");
        }
        let help = MctsConfig::settings_help("    ");
        assert_eq!(help.lines().count(), MctsConfig::SETTINGS.len());
        // A terminal's 80 columns, with the arena's indent.
        for line in help.lines() {
            assert!(line.chars().count() <= 80, "{line}");
        }
    }
}
