-- Drift: the managed fields a pass last found the provider holding at other values than were
-- applied, as a JSON list ([{field, applied, found, since, action}]), written with the pass's
-- observation and shown on the view as drift[].
ALTER TABLE kubernetes_clusters ADD COLUMN drift TEXT NOT NULL DEFAULT '[]';
ALTER TABLE networks ADD COLUMN drift TEXT NOT NULL DEFAULT '[]';
ALTER TABLE instances ADD COLUMN drift TEXT NOT NULL DEFAULT '[]';
ALTER TABLE certificates ADD COLUMN drift TEXT NOT NULL DEFAULT '[]';
ALTER TABLE volumes ADD COLUMN drift TEXT NOT NULL DEFAULT '[]';
ALTER TABLE load_balancers ADD COLUMN drift TEXT NOT NULL DEFAULT '[]';
ALTER TABLE metal_machines ADD COLUMN drift TEXT NOT NULL DEFAULT '[]';
