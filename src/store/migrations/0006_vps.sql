-- The `vps` module's tenant resources: networks with their subnets, instances and
-- certificates, each the tenant's desired state beside what the provider last reported. Times
-- are microseconds since the Unix epoch; lists are JSON text.

CREATE TABLE networks (
    id                  TEXT PRIMARY KEY,
    tenant_id           TEXT NOT NULL,
    project_id          TEXT,
    pool_id             TEXT NOT NULL,
    account_id          TEXT NOT NULL,
    -- The account's provider at creation (`gke` or `digitalocean`): how the network is made.
    provider            TEXT NOT NULL,
    owner_id            TEXT NOT NULL,
    name                TEXT NOT NULL,
    description         TEXT NOT NULL,
    state               TEXT NOT NULL,
    message             TEXT NOT NULL,
    version             BIGINT NOT NULL,
    idempotency_key     TEXT NOT NULL,
    -- A digest of the create request, to tell a retry from a reuse of its idempotency key.
    request_hash        TEXT NOT NULL,
    -- GKE: the VPC network's name; DigitalOcean: empty (each subnet is a VPC of its own).
    provider_id         TEXT NOT NULL,
    -- When the tenant asked for deletion.
    delete_requested_at BIGINT,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL,
    deleted_at          BIGINT
);
CREATE UNIQUE INDEX networks_live_name ON networks (tenant_id, name) WHERE deleted_at IS NULL;
CREATE INDEX networks_by_tenant ON networks (tenant_id, created_at);

CREATE TABLE subnets (
    id          TEXT PRIMARY KEY,
    network_id  TEXT NOT NULL REFERENCES networks (id),
    tenant_id   TEXT NOT NULL,
    name        TEXT NOT NULL,
    region      TEXT NOT NULL,
    ip_range    TEXT NOT NULL,
    state       TEXT NOT NULL,
    message     TEXT NOT NULL,
    -- DigitalOcean: the VPC's uuid (load balancers put it in `vpc_uuid`); GKE: the
    -- subnetwork's name. Empty until the provider made it.
    provider_id TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    deleted_at  BIGINT
);
CREATE UNIQUE INDEX subnets_name ON subnets (network_id, name);
CREATE INDEX subnets_by_network ON subnets (network_id, created_at);

CREATE TABLE instances (
    id                  TEXT PRIMARY KEY,
    tenant_id           TEXT NOT NULL,
    project_id          TEXT,
    pool_id             TEXT NOT NULL,
    account_id          TEXT NOT NULL,
    owner_id            TEXT NOT NULL,
    name                TEXT NOT NULL,
    region              TEXT NOT NULL,
    size                TEXT NOT NULL,
    image               TEXT NOT NULL,
    subnet_id           TEXT REFERENCES subnets (id),
    network_id          TEXT REFERENCES networks (id),
    -- The droplet id as text, set once the provider assigned one.
    machine_id          TEXT,
    public_ipv4         TEXT NOT NULL,
    private_ipv4        TEXT NOT NULL,
    -- `deleting` from the delete call on.
    state               TEXT NOT NULL,
    message             TEXT NOT NULL,
    version             BIGINT NOT NULL,
    idempotency_key     TEXT NOT NULL,
    request_hash        TEXT NOT NULL,
    delete_requested_at BIGINT,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL,
    deleted_at          BIGINT
);
CREATE UNIQUE INDEX instances_live_name ON instances (tenant_id, name) WHERE deleted_at IS NULL;
CREATE INDEX instances_by_tenant ON instances (tenant_id, created_at);
CREATE INDEX instances_by_subnet ON instances (subnet_id);
CREATE INDEX instances_by_pool ON instances (pool_id, region);

CREATE TABLE certificates (
    id                    TEXT PRIMARY KEY,
    tenant_id             TEXT NOT NULL,
    project_id            TEXT,
    pool_id               TEXT NOT NULL,
    account_id            TEXT NOT NULL,
    owner_id              TEXT NOT NULL,
    name                  TEXT NOT NULL,
    -- `custom` or `letsEncrypt`.
    type                  TEXT NOT NULL,
    -- JSON array of names.
    dns_names             TEXT NOT NULL,
    -- When the leaf expires, once known.
    not_after             BIGINT,
    sha256_fingerprint    TEXT NOT NULL,
    -- Custom: the leaf and the chain (public).
    leaf_certificate      TEXT NOT NULL,
    certificate_chain     TEXT NOT NULL,
    -- Custom: AES-256-GCM ciphertext of the private key, sealed to the certificate's id; empty
    -- for Let's Encrypt. No row type carries it.
    private_key_encrypted TEXT NOT NULL,
    state                 TEXT NOT NULL,
    message               TEXT NOT NULL,
    -- The provider's certificate id, once it has one.
    provider_id           TEXT NOT NULL,
    version               BIGINT NOT NULL,
    idempotency_key       TEXT NOT NULL,
    request_hash          TEXT NOT NULL,
    delete_requested_at   BIGINT,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    deleted_at            BIGINT
);
CREATE UNIQUE INDEX certificates_live_name ON certificates (tenant_id, name) WHERE deleted_at IS NULL;
CREATE INDEX certificates_by_tenant ON certificates (tenant_id, created_at);
