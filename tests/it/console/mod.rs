//! The people's side of `bcctl dev`: the web console it serves at `/console/` (its files, who a key
//! is, and the whole console driven in Debian's chromium by Playwright), and `bcctl`'s tables as
//! they read in a terminal.

mod browser;
mod serving;
mod tables;
