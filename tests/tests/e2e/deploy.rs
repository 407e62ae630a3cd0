//! The deployment files cannot run here (no cluster, no Docker engine), so check that they parse
//! and agree with the server: ports, flags, probes, thread budget vs CPU request, grace period.

use std::process::Command;

use emergo_tests::{binary, workspace_root};
use yaml_rust2::{Yaml, YamlLoader};

fn load(path: &str) -> Vec<Yaml> {
    let text = std::fs::read_to_string(workspace_root().join(path)).unwrap();
    YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn flag(args: &[Yaml], name: &str) -> Option<String> {
    args.iter()
        .filter_map(Yaml::as_str)
        .find_map(|a| a.strip_prefix(&format!("--{name}=")).map(str::to_owned))
}

#[test]
fn kubernetes_manifests_agree_with_the_server() {
    let docs = load("deploy/k8s/deployment.yaml");
    assert_eq!(docs.len(), 1);
    let d = &docs[0];
    assert_eq!(d["kind"].as_str(), Some("Deployment"));
    let pod = &d["spec"]["template"]["spec"];
    let c = &pod["containers"][0];
    let args = c["args"].as_vec().unwrap();

    // Every flag given is one the server knows.
    let help = String::from_utf8(
        Command::new(binary("bot-server"))
            .arg("--help")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    for a in args.iter().filter_map(Yaml::as_str) {
        let name = a.split('=').next().unwrap();
        assert!(help.contains(name), "{name} is not a bot-server flag");
    }

    // Ports and probes line up.
    let grpc_port = flag(args, "listen")
        .unwrap()
        .rsplit(':')
        .next()
        .unwrap()
        .parse::<i64>()
        .unwrap();
    let ports = c["ports"].as_vec().unwrap();
    assert!(
        ports.iter().any(|p| p["name"].as_str() == Some("grpc")
            && p["containerPort"].as_i64() == Some(grpc_port))
    );
    for probe in ["readinessProbe", "livenessProbe"] {
        assert_eq!(
            c[probe]["grpc"]["port"].as_i64(),
            Some(grpc_port),
            "{probe}"
        );
    }
    assert_eq!(
        c["readinessProbe"]["grpc"]["service"].as_str(),
        Some("emergo.bot.v1.EmergoBot")
    );

    // The thread budget matches the CPU request.
    let threads = flag(args, "threads").unwrap();
    assert_eq!(
        c["resources"]["requests"]["cpu"].as_str(),
        Some(threads.as_str())
    );

    // The grace period covers the longest search.
    let max_ms: i64 = flag(args, "max-time-ms").unwrap().parse().unwrap();
    assert!(pod["terminationGracePeriodSeconds"].as_i64().unwrap() * 1000 > max_ms);
    assert_eq!(pod["securityContext"]["runAsNonRoot"].as_bool(), Some(true));

    let svc = &load("deploy/k8s/service.yaml")[0];
    assert_eq!(svc["kind"].as_str(), Some("Service"));
    let selector = &svc["spec"]["selector"];
    assert_eq!(selector, &d["spec"]["selector"]["matchLabels"]);
    for p in svc["spec"]["ports"].as_vec().unwrap() {
        let target = p["targetPort"].as_str().unwrap();
        assert!(
            ports.iter().any(|cp| cp["name"].as_str() == Some(target)),
            "targetPort {target}"
        );
    }
}

#[test]
fn dockerfile_is_multi_stage_release_non_root() {
    let text = std::fs::read_to_string(workspace_root().join("deploy/Dockerfile")).unwrap();
    let froms: Vec<&str> = text.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(froms.len(), 2, "{froms:?}");
    assert!(text.contains("cargo build --release"));
    assert!(text.contains("--bin bot-server"));
    let user = text.lines().rfind(|l| l.starts_with("USER ")).unwrap();
    assert!(!user.contains("root") && !user.contains(" 0"), "{user}");
    assert!(text.contains("EMERGO_LISTEN=0.0.0.0:50051"));
}

#[test]
fn nginx_template_has_the_fleet_settings() {
    let text =
        std::fs::read_to_string(workspace_root().join("deploy/nginx/emergo-fleet.conf.template"))
            .unwrap();
    for needle in [
        "grpc_pass grpc://emergo_grpc",
        "keepalive_requests 1000000",
        "hash $emergo_affinity consistent",
        "$http_x_emergo_game",
        "grpc_next_upstream error timeout",
        "proxy_buffering off",
    ] {
        assert!(text.contains(needle), "template lacks {needle:?}");
    }
}
