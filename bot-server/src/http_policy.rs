//! The HTTP gateway's browser-facing policy: which `Host` names it answers to, which page
//! origins may call it, and what a JSON call must declare.
//!
//! Why each rule exists:
//! - **Host.** A page on `evil.example` can make its own name resolve to 127.0.0.1 (DNS
//!   rebinding); the browser then treats a server on loopback as the page's own origin and lets
//!   it read every answer. Only the `Host` header tells the two apart, so a loopback server
//!   answers only to `localhost`, `127.0.0.1` and `[::1]` (on any port: a proxy in front, as in
//!   `deploy/`, forwards the name with its own port). Elsewhere any name is accepted unless
//!   `--allowed-host` lists some; `*` accepts any. A request with two `Host` lines is refused
//!   with 400 whatever the names (RFC 9112 §3.2), since the check would read one and a proxy
//!   in front could route by the other.
//! - **Origin.** Browsers send "simple" cross-origin requests (a POST with a `text/plain` body)
//!   without asking first and only hide the answer, so the call itself would run. A request
//!   whose `Origin` is neither the server's own (same host and port as `Host`; the scheme is not
//!   compared, since TLS may end at a proxy) nor listed with `--cors-origin` is refused.
//! - **Content-Type.** JSON calls must say `application/json`, which no simple request can: any
//!   cross-origin call then needs a CORS preflight, which only listed origins pass.
//!
//! Flag values are parsed once at start-up ([`Policy::new`]); a value that is not a host or an
//! origin stops the server with an error that names the flag.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, Uri, header};
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::config::ServerConfig;

/// Longest echo of a client's header in a refusal, in characters.
const ECHO_CHARS: usize = 80;

/// The host names a loopback server answers to when `--allowed-host` is not given.
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Why a `host[:port]` does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthorityError {
    /// Nothing at all.
    #[error("it is empty")]
    Empty,
    /// `[` without a matching `]` or with something other than an IPv6 address inside.
    #[error("a bracketed address must be an IPv6 address, like [::1]")]
    BadIpv6,
    /// A character no host name has (`/`, `@`, a space…), or a bare IPv6 address.
    #[error("{0:?} is not a host name (letters, digits, '-', '.', '_'; IPv6 in brackets)")]
    BadName(String),
    /// The part after `:` is not a port number.
    #[error("{0:?} is not a port number (1-65535)")]
    BadPort(String),
}

/// Why an origin (`--cors-origin`, or an `Origin` header) does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OriginError {
    /// No `scheme://`.
    #[error("an origin is scheme://host[:port], like https://board.example.org")]
    NoScheme,
    /// A scheme other than http and https.
    #[error("the scheme must be http or https, not {0:?}")]
    Scheme(String),
    /// A path, query or fragment after the host (a trailing `/` included).
    #[error("an origin has no path: write just scheme://host[:port]")]
    Path,
    /// `user@host`.
    #[error("an origin has no user name")]
    UserInfo,
    /// The host and port part is malformed.
    #[error(transparent)]
    Authority(#[from] AuthorityError),
}

/// A flag value the policy cannot use: the server refuses to start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// A `--cors-origin` value that is not an origin.
    #[error("--cors-origin {value:?}: {source}")]
    CorsOrigin {
        /// The value as given.
        value: String,
        /// What is wrong with it.
        source: OriginError,
    },
    /// An `--allowed-host` value that is not `*`, `name` or `name:port`.
    #[error("--allowed-host {value:?}: {source}")]
    AllowedHost {
        /// The value as given.
        value: String,
        /// What is wrong with it.
        source: AuthorityError,
    },
}

/// A host name (lowercase; IPv6 in canonical bracketed form) and an optional port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authority {
    /// `localhost`, `board.example.org`, `127.0.0.1`, `[::1]`.
    pub name: String,
    /// The port, when written.
    pub port: Option<u16>,
}

impl std::str::FromStr for Authority {
    type Err = AuthorityError;

