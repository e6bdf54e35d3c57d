//! A deleted tenant's keys and streams end at once; a tenant's principal reads its own events without naming its tenant; an unknown or foreign load balancer target is NOT_FOUND.
