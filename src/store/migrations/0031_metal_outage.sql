-- A BMC outage during a transient state: JSON (since, failed passes, the step and the last
-- error) while the state runs, '' for none. The state's end carries it in its event and clears
-- it, so an outage the state rode out stays visible after its problem is gone. Added column
-- with a default: a server of the previous release keeps working against this schema.
ALTER TABLE metal_machines ADD COLUMN bmc_outage TEXT NOT NULL DEFAULT '';
-- New BMC credentials waiting to be checked against the BMC: the password sealed to the node's
-- id and the user, '' for none. The old ones stay in use until the BMC takes the new ones.
ALTER TABLE metal_machines ADD COLUMN password_pending_sealed TEXT NOT NULL DEFAULT '';
ALTER TABLE metal_machines ADD COLUMN username_pending TEXT NOT NULL DEFAULT '';
