//! Engine specifications on the command line: `random`, `greedy`, `mcts[:key=value,...]`,
//! `ab[:key=value,...]` and `server:URL[,key=value,...]` (keys `playouts`, `time`, `threads`,
//! `ponder=on|off` for servers, `reuse=on|off` for in-process MCTS, `level=1..8` for both,
//! `name`).
//!
//! A spec is parsed into an [`EngineSpec`] once, before anything runs, so a typo fails the whole
//! command at once with a message naming the spec instead of failing game 17 an hour later.

use std::fmt::Write as _;
use std::time::Duration;

use emergo_engine::level::Level;

use crate::client::parse_duration;

/// The most search threads a spec may ask for; more is almost certainly a typo.
const MAX_THREADS: usize = 256;

/// Keys of an `mcts` spec besides the search settings of `emergo_engine::MctsConfig::KEYS`.
const MCTS_KEYS: &[&str] = &["playouts", "time", "threads", "reuse", "level", "name"];

/// A per-move budget. Either limit ends the search; an empty budget means "use the global one".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    /// Wall-clock time per move.
    pub time: Option<Duration>,
    /// Playouts per move.
    pub playouts: Option<u64>,
}

impl Budget {
    /// Whether neither limit is set.
    pub fn is_empty(&self) -> bool {
        self.time.is_none() && self.playouts.is_none()
    }

    /// `self` if it sets a limit, else `fallback`: an engine's own keys win over the global flags.
    pub fn or(self, fallback: Budget) -> Budget {
        if self.is_empty() { fallback } else { self }
    }

    /// A short description for tables and the PGN `TimeControl` tag: `100ms/move`,
    /// `300 playouts/move`, `1s or 5000 playouts/move`.
    pub fn describe(&self) -> String {
        match (self.time, self.playouts) {
            (Some(t), Some(p)) => format!("{} or {p} playouts/move", format_duration(t)),
            (Some(t), None) => format!("{}/move", format_duration(t)),
            (None, Some(p)) => format!("{p} playouts/move"),
            // Only under a game clock (`--tc`): otherwise the global budget fills an empty one.
            (None, None) => "on the clock".to_owned(),
        }
    }

    /// The gRPC deadline of one BestMove call with this budget.
    ///
    /// Generous on purpose (twice the budget plus 2 s): the server already clips its search to
    /// the deadline, so the deadline only has to catch a server that is stuck, and a tight one
    /// would turn ordinary scheduling noise on a loaded machine into lost games. A playout budget
    /// has no time attached, so it gets 10 s plus 0.1 ms per playout (a server does ~100,000
    /// playouts/s per thread, so this is ample even while requests queue for threads).
    pub fn deadline(&self) -> Duration {
        match (self.time, self.playouts) {
            (Some(t), _) => t * 2 + Duration::from_secs(2),
            (None, Some(p)) => {
                Duration::from_secs(10) + Duration::from_micros(p.saturating_mul(100).min(1 << 40))
            }
            (None, None) => Duration::from_secs(60),
        }
    }
}

/// `100ms`, `1s`, `1.5s`: the shortest exact spelling, so names and tags stay readable.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if d.subsec_nanos() % 1_000_000 != 0 {
        format!("{}us", d.as_micros())
    } else if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else if ms > 1000 && ms % 100 == 0 {
        format!("{}s", d.as_secs_f64())
    } else {
        format!("{ms}ms")
    }
}

/// What plays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineKind {
    /// A uniformly random legal move (`players::RandomPlayer`).
    Random,
    /// The best material balance after one ply (`players::GreedyPlayer`).
    Greedy,
    /// MCTS in this process (`players::MctsPlayer`).
    Mcts,
    /// The alpha-beta engine in this process (`players::AbPlayer`).
    AlphaBeta,
    /// A bot server over gRPC.
    Server {
        /// The server's URL (with a scheme).
        url: String,
    },
}

