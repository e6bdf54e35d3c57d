-- The metal reconciler's record of a workflow: the steps of the current transient state that
-- are done (a worker killed mid-workflow resumes at the first step not listed, and never runs a
-- destructive one twice for one request), and a deploy's one-use join token (sealed to the node
-- id) with the SHA-256 of the secret in its boot configuration's URL. Added columns only, with
-- defaults: a server of the previous release keeps working against this schema.
ALTER TABLE metal_machines ADD COLUMN steps TEXT NOT NULL DEFAULT '';
ALTER TABLE metal_machines ADD COLUMN deploy_token_id TEXT NOT NULL DEFAULT '';
ALTER TABLE metal_machines ADD COLUMN deploy_token_sealed TEXT NOT NULL DEFAULT '';
ALTER TABLE metal_machines ADD COLUMN boot_config_sha256 TEXT NOT NULL DEFAULT '';
CREATE INDEX metal_machines_by_boot_config ON metal_machines (boot_config_sha256) WHERE boot_config_sha256 <> '';
