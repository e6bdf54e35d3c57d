//! Substrates that would adopt a cluster the system manages for another tenant, and the uses and scope of the join token they host.
