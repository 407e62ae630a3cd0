//! TLS for the server's ports and the client tools (rustls).
