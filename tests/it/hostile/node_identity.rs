//! Node identity: a join with a live node's machine id must prove it is that machine, and what a daemon reports about its hardware is bounded.
