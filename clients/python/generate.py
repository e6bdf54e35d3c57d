"""Generates better_compute_client/gen from proto/ with grpcio-tools (run by clients/generate).

Messages and stubs of the API's own packages (bettercompute.*) and of buf.validate, which they
import; google.api and google.rpc come from googleapis-common-protos, as grpcio-status expects.
protoc writes absolute imports (`from bettercompute.platform.v1 import ...`); they are rewritten
to live under better_compute_client.gen, so the package adds no top-level names of its own.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.join(HERE, "..", "..", "proto")
OUT = os.path.join(HERE, "better_compute_client", "gen")
OWN = ("bettercompute", "buf")
IMPORT = re.compile(r"^(from|import) (%s)(\.|\s)" % "|".join(OWN), re.M)


def main():
    files = []
    for top in OWN:
        for base, _, names in os.walk(os.path.join(PROTO, top)):
            files += [os.path.relpath(os.path.join(base, n), PROTO) for n in names if n.endswith(".proto")]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "grpc_tools.protoc", "-I", PROTO, "--python_out", tmp, "--pyi_out", tmp,
             "--grpc_python_out", tmp] + sorted(files),
            check=True,
        )
        shutil.rmtree(OUT, ignore_errors=True)
        for base, _, names in os.walk(tmp):
            target = os.path.join(OUT, os.path.relpath(base, tmp))
            os.makedirs(target, exist_ok=True)
            with open(os.path.join(target, "__init__.py"), "w") as init:
                init.write("")
            for name in names:
                with open(os.path.join(base, name)) as source:
                    text = IMPORT.sub(lambda m: f"{m[1]} better_compute_client.gen.{m[2]}{m[3]}", source.read())
                with open(os.path.join(target, name), "w") as out:
                    out.write(text)


if __name__ == "__main__":
    main()
