# The gateway's image. Build it in CI and push it to the registry of your choice
# (docs/deployment.md):   docker build -t <your-registry>/llm-gateway:<version> .
#
# Stage 1 builds and packs the package and installs it without dev dependencies
# (scripts/build-release.sh, the same script test/cli.release.test.ts runs); stage 2 is that
# install on a Node 24 slim base, run as a non-root user.
FROM node:24-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN scripts/build-release.sh /app

FROM node:24-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8787 \
    GATEWAY_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app /app
# The data dir (SQLite store, request log, master key file, account key hash) belongs to the
# unprivileged user alone, as the gateway expects (0700).
RUN mkdir -m 0700 /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8787
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8787) + '/health').then((response) => process.exit(response.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM lets requests in flight (streams included) finish, up to GATEWAY_SHUTDOWN_GRACE_MS.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "--max-semi-space-size=16", "--no-parallel-scavenge", "/app/node_modules/llm-gateway/bin/llm-gateway.js"]
CMD ["start"]
