//! The listener: slow, half-sent and idle connections, and the connection cap.
