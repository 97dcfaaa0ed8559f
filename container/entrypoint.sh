#!/bin/sh
# The image's entry point: any va-sandbox command (`start` by default). exec, so the CLI is PID 1 and gets the
# SIGTERM of `docker stop` itself: the server stops cleanly, with every acknowledged write in /data.
set -e
exec node /app/bin/va-sandbox.js "$@"
