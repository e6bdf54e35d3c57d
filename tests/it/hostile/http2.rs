//! HTTP/2 as a hostile client uses it: unfinished bodies on many streams, connections that send only the preface.
