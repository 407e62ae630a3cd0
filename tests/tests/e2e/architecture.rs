//! The shape of the code: every crate's modules import downward only (no import
//! cycle), every source file says its role on its first line, and the server's dependency tree
//! holds no terminal or table crates (those belong to the `emergo` tools).
//!
//! `cargo test --release -p emergo-tests --test e2e -- --nocapture architecture::` prints each crate's
//! modules in dependency order with their imports.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use emergo_tests::workspace_root;

/// The crates whose module graphs are checked, by source directory.
const CRATES: &[&str] = &["rules", "mcts", "engine", "bot-server", "cli"];

/// Modules by name, each with the modules it imports.
type Graph = BTreeMap<String, Vec<String>>;

/// Each top-level module of a crate's `src/` (a file `m.rs` with its submodules under `m/`)
/// with the other top-level modules its code names through `crate::`. `lib.rs`, `main.rs` and
/// `bin/` are the crate's roots, not modules. Test code (from a file's first `#[cfg(test)]`,
/// tests being at the bottom) and comments are left out: tests may reach anywhere, docs may
/// link anywhere.
fn module_graph(src: &Path) -> Graph {
    let mut files: Vec<(String, String)> = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let relative = path.strip_prefix(src).unwrap().to_path_buf();
            if path.is_dir() {
                if relative != Path::new("bin") {
                    stack.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                text.starts_with("//! "),
                "{}: the first line must say the file's role",
                path.display()
            );
            let first = relative.components().next().unwrap();
            let top = Path::new(first.as_os_str())
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if top != "lib" && top != "main" {
                files.push((top, text));
            }
        }
    }
    let mut graph = Graph::new();
    for (top, _) in &files {
        graph.entry(top.clone()).or_default();
    }
    for (top, text) in &files {
        let code = text.split("#[cfg(test)]").next().unwrap();
        for line in code.lines().map(str::trim_start) {
            if line.starts_with("//") {
                continue;
            }
            for (at, _) in line.match_indices("crate::") {
                let dep: String = line[at + "crate::".len()..]
                    .chars()
                    .take_while(|&c| c.is_ascii_alphanumeric() || c == '_')
                    .collect();
                if dep != *top && graph.contains_key(&dep) {
                    let deps = graph.get_mut(top).unwrap();
                    if !deps.contains(&dep) {
                        deps.push(dep);
                    }
                }
            }
        }
    }
    graph
}

/// The modules in dependency order, or the ones caught in a cycle.
fn dependency_order(mut left: Graph) -> Result<Vec<(String, Vec<String>)>, Graph> {
    let mut order: Vec<(String, Vec<String>)> = Vec::new();
    while !left.is_empty() {
        let ready: Vec<String> = left
            .iter()
            .filter(|(_, deps)| deps.iter().all(|d| order.iter().any(|(m, _)| m == d)))
            .map(|(m, _)| m.clone())
            .collect();
        if ready.is_empty() {
            return Err(left);
        }
        for module in ready {
            let deps = left.remove(&module).unwrap();
            order.push((module, deps));
        }
    }
    Ok(order)
}

/// No crate's modules import each other in a cycle.
#[test]
fn modules_import_without_cycles() {
    for krate in CRATES {
        let graph = module_graph(&workspace_root().join(krate).join("src"));
        assert!(graph.len() >= 3, "{krate}: modules not found: {graph:?}");
        match dependency_order(graph) {
            Ok(order) => {
                println!("{krate}:");
                for (module, deps) in &order {
                    println!("  {module} -> {}", deps.join(", "));
                }
            }
            Err(cycle) => panic!("{krate}: import cycle among {cycle:#?}"),
        }
    }
}

/// The checker itself finds a cycle (so that a passing run means something).
#[test]
fn a_cycle_is_caught() {
    let graph = BTreeMap::from([
        ("a".to_owned(), vec!["b".to_owned()]),
        ("b".to_owned(), vec!["c".to_owned()]),
        ("c".to_owned(), vec!["a".to_owned()]),
        ("d".to_owned(), vec![]),
    ]);
    let cycle = dependency_order(graph).unwrap_err();
    assert_eq!(cycle.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
}

/// The server (and so its container image) is built without the `emergo` tools'
/// terminal and table crates.
#[test]
fn the_server_has_no_terminal_crates() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .current_dir(workspace_root())
        .args([
            "tree",
            "--offline",
            "-p",
            "emergo-bot-server",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(
        tree.contains("tonic "),
        "unexpected cargo tree output: {tree}"
    );
    for tool_crate in ["crossterm", "indicatif", "comfy-table", "hdrhistogram"] {
        assert!(
            !tree
                .lines()
                .any(|l| l.starts_with(&format!("{tool_crate} "))),
            "the server depends on {tool_crate}"
        );
    }
}
