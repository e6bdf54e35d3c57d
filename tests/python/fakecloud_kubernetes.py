"""Kubernetes' official Python client against a fake cluster of the fake cloud, as a new user
would try it: lists nodes, namespaces, secrets, service accounts, pods, DaemonSets and cluster
role bindings (every object deserialized into the client's models, which refuse one that lacks a
required field), then server-side applies a DaemonSet. Prints what it saw as one JSON object.

Usage: fakecloud_kubernetes.py KUBECONFIG NAMESPACE DAEMONSET
"""

import json
import sys

from kubernetes import client, config


def main() -> None:
    kubeconfig, namespace, daemonset = sys.argv[1:4]
    config.load_kube_config(config_file=kubeconfig)
    core, apps = client.CoreV1Api(), client.AppsV1Api()
    rbac = client.RbacAuthorizationV1Api()

    nodes = core.list_node().items
    pods = core.list_pod_for_all_namespaces(label_selector="app=bcd").items
    seen = {
        "nodes": sorted(n.metadata.name for n in nodes),
        "bootIds": sorted(n.status.node_info.boot_id for n in nodes),
        "cpus": sorted(n.status.capacity["cpu"] for n in nodes),
        "namespaces": sorted(n.metadata.name for n in core.list_namespace().items),
        "namespacePhases": sorted({n.status.phase for n in core.list_namespace().items}),
        "secrets": sorted(
            s.metadata.name
            for s in core.list_namespaced_secret(
                namespace, label_selector="better-compute.dev/substrate-pool=pool_t"
            ).items
        ),
        "serviceAccounts": sorted(
            a.metadata.name for a in core.list_service_account_for_all_namespaces().items
        ),
        "pods": sorted(p.spec.node_name for p in pods),
        "podOwners": sorted({p.metadata.owner_references[0].kind for p in pods}),
        "daemonSets": sorted(d.metadata.name for d in apps.list_daemon_set_for_all_namespaces().items),
        "clusterRoleBindings": sorted(b.role_ref.name for b in rbac.list_cluster_role_binding().items),
    }
    status = apps.read_namespaced_daemon_set(daemonset, namespace).status
    seen["desired"] = status.desired_number_scheduled

    manifest = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "python-applied", "namespace": namespace, "labels": {"by": "python"}},
        "spec": {
            "selector": {"matchLabels": {"app": "python-applied"}},
            "template": {
                "metadata": {"labels": {"app": "python-applied"}},
                "spec": {
                    "nodeSelector": {"none": "none"},
                    "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10"}],
                },
            },
        },
    }
    applied = apps.patch_namespaced_daemon_set(
        "python-applied",
        namespace,
        manifest,
        field_manager="python-client",
        _content_type="application/apply-patch+yaml",
    )
    seen["applied"] = {
        "generation": applied.metadata.generation,
        "managers": [(m.manager, m.operation) for m in applied.metadata.managed_fields],
    }
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
