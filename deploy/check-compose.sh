#!/usr/bin/env sh
# Validates deploy/docker-compose.yml with `docker compose config` (the docker client's compose
# plugin) or, without it, Debian's `docker-compose` (1.29, installed by scripts/install-deps.sh);
# neither needs a Docker engine. Exit 77 (ctest: Skipped) when both are missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if command -v docker >/dev/null 2>&1 && docker compose version >/dev/null 2>&1; then
  compose="docker compose"
elif command -v docker-compose >/dev/null 2>&1; then
  compose="docker-compose"
else
  echo "SKIPPED: neither \`docker compose\` nor docker-compose is installed"
  exit 77
fi
GCMOE_MODEL_DIR=/models/example $compose -f "$here/docker-compose.yml" config --quiet
echo "$compose config: $here/docker-compose.yml is valid"
