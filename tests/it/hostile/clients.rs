//! The clients' own footguns: bcd's pin over plain HTTP, the provider endpoint flag that must not read BC_ENDPOINT, and the first-start operator key kept out of logs.
