# syntax=docker/dockerfile:1
# Lab Phi: one image for the service (`labphi serve`, the default command) and the suite-job
# workers (`labphi worker`). Walk-through, settings and the many-machine deployment: docs/deploy.md.
#
#   docker build -t labphi .
#   docker run --rm -p 8080:8080 -v labphi-data:/data labphi              # serve (SQLite in /data)
#   docker run --rm -e DATABASE_URL=… -e S3_BUCKET=… labphi worker        # a worker
#
# NODE_IMAGE is any Debian-based image with Node.js 24 LTS in /usr/local/bin (the official
# node:24-bookworm-slim by default; docs/deploy.md shows how the image was built from a debootstrap
# base where no registry is reachable).
ARG NODE_IMAGE=node:24-bookworm-slim

# --- build: production dependencies (native addons compiled here), the web front-end, the CLI bundle
FROM ${NODE_IMAGE} AS build
# compilers for the native addons whose prebuilt binaries cannot be fetched (better-sqlite3,
# lzma-native, zstd-napi); they stay in this stage
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
# behind a TLS-intercepting proxy: the CA bundle npm trusts, mounted for the build only
# (podman build -v /etc/ssl/certs/ca-certificates.crt:/run/build-ca.crt:ro --build-arg npm_config_cafile=/run/build-ca.crt)
ARG npm_config_cafile
COPY package.json package-lock.json ./
# exactly the lock file's versions, without the development dependencies (test ledgers, browsers,
# the sandbox's anvil and LiteSVM: `labphi sandbox` is not part of the image). npm ci refuses a lock
# file that lacks other platforms' optional packages (litesvm's); npm install then installs the
# lock file's versions all the same (as .ci/run does).
RUN npm ci --omit=dev \
 || { echo "npm ci refused the lock file; npm install --omit=dev honours it"; npm install --omit=dev --no-save; }
COPY . .
# the pages' front-end into dist/web, and the CLI bundled once into node_modules/.cache/labphi
# (bin/labphi.mjs), so a container starts without compiling anything
RUN node src/web/build.mjs --force \
 && node bin/labphi.mjs --help > /dev/null \
 && rm -rf deploy test .ci

# --- runtime: the application, read-only, run by an unprivileged user
FROM ${NODE_IMAGE}
ARG LABPHI_UID=10001
RUN groupadd --system --gid ${LABPHI_UID} labphi \
 && useradd --system --uid ${LABPHI_UID} --gid labphi --home-dir /data --shell /usr/sbin/nologin labphi \
 && mkdir -p /data \
 && chown labphi:labphi /data \
 && chmod 0700 /data
WORKDIR /app
COPY --from=build /app /app
# the one place under /app the processes write: bundles of the codec's thread entry points
RUN mkdir -p /app/node_modules/.cache/labphi && chown -R labphi:labphi /app/node_modules/.cache/labphi
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
# SQLite database, service keys of a single instance, job data without S3, the tus spool
VOLUME ["/data"]
EXPOSE 8080
USER labphi
# Liveness of `serve`; a worker has no HTTP port: compose turns the check off for workers.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT||8080}/healthz`,{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM (docker stop) drains requests (serve) or finishes running segments (worker), then exits 0;
# give workers a stop timeout above JOB_LEASE_SECONDS (compose: stop_grace_period)
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "bin/labphi.mjs"]
CMD ["serve"]
