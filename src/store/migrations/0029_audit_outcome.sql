-- How each audited call ended (`OK` or its error code), written once its answer is sent, found
-- by the call's request id.
ALTER TABLE audit_events ADD COLUMN outcome TEXT NOT NULL DEFAULT '';
CREATE INDEX audit_events_by_request ON audit_events (request_id);
