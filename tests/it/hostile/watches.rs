//! Event watches: revocation reaches open streams, and how many one caller may hold.
