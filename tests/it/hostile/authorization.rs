//! What a refused or cross-tenant caller can make the server write, echo or reveal.