    /// Parses `name`, `name:port`, `[v6]` or `[v6]:port` (the `Host` header's grammar).
    fn from_str(text: &str) -> Result<Authority, AuthorityError> {
        if text.is_empty() {
            return Err(AuthorityError::Empty);
        }
        let (name, port) = if let Some(rest) = text.strip_prefix('[') {
            let (inside, after) = rest.split_once(']').ok_or(AuthorityError::BadIpv6)?;
            let ip: Ipv6Addr = inside.parse().map_err(|_| AuthorityError::BadIpv6)?;
            let port = match after {
                "" => None,
                _ => Some(after.strip_prefix(':').ok_or(AuthorityError::BadIpv6)?),
            };
            (format!("[{ip}]"), port)
        } else {
            let (name, port) = match text.split_once(':') {
                Some((name, port)) => (name, Some(port)),
                None => (text, None),
            };
            // One trailing dot names the same host ("localhost." is localhost).
            let name = name.strip_suffix('.').unwrap_or(name);
            let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_');
            if name.is_empty() || !name.chars().all(valid) {
                return Err(AuthorityError::BadName(excerpt(name)));
            }
            (name.to_ascii_lowercase(), port)
        };
        let port = match port {
            // `host:` with an empty port is allowed by the grammar and means no port.
            None | Some("") => None,
            Some(p) => Some(
                p.parse::<u16>()
                    .ok()
                    .filter(|p| *p > 0)
                    .ok_or_else(|| AuthorityError::BadPort(excerpt(p)))?,
            ),
        };
        Ok(Authority { name, port })
    }
}

/// A web origin: `http` or `https`, a host, and the port (the scheme's default when absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    https: bool,
    host: String,
    port: u16,
}

impl Origin {
    fn default_port(https: bool) -> u16 {
        if https { 443 } else { 80 }
    }

    /// Whether this is the origin of a page served under `host` (the request's `Host`): same
    /// name and port. The scheme is not compared: TLS may end at a proxy in front.
    fn is_served_by(&self, host: &Authority) -> bool {
        self.host == host.name && self.port == host.port.unwrap_or(Self::default_port(self.https))
    }
}

impl std::str::FromStr for Origin {
    type Err = OriginError;

    fn from_str(text: &str) -> Result<Origin, OriginError> {
        let (scheme, rest) = text.split_once("://").ok_or(OriginError::NoScheme)?;
        let https = match scheme.to_ascii_lowercase().as_str() {
            "http" => false,
            "https" => true,
            _ => return Err(OriginError::Scheme(excerpt(scheme))),
        };
        if rest.contains(['/', '?', '#']) {
            return Err(OriginError::Path);
        }
        if rest.contains('@') {
            return Err(OriginError::UserInfo);
        }
        let authority: Authority = rest.parse()?;
        Ok(Origin {
            https,
            port: authority.port.unwrap_or(Self::default_port(https)),
            host: authority.name,
        })
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.https { "https" } else { "http" };
        write!(f, "{scheme}://{}", self.host)?;
        if self.port != Self::default_port(self.https) {
            write!(f, ":{}", self.port)?;
        }
        Ok(())
    }
}

/// Whether `host` matches an `--allowed-host` entry: the same name, and the same port when the
/// entry names one.
fn host_matches(rule: &Authority, host: &Authority) -> bool {
    rule.name == host.name && rule.port.is_none_or(|p| host.port == Some(p))
}

/// A set that is either everything or an explicit list.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Allowed<T> {
    Any,
    Only(Vec<T>),
}

/// Parses flag values (empty ones skipped) into a list, or [`Allowed::Any`] if one is `*`. On
/// failure, the value and why.
fn parse_list<T, E>(
    values: &[String],
    parse: impl Fn(&str) -> Result<T, E>,
) -> Result<Allowed<T>, (String, E)> {
    let mut list = Vec::new();
    let mut any = false;
    for value in values.iter().map(|v| v.trim()).filter(|v| !v.is_empty()) {
        if value == "*" {
            any = true;
        } else {
            list.push(parse(value).map_err(|e| (value.to_owned(), e))?);
        }
    }
    Ok(if any {
        Allowed::Any
    } else {
        Allowed::Only(list)
    })
}

