-- The authentication generation: every write to what authenticates a call (keys, principals,
-- role bindings) bumps it, so a server's cached callers are trusted only while it is unchanged.
CREATE TABLE auth_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    generation BIGINT NOT NULL
);
INSERT INTO auth_generation (id, generation) VALUES (1, 1);

CREATE FUNCTION auth_generation_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE auth_generation SET generation = generation + 1 WHERE id = 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_auth_generation AFTER INSERT OR UPDATE OR DELETE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION auth_generation_bump();
CREATE TRIGGER principals_auth_generation AFTER INSERT OR UPDATE OR DELETE ON principals
    FOR EACH STATEMENT EXECUTE FUNCTION auth_generation_bump();
CREATE TRIGGER role_bindings_auth_generation AFTER INSERT OR UPDATE OR DELETE ON role_bindings
    FOR EACH STATEMENT EXECUTE FUNCTION auth_generation_bump();
