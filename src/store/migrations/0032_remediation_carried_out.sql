-- A remediation step carried out, not only requested: the `remediated_at` of the last step the
-- reconciler that acts on the node (the metal reconciler's power cycle and redeploy, the
-- substrate's recreation) has done; a step whose time differs is still to be done. Added
-- column: a server of the previous release keeps working against this schema.
ALTER TABLE nodes ADD COLUMN remediation_done_at BIGINT;
