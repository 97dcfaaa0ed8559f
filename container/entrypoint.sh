#!/bin/sh
# The image's entry point: any va-sandbox command (`start` by default). exec, so the CLI is PID 1 and gets the
# SIGTERM of `docker stop` itself: the server stops cleanly, with every acknowledged write in /data.
set -e
# A config file on the volume is read when present (`start --config`); VA_SANDBOX_CONFIG set on the container wins.
if [ -f /data/va-sandbox.json ]; then export VA_SANDBOX_CONFIG="${VA_SANDBOX_CONFIG:-/data/va-sandbox.json}"; fi
exec node /app/bin/va-sandbox.js "$@"
