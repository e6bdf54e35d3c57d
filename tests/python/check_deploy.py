"""Checks deploy/: the compose file against the Compose specification's JSON schema (as
check-jsonschema vendors it), the kustomization as `kubectl kustomize` renders it against the
Kubernetes OpenAPI schemas (kubernetes-validate, offline, strict), and what each file must give
every process (the workers' secret key, probes, non-root, a read-only root filesystem, ...).

Usage: python check_deploy.py REPO_ROOT. Prints each finding; exits 1 if there is any.
"""

import importlib.resources
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import kubernetes_validate
import yaml

KUBERNETES_VERSION = "1.32.0"
findings = []


def expect(condition, what):
    if not condition:
        findings.append(what)


def env_names(container_or_service):
    env = container_or_service.get("env") or container_or_service.get("environment") or {}
    if isinstance(env, dict):
        return set(env)
    return {item["name"] if isinstance(item, dict) else item.split("=")[0] for item in env}


def check_compose(root):
    compose = yaml.safe_load((root / "deploy/compose.yaml").read_text())
    schema_file = importlib.resources.files("check_jsonschema.builtin_schemas.vendor") / "compose-spec.json"
    schema = json.loads(schema_file.read_text())
    validator = jsonschema.Draft7Validator(schema)
    for error in validator.iter_errors(compose):
        findings.append(f"compose.yaml: {'/'.join(map(str, error.absolute_path))}: {error.message}")
    services = compose["services"]
    for name in ["postgres", "nats", "migrate", "server-1", "server-2", "worker"]:
        expect(name in services, f"compose.yaml: no service {name}")
    expect(services["worker"].get("deploy", {}).get("replicas") == 2, "compose.yaml: 2 workers")
    for name in ["server-1", "server-2", "worker"]:
        service = services[name]
        names = env_names(service)
        # The worker opens accounts' credentials with the servers' key: without it no provider
        # reconciler runs.
        for variable in ["BC_DATABASE_URL", "BC_SECRET_KEY"]:
            expect(variable in names, f"compose.yaml: {name} lacks {variable}")
        expect("healthcheck" in service, f"compose.yaml: {name} has no health check")
        expect(service.get("read_only") is True, f"compose.yaml: {name}'s root filesystem is writable")
        expect(
            service.get("depends_on", {}).get("migrate", {}).get("condition") == "service_completed_successfully",
            f"compose.yaml: {name} starts before the migration ends",
        )
    expect("BC_NATS_URL" in env_names(services["worker"]), "compose.yaml: the worker relays no events")
    for name in ["postgres", "nats"]:
        expect("healthcheck" in services[name], f"compose.yaml: {name} has no health check")


def check_kubernetes(root):
    rendered = subprocess.run(
        ["kubectl", "kustomize", str(root / "deploy/kubernetes")], check=True, capture_output=True, text=True
    ).stdout
    documents = [doc for doc in yaml.safe_load_all(rendered) if doc]
    by_kind = {}
    for doc in documents:
        by_kind.setdefault(doc["kind"], []).append(doc)
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            findings.append(f"kubernetes {doc['kind']}/{doc['metadata']['name']}: {error.message}")
    for kind, count in [
        ("Job", 1),
        ("Deployment", 2),
        ("Service", 1),
        ("PodDisruptionBudget", 2),
        ("NetworkPolicy", 2),
        ("HorizontalPodAutoscaler", 1),
    ]:
        expect(len(by_kind.get(kind, [])) == count, f"kubernetes: {count} {kind} expected, {len(by_kind.get(kind, []))} rendered")
    deployments = {doc["metadata"]["name"]: doc for doc in by_kind.get("Deployment", [])}
    for name in ["better-compute-server", "better-compute-worker"]:
        deployment = deployments.get(name)
        if deployment is None:
            findings.append(f"kubernetes: no Deployment {name}")
            continue
        expect(deployment["spec"]["replicas"] == 2, f"kubernetes {name}: 2 replicas")
        pod = deployment["spec"]["template"]["spec"]
        expect(pod.get("securityContext", {}).get("runAsNonRoot") is True, f"kubernetes {name}: may run as root")
        for container in pod["containers"]:
            where = f"kubernetes {name}/{container['name']}"
            expect("readinessProbe" in container and "livenessProbe" in container, f"{where}: probes")
            expect("requests" in container.get("resources", {}), f"{where}: no resource requests")
            security = container.get("securityContext", {})
            expect(security.get("readOnlyRootFilesystem") is True, f"{where}: writable root filesystem")
            expect(security.get("allowPrivilegeEscalation") is False, f"{where}: privilege escalation")
            secret_key = [e for e in container.get("env", []) if e["name"] == "BC_SECRET_KEY"]
            expect(
                bool(secret_key) and "secretKeyRef" in secret_key[0].get("valueFrom", {}),
                f"{where}: BC_SECRET_KEY not from a Secret",
            )
    server = deployments.get("better-compute-server")
    if server:
        container = server["spec"]["template"]["spec"]["containers"][0]
        expect(container["readinessProbe"]["httpGet"]["path"] == "/readyz", "kubernetes server: readiness on /readyz")
        expect(container["livenessProbe"]["httpGet"]["path"] == "/healthz", "kubernetes server: liveness on /healthz")
    hpa = by_kind.get("HorizontalPodAutoscaler", [{}])[0]
    expect(
        hpa.get("spec", {}).get("scaleTargetRef", {}).get("name") == "better-compute-server",
        "kubernetes: the HPA scales the server",
    )


def check_dockerfile(root):
    lines = [line.strip() for line in (root / "deploy/Dockerfile").read_text().splitlines()]
    stages = [line for line in lines if line.startswith("FROM ")]
    final = lines[lines.index(stages[-1]):]
    expect("distroless" in stages[-1], "Dockerfile: the final stage is not distroless (it has a shell)")
    expect(not any(line.startswith("RUN ") for line in final), "Dockerfile: the final stage runs a command (a shell)")
    users = [line.split()[1] for line in final if line.startswith("USER ")]
    expect(bool(users) and users[-1].split(":")[0] not in ("0", "root"), "Dockerfile: runs as root")
    build = " ".join(lines)
    for binary in ["bc-server", "bc-worker", "bcctl", "bcd"]:
        expect(f"--bin {binary} " in build or f"--bin {binary}\\" in build, f"Dockerfile: {binary} is not built")


def main():
    root = Path(sys.argv[1])
    check_compose(root)
    check_kubernetes(root)
    check_dockerfile(root)
    for finding in findings:
        print(finding)
    print(f"deploy/: {len(findings)} findings")
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
