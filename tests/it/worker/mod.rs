//! The worker: leases across processes, wake-ups, failures and stuck objects, events (list,
//! watch across a restart, server-sent events) and usage metering. The harness starts the
//! worker, the server and the polling for what they record.

mod abandoned;
mod events;
mod leases;
mod relay;
mod status;
mod usage;
mod wakeup;
