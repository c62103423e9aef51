#!/usr/bin/env python3
"""A polyglot client for an Atelier worker, built only from the repository's .proto files.

Usage: upscale_client.py HOST:PORT IMAGE.png

It compiles Python stubs at run time with grpc_tools.protoc (from proto/ into a temporary folder),
then calls the standard health service, CatalogService/ListModels, UpscaleService/Upscale with
scale 2, and Upscale with scale 9 (which must fail with INVALID_ARGUMENT and carry the service's
own error code in the trailing metadata key `atelier-error-code`).

It prints one JSON object to stdout and exits 0 when every call behaved as expected, 1 otherwise
(with the reason on stderr), 2 on bad usage.
"""
import importlib
import json
import os
import sys
import tempfile

import grpc
import grpc_tools
from grpc_tools import protoc

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PROTO_ROOT = os.path.join(REPO_ROOT, "proto")
WELL_KNOWN_TYPES = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
ERROR_CODE_KEY = "atelier-error-code"
TIMEOUT_SECONDS = 20

# The standard health protocol (grpc/health/v1/health.proto), used when the grpcio-health-checking
# package is not installed.
HEALTH_PROTO = """syntax = "proto3";
package grpc.health.v1;
message HealthCheckRequest { string service = 1; }
message HealthCheckResponse {
  enum ServingStatus { UNKNOWN = 0; SERVING = 1; NOT_SERVING = 2; SERVICE_UNKNOWN = 3; }
  ServingStatus status = 1;
}
service Health {
  rpc Check(HealthCheckRequest) returns (HealthCheckResponse);
  rpc Watch(HealthCheckRequest) returns (stream HealthCheckResponse);
}
"""

SERVICE_PROTOS = [
    "atelier/image/v1/image.proto",
    "atelier/catalog/v1/catalog_service.proto",
    "atelier/upscale/v1/upscale_service.proto",
]


class Unexpected(Exception):
    pass


def compile_protos(out_dir, include_dirs, files):
    args = ["grpc_tools.protoc"]
    args += ["-I" + d for d in include_dirs]
    args += ["--python_out=" + out_dir, "--grpc_python_out=" + out_dir]
    args += files
    code = protoc.main(args)
    if code != 0:
        raise Unexpected("protoc failed (exit %d) for %s" % (code, ", ".join(files)))


def ensure_packages(out_dir, module_paths):
    """Generated modules live in nested folders; make every level an importable package."""
    for module in module_paths:
        parts = module.split(".")[:-1]
        for i in range(1, len(parts) + 1):
            init = os.path.join(out_dir, *parts[:i], "__init__.py")
            if not os.path.exists(init):
                open(init, "w").close()


def load_health(out_dir):
    try:
        from grpc_health.v1 import health_pb2, health_pb2_grpc  # type: ignore

        return health_pb2, health_pb2_grpc, "grpcio-health-checking"
    except ImportError:
        pass
    # Same proto package (so the service is grpc.health.v1.Health on the wire) under a private file
    # path, so the generated Python modules cannot collide with the installed `grpc` package.
    health_dir = os.path.join(out_dir, "health_proto")
    os.makedirs(os.path.join(health_dir, "atelier_py_health"))
    proto_file = os.path.join(health_dir, "atelier_py_health", "health.proto")
    with open(proto_file, "w") as f:
        f.write(HEALTH_PROTO)
    compile_protos(out_dir, [health_dir, WELL_KNOWN_TYPES], [proto_file])
    ensure_packages(out_dir, ["atelier_py_health.health_pb2"])
    health_pb2 = importlib.import_module("atelier_py_health.health_pb2")
    health_pb2_grpc = importlib.import_module("atelier_py_health.health_pb2_grpc")
    return health_pb2, health_pb2_grpc, "compiled at run time"


