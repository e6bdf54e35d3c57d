-- The authentication generation: every write to what authenticates a call (keys, principals,
-- role bindings) bumps it, so a server's cached callers are trusted only while it is unchanged.
CREATE TABLE auth_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    generation BIGINT NOT NULL
);
INSERT INTO auth_generation (id, generation) VALUES (1, 1);

CREATE TRIGGER api_keys_insert_auth_generation AFTER INSERT ON api_keys
BEGIN
    UPDATE auth_generation SET generation = generation + 1 WHERE id = 1;
END;

CREATE TRIGGER api_keys_update_auth_generation AFTER UPDATE ON api_keys
BEGIN
    UPDATE auth_generation SET generation = generation + 1 WHERE id = 1;
END;

CREATE TRIGGER api_keys_delete_auth_generation AFTER DELETE ON api_keys
BEGIN
    UPDATE auth_generation SET generation = generation + 1 WHERE id = 1;
END;

CREATE TRIGGER principals_insert_auth_generation AFTER INSERT ON principals
BEGIN
    UPDATE auth_generation SET generation = generation + 1 WHERE id = 1;
END;

CREATE TRIGGER principals_update_auth_generation AFTER UPDATE ON principals
BEGIN
    UPDATE auth_generation SET generation = generation + 1 WHERE id = 1;
END;

CREATE TRIGGER principals_delete_auth_generation AFTER DELETE ON principals
BEGIN
    UPDATE auth_generation SET generation = generation + 1 WHERE id = 1;
END;

CREATE TRIGGER role_bindings_insert_auth_generation AFTER INSERT ON role_bindings
BEGIN
    UPDATE auth_generation SET generation = generation + 1 WHERE id = 1;
END;

CREATE TRIGGER role_bindings_update_auth_generation AFTER UPDATE ON role_bindings
BEGIN
    UPDATE auth_generation SET generation = generation + 1 WHERE id = 1;
END;

CREATE TRIGGER role_bindings_delete_auth_generation AFTER DELETE ON role_bindings
BEGIN
    UPDATE auth_generation SET generation = generation + 1 WHERE id = 1;
END;