/// Why the policy refuses a request. Each says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The `Host` names a server this is not (DNS rebinding, or a missing `--allowed-host`).
    #[error(
        "Host header {0:?} is not a name this server answers to (a guard against DNS rebinding); \
         the operator can allow it with --allowed-host"
    )]
    Host(String),
    /// No `Host` header (nor an HTTP/2 authority) while the server checks it.
    #[error(
        "Host header missing: this server answers only to the names it is configured for \
         (--allowed-host)"
    )]
    MissingHost,
    /// More than one `Host` header line.
    #[error("more than one Host header: a request names one host (RFC 9112, section 3.2)")]
    DuplicateHost,
    /// A page from another origin, not listed with `--cors-origin`.
    #[error(
        "Origin {0:?} may not call this server: only its own pages and origins listed with \
         --cors-origin may"
    )]
    Origin(String),
    /// A body sent without `Content-Type: application/json`.
    #[error(
        "Content-Type {0:?} is not accepted: send the JSON body with Content-Type: application/json"
    )]
    ContentType(String),
}

/// The host a request names, for [`Policy::check_host`]: the URI's authority (HTTP/2's
/// `:authority`, or an HTTP/1.1 request in absolute form), else the `Host` header. Two or more
/// `Host` lines are refused even when the authority is there (RFC 9112 §3.2 asks for a 400):
/// the check would pass one while a proxy in front or a later layer may act on another.
pub fn request_host<'a>(uri: &'a Uri, headers: &'a HeaderMap) -> Result<Option<&'a [u8]>, Refusal> {
    let mut hosts = headers.get_all(header::HOST).iter();
    let host = hosts.next();
    if hosts.next().is_some() {
        return Err(Refusal::DuplicateHost);
    }
    Ok(match uri.authority() {
        Some(authority) => Some(authority.as_str().as_bytes()),
        None => host.map(HeaderValue::as_bytes),
    })
}

/// The gateway's browser-facing policy, built once from the flags.
#[derive(Debug, Clone)]
pub struct Policy {
    hosts: Allowed<Authority>,
    origins: Allowed<Origin>,
}

impl Policy {
    /// The policy for a gateway listening on `local_addr`: `--allowed-host` if given, else only
    /// the loopback names on a loopback address and any host elsewhere; `--cors-origin` listed.
    pub fn new(config: &ServerConfig, local_addr: SocketAddr) -> Result<Policy, PolicyError> {
        Policy::from_flags(&config.allowed_hosts, &config.cors_origins, local_addr.ip())
    }

    fn from_flags(
        allowed_hosts: &[String],
        cors_origins: &[String],
        listen: IpAddr,
    ) -> Result<Policy, PolicyError> {
        let hosts = match parse_list(allowed_hosts, str::parse::<Authority>)
            .map_err(|(value, source)| PolicyError::AllowedHost { value, source })?
        {
            Allowed::Only(rules) if rules.is_empty() && listen.is_loopback() => Allowed::Only(
                LOOPBACK_NAMES
                    .map(|name| Authority {
                        name: name.to_owned(),
                        port: None,
                    })
                    .to_vec(),
            ),
            Allowed::Only(rules) if rules.is_empty() => Allowed::Any,
            hosts => hosts,
        };
        let origins = parse_list(cors_origins, str::parse::<Origin>)
            .map_err(|(value, source)| PolicyError::CorsOrigin { value, source })?;
        Ok(Policy { hosts, origins })
    }