/// One parsed `--engine` spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineSpec {
    /// The spec as given on the command line.
    pub text: String,
    /// What plays.
    pub kind: EngineKind,
    /// Its display name: the `name=` key, else derived from the spec; made unique by
    /// [`resolve`].
    pub name: String,
    /// The engine's own budget keys (empty: the global `--time`/`--playouts` apply).
    pub budget: Budget,
    /// Search threads per move (MCTS and servers).
    pub threads: usize,
    /// MCTS settings (`emergo_engine::MctsConfig::set` keys and values), in order.
    pub mcts_settings: Vec<(String, String)>,
    /// Alpha-beta: deepest iteration.
    pub depth: Option<u32>,
    /// Alpha-beta: node budget per move.
    pub nodes: Option<u64>,
    /// Alpha-beta: a value network file correcting its evaluation (`net=PATH`,
    /// `emergo_engine::value_net`).
    pub net: Option<String>,
    /// Servers: ask the server to ponder after each move (`SearchOptions.ponder`, with the
    /// game's id), `ponder=on`.
    pub ponder: bool,
    /// In-process MCTS: keep the tree from move to move, as a server does for a game
    /// (`reuse=on`).
    pub reuse: bool,
    /// MCTS and servers: a playing level (`level=1..8`, `emergo_engine::level`): its playout
    /// cap joins the budget, and its move is drawn as the level draws it.
    pub level: Option<Level>,
}

impl EngineSpec {
    /// Whether the engine searches (has a budget at all).
    pub fn searches(&self) -> bool {
        match self.kind {
            EngineKind::Mcts | EngineKind::Server { .. } => true,
            // A depth or node budget is a complete budget of its own.
            EngineKind::AlphaBeta => self.depth.is_none() && self.nodes.is_none(),
            EngineKind::Random | EngineKind::Greedy => false,
        }
    }

    /// The MCTS configuration of an in-process MCTS spec: the default with the spec's settings
    /// applied (validated when the spec was parsed).
    pub fn mcts_config(&self) -> Result<emergo_engine::MctsConfig, String> {
        let mut config = emergo_engine::MctsConfig::default();
        for (k, v) in &self.mcts_settings {
            config.set(k, v)?;
        }
        Ok(config)
    }

    /// The alpha-beta limits of an `ab` spec, or an error when it has no budget at all.
    pub fn ab_limits(&self) -> Result<emergo_engine::AbLimits, String> {
        let mut limits = emergo_engine::AbLimits {
            max_time: self.budget.time,
            max_nodes: self.nodes,
            ..emergo_engine::AbLimits::default()
        };
        if let Some(d) = self.depth {
            limits.max_depth = d;
        }
        if limits.max_time.is_none() && self.depth.is_none() && self.nodes.is_none() {
            return Err(format!(
                "engine {:?}: alpha-beta needs time=, depth= or nodes= (or a global --time)",
                self.text
            ));
        }
        Ok(limits)
    }

    /// The alpha-beta limits of an `ab` spec under a game clock (`--tc`): the time is set
    /// move by move from the clock; `depth=` and `nodes=` still cap the search.
    pub fn ab_clock_limits(&self) -> emergo_engine::AbLimits {
        let mut limits = emergo_engine::AbLimits {
            max_time: None,
            max_nodes: self.nodes,
            ..emergo_engine::AbLimits::default()
        };
        if let Some(d) = self.depth {
            limits.max_depth = d;
        }
        limits
    }

