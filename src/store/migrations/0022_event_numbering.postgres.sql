-- Events are numbered after they commit, not while their transaction runs. A writer inserts its
-- event with no `seq` and takes no shared lock, so writers no longer queue behind the one
-- `event_head` row. A reader first numbers what has committed (`Store::event_number_committed`:
-- holding the head's row lock, it gives the unnumbered rows the next numbers, in the order they
-- were written), then reads. Numbers are given only to committed rows, by one numbering at a
-- time, all of a numbering's at once: the numbers a reader can see are always 1..n, and an
-- event whose transaction commits late gets a number after every number already seen.
ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events ALTER COLUMN seq DROP NOT NULL;
CREATE UNIQUE INDEX events_seq ON events (seq);
ALTER TABLE events ADD COLUMN written BIGSERIAL;
CREATE INDEX events_unnumbered ON events (written) WHERE seq IS NULL;
