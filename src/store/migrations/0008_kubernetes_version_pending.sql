-- 1 while a control-plane version the tenant asked for (create's pin aside) has not been sent to
-- the provider: the reconciler moves the control plane only then, so a release-channel upgrade
-- past the pin is followed, not undone, while a tenant's downgrade is still tried (and refused).
ALTER TABLE kubernetes_clusters ADD COLUMN version_pending BIGINT NOT NULL DEFAULT 0;
