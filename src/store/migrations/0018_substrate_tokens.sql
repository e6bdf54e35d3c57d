-- The hosted join token of a pool substrate: its bearer form sealed with the server's key (the
-- reconciler writes it into the cluster's Secret, so a pass that crashed after making the token
-- finds it again), and the token it replaced, revoked once the daemons have had time to re-read
-- the Secret. `ready_once` tells a first `ready` from a later one.
ALTER TABLE kubernetes_substrates ADD COLUMN join_token_sealed TEXT NOT NULL DEFAULT '';
ALTER TABLE kubernetes_substrates ADD COLUMN previous_join_token_id TEXT NOT NULL DEFAULT '';
ALTER TABLE kubernetes_substrates ADD COLUMN join_token_rotated_at BIGINT;
ALTER TABLE kubernetes_substrates ADD COLUMN ready_once BIGINT NOT NULL DEFAULT 0;
