//! Serving connections: accept loop, connection cap, timeouts, keepalive, TLS, graceful stop.
