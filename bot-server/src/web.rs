//! The web board's assets, embedded in the binary so the server needs no files at run time.
//! Plain modern JavaScript and SVG, no build step: edit `bot-server/web/*` and rebuild.

/// `GET /`.
pub const INDEX_HTML: &str = include_str!("../web/index.html");
/// `GET /app.js`.
pub const APP_JS: &str = include_str!("../web/app.js");
/// `GET /style.css`.
pub const STYLE_CSS: &str = include_str!("../web/style.css");
