//! Compiles the contract with protox (a pure-Rust protobuf compiler) and generates the prost
//! messages and tonic client/server, the canonical proto3 JSON mapping of the messages (pbjson,
//! for the HTTP gateway), and the encoded descriptor set for gRPC reflection.

use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "emergo/bot/v1/bot.proto";
    println!("cargo:rerun-if-changed={proto}");
    let fds = protox::compile([proto], ["."])?;
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    let encoded = fds.encode_to_vec();
    std::fs::write(out.join("emergo_bot_v1_descriptor.bin"), &encoded)?;
    pbjson_build::Builder::new()
        .register_descriptors(&encoded)?
        .build(&[".emergo.bot.v1"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