def trailing_error_code(error):
    for key, value in error.trailing_metadata() or ():
        if key == ERROR_CODE_KEY:
            return value
    return None


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: upscale_client.py HOST:PORT IMAGE.png\n")
        return 2
    address, image_path = argv[1], argv[2]
    with open(image_path, "rb") as f:
        png = f.read()

    with tempfile.TemporaryDirectory(prefix="atelier-py-stubs-") as out_dir:
        compile_protos(out_dir, [PROTO_ROOT, WELL_KNOWN_TYPES], [os.path.join(PROTO_ROOT, p) for p in SERVICE_PROTOS])
        modules = [
            "atelier.image.v1.image_pb2",
            "atelier.catalog.v1.catalog_service_pb2",
            "atelier.upscale.v1.upscale_service_pb2",
        ]
        ensure_packages(out_dir, modules)
        sys.path.insert(0, out_dir)
        health_pb2, health_pb2_grpc, health_source = load_health(out_dir)
        image_pb2 = importlib.import_module("atelier.image.v1.image_pb2")
        catalog_pb2 = importlib.import_module("atelier.catalog.v1.catalog_service_pb2")
        catalog_grpc = importlib.import_module("atelier.catalog.v1.catalog_service_pb2_grpc")
        upscale_pb2 = importlib.import_module("atelier.upscale.v1.upscale_service_pb2")
        upscale_grpc = importlib.import_module("atelier.upscale.v1.upscale_service_pb2_grpc")

        result = {"address": address, "healthProto": health_source}
        with grpc.insecure_channel(address) as channel:
            grpc.channel_ready_future(channel).result(timeout=TIMEOUT_SECONDS)

            health = health_pb2_grpc.HealthStub(channel)
            answer = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=TIMEOUT_SECONDS)
            result["health"] = health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)
            upscale_health = health.Check(
                health_pb2.HealthCheckRequest(service="atelier.upscale.v1.UpscaleService"), timeout=TIMEOUT_SECONDS
            )
            result["upscaleHealth"] = health_pb2.HealthCheckResponse.ServingStatus.Name(upscale_health.status)

            catalog = catalog_grpc.CatalogServiceStub(channel)
            models = catalog.ListModels(catalog_pb2.ListModelsRequest(), timeout=TIMEOUT_SECONDS)
            result["modelIds"] = [m.id for m in models.models]

            upscale = upscale_grpc.UpscaleServiceStub(channel)
            source = image_pb2.Image(data=png, mime_type="image/png")
            done = upscale.Upscale(upscale_pb2.UpscaleRequest(image=source, scale=2), timeout=TIMEOUT_SECONDS)
            result["upscale"] = {
                "width": done.image.width,
                "height": done.image.height,
                "mimeType": done.image.mime_type,
                "bytes": len(done.image.data),
                "pngSignature": done.image.data[:8] == b"\x89PNG\r\n\x1a\n",
                "model": done.model,
                "scale": done.scale,
            }

            try:
                upscale.Upscale(upscale_pb2.UpscaleRequest(image=source, scale=9), timeout=TIMEOUT_SECONDS)
                raise Unexpected("Upscale with scale 9 succeeded; expected INVALID_ARGUMENT")
            except grpc.RpcError as error:
                result["badScale"] = {
                    "status": error.code().name,
                    "errorCode": trailing_error_code(error),
                    "details": error.details(),
                }

        print(json.dumps(result))
        problems = []
        if result["health"] != "SERVING":
            problems.append("health is %s" % result["health"])
        if result["badScale"]["status"] != "INVALID_ARGUMENT":
            problems.append("scale 9 answered %s" % result["badScale"]["status"])
        if problems:
            raise Unexpected("; ".join(problems))
        return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Unexpected as failure:
        sys.stderr.write("unexpected: %s\n" % failure)
        sys.exit(1)
    except grpc.RpcError as error:
        sys.stderr.write("unexpected gRPC failure: %s %s\n" % (error.code().name, error.details()))
        sys.exit(1)
    except grpc.FutureTimeoutError:
        sys.stderr.write("could not connect to the worker\n")
        sys.exit(1)
