-- A join token made for one machine (a bare-metal deploy's): only that machine id joins with it,
-- and with it the machine joins the node already recorded for that id. NULL for a token any
-- machine of the pool may use.
ALTER TABLE join_tokens ADD COLUMN machine_id TEXT;
