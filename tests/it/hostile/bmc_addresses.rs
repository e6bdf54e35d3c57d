//! BMC addresses a tenant may not point the worker at (loopback, link-local, the control plane's own listeners), and what a BMC's answers may bring back into a view.
