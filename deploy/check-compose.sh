#!/usr/bin/env sh
# Validates deploy/docker-compose.yml with `docker compose config` (needs the docker client and
# its compose plugin, no Docker engine). Exit 77 (ctest: Skipped) when they are missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v docker >/dev/null 2>&1; then
  echo "SKIPPED: no docker client on PATH"
  exit 77
fi
if ! docker compose version >/dev/null 2>&1; then
  echo "SKIPPED: the docker client has no compose plugin (docker compose version failed)"
  exit 77
fi
GCMOE_MODEL_DIR=/models/example docker compose -f "$here/docker-compose.yml" config --quiet
echo "docker compose config: $here/docker-compose.yml is valid"
