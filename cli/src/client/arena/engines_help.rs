//! `emergo arena --engines-help`: the keys of every kind of `--engine` spec, documented once
//! here so that `emergo arena --help` stays a screen long. The search settings come from
//! `emergo_engine::MctsConfig::SETTINGS`, the list `bot-server --mcts-help` prints too.

/// The spec kinds and the keys each takes.
const KINDS: &str = "\
Engine specs for `emergo arena --engine SPEC` (give two or more):

  random                      a uniformly random legal move
  greedy                      the most prisoners after one move
  mcts[:key=value,...]        MCTS in this process
  ab[:key=value,...]          the alpha-beta engine in this process
  server:URL[,key=value,...]  a bot server over gRPC: http://HOST:PORT,
                              https://HOST:PORT (TLS, see --ca-cert) or HOST:PORT

Every engine takes name=NAME, its name in tables and records (default: the spec).
A budget key replaces --time/--playouts for its engine; T is a duration (200ms,
1s, 1.5s). Under --tc the clock sets each move's time: no time= then.

server keys:
  time=T, playouts=N    budget of each move
  threads=N             search threads per move (1 to 256; the server caps them)
  ponder=on|off         the server thinks on the opponent's time

ab keys (alpha-beta):
  time=T                time per move
  depth=D               deepest iteration
  nodes=N               node budget per move
  net=PATH              a value network correcting the evaluation (`default`:
                        the shipped one)

mcts keys:
  time=T, playouts=N    budget of each move
  threads=N             search threads per move (1 to 256)
  reuse=on|off          keep the tree from move to move, as a server does
";

/// Examples, last.
const EXAMPLES: &str = "
Examples: mcts:config=uniform,time=200ms   ab:depth=4   mcts:refine=0,name=plain
          server:http://127.0.0.1:50051,time=200ms,ponder=on,name=prod
";

/// The whole text of `--engines-help`.
pub fn text() -> String {
    let mut out = String::from(KINDS);
    out.push_str("  and the search settings (as for bot-server --mcts):\n");
    out.push_str(&emergo_engine::MctsConfig::settings_help("    "));
    out.push_str(EXAMPLES);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The help names every search setting (it is written by hand), and every key a spec
    /// takes besides them.
    #[test]
    fn every_key_is_listed() {
        let help = text();
        let words: Vec<&str> = help.split(|c: char| !c.is_ascii_alphanumeric()).collect();
        let keys = emergo_engine::MctsConfig::KEYS.iter();
        let spec_keys = [
            "playouts", "time", "threads", "reuse", "name", "depth", "nodes", "net", "ponder",
        ];
        for key in keys.chain(spec_keys.iter()) {
            assert!(words.contains(key), "{key} missing from: {help}");
        }
        // Every spec it shows parses.
        for spec in [
            "mcts:config=uniform,time=200ms",
            "ab:depth=4",
            "mcts:refine=0,name=plain",
            "server:http://127.0.0.1:50051,time=200ms,ponder=on,name=prod",
        ] {
            assert!(help.contains(spec), "{spec}");
            super::super::spec::parse_spec(spec).unwrap();
        }
    }
}
