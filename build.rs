//! Compiles `proto/` without a `protoc` binary: protox parses the files, tonic-prost-build
//! generates the messages, servers and clients, and the encoded descriptor set is kept for the
//! JSON gateway, the validator and server reflection.

use std::{error::Error, path::PathBuf};

/// The packages we generate Rust code for (google.protobuf only so that prost can resolve the
/// well-known types, which it maps to prost-types); the rest (buf.validate, google.api) are
/// needed only as descriptors, read at run time.
const GENERATED_PACKAGES: &[&str] = &["bettercompute.", "google.rpc", "google.protobuf"];

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-changed=proto");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);

    let mut api_files = Vec::new();
    collect_protos(&PathBuf::from("proto/bettercompute"), &mut api_files)?;
    api_files.sort();
    // Each file by name as well as the directory: a directory is looked at by its own mtime on
    // some filesystems, which an edit of a file inside it does not change.
    for file in &api_files {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    let mut files: Vec<String> =
        api_files.iter().map(|path| path.strip_prefix("proto").unwrap().to_string_lossy().into_owned()).collect();
    files.extend(["google/rpc/status.proto".into(), "google/rpc/error_details.proto".into()]);

    let mut compiler = protox::Compiler::new(["proto"])?;
    compiler.include_imports(true).include_source_info(true);
    compiler.open_files(&files)?;

    // These bytes keep custom options (google.api.http, buf.validate, our authorization);
    // re-encoding the set through prost_types would drop them. The server runs on a set without
    // the comments (they are two thirds of the bytes, and more once decoded); the OpenAPI
    // document, made once, reads them from the documented one.
    std::fs::write(out_dir.join("descriptor-documented.bin"), compiler.encode_file_descriptor_set())?;
    let mut bare = protox::Compiler::new(["proto"])?;
    bare.include_imports(true).include_source_info(false);
    bare.open_files(&files)?;
    std::fs::write(out_dir.join("descriptor.bin"), bare.encode_file_descriptor_set())?;

    let mut fds = compiler.file_descriptor_set();
    fds.file.retain(|file| {
        let package = file.package();
        GENERATED_PACKAGES.iter().any(|prefix| package.starts_with(prefix))
    });
    tonic_prost_build::configure().build_server(true).build_client(true).compile_fds(fds)?;
    Ok(())
}

fn collect_protos(dir: &PathBuf, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_protos(&path, out)?;
        } else if path.extension().is_some_and(|ext| ext == "proto") {
            out.push(path);
        }
    }
    Ok(())
}
