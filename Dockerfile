# The sandbox server as an image: `docker build -t va-sandbox .`, then
# `docker run --rm -p 4580:4580 -v va-sandbox-data:/data va-sandbox` (README "Container"; test/container.test.ts).
# BASE names another Node 22.13+ image with npm and a `node` user (uid 1000), e.g. a local copy of node:24-slim.
ARG BASE=node:24-slim

# The build: every dependency, then tsc and the bundles (dist). Only the lock files first, so a change to the
# sources keeps the installed layer; the npm cache is a build cache, kept between builds and never in the image.
FROM ${BASE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts scripts
COPY src src
# The source maps stay here: the package leaves them out too (package.json "files").
RUN npm run build && node -e "for (const map of require('node:fs').globSync('dist/**/*.map')) require('node:fs').rmSync(map)"

# Production dependencies only, from the same lock file.
FROM ${BASE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund --ignore-scripts

# What runs: the package's own files (package.json "files") and its production dependencies, as the `node` user.
FROM ${BASE}
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json LICENSE scenario.schema.json ./
COPY bin bin
COPY fixtures fixtures
COPY container/entrypoint.sh /usr/local/bin/va-sandbox-entrypoint
# Settings are the start command's VA_SANDBOX_* variables: every address (a container is reached from outside it),
# the state database in the volume. The Host guard stays on: loopback names only, plus VA_SANDBOX_ALLOWED_HOSTS
# (e.g. the CI service's name).
ENV NODE_ENV=production VA_SANDBOX_HOST=0.0.0.0 VA_SANDBOX_PORT=4580 VA_SANDBOX_DATA=/data/state.db
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 4580
# The server's own /health, on its loopback name (always allowed by the Host guard) and its port.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.VA_SANDBOX_PORT}/health`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["va-sandbox-entrypoint"]
CMD ["start"]
