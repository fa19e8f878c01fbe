# The Assay server. Same install and build steps as scripts/setup.sh (what CI runs).
# Sandboxed code runs in sibling containers: mount the host's Docker socket to use them
#   docker run -p 8787:8787 -v /var/run/docker.sock:/var/run/docker.sock assay
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY openapi.yaml ./
COPY src ./src
COPY verifiers ./verifiers
COPY sandbox ./sandbox
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production ASSAY_HOST=0.0.0.0 ASSAY_PORT=8787
COPY --from=build /app/package.json /app/openapi.yaml ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/verifiers ./verifiers
COPY --from=build /app/sandbox ./sandbox
USER node
EXPOSE 8787
HEALTHCHECK CMD node -e "fetch('http://127.0.0.1:8787/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/src/cli/main.js", "serve"]
