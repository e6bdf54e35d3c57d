-- SQLite has one writer at a time, so events keep taking their number from `event_head` while
-- their transaction runs (Postgres numbers them after they commit: see its file).
SELECT 1;
