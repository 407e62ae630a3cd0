//! The emergo-bot gRPC contract, package `emergo.bot.v1` (`proto/emergo/bot/v1/bot.proto`).
//!
//! Generated at build time by protox + tonic-prost-build, so no system `protoc` is needed.
//! [`v1::emergo_bot_client::EmergoBotClient`] is the client, [`v1::emergo_bot_server`] the
//! server side, and [`FILE_DESCRIPTOR_SET`] feeds gRPC server reflection. Every message also
//! implements serde's `Serialize`/`Deserialize` with the canonical proto3 JSON mapping (pbjson):
//! camelCase field names, enums by name, 64-bit integers as strings.

/// Generated messages and services of `emergo.bot.v1`.
#[allow(missing_docs, clippy::all)]
pub mod v1 {
    tonic::include_proto!("emergo.bot.v1");
    include!(concat!(env!("OUT_DIR"), "/emergo.bot.v1.serde.rs"));
}

/// The encoded `FileDescriptorSet` of the contract, for tonic-reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/emergo_bot_v1_descriptor.bin"));
