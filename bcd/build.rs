//! Generates bcd's client of the API from `proto/`, as any client of the API would: only the
//! Nodes service (what a node calls) and the `google.rpc` details its errors carry, parsed by
//! protox (no `protoc` binary) and compiled by tonic-prost-build, client side only.

use std::error::Error;

const PROTO_ROOT: &str = "../proto";
/// The files bcd speaks; protox reads what they import.
const FILES: &[&str] =
    &["bettercompute/compute/v1/nodes.proto", "google/rpc/status.proto", "google/rpc/error_details.proto"];

fn main() -> Result<(), Box<dyn Error>> {
    let mut compiler = protox::Compiler::new([PROTO_ROOT])?;
    compiler.include_imports(true);
    compiler.open_files(FILES)?;
    // Every file read, imports included: an edit of any of them changes the generated code.
    let mut fds = compiler.file_descriptor_set();
    for file in &fds.file {
        println!("cargo:rerun-if-changed={PROTO_ROOT}/{}", file.name());
    }
    // Code for the packages of the files named (their messages use their package's others, as
    // nodes.proto uses join_tokens.proto's taints) and google.protobuf, so that prost resolves
    // the well-known types to prost-types; the other imports are only annotations.
    let packages: Vec<String> = fds
        .file
        .iter()
        .filter(|file| FILES.contains(&file.name()))
        .map(|file| file.package().to_owned())
        .chain(["google.protobuf".to_owned()])
        .collect();
    fds.file.retain(|file| packages.iter().any(|package| package == file.package()));
    tonic_prost_build::configure().build_server(false).build_client(true).compile_fds(fds)?;
    Ok(())
}
