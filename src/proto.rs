//! The code generated from `proto/`, the descriptor pool read by the gateway, the validator
//! and server reflection, and how a message is written as JSON ([`json`]). Nothing else lives
//! here.

use std::sync::OnceLock;

use prost_reflect::DescriptorPool;

pub mod json;

/// The encoded file descriptor set of every file under `proto/`, custom options included, and
/// without the files' comments: what the server keeps decoded while it runs.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/descriptor.bin"));

/// The same set with the comments of every file (its source code info), which the OpenAPI
/// document's descriptions are taken from.
pub const DOCUMENTED_FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/descriptor-documented.bin"));

/// The descriptor pool decoded from [`FILE_DESCRIPTOR_SET`].
pub fn descriptor_pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| {
        DescriptorPool::decode(FILE_DESCRIPTOR_SET).expect("the descriptor set built by build.rs decodes")
    })
}

/// A pool of [`DOCUMENTED_FILE_DESCRIPTOR_SET`], decoded anew for its caller (the OpenAPI
/// document is made once), so that the comments are not kept for the life of the process.
pub fn documented_descriptor_pool() -> DescriptorPool {
    DescriptorPool::decode(DOCUMENTED_FILE_DESCRIPTOR_SET)
        .expect("the documented descriptor set built by build.rs decodes")
}

#[allow(clippy::all, missing_docs)]
pub mod bettercompute {
    pub mod compute {
        pub mod v1 {
            tonic::include_proto!("bettercompute.compute.v1");
        }
    }
    pub mod options {
        pub mod v1 {
            tonic::include_proto!("bettercompute.options.v1");
        }
    }
    pub mod platform {
        pub mod v1 {
            tonic::include_proto!("bettercompute.platform.v1");
        }
    }
}

#[allow(clippy::all, missing_docs)]
pub mod google {
    pub mod rpc {
        tonic::include_proto!("google.rpc");
    }
}

pub use bettercompute::compute::v1 as compute;
pub use bettercompute::platform::v1 as platform;