    /// Checks the request's `Host` (or HTTP/2 `:authority`); returns it parsed, for the origin
    /// check. With any host allowed, a missing or malformed one passes as `None`.
    pub fn check_host(&self, host: Option<&[u8]>) -> Result<Option<Authority>, Refusal> {
        let parsed = host
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| h.trim().parse::<Authority>().ok());
        let Allowed::Only(rules) = &self.hosts else {
            return Ok(parsed);
        };
        let Some(raw) = host else {
            return Err(Refusal::MissingHost);
        };
        match parsed {
            Some(h) if rules.iter().any(|r| host_matches(r, &h)) => Ok(Some(h)),
            _ => Err(Refusal::Host(excerpt(&String::from_utf8_lossy(raw)))),
        }
    }

    /// Checks the request's `Origin`, if any, against `host` (the checked `Host`) and the list.
    /// Requests without one (curl, gRPC-style clients, a browser's same-origin GET) pass.
    pub fn check_origin(
        &self,
        origin: Option<&[u8]>,
        host: Option<&Authority>,
    ) -> Result<(), Refusal> {
        let Some(raw) = origin else {
            return Ok(());
        };
        // `null` (sandboxed frames, file: pages) and garbage parse to None: never same-origin.
        let parsed = std::str::from_utf8(raw)
            .ok()
            .and_then(|o| o.parse::<Origin>().ok());
        let allowed = parsed
            .as_ref()
            .is_some_and(|o| host.is_some_and(|h| o.is_served_by(h)) || self.lists_origin(o));
        if allowed {
            Ok(())
        } else {
            Err(Refusal::Origin(excerpt(&String::from_utf8_lossy(raw))))
        }
    }

    fn lists_origin(&self, origin: &Origin) -> bool {
        match &self.origins {
            Allowed::Any => true,
            Allowed::Only(list) => list.contains(origin),
        }
    }

    /// The CORS layer for the listed origins, or `None` when only same-origin pages may call
    /// (then there is nothing to grant, and preflights from elsewhere are refused as foreign).
    /// Preflights get the methods and headers the API uses; answers carry
    /// `Access-Control-Allow-Origin` for a listed origin. No credentials: the API authenticates
    /// with a bearer header, never cookies.
    pub fn cors(&self) -> Option<CorsLayer> {
        if matches!(&self.origins, Allowed::Only(list) if list.is_empty()) {
            return None;
        }
        let policy = self.clone();
        Some(
            CorsLayer::new()
                .allow_origin(AllowOrigin::predicate(move |origin: &HeaderValue, _| {
                    origin
                        .to_str()
                        .ok()
                        .and_then(|o| o.parse::<Origin>().ok())
                        .is_some_and(|o| policy.lists_origin(&o))
                }))
                .allow_methods([Method::GET, Method::POST])
                .allow_headers([
                    header::CONTENT_TYPE,
                    header::AUTHORIZATION,
                    HeaderName::from_static("x-emergo-timeout-ms"),
                ])
                .max_age(std::time::Duration::from_secs(600)),
        )
    }
}

/// Checks that a JSON call declared its body as JSON: `application/json`, parameters such as
/// `charset` allowed. A call with no body at all and no `Content-Type` (`curl -X POST
/// .../ServerInfo`) passes: there is nothing to declare, and a browser request from another
/// origin is stopped by the origin check anyway.
pub fn check_json_content_type(
    content_type: Option<&[u8]>,
    body_is_empty: bool,
) -> Result<(), Refusal> {
    let Some(raw) = content_type else {
        return if body_is_empty {
            Ok(())
        } else {
            Err(Refusal::ContentType("(none)".to_owned()))
        };
    };
    let essence = raw.split(|b| *b == b';').next().unwrap_or_default();
    if essence
        .trim_ascii()
        .eq_ignore_ascii_case(b"application/json")
    {
        Ok(())
    } else {
        Err(Refusal::ContentType(excerpt(&String::from_utf8_lossy(raw))))
    }
}

