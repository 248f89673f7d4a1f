#!/usr/bin/env python3
"""Turns a rendered config/default into what hack/test-cluster applies to run its manager on this
machine as if it were deployed: every object but the manager's Deployment, the webhook Service
without its selector and with Endpoints at this machine's address (the API server calls a webhook
given as a Service on the Service's endpoints), and the Deployment's manager container written
out: its args and plain env values, its namespace and its ServiceAccount.

usage: without-manager.py RENDERED.yaml HOST_IP WEBHOOK_PORT OUT_DIR
writes OUT_DIR/objects.yaml, OUT_DIR/args (one a line), OUT_DIR/env (NAME=VALUE a line),
OUT_DIR/namespace, OUT_DIR/service-account, OUT_DIR/service (the webhook Service's name)
Needs PyYAML.
"""

import os
import sys

import yaml


def manager_container(deployment):
    for container in deployment["spec"]["template"]["spec"]["containers"]:
        if container.get("name") == "manager":
            return container
    sys.exit("without-manager.py: the Deployment has no container named manager")


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    rendered, host_ip, port, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    docs = [d for d in yaml.safe_load_all(open(rendered)) if d]
    deployments = [d for d in docs if d["kind"] == "Deployment"]
    if len(deployments) != 1:
        sys.exit(f"without-manager.py: expected one Deployment, found {len(deployments)}")
    deployment = deployments[0]
    container = manager_container(deployment)
    args = container.get("args", [])
    service_flag = [a.split("=", 1)[1] for a in args if a.startswith("--webhook-service-name=")]
    if len(service_flag) != 1:
        sys.exit("without-manager.py: the manager has no --webhook-service-name: not self-signed")
    service_name = service_flag[0]
    namespace = deployment["metadata"]["namespace"]
    objects = []
    for doc in docs:
        if doc is deployment:
            continue
        if doc["kind"] == "Service" and doc["metadata"]["name"] == service_name:
            doc["spec"].pop("selector", None)
            target = doc["spec"]["ports"][0]
            objects.append(doc)
            objects.append({
                "apiVersion": "v1",
                "kind": "Endpoints",
                "metadata": {"name": service_name, "namespace": namespace,
                             "labels": doc["metadata"].get("labels", {})},
                "subsets": [{
                    "addresses": [{"ip": host_ip}],
                    "ports": [{"port": port, "protocol": target.get("protocol", "TCP")}
                              | ({"name": target["name"]} if "name" in target else {})],
                }],
            })
            continue
        objects.append(doc)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "objects.yaml"), "w") as f:
        yaml.safe_dump_all(objects, f, sort_keys=False)
    with open(os.path.join(out, "args"), "w") as f:
        f.writelines(f"{arg}\n" for arg in args)
    with open(os.path.join(out, "env"), "w") as f:
        f.writelines(f"{e['name']}={e['value']}\n" for e in container.get("env", []) if "value" in e)
    spec = deployment["spec"]["template"]["spec"]
    for name, value in (("namespace", namespace),
                        ("service-account", spec.get("serviceAccountName", "default")),
                        ("service", service_name)):
        with open(os.path.join(out, name), "w") as f:
            f.write(value + "\n")


if __name__ == "__main__":
    main()
