//! The HTTP gateway's browser-facing policy: CORS, Host checks, content types.
