//! The web board's assets, embedded in the binary so the server needs no files at run time.
//! Plain modern JavaScript (ES modules: `app.js` is the entry, each other module has one job)
//! and SVG, no build step: edit `bot-server/web/*` and rebuild. A new file is one line in
//! [`ASSETS`].

/// One embedded file, served at `GET path`.
pub struct Asset {
    /// The URL path, e.g. `/app.js`.
    pub path: &'static str,
    /// The `Content-Type` header.
    pub content_type: &'static str,
    /// The file itself.
    pub body: &'static str,
}

/// The path and type; the body by its length.
impl std::fmt::Debug for Asset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Asset")
            .field("path", &self.path)
            .field("content_type", &self.content_type)
            .field("bytes", &self.body.len())
            .finish()
    }
}

const HTML: &str = "text/html; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

/// `asset!("/path", TYPE, "file")`: the file `bot-server/web/file`, served at `/path`.
macro_rules! asset {
    ($path:literal, $content_type:expr, $file:literal) => {
        Asset {
            path: $path,
            content_type: $content_type,
            body: include_str!(concat!("../web/", $file)),
        }
    };
}

/// Every file of the web board.
pub const ASSETS: &[Asset] = &[
    asset!("/", HTML, "index.html"),
    asset!("/style.css", CSS, "style.css"),
    asset!("/app.js", JS, "app.js"),
    asset!("/state.js", JS, "state.js"),
    asset!("/dom.js", JS, "dom.js"),
    asset!("/messages.js", JS, "messages.js"),
    asset!("/api.js", JS, "api.js"),
    asset!("/position.js", JS, "position.js"),
    asset!("/tree.js", JS, "tree.js"),
    asset!("/evaluation.js", JS, "evaluation.js"),
    asset!("/pv.js", JS, "pv.js"),
    asset!("/analysis.js", JS, "analysis.js"),
    asset!("/storage.js", JS, "storage.js"),
    asset!("/export.js", JS, "export.js"),
    asset!("/game.js", JS, "game.js"),
    asset!("/graph.js", JS, "graph.js"),
    asset!("/review.js", JS, "review.js"),
    asset!("/board.js", JS, "board.js"),
    asset!("/movelist.js", JS, "movelist.js"),
    asset!("/editor.js", JS, "editor.js"),
    asset!("/view.js", JS, "view.js"),
    asset!("/clicks.js", JS, "clicks.js"),
];