    /// A description for the engines table: kind, budget and threads.
    pub fn describe(&self) -> String {
        match &self.kind {
            EngineKind::Random => "random mover".to_owned(),
            EngineKind::Greedy => "greedy one-ply mover".to_owned(),
            EngineKind::Mcts => format!(
                "in-process MCTS, {}, {} thread(s), {}",
                self.budget.describe(),
                self.threads,
                self.mcts_config().map_or_else(|e| e, |c| c.describe())
            ),
            EngineKind::AlphaBeta => {
                let mut parts = Vec::new();
                if let Some(d) = self.depth {
                    parts.push(format!("depth {d}"));
                }
                if let Some(n) = self.nodes {
                    parts.push(format!("{n} nodes"));
                }
                if let Some(path) = &self.net {
                    parts.push(format!("value network {path}"));
                }
                if self.budget.time.is_some() || parts.is_empty() {
                    parts.push(self.budget.describe());
                }
                format!("in-process alpha-beta, {}, 1 thread", parts.join(", "))
            }
            EngineKind::Server { url } => format!(
                "server {url}, {}, {} thread(s)",
                self.budget.describe(),
                self.threads
            ),
        }
    }
}

/// Parses one spec. Errors name the spec and say what is wrong.
pub fn parse_spec(text: &str) -> Result<EngineSpec, String> {
    let fail = |why: String| format!("engine spec {text:?}: {why}");
    let trimmed = text.trim();
    let (head, rest) = match trimmed.split_once(':') {
        Some((h, r)) => (h, Some(r)),
        None => (trimmed, None),
    };
    let (kind, keys, allowed): (EngineKind, Vec<&str>, &[&str]) = match head {
        "random" | "greedy" => {
            let kind = if head == "random" {
                EngineKind::Random
            } else {
                EngineKind::Greedy
            };
            (kind, split_keys(rest), &["name"])
        }
        "mcts" => (EngineKind::Mcts, split_keys(rest), MCTS_KEYS),
        "ab" => (
            EngineKind::AlphaBeta,
            split_keys(rest),
            &["time", "depth", "nodes", "net", "name"],
        ),
        "server" => {
            let rest = rest.unwrap_or_default();
            let mut parts = rest.split(',');
            let url = parts.next().unwrap_or_default().trim();
            if url.is_empty() {
                return Err(fail(
                    "a server needs a URL: server:http://HOST:PORT[,key=value...]".to_owned(),
                ));
            }
            let url = if url.contains("://") {
                url.to_owned()
            } else {
                format!("http://{url}")
            };
            if let Err(e) = crate::client::check_server_url(&url) {
                return Err(fail(format!("bad URL {url:?}: {e}")));
            }
            (
                EngineKind::Server { url },
                parts.filter(|p| !p.trim().is_empty()).collect(),
                &["playouts", "time", "threads", "ponder", "level", "name"],
            )
        }
        "" => return Err(fail("empty spec".to_owned())),
        other => {
            return Err(fail(format!(
                "unknown engine {other:?} (expected random, greedy, mcts[:key=value,...], \
                 ab[:key=value,...] or server:URL[,key=value,...])"
            )));
        }
    };
    let mut spec = EngineSpec {
        text: text.to_owned(),
        kind,
        name: String::new(),
        budget: Budget::default(),
        threads: 1,
        mcts_settings: Vec::new(),
        depth: None,
        nodes: None,
        net: None,
        ponder: false,
        reuse: false,
        level: None,
    };
    let kind_is_mcts = spec.kind == EngineKind::Mcts;
    let mut mcts_check = emergo_engine::MctsConfig::default();
    let mut explicit_name = None;
    // The derived name lists the keys as given (minus name=), so `mcts:playouts=2000` is named
    // just that and two differently tuned engines never look alike in a table.
    let mut shown_keys: Vec<String> = Vec::new();
    for kv in keys {
        let (key, value) = kv
            .split_once('=')
            .map(|(k, v)| (k.trim(), v.trim()))
            .ok_or_else(|| fail(format!("{kv:?} is not key=value")))?;
        let setting = kind_is_mcts && emergo_engine::MctsConfig::KEYS.contains(&key);
        if !allowed.contains(&key) && !setting {
            return Err(fail(format!(
                "unknown key {key:?} (this engine takes: {}{})",
                allowed.join(", "),
                if kind_is_mcts {
                    format!(", {}", emergo_engine::MctsConfig::KEYS.join(", "))
                } else {
                    String::new()
                }
            )));
        }
        if value.is_empty() {
            return Err(fail(format!("{key}= needs a value")));
        }
        match key {
            "name" => {
                explicit_name = Some(value.to_owned());
                continue;
            }
            "playouts" => {
                let p: u64 = value
                    .parse()
                    .ok()
                    .filter(|&p| p > 0)
                    .ok_or_else(|| fail(format!("playouts={value}: not a positive integer")))?;
                spec.budget.playouts = Some(p);
            }
            "time" => {
                let t = parse_duration(value).map_err(|e| fail(format!("time={value}: {e}")))?;
                spec.budget.time = Some(t);
            }
            "depth" => {
                spec.depth = Some(
                    value
                        .parse()
                        .ok()
                        .filter(|d| (1..=emergo_engine::alphabeta::MAX_DEPTH).contains(d))
                        .ok_or_else(|| {
                            fail(format!(
                                "depth={value}: not an integer in 1..={}",
                                emergo_engine::alphabeta::MAX_DEPTH
                            ))
                        })?,
                );
            }
            "nodes" => {
                spec.nodes =
                    Some(
                        value.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                            fail(format!("nodes={value}: not a positive integer"))
                        })?,
                    );
            }
            "net" if !kind_is_mcts => {
                emergo_engine::value_net::load(value).map_err(|e| fail(format!("net: {e}")))?;
                spec.net = Some(value.to_owned());
            }
            "level" => {
                let level = value.parse().ok().and_then(Level::new).ok_or_else(|| {
                    fail(format!("level={value}: not a level (1, the weakest, to 8)"))
                })?;
                spec.level = Some(level);
            }
            "ponder" | "reuse" => {
                let on = match value {
                    "on" | "true" | "yes" | "1" => true,
                    "off" | "false" | "no" | "0" => false,
                    _ => return Err(fail(format!("{key}={value}: use on or off"))),
                };
                if key == "ponder" {
                    spec.ponder = on;
                } else {
                    spec.reuse = on;
                }
            }
            "threads" => {
                spec.threads = value
                    .parse()
                    .ok()
                    .filter(|t| (1..=MAX_THREADS).contains(t))
                    .ok_or_else(|| {
                        fail(format!(
                            "threads={value}: not an integer in 1..={MAX_THREADS}"
                        ))
                    })?;
            }
            _ if kind_is_mcts => {
                // Applied to a running configuration, so each value is checked in context.
                mcts_check.set(key, value).map_err(&fail)?;
                spec.mcts_settings.push((key.to_owned(), value.to_owned()));
            }
            _ => {}
        }
        shown_keys.push(format!("{key}={value}"));
    }
    spec.name = match explicit_name {
        Some(n) => n,
        None => {
            let mut n = match &spec.kind {
                EngineKind::Server { url } => {
                    format!(
                        "server:{}",
                        url.split_once("://").map_or(&**url, |(_, r)| r)
                    )
                }
                _ => head.to_owned(),
            };
            if !shown_keys.is_empty() {
                let sep = if matches!(spec.kind, EngineKind::Server { .. }) {
                    ','
                } else {
                    ':'
                };
                let _ = write!(n, "{sep}{}", shown_keys.join(","));
            }
            n
        }
    };
    Ok(spec)
}

