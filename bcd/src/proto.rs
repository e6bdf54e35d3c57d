//! The code bcd's build generates from `proto/`: the Nodes service's messages and client, and
//! the `google.rpc` details of the API's errors. Nothing else lives here.

#[allow(clippy::all, missing_docs)]
pub mod bettercompute {
    pub mod compute {
        pub mod v1 {
            tonic::include_proto!("bettercompute.compute.v1");
        }
    }
}

#[allow(clippy::all, missing_docs)]
pub mod google {
    pub mod rpc {
        tonic::include_proto!("google.rpc");
    }
}