/// The first [`ECHO_CHARS`] characters of `text`, for quoting client input in messages.
fn excerpt(text: &str) -> String {
    match text.char_indices().nth(ECHO_CHARS) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(hosts: &[&str], origins: &[&str], listen: &str) -> Result<Policy, PolicyError> {
        let owned = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        Policy::from_flags(&owned(hosts), &owned(origins), listen.parse().unwrap())
    }

    fn host(p: &Policy, h: &str) -> Result<Option<Authority>, Refusal> {
        p.check_host(Some(h.as_bytes()))
    }

    #[test]
    fn duplicate_host_lines_are_refused() {
        let mut headers = HeaderMap::new();
        let origin_form: Uri = "/v1/ServerInfo".parse().unwrap();
        assert_eq!(request_host(&origin_form, &headers), Ok(None));
        headers.append(header::HOST, HeaderValue::from_static("localhost:8080"));
        assert_eq!(
            request_host(&origin_form, &headers),
            Ok(Some(&b"localhost:8080"[..]))
        );
        let absolute: Uri = "http://127.0.0.1/v1/ServerInfo".parse().unwrap();
        assert_eq!(
            request_host(&absolute, &headers),
            Ok(Some(&b"127.0.0.1"[..]))
        );
        // The same name twice is refused too: the rule is about the number of lines.
        headers.append(header::HOST, HeaderValue::from_static("localhost:8080"));
        assert_eq!(
            request_host(&origin_form, &headers),
            Err(Refusal::DuplicateHost)
        );
        assert_eq!(
            request_host(&absolute, &headers),
            Err(Refusal::DuplicateHost)
        );
    }

    #[test]
    fn authorities_parse() {
        let a: Authority = "LocalHost:8080".parse().unwrap();
        assert_eq!((a.name.as_str(), a.port), ("localhost", Some(8080)));
        let a: Authority = "[0:0:0:0:0:0:0:1]".parse().unwrap();
        assert_eq!((a.name.as_str(), a.port), ("[::1]", None));
        assert_eq!("[::1]:9".parse::<Authority>().unwrap().port, Some(9));
        assert_eq!("localhost.".parse::<Authority>().unwrap().name, "localhost");
        assert_eq!("a:".parse::<Authority>().unwrap().port, None);
        assert_eq!("".parse::<Authority>(), Err(AuthorityError::Empty));
        assert_eq!("[::1".parse::<Authority>(), Err(AuthorityError::BadIpv6));
        assert_eq!("[x]".parse::<Authority>(), Err(AuthorityError::BadIpv6));
        assert!(matches!(
            "::1".parse::<Authority>(),
            Err(AuthorityError::BadName(_))
        ));
        assert!(matches!(
            "a b".parse::<Authority>(),
            Err(AuthorityError::BadName(_))
        ));
        assert!(matches!(
            "a:99999".parse::<Authority>(),
            Err(AuthorityError::BadPort(_))
        ));
        assert!(matches!(
            "a:0".parse::<Authority>(),
            Err(AuthorityError::BadPort(_))
        ));
    }

    #[test]
    fn origins_parse_and_print_canonically() {
        let o: Origin = "HTTPS://Board.Example.org:443".parse().unwrap();
        assert_eq!(o.to_string(), "https://board.example.org");
        let o: Origin = "http://localhost:3000".parse().unwrap();
        assert_eq!(o.to_string(), "http://localhost:3000");
        assert_eq!(
            "board.example.org".parse::<Origin>(),
            Err(OriginError::NoScheme)
        );
        assert_eq!(
            "ftp://x".parse::<Origin>(),
            Err(OriginError::Scheme("ftp".into()))
        );
        assert_eq!("https://x/".parse::<Origin>(), Err(OriginError::Path));
        assert_eq!("https://u@x".parse::<Origin>(), Err(OriginError::UserInfo));
        assert!("null".parse::<Origin>().is_err());
    }

    #[test]
    fn bad_flags_name_the_flag() {
        let e = policy(&[], &["board.example.org"], "127.0.0.1").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--cors-origin \"board.example.org\": "),
            "{e}"
        );
        let e = policy(&["ex ample"], &[], "127.0.0.1").unwrap_err();
        assert!(
            e.to_string().starts_with("--allowed-host \"ex ample\": "),
            "{e}"
        );
    }

    #[test]
    fn loopback_answers_only_to_loopback_names_on_any_port() {
        let p = policy(&[], &[], "127.0.0.1").unwrap();
        for ok in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "[::1]:50150",
            "LOCALHOST",
        ] {
            assert!(host(&p, ok).is_ok(), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8080",
            "127.0.0.2",
            "",
            "local host",
        ] {
            assert!(matches!(host(&p, bad), Err(Refusal::Host(_))), "{bad}");
        }
        assert_eq!(p.check_host(None), Err(Refusal::MissingHost));
        // Also on IPv6 loopback.
        let p = policy(&[], &[], "::1").unwrap();
        assert!(host(&p, "evil.example").is_err());
    }

    #[test]
    fn other_addresses_answer_to_any_host_unless_listed() {
        let p = policy(&[], &[], "0.0.0.0").unwrap();
        assert!(host(&p, "anything.example:1").is_ok());
        assert_eq!(p.check_host(None), Ok(None));
        let p = policy(&["bot.example.org", "10.0.0.5:8080"], &[], "0.0.0.0").unwrap();
        assert!(host(&p, "bot.example.org:443").is_ok());
        assert!(host(&p, "10.0.0.5:8080").is_ok());
        assert!(host(&p, "10.0.0.5:8081").is_err());
        assert!(host(&p, "localhost").is_err());
        // `*` allows any, even on loopback.
        let p = policy(&["*"], &[], "127.0.0.1").unwrap();
        assert!(host(&p, "evil.example").is_ok());
    }

    #[test]
    fn origin_must_be_the_servers_own_or_listed() {
        let p = policy(&[], &["https://board.example.org"], "127.0.0.1").unwrap();
        let h = |s: &str| s.parse::<Authority>().unwrap();
        let check = |o: &str, h: &Authority| p.check_origin(Some(o.as_bytes()), Some(h));
        assert_eq!(p.check_origin(None, None), Ok(()));
        assert_eq!(check("http://localhost:8080", &h("localhost:8080")), Ok(()));
        assert_eq!(
            check("https://board.example.org", &h("localhost:8080")),
            Ok(())
        );
        // TLS ending at a proxy: an https page, a Host without port.
        assert_eq!(check("https://localhost", &h("localhost")), Ok(()));
        for foreign in [
            "http://localhost:3000",
            "http://evil.example",
            "https://board.example.org:8443",
            "null",
        ] {
            assert!(
                matches!(
                    check(foreign, &h("localhost:8080")),
                    Err(Refusal::Origin(_))
                ),
                "{foreign}"
            );
        }
        assert!(
            p.check_origin(Some(b"http://localhost:8080"), None)
                .is_err()
        );
        assert!(
            policy(&[], &["*"], "127.0.0.1")
                .unwrap()
                .check_origin(Some(b"http://x"), None)
                .is_ok()
        );
    }

    #[test]
    fn cors_layer_only_with_listed_origins() {
        assert!(policy(&[], &[], "127.0.0.1").unwrap().cors().is_none());
        assert!(
            policy(&[], &["http://a:1"], "127.0.0.1")
                .unwrap()
                .cors()
                .is_some()
        );
    }

    #[test]
    fn json_content_type() {
        assert!(check_json_content_type(Some(b"application/json"), false).is_ok());
        assert!(check_json_content_type(Some(b"Application/JSON; charset=utf-8"), false).is_ok());
        assert!(check_json_content_type(None, true).is_ok());
        assert_eq!(
            check_json_content_type(Some(b"text/plain"), false),
            Err(Refusal::ContentType("text/plain".into()))
        );
        assert!(check_json_content_type(Some(b"text/plain"), true).is_err());
        assert!(check_json_content_type(None, false).is_err());
        assert!(check_json_content_type(Some(b"application/jsonp"), false).is_err());
    }
}