fn split_keys(rest: Option<&str>) -> Vec<&str> {
    rest.map(|r| r.split(',').filter(|p| !p.trim().is_empty()).collect())
        .unwrap_or_default()
}

/// Applies the global budget to engines without their own and makes names unique (`mcts`,
/// `mcts#2`), since names key the crosstable and the records' White/Black tags.
pub fn resolve(mut specs: Vec<EngineSpec>, global: Budget) -> Vec<EngineSpec> {
    let mut seen: Vec<String> = Vec::new();
    for spec in &mut specs {
        if spec.searches() {
            spec.budget = spec.budget.or(global);
            // A level's own playouts cap whatever else the budget says, and are a budget alone.
            if let Some(cap) = spec.level.and_then(|l| l.plan().max_playouts) {
                spec.budget.playouts = Some(spec.budget.playouts.map_or(cap, |p| p.min(cap)));
            }
        }
        let base = spec.name.clone();
        let mut n = 2;
        while seen.contains(&spec.name) {
            spec.name = format!("{base}#{n}");
            n += 1;
        }
        seen.push(spec.name.clone());
    }
    specs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baselines_and_names() {
        let r = parse_spec("random").unwrap();
        assert_eq!(r.kind, EngineKind::Random);
        assert_eq!(r.name, "random");
        assert_eq!(parse_spec("greedy:name=G").unwrap().name, "G");
        let err = parse_spec("random:playouts=3").unwrap_err();
        assert!(err.contains("\"random:playouts=3\"") && err.contains("unknown key"));
    }

    #[test]
    fn mcts_keys() {
        let m = parse_spec("mcts:playouts=2000").unwrap();
        assert_eq!(m.name, "mcts:playouts=2000");
        assert_eq!(m.budget.playouts, Some(2000));
        assert_eq!(m.threads, 1);
        let m = parse_spec("mcts:time=100ms,threads=2,name=fast").unwrap();
        assert_eq!(m.name, "fast");
        assert_eq!(m.budget.time, Some(Duration::from_millis(100)));
        assert_eq!(m.threads, 2);
        assert_eq!(parse_spec("mcts").unwrap().name, "mcts");
        for bad in [
            "mcts:playouts=0",
            "mcts:playouts=x",
            "mcts:time=fast",
            "mcts:threads=0",
            "mcts:depth=3",
            "mcts:c=-1",
            "mcts:config=weak",
            "ab:depth=0",
            "ab:nodes=x",
            "ab:playouts=5",
            "mcts:playouts",
            "mcts:name=",
            "alphabeta",
            "",
        ] {
            let err = parse_spec(bad).unwrap_err();
            assert!(err.contains(&format!("{bad:?}")), "{err}");
        }
    }

    #[test]
    fn ab_and_mcts_settings() {
        let a = parse_spec("ab:depth=4").unwrap();
        assert_eq!((a.kind.clone(), a.depth), (EngineKind::AlphaBeta, Some(4)));
        assert!(!a.searches());
        assert_eq!(a.ab_limits().unwrap().max_depth, 4);
        let t = parse_spec("ab:time=200ms").unwrap();
        assert!(t.searches());
        assert_eq!(
            t.ab_limits().unwrap().max_time,
            Some(Duration::from_millis(200))
        );
        assert!(parse_spec("ab").unwrap().ab_limits().is_err());
        let m = parse_spec("mcts:config=uniform,time=1s").unwrap();
        assert_eq!(m.name, "mcts:config=uniform,time=1s");
        assert_eq!(
            m.mcts_config().unwrap(),
            emergo_engine::MctsConfig::uniform()
        );
        let m = parse_spec("mcts:c=0.7,minimax=0.3").unwrap();
        let c = m.mcts_config().unwrap();
        assert_eq!((c.exploration, c.minimax_weight), (0.7, 0.3));
        assert!(m.describe().contains("PUCT c=0.7"));
    }

    #[test]
    fn server_specs() {
        let s = parse_spec("server:http://127.0.0.1:50051,playouts=300").unwrap();
        assert_eq!(
            s.kind,
            EngineKind::Server {
                url: "http://127.0.0.1:50051".into()
            }
        );
        assert_eq!(s.name, "server:127.0.0.1:50051,playouts=300");
        assert_eq!(s.budget.playouts, Some(300));
        let s = parse_spec("server:localhost:9000,time=1s,threads=4,name=prod").unwrap();
        assert_eq!(
            s.kind,
            EngineKind::Server {
                url: "http://localhost:9000".into()
            }
        );
        assert_eq!((s.name.as_str(), s.threads), ("prod", 4));
        assert!(!s.ponder);
        // A server may be asked to ponder.
        let s = parse_spec("server:localhost:9000,time=1s,ponder=on").unwrap();
        assert!(s.ponder);
        assert_eq!(s.name, "server:localhost:9000,time=1s,ponder=on");
        assert!(
            parse_spec("server:localhost:9000,ponder=maybe")
                .unwrap_err()
                .contains("ponder=maybe: use on or off")
        );
        assert!(
            parse_spec("mcts:ponder=on")
                .unwrap_err()
                .contains("unknown key")
        );
        // An in-process MCTS may keep its tree between moves; servers keep theirs themselves.
        let s = parse_spec("mcts:reuse=on,time=200ms").unwrap();
        assert!(s.reuse && !s.ponder);
        assert_eq!(s.name, "mcts:reuse=on,time=200ms");
        assert!(!parse_spec("mcts:time=200ms").unwrap().reuse);
        assert!(!parse_spec("mcts:reuse=off").unwrap().reuse);
        assert!(
            parse_spec("mcts:reuse=sometimes")
                .unwrap_err()
                .contains("reuse=sometimes: use on or off")
        );
        for other in ["server:localhost:9000,reuse=on", "ab:reuse=on"] {
            assert!(
                parse_spec(other).unwrap_err().contains("unknown key"),
                "{other}"
            );
        }
        assert!(parse_spec("server:").unwrap_err().contains("needs a URL"));
        assert!(parse_spec("server").unwrap_err().contains("needs a URL"));
        assert!(
            parse_spec("server:http://x:1,foo=2")
                .unwrap_err()
                .contains("unknown key \"foo\"")
        );
    }

    #[test]
    fn levels() {
        let global = Budget {
            time: Some(Duration::from_millis(100)),
            playouts: None,
        };
        let specs = resolve(
            vec![
                parse_spec("mcts:level=3").unwrap(),
                parse_spec("mcts:level=8").unwrap(),
                parse_spec("mcts:level=7,playouts=500").unwrap(),
                parse_spec("server:http://127.0.0.1:1,level=2").unwrap(),
            ],
            global,
        );
        // A level's playouts join the budget and cap a larger one; level 8 has none of its own.
        assert_eq!(specs[0].budget.playouts, Some(80));
        assert_eq!(specs[0].level.map(Level::number), Some(3));
        assert_eq!(specs[1].budget.playouts, None);
        assert_eq!(specs[2].budget.playouts, Some(500));
        assert_eq!(specs[3].level.map(Level::number), Some(2));
        for bad in ["mcts:level=0", "mcts:level=9", "mcts:level=x", "ab:level=3"] {
            assert!(parse_spec(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn resolving_budgets_and_duplicates() {
        let global = Budget {
            time: Some(Duration::from_millis(100)),
            playouts: None,
        };
        let specs = ["mcts", "mcts", "mcts:playouts=50", "random", "mcts"]
            .iter()
            .map(|s| parse_spec(s).unwrap())
            .collect();
        let r = resolve(specs, global);
        let names: Vec<&str> = r.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["mcts", "mcts#2", "mcts:playouts=50", "random", "mcts#3"]
        );
        assert_eq!(r[0].budget, global);
        assert_eq!(r[2].budget.playouts, Some(50));
        assert_eq!(r[2].budget.time, None);
        assert!(r[3].budget.is_empty());
    }

    #[test]
    fn budget_text_and_deadlines() {
        let b = Budget {
            time: Some(Duration::from_millis(100)),
            playouts: None,
        };
        assert_eq!(b.describe(), "100ms/move");
        assert_eq!(b.deadline(), Duration::from_millis(2200));
        let b = Budget {
            time: Some(Duration::from_millis(1500)),
            playouts: Some(300),
        };
        assert_eq!(b.describe(), "1.5s or 300 playouts/move");
        let b = Budget {
            time: None,
            playouts: Some(300),
        };
        assert_eq!(b.describe(), "300 playouts/move");
        assert_eq!(b.deadline(), Duration::from_millis(10_030));
        assert_eq!(format_duration(Duration::from_secs(1)), "1s");
    }
}
