#!/usr/bin/env python3
"""Deterministic `kubectl get pods -o json`-like dump of a given size (MiB) for benchmarks.

Shape: one List object whose `items` array holds pods in kubectl's layout (2-space
indentation, kubectl's key order), unique names and uids, a few CrashLoopBackOff pods.
Seeded, so the same size always yields the same bytes; the document is always complete
(closing brackets included), so its size is the requested size rounded to whole pods.
  scripts/gen_json_dump.py [MiB] > dump.json      (default 64)
"""
import random
import sys

APPS = ["web", "api-gateway", "billing-worker", "search-indexer", "redis", "payments",
        "notifications", "ingest"]


def pod(rng, i):
    hexd = lambda n: "%0*x" % (n, rng.getrandbits(4 * n))
    app = rng.choice(APPS)
    h = hexd(10)
    name = "%s-%s-%s" % (app, h, hexd(5))
    fail = i % 9973 == 4711
    uid = lambda: "%s-%s-%s-%s-%s" % (hexd(8), hexd(4), hexd(4), hexd(4), hexd(12))
    if fail:
        state = ('              "waiting": {\n'
                 '                "message": "back-off 5m0s restarting failed container",\n'
                 '                "reason": "CrashLoopBackOff"\n'
                 '              }\n')
    else:
        state = ('              "running": {\n'
                 '                "startedAt": "2024-05-20T1%d:00:00Z"\n'
                 '              }\n' % rng.randint(0, 9))
    return f'''    {{
      "apiVersion": "v1",
      "kind": "Pod",
      "metadata": {{
        "creationTimestamp": "2024-05-{rng.randint(10, 28)}T0{rng.randint(0, 9)}:{rng.randint(10, 59)}:00Z",
        "generateName": "{app}-{h}-",
        "labels": {{
          "app": "{app}",
          "pod-template-hash": "{h}"
        }},
        "name": "{name}",
        "namespace": "prod",
        "ownerReferences": [
          {{
            "apiVersion": "apps/v1",
            "blockOwnerDeletion": true,
            "controller": true,
            "kind": "ReplicaSet",
            "name": "{app}-{h}",
            "uid": "{uid()}"
          }}
        ],
        "resourceVersion": "{rng.randint(100000, 999999)}",
        "uid": "{uid()}"
      }},
      "spec": {{
        "containers": [
          {{
            "image": "registry.example.com/{app}:1.{rng.randint(0, 30)}.{rng.randint(0, 9)}",
            "imagePullPolicy": "IfNotPresent",
            "name": "{app}",
            "ports": [
              {{
                "containerPort": 8080,
                "protocol": "TCP"
              }}
            ],
            "resources": {{
              "limits": {{
                "cpu": "{rng.randint(1, 4) * 250}m",
                "memory": "{rng.randint(1, 8) * 256}Mi"
              }}
            }},
            "terminationMessagePath": "/dev/termination-log"
          }}
        ],
        "dnsPolicy": "ClusterFirst",
        "nodeName": "ip-10-0-{rng.randint(0, 255)}-{rng.randint(1, 254)}.ec2.internal",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "serviceAccountName": "default"
      }},
      "status": {{
        "containerStatuses": [
          {{
            "containerID": "containerd://{hexd(64)}",
            "name": "{app}",
            "ready": {"false" if fail else "true"},
            "restartCount": {57 if fail else rng.randint(0, 3)},
            "state": {{
{state}            }}
          }}
        ],
        "hostIP": "10.0.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
        "phase": "{"Failed" if fail else "Running"}",
        "podIP": "10.1.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
        "qosClass": "Burstable"
      }}
    }}'''


def main():
    mib = float(sys.argv[1]) if len(sys.argv) > 1 else 64
    target = int(mib * 1024 * 1024)
    rng = random.Random(20240520)
    head = '{\n  "apiVersion": "v1",\n  "items": [\n'
    tail = '\n  ],\n  "kind": "List",\n  "metadata": {\n    "resourceVersion": ""\n  }\n}\n'
    parts = [head]
    size = len(head) + len(tail)
    i = 0
    while True:
        p = pod(rng, i)
        extra = len(p) + (2 if i else 0)
        if size + extra > target and i > 0:
            break
        parts.append((",\n" if i else "") + p)
        size += extra
        i += 1
    parts.append(tail)
    sys.stdout.write("".join(parts))


if __name__ == "__main__":
    main()
