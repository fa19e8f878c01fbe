# The Assay server. Same install and build as scripts/setup.sh, which CI runs:
# `npm ci` installs the locked dependencies and its `prepare` step compiles to dist/.
# Sandboxed code runs in sibling containers: mount the host's Docker socket to use them
#   docker build -t assay . && docker run -p 8787:8787 -v /var/run/docker.sock:/var/run/docker.sock assay
# Node 20 (>= 20.19), the line README.md, package.json's engines and CI name.
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json openapi.yaml ./
COPY src ./src
COPY verifiers ./verifiers
COPY sandbox ./sandbox
COPY ui ./ui
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production ASSAY_HOST=0.0.0.0 ASSAY_PORT=8787
COPY --from=build /app /app
USER node
EXPOSE 8787
HEALTHCHECK CMD node -e "fetch('http://127.0.0.1:8787/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/src/cli/main.js", "serve"]
